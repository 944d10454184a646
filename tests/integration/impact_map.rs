//! The test-impact map: `mutdelta map` records, at the parent commit, what each test ran and
//! read; a check of the change then runs the rest of the suite less the tests the map proves
//! cannot reach it. Each way a map could lie (a new function reached through a changed caller,
//! a changed shared fixture, tests parametrized from a changed data file, a function moved
//! between files, a deleted test file, a map from another interpreter, a hostile map) has its
//! case, and every case gives the same verdict per mutant with the map as without it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{fixture_repo_variant, git, mutdelta, python_at, read_report, Run};

/// The fixture's change `variant` committed over `before/`, and the map recorded at `before`.
fn mapped(variant: &str, python: &Path) -> tempfile::TempDir {
    let repo = fixture_repo_variant("impact_map", variant);
    let built = mutdelta(repo.path(), &["map", "--commit", "HEAD~1", "--python", python.to_str().unwrap()]);
    assert_eq!(built.code, 0, "{built:?}");
    assert!(built.stderr.contains("test-impact map: 6 tests recorded at commit "), "{built:?}");
    assert!(!built.stderr.contains("SyntaxWarning"), "pkg/legacy.py's warning is not mutdelta's: {built:?}");
    repo
}

/// A check of the change, with `extra` arguments; its run and report.
fn checked(repo: &Path, python: &Path, extra: &[&str]) -> (Run, Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("report.json");
    let mut args =
        vec!["check", "--commit", "HEAD", "--no-audit", "-j", "2", "--python", python.to_str().unwrap()];
    args.extend_from_slice(&["--json", json.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let run = mutdelta(repo, &args);
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    // Reading the project's blocks parses pkg/legacy.py, of which Python 3.12 warns.
    assert!(!run.stderr.contains("SyntaxWarning"), "pkg/legacy.py's warning is not mutdelta's: {run:?}");
    let report = read_report(&json);
    (run, report)
}

/// Every mutant's place, replacement, verdict and killers.
fn verdicts(report: &Value) -> Vec<(String, Value, Value, Value, Value)> {
    let mut out = Vec::new();
    for (file, entry) in report["files"].as_object().unwrap() {
        for mutant in entry["mutants"].as_array().unwrap() {
            out.push((
                file.clone(),
                mutant["location"]["start"]["line"].clone(),
                mutant["replacement"].clone(),
                mutant["status"].clone(),
                mutant["killedBy"].clone(),
            ));
        }
    }
    out.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    out
}

/// What the report says of the rest of the suite's run.
fn rest_of_suite(report: &Value) -> String {
    let steps = report["mutdelta"]["steps"].as_array().unwrap();
    let rest = steps
        .iter()
        .find(|step| step["step"].as_str().unwrap().starts_with("baseline of the rest of the suite"));
    rest.unwrap_or_else(|| panic!("no run of the rest of the suite: {steps:?}"))["step"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The check of `repo`'s change with its kept map, and without any: the same verdicts. Returns
/// what the first said of the rest of the suite, and its report.
fn with_and_without(repo: &Path, python: &Path, extra: &[&str]) -> (String, Value) {
    let (_, mapped) = checked(repo, python, extra);
    let (_, whole) = checked(repo, python, &["--no-impact-map", "--no-cache"]);
    assert_eq!(verdicts(&mapped), verdicts(&whole), "the map changed a verdict");
    assert!(!rest_of_suite(&whole).contains("test-impact map"), "{}", rest_of_suite(&whole));
    (rest_of_suite(&mapped), mapped)
}

fn python312() -> PathBuf {
    python_at("3.12")
}

#[test]
fn a_changed_function_body_runs_only_the_tests_that_ran_it_and_they_catch_it() {
    let python = python312();
    let repo = mapped("body", &python);

    let (rest, report) = with_and_without(repo.path(), &python, &[]);

    assert!(rest.contains("ruled out 4 tests"), "{rest}");
    // The edited test runs the new lines and asserts nothing: the unedited test of `shout`,
    // which the map keeps, kills them (all but `if False`, which returns what the guard did).
    let outcomes: Vec<(Value, Value, Value)> =
        verdicts(&report).into_iter().map(|v| (v.2, v.3, v.4)).collect();
    for (replacement, status, killers) in &outcomes {
        if replacement == "False" {
            assert_eq!(status, "Survived", "{outcomes:?}");
        } else {
            let killed = serde_json::json!(["tests/test_words.py::test_shout"]);
            assert_eq!((status.as_str(), killers), (Some("Killed"), &killed), "{outcomes:?}");
        }
    }
}

#[test]
fn a_new_function_reached_through_a_changed_caller_is_caught_by_the_caller_s_tests() {
    let python = python312();
    let repo = mapped("caller", &python);

    let (rest, report) = with_and_without(repo.path(), &python, &[]);

    // calc.py gained a function: every test that ran any of its code runs; those of words.py
    // alone are ruled out.
    assert!(rest.contains("ruled out 2 tests"), "{rest}");
    let statuses: Vec<(Value, Value)> = verdicts(&report).into_iter().map(|v| (v.3, v.4)).collect();
    assert!(
        statuses.iter().any(|(status, by)| status == "Killed"
            && by == &serde_json::json!(["tests/test_report.py::test_report"])),
        "{statuses:?}"
    );
}

#[test]
fn a_data_file_read_at_collection_leaves_the_map_unused() {
    let python = python312();
    let repo = mapped("data", &python);

    let (rest, _) = with_and_without(repo.path(), &python, &[]);

    assert!(
        rest.contains("was not used: tests/cases.json, read while the tests were collected, changed"),
        "{rest}"
    );
    assert!(!rest.contains("ruled out"), "{rest}");
}

#[test]
fn a_function_moved_between_files_keeps_every_test_that_ran_either_and_says_why() {
    let python = python312();
    let repo = mapped("moved", &python);

    let (rest, report) = with_and_without(repo.path(), &python, &[]);

    // calc.py gained `whisper`, and words.py's module-level code imports it from there now:
    // every test ran code of one or the other.
    assert!(rest.contains("ruled out 0 tests"), "{rest}");
    assert!(rest.contains("3 tests (0.0 s recorded) could not be ruled out: they ran code of pkg/calc.py, which gained a definition or changed at module level"), "{rest}");
    assert!(
        rest.contains(
            "could not be ruled out: they ran code of pkg/words.py that the change edits or removes"
        ),
        "{rest}"
    );
    // The JSON report holds the floor of the whole check, one entry per reason, the costliest
    // first: the tests of the change's test file count too (4, where the rest's step says 3).
    let floor = report["mutdelta"]["floor"].as_array().expect("a floor");
    let calc = "they ran code of pkg/calc.py, which gained a definition or changed at module level";
    assert!(floor.iter().any(|entry| entry["reason"] == calc && entry["tests"] == 4), "{floor:?}");
    let seconds: Vec<f64> = floor.iter().map(|entry| entry["seconds"].as_f64().unwrap()).collect();
    assert!(seconds.windows(2).all(|pair| pair[0] >= pair[1]), "{floor:?}");
}

#[test]
fn a_changed_conftest_keeps_the_tests_of_its_directory_and_says_why() {
    let python = python312();
    let repo = mapped("conftest", &python);

    let (rest, _) = with_and_without(repo.path(), &python, &[]);

    // Only test_scale asked for the fixture; every test under tests/ may ask for it now.
    assert!(rest.contains("ruled out 0 tests"), "{rest}");
    assert!(
        rest.contains(
            "could not be ruled out: tests/conftest.py, whose fixtures reach the tests of tests/, changed"
        ),
        "{rest}"
    );
}

/// What the report says of the first round's run of the change's test files.
fn first_round(report: &Value) -> String {
    report["mutdelta"]["steps"][0]["step"].as_str().unwrap().to_string()
}

#[test]
fn a_test_added_beside_others_leaves_those_that_cannot_reach_the_change_out_of_the_first_round() {
    let python = python312();
    let repo = mapped("added_test", &python);

    let (run, report) = checked(repo.path(), &python, &[]);
    let (_, whole) = checked(repo.path(), &python, &["--no-impact-map", "--no-cache"]);
    assert_eq!(verdicts(&report), verdicts(&whole), "the map changed a verdict");

    // tests/test_words.py gained a test: test_whisper never ran `shout`, and is left out of
    // the first round as the four tests of the other files are left out of the rest.
    let first = first_round(&report);
    assert!(first.contains("ruled out 1 test of them"), "{first}");
    assert!(!first_round(&whole).contains("ruled out"), "{}", first_round(&whole));
    // test_shout, which the map kept, ran in the first round: the rest says nothing of it.
    let rest = rest_of_suite(&report);
    assert!(rest.contains("ruled out 4 tests"), "{rest}");
    assert!(!rest.contains("could not be ruled out"), "{rest}");
    // The rest's test files are those the map recorded collecting, each of their tests ruled
    // out: the rest holds nothing to run, and no pytest starts for it.
    assert!(rest.starts_with("baseline of the rest of the suite; not started: "), "{rest}");
    let said = "second round: the rest of the test suite was not started, having no test left to run (the test-impact map recorded at commit ";
    assert!(run.stderr.contains(said), "{run:?}");
    let started = |report: &Value| {
        let steps = report["mutdelta"]["steps"].as_array().unwrap().iter();
        steps.filter(|step| step["commands"].as_array().is_some_and(|run| !run.is_empty())).count()
    };
    assert_eq!((started(&report), started(&whole)), (1, 2), "the first round's run alone, then both");
    assert!(
        rest_of_suite(&whole).starts_with("baseline of the rest of the suite ("),
        "{}",
        rest_of_suite(&whole)
    );
}

#[test]
fn an_autouse_fixture_added_beside_a_new_test_keeps_every_test_of_its_file() {
    let python = python312();
    let repo = mapped("autouse", &python);

    let (rest, report) = with_and_without(repo.path(), &python, &[]);

    let first = first_round(&report);
    assert!(!first.contains("ruled out"), "test_whisper runs under the new fixture: {first}");
    assert!(rest.contains("ruled out 4 tests"), "{rest}");
}

#[test]
fn a_deleted_test_file_leaves_the_others_ruled_out() {
    let python = python312();
    let repo = mapped("body", &python);
    git(repo.path(), &["rm", "-q", "tests/test_report.py"]);
    git(repo.path(), &["commit", "-q", "--amend", "--no-edit"]);

    let (rest, _) = with_and_without(repo.path(), &python, &[]);

    assert!(rest.contains("ruled out 3 tests"), "{rest}");
}

#[test]
fn a_map_file_from_another_interpreter_or_no_map_at_all_is_refused_with_a_note() {
    let python = python312();
    let repo = mapped("body", &python);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("map.json");
    let built = mutdelta(
        repo.path(),
        &[
            "map",
            "--commit",
            "HEAD~1",
            "--python",
            python.to_str().unwrap(),
            "--output",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(built.code, 0, "{built:?}");
    let not_a_map = out.path().join("not-a-map.json");
    std::fs::write(&not_a_map, "{\"tests\": 1}").unwrap();
    let newer = python_at("3.13");

    for (python, map, why) in [
        (
            &newer,
            &file,
            "was made with another interpreter version, package set, pytest options or mutdelta version",
        ),
        (&python, &not_a_map, "is not a mutdelta test-impact map"),
    ] {
        let (rest, _) = with_and_without(repo.path(), python, &["--impact-map", map.to_str().unwrap()]);

        assert!(rest.contains(&format!("the test-impact map was not used: {}", map.display())), "{rest}");
        assert!(rest.contains(why), "{rest}");
    }
}

#[test]
fn a_map_file_made_elsewhere_is_used_and_a_hostile_one_reads_nothing_outside_the_project() {
    let python = python312();
    let repo = mapped("body", &python);
    std::fs::remove_dir_all(repo.path().join(".git/mutdelta")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("map.json");
    let built = mutdelta(
        repo.path(),
        &[
            "map",
            "--commit",
            "HEAD~1",
            "--python",
            python.to_str().unwrap(),
            "--output",
            file.to_str().unwrap(),
            "--no-cache",
        ],
    );
    assert!(built.stderr.contains("not kept (--no-cache); written to"), "{built:?}");
    assert!(!repo.path().join(".git/mutdelta/python/impact").exists());

    let (rest, _) = with_and_without(repo.path(), &python, &["--impact-map", file.to_str().unwrap()]);
    assert!(rest.contains("ruled out 4 tests"), "{rest}");

    // The map says test_whisper and test_report read files outside the project (there, they
    // exist): never read, each counts as changed, and those two tests run again. So does a
    // test said to read, through a link the change commits, a file outside the project whose
    // digest the map gives right.
    let secret = out.path().join("secret");
    std::fs::write(&secret, "s").unwrap();
    std::os::unix::fs::symlink(out.path(), repo.path().join("data_link")).unwrap();
    git(repo.path(), &["add", "data_link"]);
    git(repo.path(), &["commit", "-q", "--amend", "--no-edit"]);
    let mut map: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let outside = format!("../../../../../../../..{}", secret.display());
    map["tests"]["tests/test_words.py::test_whisper"]["data"][outside.as_str()] = serde_json::json!(null);
    map["tests"]["tests/test_report.py::test_report"]["data"][secret.to_str().unwrap()] =
        serde_json::json!("x");
    // The first 20 hex digits of sha1("s"), as `impact.py` digests a file.
    map["tests"]["tests/test_scale.py::test_scale[1-2]"]["data"]["data_link/secret"] =
        serde_json::json!("a0f1490a20d0211c997b");
    std::fs::write(&file, map.to_string()).unwrap();

    let (rest, _) = with_and_without(repo.path(), &python, &["--impact-map", file.to_str().unwrap()]);
    assert!(rest.contains("ruled out 1 test:"), "{rest}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "s", "nothing outside the project is written");
}

#[test]
fn a_map_made_before_python_3_12_rules_out_the_same_tests() {
    let python = python_at("3.11");
    let repo = mapped("added_test", &python);

    let (rest, report) = with_and_without(repo.path(), &python, &[]);

    let first = first_round(&report);
    assert!(first.contains("ruled out 1 test of them"), "{first}");
    assert!(rest.contains("ruled out 4 tests"), "{rest}");
}

#[test]
fn a_trace_function_set_in_place_of_the_probe_s_before_python_3_12_is_never_believed() {
    let python = python_at("3.11");
    let repo = fixture_repo_variant("impact_map", "body");
    let out = tempfile::tempdir().unwrap();
    let map_file = out.path().join("map.json");
    let traced = |conftest: &str| {
        std::fs::write(repo.path().join("tests/conftest.py"), conftest).unwrap();
        git(repo.path(), &["commit", "-q", "-am", "tests trace themselves"]);
        let args = ["map", "--python", python.to_str().unwrap(), "--output", map_file.to_str().unwrap()];
        mutdelta(repo.path(), &args)
    };
    let factor = "import sys\n\nimport pytest\n\n\n@pytest.fixture\ndef factor():\n    return 2\n";

    // Each test sets its own for a while, as a test of a debugger would (or drops the probe's,
    // as a RecursionError raised in it does): what they ran is not all recorded, so the map
    // never rules them out.
    let each = format!("{factor}\n\n@pytest.fixture(autouse=True)\ndef traced():\n    sys.settrace(lambda *args: None)\n    yield\n    sys.settrace(None)\n");
    let built = traced(&each);
    assert_eq!(built.code, 0, "{built:?}");
    let map: Value = serde_json::from_slice(&std::fs::read(&map_file).unwrap()).unwrap();
    let tests = map["tests"].as_object().unwrap();
    assert_eq!(tests.len(), 7, "{map}");
    assert!(tests.values().all(|test| test["untraced"] == true), "{map}");

    // Coverage measurement or a debugger set for the whole session hides every test from it.
    let session = format!("{factor}\n\nsys.settrace(lambda *args: None)\n");
    std::fs::remove_file(&map_file).unwrap();
    std::fs::remove_dir_all(repo.path().join(".git/mutdelta")).unwrap();
    let built = traced(&session);
    assert_eq!(built.code, 2, "{built:?}");
    assert!(
        built.stderr.contains(
            "another trace function, such as coverage measurement or a debugger, took the probe's place"
        ),
        "{built:?}"
    );
    let kept = repo.path().join(".git/mutdelta/python/impact");
    let maps = std::fs::read_dir(&kept).map_or(0, |entries| entries.count());
    assert_eq!(maps, 0, "nothing the run recorded is kept in {}", kept.display());
    assert!(!map_file.exists());
}

#[test]
fn a_change_that_edits_no_test_runs_only_the_tests_that_can_reach_it() {
    let python = python312();
    let repo = mapped("source", &python);

    let (mapped, report) = checked(repo.path(), &python, &[]);
    let (_, whole) = checked(repo.path(), &python, &["--no-impact-map", "--no-cache"]);

    assert_eq!(verdicts(&report), verdicts(&whole), "the map changed a verdict");
    // Of the six tests, only test_shout ran `shout`.
    assert!(mapped.stderr.contains("ruled out 5 tests"), "{mapped:?}");
    let first = report["mutdelta"]["steps"][0]["step"].as_str().unwrap();
    assert!(first.starts_with("baseline; the test-impact map recorded at commit "), "{first}");
}

#[test]
fn a_change_no_recorded_test_can_reach_is_uncovered_without_running_a_test() {
    let python = python312();
    let repo = mapped("untested", &python);

    let (mapped, report) = checked(repo.path(), &python, &[]);
    let (_, whole) = checked(repo.path(), &python, &["--no-impact-map", "--no-cache"]);

    assert_eq!(verdicts(&report), verdicts(&whole), "the map changed a verdict");
    assert!(mapped.stderr.contains("ruled out 6 tests"), "{mapped:?}");
    let statuses: Vec<Value> = verdicts(&report).into_iter().map(|v| v.3).collect();
    assert!(!statuses.is_empty() && statuses.iter().all(|s| s == "NoCoverage"), "{statuses:?}");
}
