//! Which tests face a Python mutant: the tests that run its line, counted in subprocesses and forks
//! and in a plugin loaded before any conftest; code run at import meets each test file once; a test
//! that fails without the mutant in its selection kills nothing.

use serde_json::{json, Value};

use crate::common::{
    check, fixture_repo, fixture_repo_variant, git, mutants_on_line, read_valid_report, repo_of, snapshot,
};

#[test]
fn a_project_file_imported_before_any_conftest_is_watched_like_the_rest() {
    // `addopts = -p pkg.testing` loads the project's plugin, which imports `pkg.core`, before
    // pytest loads the probe's `-p`: the probe's loader must be in place before pytest starts
    // (and, under `filterwarnings = error`, pytest must not warn about the probe imported first).
    // Unwatched, `never_called` ran "at import" and faced the whole suite: Survived, though no
    // test runs it; and `triple` faced every test instead of its own. So did the plugin's own
    // lines, which pytest's assertion rewriter loads rather than the probe's finder. The plugin's
    // `pytest_configure` calls `marker_lines`: a mutant of it stops pytest from starting.
    let repo = fixture_repo("plugin_in_addopts");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    let never_called = mutants_on_line(&report, "pkg/core.py", 13);
    assert!(!never_called.is_empty(), "{report}");
    for mutant in never_called {
        assert_eq!(mutant["status"], "NoCoverage", "{mutant}");
    }
    let triple = mutants_on_line(&report, "pkg/core.py", 9);
    assert!(!triple.is_empty(), "{report}");
    for mutant in triple {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        assert_eq!(mutant["coveredBy"], json!(["tests/test_core.py::test_triple"]), "{mutant}");
    }
    // The plugin module itself, which pytest's assertion rewriter loads (its asserts stay
    // rewritten: a test reads their message): a fixture's line is run by the test that uses
    // it, and a function nobody calls by no test.
    let fixture = mutants_on_line(&report, "pkg/testing.py", 21);
    assert!(!fixture.is_empty(), "{report}");
    for mutant in fixture {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        assert_eq!(mutant["coveredBy"], json!(["tests/test_core.py::test_greeting"]), "{mutant}");
    }
    let unused = mutants_on_line(&report, "pkg/testing.py", 29);
    assert!(!unused.is_empty(), "{report}");
    for mutant in unused {
        assert_eq!(mutant["status"], "NoCoverage", "{mutant}");
    }
    // The return value, and the f-string's text `: `: both make the plugin's markers wrong.
    let configured = mutants_on_line(&report, "pkg/core.py", 17);
    assert_eq!(configured.len(), 2, "{report}");
    assert!(configured.iter().all(|m| m["status"] == "Killed"), "{configured:?}");
    let none = configured.iter().find(|m| m["mutatorName"] == "ReturnValue").expect("the return value");
    assert_eq!(
        none["statusReason"],
        "pytest could not start: INTERNALERROR> TypeError: 'NoneType' object is not iterable",
        "{none}"
    );
}

#[test]
fn what_a_test_runs_in_a_subprocess_or_a_fork_counts_as_run_by_it() {
    // `shout` runs only in a CLI process the test starts, `whisper` only in a child the test
    // forks: by the test's own process alone, both lines would be NoCoverage.
    let repo = fixture_repo("subprocess_tests");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    for (line, test) in [
        (2, "tests/test_cli.py::test_the_cli_shouts"),
        (6, "tests/test_cli.py::test_a_forked_child_whispers"),
    ] {
        let mutants = mutants_on_line(&report, "pkg/core.py", line);
        assert!(!mutants.is_empty(), "{report}");
        for mutant in mutants {
            assert_eq!(mutant["status"], "Killed", "{mutant}");
            assert_eq!(mutant["coveredBy"], json!([test]), "{mutant}");
        }
    }
}

#[test]
fn code_run_at_import_meets_the_tests_that_ran_it_first_and_each_test_file_once() {
    // `shout` runs at import (GREETING) and under test_shout; GREETING is checked by no test.
    let repo = fixture_repo_variant("tested_elsewhere", "import_time");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    // Each run's arguments that name tests.
    let runs = |mutant: &Value| -> Vec<Vec<String>> {
        let commands = mutant["run"]["commands"].as_array().unwrap();
        commands
            .iter()
            .map(|command| {
                let argv = command["argv"].as_array().unwrap().iter().filter_map(Value::as_str);
                argv.filter(|arg| arg.contains("tests/")).map(String::from).collect()
            })
            .collect()
    };
    // A fresh import each, against test_shout alone: it fails, and the rest of the file is
    // not needed.
    let shout = mutants_on_line(&report, "pkg/names.py", 6);
    assert_eq!(shout.len(), 3);
    for mutant in shout {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        assert_eq!(mutant["run"]["how"], "fork", "{mutant}");
        // A kill made while the rest of the suite, begun beside, still runs is made again once
        // it is over (timing decides whether it meets it): the same run, and the reason says so.
        let runs = runs(mutant);
        let again = mutant["statusReason"]
            .as_str()
            .unwrap()
            .contains("run again once the rest of the suite, begun beside, was over");
        let expected = vec![vec!["tests/test_names.py::test_shout".to_string()]; if again { 2 } else { 1 }];
        assert_eq!(runs, expected, "{mutant}");
    }
    // Survivors of the change's test file, run at import: the second round runs the rest of
    // the suite, without that file, which already ran against them in full.
    let greeting = mutants_on_line(&report, "pkg/names.py", 9);
    assert_eq!(greeting.len(), 3);
    // Each ran under every test of the suite, and the report says so: the change's test file,
    // then each test of the rest by name.
    let every_test = [
        "tests/test_fees.py::test_nothing_to_pay_on_nothing",
        "tests/test_fees.py::test_small_amounts_pay_the_base_fee",
        "tests/test_fees.py::test_the_fee_is_capped",
        "tests/test_names.py",
    ];
    for mutant in greeting {
        assert_eq!(mutant["status"], "Survived", "{mutant}");
        let mut covered: Vec<&str> =
            mutant["coveredBy"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        covered.sort();
        assert_eq!(covered, every_test, "{mutant}");
        assert_eq!(
            runs(mutant),
            [vec!["tests/test_names.py"], vec!["--deselect=tests/test_names.py::"]],
            "{mutant}"
        );
    }
}

#[test]
fn a_test_that_fails_without_the_mutant_in_its_selection_kills_nothing() {
    // `lookup`'s mutants are run only by a test that needs another test to have run first:
    // alone it fails with or without them. That is no kill.
    let repo = fixture_repo("order_dependent");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    let lookup = mutants_on_line(&report, "pkg/state.py", 10);
    assert!(!lookup.is_empty());
    for mutant in lookup {
        assert_eq!(mutant["status"], "RuntimeError", "{mutant}");
        assert!(mutant["statusReason"].as_str().unwrap().contains("fail without the mutant too"), "{mutant}");
    }
    // Storing the value is run only by test_register, which checks the return value alone.
    let register = mutants_on_line(&report, "pkg/state.py", 5);
    assert!(!register.is_empty() && register.iter().all(|m| m["status"] == "Survived"), "{register:?}");
    // `count` is run by a slow test and by a fast one that leans on it: fastest first, the
    // fast one fails alone, mutant or not; in the suite's order the tests pass unmutated, and
    // that run decides.
    let count = mutants_on_line(&report, "pkg/state.py", 14);
    assert!(!count.is_empty());
    for mutant in count {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        assert!(mutant["statusReason"].as_str().unwrap().contains("run in the suite's order"), "{mutant}");
        assert_eq!(mutant["killedBy"][0], "tests/test_state.py::test_fill_slowly", "{mutant}");
    }
}

#[test]
fn module_level_code_tries_first_the_test_files_that_import_its_module() {
    // `LIMIT` is set at import; `capped` reads it. The change edits no test, so the whole suite
    // is the first round, and the line ran outside every test: each mutant meets every test.
    // `tests/test_capping.py` imports `pkg.bounds` and is tried first, alone: it kills them, and
    // the other files (which import none of it) need not run.
    let repo = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = repo.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    git(repo.path(), &["init", "-q", "-b", "main"]);
    write("pkg/__init__.py", "");
    write("pkg/bounds.py", "LIMIT = 3\n\n\ndef capped(x):\n    return min(x, LIMIT)\n");
    write(
        "tests/test_capping.py",
        "from pkg.bounds import capped\n\n\ndef test_capped():\n    assert capped(10) == 3\n",
    );
    for name in ["alpha", "beta", "gamma"] {
        write(
            &format!("tests/test_{name}.py"),
            &format!("def test_{name}():\n    assert len('{name}') > 3\n"),
        );
    }
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "before"]);
    write("pkg/bounds.py", "LIMIT = 1 + 2\n\n\ndef capped(x):\n    return min(x, LIMIT)\n");
    git(repo.path(), &["commit", "-q", "-a", "-m", "the change"]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    // Mutants that compile to another's code are not run.
    let limit: Vec<&Value> = mutants_on_line(&report, "pkg/bounds.py", 1)
        .into_iter()
        .filter(|m| m["status"] != "Ignored")
        .collect();
    assert!(limit.len() >= 3, "{report}");
    for mutant in limit {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        assert_eq!(mutant["killedBy"], json!(["tests/test_capping.py::test_capped"]), "{mutant}");
        let commands = mutant["run"]["commands"].as_array().unwrap();
        let first: Vec<&str> =
            commands[0]["argv"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(first.ends_with(&["tests/test_capping.py::test_capped"]), "tried alone first: {mutant}");
        let others = |command: &Value| command["argv"].to_string().contains("test_alpha");
        assert!(!commands.iter().any(others), "the other files never ran: {mutant}");
    }
}

/// A repository whose `tests/test_table.py` passes in the suite but not alone: its test reads a
/// table `tests/test_units.py` fills as pytest imports it. The change adds `double` and a test
/// of it to `tests/test_table.py`; with `failing_everywhere`, a test that always fails too.
fn passes_only_in_the_suite(failing_everywhere: bool) -> tempfile::TempDir {
    let mut tests =
        "from pkg.table import double, scale\n\n\ndef test_scale():\n    assert scale(\"kg\") == 1000\n\n\n\
                     def test_double():\n    assert double(\"kg\") == 2000\n"
            .to_string();
    if failing_everywhere {
        tests.push_str("\n\ndef test_broken():\n    assert 1 == 2, \"broken everywhere\"\n");
    }
    let scale = "UNITS = {}\n\n\ndef scale(name):\n    return UNITS[name]\n";
    repo_of(
        &[
            ("pkg/__init__.py", ""),
            ("pkg/table.py", scale),
            (
                "tests/test_units.py",
                "from pkg import table\n\ntable.UNITS[\"kg\"] = 1000\n\n\ndef test_kg():\n    assert table.scale(\"kg\") == 1000\n",
            ),
            ("tests/test_table.py", "from pkg.table import scale\n\n\ndef test_scale():\n    assert scale(\"kg\") == 1000\n"),
        ],
        &[
            ("pkg/table.py", &format!("{scale}\n\ndef double(name):\n    return 2 * UNITS[name]\n")),
            ("tests/test_table.py", &tests),
        ],
    )
}

/// The change's test file fails alone but passes in the suite's order (it needs what another
/// test file sets up as pytest imports it): the check runs the whole suite as its first round,
/// in the suite's order, and says so, instead of refusing; `double`'s mutants are caught.
#[test]
fn a_changed_test_file_that_passes_only_in_the_suite_is_checked_in_the_suite() {
    let repo = passes_only_in_the_suite(false);
    let before = snapshot(repo.path());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "every mutant of double caught, in the suite: {run:?}");
    let said = "note: tests/test_table.py failed when run apart from the rest of the suite, before any mutation (first failure: tests/test_table.py::test_scale";
    assert!(run.stdout.contains(said), "{run:?}");
    assert!(
        run.stdout.contains("but the whole test suite passes: it ran as the first round instead"),
        "{run:?}"
    );
    assert!(run.stderr.contains("running the whole test suite instead"), "said as it happens: {run:?}");
    let report = read_valid_report(&json);
    let doubled = mutants_on_line(&report, "pkg/table.py", 9);
    assert!(!doubled.is_empty(), "{report}");
    for mutant in doubled {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
    }
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
}

/// When the change's test file fails in the suite too, the check refuses, its sentence naming
/// what ran and the first failure, and `--out` keeps the refusal in the run record.
#[test]
fn a_changed_test_file_failing_in_the_suite_too_is_refused_naming_what_ran_and_the_first_failure() {
    let repo = passes_only_in_the_suite(true);
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("record");

    let run = check(repo.path(), &["--commit", "HEAD", "--out", record.to_str().unwrap()]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("error: pytest's run of the whole test suite fails before any mutation (first failure: tests/test_table.py::test_broken"),
        "{run:?}"
    );
    assert!(run.stderr.contains("broken everywhere"), "its output's end is shown: {run:?}");
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(record.join("run.json")).unwrap()).unwrap();
    let refused = kept["refused"].as_str().unwrap();
    assert!(refused.starts_with("pytest's run of the whole test suite fails before any mutation"), "{kept}");
    assert!(refused.contains("broken everywhere"), "the record keeps the output's end: {kept}");
    assert!(kept["options"].is_object(), "{kept}");
    assert!(!record.join("report.json").exists(), "no report of a check that tested nothing");
}
