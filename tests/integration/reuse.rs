//! Coverage runs split over processes, and reused by a re-run of the same content: the verdicts never change.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use crate::common::{
    check, fixture_repo, fixture_repo_variant, git, mutants_on_line, mutdelta, python, read_report as report,
};

/// A mutant's status, the tests that ran it (sorted) and those that failed.
type Verdict = (String, Vec<String>, Vec<String>);

/// Per mutant (file, id): its verdict.
fn verdicts(report: &Value) -> BTreeMap<(String, String), Verdict> {
    let mut out = BTreeMap::new();
    for (file, entry) in report["files"].as_object().unwrap() {
        for mutant in entry["mutants"].as_array().unwrap() {
            let ids = |key: &str| {
                let mut ids: Vec<String> = mutant[key]
                    .as_array()
                    .map(|ids| ids.iter().map(|id| id.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                ids.sort();
                ids
            };
            out.insert(
                (file.clone(), mutant["id"].as_str().unwrap().to_string()),
                (mutant["status"].as_str().unwrap().to_string(), ids("coveredBy"), ids("killedBy")),
            );
        }
    }
    out
}

/// The coverage runs' steps: (name, the exit of each process it ran).
fn coverage_steps(report: &Value) -> Vec<(String, Vec<String>)> {
    report["mutdelta"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["step"].as_str().unwrap().starts_with("baseline"))
        .map(|step| {
            let exits = step["commands"].as_array().unwrap();
            let exits = exits.iter().map(|command| command["exit"].as_str().unwrap().to_string()).collect();
            (step["step"].as_str().unwrap().to_string(), exits)
        })
        .collect()
}

/// Tells the repository's cache that `test_file` (the change's tests) holds a test known to
/// take seconds: every shard of the first coverage run then starts at once (an id no run
/// measures, so none forgets it).
fn known_slow(repo: &Path, test_file: &str) {
    let memory = repo.join(".git/mutdelta/python");
    std::fs::create_dir_all(&memory).unwrap();
    let durations = format!(r#"{{"{test_file}::test_known_slow": 5.0}}"#);
    std::fs::write(memory.join("durations.json"), durations).unwrap();
}

/// The check of `fixture`'s change, which passes, with a slow test known (so its coverage run is
/// split at once): the report, and the exit of each process of that first coverage run.
fn passing_check_known_slow(fixture: &str, test_file: &str) -> (Value, Vec<String>) {
    let repo = fixture_repo(fixture);
    known_slow(repo.path(), test_file);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let report = report(&json);
    let (step, exits) = coverage_steps(&report).remove(0);
    assert_eq!(step, "baseline");
    (report, exits)
}

fn probe_files(repo: &Path) -> usize {
    std::fs::read_dir(repo.join(".git/mutdelta/python/probe")).map_or(0, |dir| dir.count())
}

#[test]
fn a_rerun_of_the_same_content_reuses_the_coverage_runs_and_reaches_the_same_verdicts() {
    // The change's tests, then the rest of the suite with its doctests: two coverage runs (the
    // change also edits a test; the kill-loss audit's runs are left out here).
    let repo = fixture_repo("suite_wide");
    let out = tempfile::tempdir().unwrap();
    let json = |name: &str| out.path().join(name).to_str().unwrap().to_string();

    let python = python();
    let alone = mutdelta(
        repo.path(),
        &[
            "check",
            "--python",
            python.to_str().unwrap(),
            "-j",
            "1",
            "--commit",
            "HEAD",
            "--no-cache",
            "--no-audit",
            "--json",
            &json("alone.json"),
        ],
    );
    assert_eq!(probe_files(repo.path()), 0, "--no-cache keeps nothing");
    known_slow(repo.path(), "tests/test_text.py");
    // The test-impact map the first check records would choose which tests a module-level
    // mutant tries first in the re-run (and the run without a cache has none): left out here.
    let first = check(
        repo.path(),
        &["--commit", "HEAD", "--no-audit", "--no-impact-map", "--json", &json("first.json")],
    );
    // The verdicts themselves are remembered too: without them, the re-run reaches its own.
    std::fs::remove_dir_all(repo.path().join(".git/mutdelta/verdicts")).unwrap();
    let again_run = check(
        repo.path(),
        &["--commit", "HEAD", "--no-audit", "--no-impact-map", "--json", &json("again.json")],
    );
    assert_eq!((alone.code, first.code, again_run.code), (1, 1, 1), "{alone:?}\n{first:?}\n{again_run:?}");

    let (alone, first, again) =
        (report(json("alone.json")), report(json("first.json")), report(json("again.json")));
    let measured = coverage_steps(&first);
    assert_eq!(measured.len(), 2, "{measured:?}");
    for (step, exits) in &measured {
        assert!(!step.contains("reused"), "{step}");
        assert!(exits.iter().all(|exit| exit == "exit code 0"), "{step} {exits:?}");
    }
    assert_eq!(measured[0].1.len(), 2, "two jobs, two shards at once: {measured:?}");
    // Begun beside the first round, the rest of the suite runs in one process until that round
    // is over, then in two if it is still running.
    assert_eq!(measured[1].0, "baseline of the rest of the suite (begun beside the first round)");
    assert!(matches!(measured[1].1.len(), 1 | 2), "{measured:?}");
    for (step, exits) in coverage_steps(&alone) {
        assert_eq!(exits, ["exit code 0"], "one job, one process: {step}");
    }
    assert_eq!(
        probe_files(repo.path()),
        2,
        "both coverage runs are kept, and the re-run asks the same questions: {:?}",
        coverage_steps(&report(json("again.json")))
    );
    // The console says so too, rather than that the tests took no time.
    let baselines: Vec<&str> =
        again_run.stderr.lines().filter(|line| line.contains(" passed unmutated")).collect();
    assert_eq!(baselines.len(), 2, "{again_run:?}");
    for line in baselines {
        assert!(
            line.ends_with("passed unmutated (reused: an earlier run measured them on the same content)"),
            "{again_run:?}"
        );
    }
    for (step, exits) in coverage_steps(&again) {
        assert!(step.contains("(reused: an earlier run measured the same files"), "{step}");
        assert!(exits.is_empty(), "nothing ran for {step}: {exits:?}");
    }
    // The shards together ran every test once, as one process did; reused maps select alike.
    assert!(!verdicts(&alone).is_empty());
    assert_eq!(verdicts(&first), verdicts(&alone));
    assert_eq!(verdicts(&again), verdicts(&alone));

    // Any changed file is new content: measured again.
    std::fs::write(repo.path().join("tests/test_star.py"), {
        let old = std::fs::read_to_string(repo.path().join("tests/test_star.py")).unwrap();
        format!("{old}\n\ndef test_added_later():\n    assert True\n")
    })
    .unwrap();
    git(repo.path(), &["commit", "-q", "-a", "--amend", "--no-edit"]);
    let changed = check(repo.path(), &["--commit", "HEAD", "--json", &json("changed.json")]);
    assert_eq!(changed.code, 1, "{changed:?}");
    for (step, exits) in coverage_steps(&report(json("changed.json"))) {
        assert!(!step.contains("reused") && !exits.is_empty(), "{step}: {exits:?}");
    }
}

#[test]
fn a_shard_that_breaks_the_tests_order_is_run_again_in_one_process() {
    // An earlier run found `test_lookup_after_register` slow, so a shard starts it first,
    // before the test it leans on: that shard fails. The tests in one process decide.
    let repo = fixture_repo("order_dependent");
    let memory = repo.path().join(".git/mutdelta/python");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(
        memory.join("durations.json"),
        r#"{"tests/test_state.py::test_lookup_after_register": 5.0}"#,
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = report(&json);
    let steps = coverage_steps(&report);
    let (step, exits) = &steps[0];
    assert_eq!(step, "baseline");
    assert_eq!(exits.len(), 3, "two shards, then one process: {exits:?}");
    assert!(exits[..2].iter().any(|exit| exit == "exit code 1"), "{exits:?}");
    assert_eq!(exits[2], "exit code 0");
    // The verdicts are those of the tests in their order (as without shards).
    let by_line = |line: u64| -> Vec<String> {
        let mutants = mutants_on_line(&report, "pkg/state.py", line);
        mutants.iter().map(|m| m["status"].as_str().unwrap().to_string()).collect()
    };
    assert!(!by_line(10).is_empty() && by_line(10).iter().all(|s| s == "RuntimeError"), "{:?}", by_line(10));
    assert!(!by_line(5).is_empty() && by_line(5).iter().all(|s| s == "Survived"), "{:?}", by_line(5));
}

#[test]
fn shards_that_collect_the_tests_in_different_orders_give_way_to_one_process() {
    // A conftest shuffles the tests, as pytest-randomly does: each shard's order is its own,
    // so claiming "the next test" would run some tests twice and others never.
    let (report, exits) = passing_check_known_slow("shuffled_order", "tests/test_calc.py");
    assert_eq!(exits.len(), 3, "two shards that disagree, then one process: {exits:?}");
    assert!(exits[..2].contains(&"exit code 1".to_string()), "{exits:?}");
    assert_eq!(exits[2], "exit code 0");
    // `scale` is run by one test of eleven; its mutants are caught by it.
    let mutants = report["files"]["pkg/calc.py"]["mutants"].as_array().unwrap();
    assert!(!mutants.is_empty());
    for mutant in mutants {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        assert_eq!(mutant["killedBy"][0], "tests/test_calc.py::test_scale", "{mutant}");
    }
}

#[test]
fn shards_share_a_hash_seed_so_tests_parametrized_over_a_set_are_collected_in_one_order() {
    // Each interpreter orders a set of strings by its own hashes: shards that did not share a
    // seed would disagree on the order and give way to a third process.
    let (report, exits) = passing_check_known_slow("set_parametrized", "tests/test_names.py");
    assert_eq!(exits, &["exit code 0", "exit code 0"], "two shards that agree: {report}");
    let mutants = mutants_on_line(&report, "pkg/names.py", 6);
    assert!(!mutants.is_empty(), "{report}");
    for mutant in mutants {
        assert_eq!(mutant["killedBy"], json!(["tests/test_names.py::test_whisper"]), "{mutant}");
    }
}

#[test]
fn a_coverage_run_over_within_a_second_starts_no_other_shard() {
    // Nothing is known of the tests' durations: the second shard waits a second for the first,
    // and a coverage run over by then is one process. (On a machine so busy that the first
    // takes longer, the second starts, but never before.)
    let repo = fixture_repo("suite_wide");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(
        repo.path(),
        &["--commit", "HEAD", "--no-audit", "--no-cache", "--json", json.to_str().unwrap()],
    );

    assert_eq!(run.code, 1, "{run:?}");
    let report = report(&json);
    let steps: Vec<&Value> = report["mutdelta"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["step"].as_str().unwrap().starts_with("baseline"))
        .collect();
    assert_eq!(steps.len(), 2, "the change's tests, then the rest of the suite: {steps:?}");
    for step in steps {
        let commands = step["commands"].as_array().unwrap();
        let first = commands[0]["duration"].as_f64().unwrap();
        match commands.len() {
            1 => assert_eq!(commands[0]["exit"], "exit code 0", "{step}"),
            2 => assert!(first >= 900.0, "the second shard started before the first ran a second: {step}"),
            _ => panic!("{step}"),
        }
    }
}

#[test]
fn one_edited_test_is_measured_in_one_process_before_the_change() {
    // The kill-loss audit runs the one test the change edits before it: known to be slow, it
    // would start every process at once, and each after the first would only collect it again.
    let repo = fixture_repo_variant("kill_loss", "strengthened");
    git(repo.path(), &["reset", "-q", "--hard", "HEAD~1"]);
    let tests = repo.path().join("tests/test_invoice.py");
    let source = std::fs::read_to_string(&tests).unwrap();
    let edited = source.replace(
        "        self.assertEqual(tax_rate(\"US\"), Decimal(\"0.075\"))\n",
        "        self.assertGreaterEqual(tax_rate(\"US\"), 0)\n",
    );
    assert_ne!(source, edited);
    std::fs::write(&tests, edited).unwrap();
    git(repo.path(), &["commit", "-q", "-am", "a weaker test_rate"]);
    let named = "tests/test_invoice.py::TaxRateTest::test_rate";
    let memory = repo.path().join(".git/mutdelta/python");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(memory.join("durations.json"), format!(r#"{{"{named}": 5.0}}"#)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "a kill of test_rate is lost: {run:?}");
    let audit = &report(&json)["mutdelta"]["audit"];
    assert_eq!(audit["editedTests"], serde_json::json!([named]));
    let commands = audit["steps"][0]["commands"].as_array().unwrap();
    let argv: Vec<&Value> = commands.iter().map(|command| &command["argv"]).collect();
    assert_eq!(commands.len(), 1, "{argv:?}");
}

#[test]
fn a_slow_test_known_elsewhere_in_the_suite_does_not_split_the_first_coverage_run_at_once() {
    // The durations kept name a slow test of the rest of the suite only: the change's tests
    // are not known to be slow, so their run's second shard still waits a second.
    let repo = fixture_repo("suite_wide");
    known_slow(repo.path(), "tests/test_elsewhere.py");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = report(&json);
    let steps = report["mutdelta"]["steps"].as_array().unwrap();
    let baseline = &steps.iter().find(|step| step["step"] == "baseline").unwrap()["commands"];
    match baseline.as_array().unwrap().len() {
        1 => {}
        2 => assert!(
            baseline[0]["duration"].as_f64().unwrap() >= 900.0,
            "the second shard started before the first ran a second: {baseline}"
        ),
        _ => panic!("{baseline}"),
    }
}

/// Per mutant id: (the line it is on, whether its verdict was reused, its status).
fn reuse_by_mutant(report: &Value) -> BTreeMap<String, (u64, bool, String)> {
    let mutants = report["files"]["calc.py"]["mutants"].as_array().unwrap();
    mutants
        .iter()
        .map(|m| {
            let line = m["location"]["start"]["line"].as_u64().unwrap();
            let reused = m["reused"].as_bool().unwrap_or(false);
            (m["id"].as_str().unwrap().to_string(), (line, reused, m["status"].as_str().unwrap().to_string()))
        })
        .collect()
}

#[test]
fn a_rerun_reuses_verdicts_and_a_changed_test_module_runs_again_only_the_mutants_it_tested() {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    git(root, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(root.join("tests")).unwrap();
    std::fs::write(
        root.join("calc.py"),
        "def double(x):\n    return x * 2\n\n\ndef half(x):\n    return x // 2\n",
    )
    .unwrap();
    std::fs::write(
        root.join("tests/test_double.py"),
        "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n",
    )
    .unwrap();
    std::fs::write(
        root.join("tests/test_half.py"),
        "from calc import half\n\n\ndef test_half():\n    assert half(4) >= 1\n",
    )
    .unwrap();
    std::fs::write(
        root.join("conftest.py"),
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "calc"]);
    let out = tempfile::tempdir().unwrap();
    let lines = out.path().join("lines.txt");
    std::fs::write(&lines, "calc.py:2\ncalc.py:6\n").unwrap();
    let run = |name: &str| {
        let json = out.path().join(name);
        let run = check(root, &["--lines", lines.to_str().unwrap(), "--json", json.to_str().unwrap()]);
        (run, report(&json))
    };

    let (first_run, first_report) = run("first.json");
    let (again_run, again_report) = run("again.json");
    assert_eq!(
        (first_run.code, again_run.code),
        (1, 1),
        "`x // 2` has a survivor: {first_run:?}\n{again_run:?}"
    );
    let first = reuse_by_mutant(&first_report);
    let again = reuse_by_mutant(&again_report);
    assert!(first.values().all(|(_, reused, _)| !reused), "{first:?}");
    assert!(first.values().any(|(line, _, status)| *line == 6 && status == "Survived"), "{first:?}");
    assert!(again.values().all(|(_, reused, _)| *reused), "{again:?}");
    let statuses = |verdicts: &BTreeMap<String, (u64, bool, String)>| -> Vec<(u64, String)> {
        verdicts.values().map(|(line, _, status)| (*line, status.clone())).collect()
    };
    assert_eq!(statuses(&again), statuses(&first), "the same verdicts");
    let note = format!("reused {} verdicts an earlier run reached", again.len());
    assert!(again_run.stderr.contains(&note), "{note}: {again_run:?}");
    assert!(!again_run.stderr.contains("testing "), "no mutant ran: {again_run:?}");

    // A stronger test of `half`: its mutants run again, those of `double` are reused.
    std::fs::write(
        root.join("tests/test_half.py"),
        "from calc import half\n\n\ndef test_half():\n    assert half(4) == 2\n    assert half(5) == 2\n",
    )
    .unwrap();
    let (edited, edited_report) = run("edited.json");
    assert_eq!(edited.code, 0, "{edited:?}");
    for (id, (line, reused, status)) in reuse_by_mutant(&edited_report) {
        assert_eq!(reused, line == 2, "mutant {id} on line {line}: {status}");
        assert_eq!(status, "Killed", "mutant {id} on line {line}");
    }

    // --no-cache reuses nothing.
    let json = out.path().join("fresh.json");
    let fresh =
        check(root, &["--lines", lines.to_str().unwrap(), "--no-cache", "--json", json.to_str().unwrap()]);
    assert_eq!(fresh.code, 0, "{fresh:?}");
    assert!(!fresh.stderr.contains("reused"), "{fresh:?}");
    assert!(reuse_by_mutant(&report(&json)).values().all(|(_, reused, _)| !reused));
}

/// The compile check's answers kept in the cache (one file per request).
fn compiled_answers(repo: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(repo.join(".git/mutdelta/python/compiled"))
        .map(|dir| dir.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_rerun_of_the_same_content_reads_the_compile_checks_answers_and_new_content_asks_again() {
    let repo = fixture_repo("tested_elsewhere");
    let out = tempfile::tempdir().unwrap();
    let json = |name: &str| out.path().join(name).to_str().unwrap().to_string();
    let statuses = |name: &str| -> Vec<(String, String)> {
        report(json(name))["files"]["pkg/fees.py"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (m["status"].as_str().unwrap().to_string(), m["statusReason"].as_str().unwrap_or("").into())
            })
            .collect()
    };
    let first = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", &json("first.json")]);
    assert_eq!(first.code, 1, "{first:?}");
    assert!(statuses("first.json").iter().all(|(status, _)| status != "CompileError"));
    let answers = compiled_answers(repo.path());
    assert_eq!(answers.len(), 1, "{answers:?}");

    // An answer planted under the same request is what a re-run reads: it never asks again.
    let mut planted: Value = serde_json::from_slice(&std::fs::read(&answers[0]).unwrap()).unwrap();
    for answer in planted["mutants"].as_array_mut().unwrap() {
        *answer = Value::from("SyntaxError: planted");
    }
    std::fs::write(&answers[0], serde_json::to_vec(&planted).unwrap()).unwrap();
    let again = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", &json("again.json")]);
    assert_eq!(again.code, 0, "no mutant left to catch: {again:?}");
    let reread = statuses("again.json");
    assert!(!reread.is_empty());
    assert!(
        reread.iter().all(|(status, why)| status == "CompileError" && why.contains("planted")),
        "{reread:?}"
    );

    // New content is a new request: compiled afresh, the planted answer left aside.
    let fees = repo.path().join("pkg/fees.py");
    let source = std::fs::read_to_string(&fees).unwrap();
    std::fs::write(&fees, source.replace("base = 50", "base = 49")).unwrap();
    git(repo.path(), &["commit", "-q", "-a", "--amend", "--no-edit"]);
    let changed = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", &json("changed.json")]);
    assert_eq!(changed.code, 1, "{changed:?}");
    assert!(statuses("changed.json").iter().all(|(status, _)| status != "CompileError"));
    assert_eq!(compiled_answers(repo.path()).len(), 2);
}

/// A first run, and one after the store is removed, reuse nothing, though the kill-loss audit
/// asks again what the check asked of `test_rate`: that answer is said to be this check's own
/// measurement, with the time it took, never an earlier run's.
#[test]
fn a_run_with_nothing_kept_says_nothing_is_reused() {
    let repo = fixture_repo_variant("kill_loss", "both");
    let answered = "baseline: tests/test_invoice.py::TaxRateTest::test_rate passed unmutated in ";
    for _ in 0..2 {
        let run = check(repo.path(), &["--commit", "HEAD"]);
        assert!(!run.stderr.contains("reused"), "{run:?}");
        assert_eq!(run.stderr.matches(answered).count(), 2, "{run:?}");
        std::fs::remove_dir_all(repo.path().join(".git/mutdelta")).unwrap();
    }
    let run = check(repo.path(), &["--commit", "HEAD"]);
    let again = check(repo.path(), &["--commit", "HEAD"]);
    assert!(!run.stderr.contains("reused"), "{run:?}");
    let reused = "baseline: tests/test_invoice.py::TaxRateTest::test_rate passed unmutated (reused: an earlier run measured them on the same content)";
    assert_eq!(again.stderr.matches(reused).count(), 2, "a run after a kept one reuses: {again:?}");
}
