//! The kill-loss audit on a change that edits tests: weakened, strengthened and moved tests, a change that also adds source, and `audit-tests` alone.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{
    check, copy_tree, fixture_repo, fixture_repo_variant, git, mutdelta, mutdelta_in_tmp, python,
    read_report, read_valid_report, snapshot, Run, FIXTURES,
};

/// `[MUT-lost]` lines of a run: (line, description, test that killed it, what happens after).
fn lost_lines(run: &Run) -> BTreeSet<(String, String, String, String)> {
    run.stdout
        .lines()
        .filter_map(|line| line.strip_prefix("[MUT-lost] billing/invoice.py:"))
        .map(|rest| {
            let (line, rest) = rest.split_once(": ").unwrap();
            let (what, rest) = rest.split_once(" — killed by ").unwrap();
            let (killer, after) = rest.split_once(" before this change, ").unwrap();
            (line.to_string(), what.to_string(), killer.to_string(), after.to_string())
        })
        .collect()
}

fn lost(line: &str, what: &str, killer: &str, after: &str) -> (String, String, String, String) {
    (line.into(), what.into(), format!("tests/test_invoice.py::{killer}"), after.into())
}

fn audit_of(report: &Value) -> &Value {
    &report["mutdelta"]["audit"]
}

#[test]
fn a_weakening_commit_exits_1_naming_each_lost_kill_and_the_test_that_had_it() {
    // The change loosens test_rate's assertion, skips test_total and deletes test_discount_limit.
    let repo = fixture_repo_variant("kill_loss", "weakened");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let rate = "TaxRateTest::test_rate";
    let expected = BTreeSet::from([
        lost("7", "force condition to True", rate, "survives after"),
        lost("9", "replace + with -", rate, "survives after"),
        lost("13", "replace `quantity * price` with None", "test_total", "no test runs it after"),
        lost("13", "replace * with /", "test_total", "no test runs it after"),
        lost("17", "force condition to False", "test_discount_limit", "survives after"),
        lost("17", "replace 100 with 101", "test_discount_limit", "survives after"),
        lost("18", "delete statement", "test_discount_limit", "no test runs it after"),
    ]);
    assert_eq!(lost_lines(&run), expected, "{run:?}");
    // The mutants the loosened test still kills, and those test_eu_rate kills, are no loss:
    // e.g. `return base * 4` -> `return base / 4` on line 8.
    assert!(!run.stdout.contains("invoice.py:8:"), "{run:?}");
    assert!(run.stdout.contains("kill-loss audit: 7 of 14 kills by the edited tests lost"), "{run:?}");

    let report = read_valid_report(&json);
    let audit = audit_of(&report);
    let edited: Vec<&str> =
        audit["editedTests"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(
        edited,
        [
            "tests/test_invoice.py::TaxRateTest::test_rate",
            "tests/test_invoice.py::test_discount_limit",
            "tests/test_invoice.py::test_total",
        ]
    );
    let lost = audit["lostKills"].as_array().unwrap();
    assert_eq!(lost.len(), 7);
    let skipped_total = lost.iter().find(|l| l["description"] == "replace * with /").unwrap();
    assert_eq!(skipped_total["file"], "billing/invoice.py");
    assert_eq!(skipped_total["killedBefore"], serde_json::json!(["tests/test_invoice.py::test_total"]));
    assert_eq!(skipped_total["statusAfter"], "NoCoverage");
    let loosened = lost.iter().find(|l| l["description"] == "replace + with -").unwrap();
    assert_eq!(loosened["statusAfter"], "Survived");
    assert_eq!(
        loosened["coveredAfter"],
        serde_json::json!(["tests/test_invoice.py::TaxRateTest::test_rate"])
    );
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
}

#[test]
fn the_audit_measures_the_edited_tests_once_even_with_nothing_kept_between_runs() {
    // Naming the lines the edited tests ran is their baseline too: under --no-cache as well,
    // the second question is answered by the first run.
    let repo = fixture_repo_variant("kill_loss", "weakened");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-cache", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    let steps: Vec<(&str, usize)> = audit_of(&report)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| (step["step"].as_str().unwrap(), step["commands"].as_array().unwrap().len()))
        .filter(|(name, _)| !name.contains("canary"))
        .collect();
    let names: Vec<&str> = steps.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "the edited tests before the change",
            "baseline (answered by this check's earlier measurement of the same files and tests)",
            // After the change (other files, other questions; the rest of the suite begun as
            // soon as lines are known to be left uncovered), and the confirmation of the losses
            // in a copy of its own: measured afresh.
            "baseline",
            "baseline of the rest of the suite (begun beside the first round)",
            "baseline",
        ]
    );
    let ran: Vec<usize> = steps.iter().map(|(_, commands)| *commands).collect();
    assert_eq!(ran[1], 0, "nothing ran again: {steps:?}");
    assert!(ran.iter().enumerate().all(|(index, &commands)| index == 1 || commands > 0), "{steps:?}");
}

#[test]
fn the_audit_keeps_docstrings_first_and_future_imports_after_them() {
    // The audit watches every line of the source: no probe may come before a module's
    // docstring (its `from __future__` import must follow it) nor a function's or class's
    // (the edited test reads them).
    let repo = fixture_repo_variant("docstrings", "after");

    let run = check(repo.path(), &["--commit", "HEAD"]);

    assert_eq!(run.code, 1, "{run:?}");
    let lost: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("[MUT-lost]")).collect();
    assert_eq!(
        lost,
        [
            r#"[MUT-lost] pkg/text.py:7: replace "!" with "" — killed by tests/test_text.py::test_shout before this change, survives after"#
        ],
        "{run:?}"
    );
}

#[test]
fn a_strengthening_commit_reports_no_loss_and_exits_0() {
    let repo = fixture_repo_variant("kill_loss", "strengthened");
    let run = check(repo.path(), &["--commit", "HEAD"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(lost_lines(&run).is_empty(), "{run:?}");
    assert!(run.stdout.contains("kill-loss audit: 0 of 14 kills by the edited tests lost"), "{run:?}");
}

#[test]
fn a_kill_that_seems_lost_is_confirmed_against_the_whole_suite_first() {
    // The change puts a test first that builds the memoized pattern and checks nothing of it:
    // the edited test no longer runs the line, but it still fails on what the line made. By
    // the tests that run the line, two kills are lost; by the whole suite, as it runs, none.
    let repo = fixture_repo("memo_loss");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("kill-loss audit: 0 of 8 kills by the edited tests lost"), "{run:?}");
    assert!(
        run.stderr.contains("confirming 2 survivors against the whole test suite, as it runs"),
        "{run:?}"
    );
    let report = read_report(&json);
    let audit = audit_of(&report);
    assert_eq!(audit["lostKills"], serde_json::json!([]), "{audit}");
}

#[test]
fn tests_moved_and_renamed_into_another_file_lose_no_kill() {
    let repo = fixture_repo_variant("kill_loss", "moved");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = read_report(&json);
    let audit = audit_of(&report);
    assert_eq!(
        audit["editedTests"],
        serde_json::json!([
            "tests/test_invoice.py::test_discount_limit",
            "tests/test_invoice.py::test_total"
        ])
    );
    assert!(audit["killedBefore"].as_u64().unwrap() > 0, "{audit}");
    assert_eq!(audit["lostKills"], serde_json::json!([]), "{run:?}");
}

#[test]
fn a_change_that_adds_source_and_weakens_a_test_gets_both_checks() {
    let repo = fixture_repo_variant("kill_loss", "both");
    let run = check(repo.path(), &["--commit", "HEAD"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("mutation delta: 3 of 3 mutants caught on 2 new lines"), "{run:?}");
    let rate = "TaxRateTest::test_rate";
    assert_eq!(
        lost_lines(&run),
        BTreeSet::from([
            lost("7", "force condition to True", rate, "survives after"),
            lost("9", "replace + with -", rate, "survives after"),
        ]),
        "{run:?}"
    );
}

#[test]
fn the_kills_the_audit_carries_run_with_the_changes_own_mutants_and_leave_their_verdicts_alone() {
    // The change adds two source lines and loosens test_rate. The audit's side before the change
    // runs first; the 8 kills it carries after the change join the change's 3 mutants in one
    // coverage run of the change's test file and one set of copies.
    let repo = fixture_repo_variant("kill_loss", "both");
    let out = tempfile::tempdir().unwrap();
    let (audited_json, plain_json) = (out.path().join("audited.json"), out.path().join("plain.json"));

    let audited =
        check(repo.path(), &["--commit", "HEAD", "--no-cache", "--json", audited_json.to_str().unwrap()]);
    let plain = check(
        repo.path(),
        &["--commit", "HEAD", "--no-cache", "--no-audit", "--json", plain_json.to_str().unwrap()],
    );

    assert_eq!((audited.code, plain.code), (1, 0), "{audited:?}\n{plain:?}");
    let (audited_report, plain_report) = (read_valid_report(&audited_json), read_valid_report(&plain_json));
    let statuses = |report: &Value| -> BTreeSet<(String, u64, u64, String)> {
        let mut statuses = BTreeSet::new();
        for (path, file) in report["files"].as_object().unwrap() {
            for mutant in file["mutants"].as_array().unwrap() {
                let start = &mutant["location"]["start"];
                statuses.insert((
                    format!("{path}:{}", mutant["mutatorName"].as_str().unwrap()),
                    start["line"].as_u64().unwrap(),
                    start["column"].as_u64().unwrap(),
                    mutant["status"].as_str().unwrap().to_string(),
                ));
            }
        }
        statuses
    };
    // The report holds the change's own mutants alone, with the verdicts a check without the
    // audit reaches.
    assert_eq!(statuses(&audited_report).len(), 3, "{audited:?}");
    assert_eq!(statuses(&audited_report), statuses(&plain_report), "{audited:?}\n{plain:?}");
    assert_eq!(audit_of(&audited_report)["killedBefore"], 8, "{audited:?}");
    assert!(audited.stderr.contains("testing 11 mutants in 2 parallel copies"), "{audited:?}");
    assert!(plain.stderr.contains("testing 3 mutants in 2 parallel copies"), "{plain:?}");
    let change_file_runs =
        |run: &Run| run.stderr.matches("baseline: tests/test_invoice.py passed unmutated").count();
    assert_eq!(change_file_runs(&audited), 1, "one coverage run of the change's tests: {audited:?}");
    // Each carried kill that seemed lost faced the whole suite before it counted.
    assert!(
        audited.stderr.contains("confirming 2 survivors against the whole test suite, as it runs"),
        "{audited:?}"
    );
    assert!(!plain.stderr.contains("confirming"), "{plain:?}");
    assert_phases_add_up(&audited);
}

#[test]
fn audit_tests_audits_the_test_edits_alone_and_no_audit_skips_them() {
    let repo = fixture_repo_variant("kill_loss", "both");
    let python = python();
    let python = python.to_str().unwrap();

    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("record");
    let run = mutdelta(
        repo.path(),
        &[
            "audit-tests",
            "--commit",
            "HEAD",
            "--python",
            python,
            "-j",
            "2",
            "--out",
            record.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(lost_lines(&run).len(), 2, "{run:?}");
    assert!(!run.stdout.contains("mutation delta"), "the added lines are not mutated: {run:?}");
    // The run record says what the run said: the audit's line, no mutation delta.
    let overview = read_report(record.join("run.json"));
    let summary = overview["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("kill-loss audit: 2 of ") && !summary.contains("mutation delta"),
        "{summary}"
    );
    assert!(run.stdout.contains(summary), "{summary}\n{run:?}");
    let timings = &overview["timings"];
    assert!(timings["audit"].as_f64().unwrap() > 0.0, "{timings}");
    assert!(timings["auditMutants"].as_f64().unwrap() > 0.0, "{timings}");
    // With no mutant of the change's own to run beside them, the carried kills begin the rest
    // of the suite only once a kill seems lost, not beside their first round on speculation.
    let report = read_report(record.join("report.json"));
    let steps: Vec<&str> = audit_of(&report)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["step"].as_str().unwrap())
        .collect();
    assert!(steps.contains(&"baseline of the rest of the suite"), "{steps:?}");
    assert!(!steps.iter().any(|step| step.contains("begun beside")), "{steps:?}");

    let skipped = check(repo.path(), &["--commit", "HEAD", "--no-audit"]);
    assert_eq!(skipped.code, 0, "{skipped:?}");
    assert!(!skipped.stdout.contains("kill-loss audit"), "{skipped:?}");

    let lines = mutdelta(repo.path(), &["audit-tests", "--lines", "-", "--python", python]);
    assert_eq!(lines.code, 2, "{lines:?}");
    assert!(lines.stderr.contains("--lines names lines, not a change"), "{lines:?}");
}

#[test]
fn the_check_after_the_change_does_not_begin_the_rest_of_the_suite_before_a_kill_needs_it() {
    // The strengthened tests lose no kill, and every line they ran before they still run: no
    // kill carried after the change needs the rest of the suite. A conftest.py the change
    // leaves alone notes each directory pytest starts in; a rest of the suite begun beside the
    // first round on speculation starts in a copy of its own.
    let marks = tempfile::tempdir().unwrap();
    let repo = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    let fixture = std::path::Path::new(FIXTURES).join("kill_loss");
    git(repo.path(), &["init", "-q", "-b", "main"]);
    copy_tree(&fixture.join("before"), repo.path());
    let conftest = format!(
        "import os\nimport pathlib\n\npathlib.Path({:?}, str(os.getpid())).write_text(os.getcwd())\n",
        marks.path().to_str().unwrap()
    );
    std::fs::write(repo.path().join("conftest.py"), conftest).unwrap();
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "before"]);
    copy_tree(&fixture.join("strengthened"), repo.path());
    git(repo.path(), &["commit", "-q", "-am", "the change"]);
    let python = python();

    let run = mutdelta(
        repo.path(),
        &["audit-tests", "--commit", "HEAD", "--python", python.to_str().unwrap(), "-j", "2"],
    );

    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("kill-loss audit: 0 of 14 kills by the edited tests lost"), "{run:?}");
    let started_in: Vec<String> = std::fs::read_dir(marks.path())
        .unwrap()
        .map(|mark| std::fs::read_to_string(mark.unwrap().path()).unwrap())
        .collect();
    assert!(started_in.iter().any(|dir| dir.ends_with("copy-0")), "{started_in:?}");
    assert!(
        started_in.iter().all(|dir| !dir.ends_with("copy-rest")),
        "the rest of the suite was begun beside the kills carried after the change: {started_in:?}"
    );
}

#[test]
fn a_change_that_fixes_a_failing_test_loses_no_kill_and_says_why() {
    let repo = fixture_repo_variant("kill_loss", "strengthened");
    let test_file = repo.path().join("tests/test_invoice.py");
    let fixed = std::fs::read_to_string(&test_file).unwrap();
    std::fs::write(&test_file, fixed.replace(r#"== Decimal("7.5")"#, r#"== Decimal("7.4")"#)).unwrap();
    git(repo.path(), &["commit", "-qam", "break test_total"]);
    std::fs::write(&test_file, &fixed).unwrap();
    git(repo.path(), &["commit", "-qam", "fix test_total"]);

    let run = check(repo.path(), &["--commit", "HEAD"]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "note: the tests the change edits (tests/test_invoice.py::test_total) fail before it, so they killed nothing there"
        ),
        "{run:?}"
    );
    assert!(lost_lines(&run).is_empty(), "{run:?}");
}

#[test]
fn a_kill_that_does_not_happen_again_before_the_change_is_not_reported_lost() {
    // Before the change, test_total fails on a wrong total only the first time it sees one (it
    // leaves a marker in the temporary directory): a flaky test. The change deletes it, so the
    // kill it once made looks lost, but running that mutant again before the change does not
    // kill it.
    let repo = fixture_repo_variant("kill_loss", "strengthened");
    let test_file = repo.path().join("tests/test_invoice.py");
    let strengthened = std::fs::read_to_string(&test_file).unwrap();
    let flaky = strengthened.replace(
        "def test_total():\n    assert total(3, Decimal(\"2.5\")) == Decimal(\"7.5\")\n    assert total(0, Decimal(\"2.5\")) == 0\n",
        "def test_total():\n    import os, tempfile\n    marker = os.path.join(tempfile.gettempdir(), \"failed-once\")\n    if total(3, Decimal(\"2.5\")) != Decimal(\"7.5\") and not os.path.exists(marker):\n        open(marker, \"w\").close()\n        raise AssertionError(\"a wrong total, the first time only\")\n",
    );
    assert_ne!(flaky, strengthened);
    std::fs::write(&test_file, &flaky).unwrap();
    git(repo.path(), &["commit", "-qam", "a flaky total test"]);
    let start = flaky.find("def test_total():").unwrap();
    let end = flaky[start..].find("\n\n\n").unwrap() + start + 3;
    std::fs::write(&test_file, format!("{}{}", &flaky[..start], &flaky[end..])).unwrap();
    git(repo.path(), &["commit", "-qam", "delete the flaky test"]);
    let tmp = tempfile::tempdir().unwrap();
    let python = python();

    let run = mutdelta_in_tmp(
        repo.path(),
        tmp.path(),
        // One worker, so that the mutants of `total` run one after the other: the first one
        // fails the test and leaves the marker, the next ones find it.
        &["check", "--commit", "HEAD", "--python", python.to_str().unwrap(), "-j", "1"],
    );

    assert!(tmp.path().join("failed-once").exists(), "the flaky test failed once: {run:?}");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(lost_lines(&run).is_empty(), "{run:?}");
    assert!(
        run.stdout.contains("note: 1 of the kills the change seemed to lose did not happen again before it"),
        "{run:?}"
    );
}

#[test]
fn a_rerun_reuses_the_audits_verdicts_but_confirms_each_lost_kill_again() {
    let repo = fixture_repo_variant("kill_loss", "weakened");

    let first = check(repo.path(), &["--commit", "HEAD"]);
    let again = check(repo.path(), &["--commit", "HEAD"]);

    assert_eq!((first.code, again.code), (1, 1), "{first:?}\n{again:?}");
    assert_eq!(lost_lines(&again), lost_lines(&first), "{again:?}");
    assert_eq!(lost_lines(&again).len(), 7, "{again:?}");
    let reuse_notes = |run: &Run| -> Vec<String> {
        run.stderr.lines().filter(|line| line.starts_with("reused ")).map(str::to_string).collect()
    };
    assert!(reuse_notes(&first).is_empty(), "{first:?}");
    // (The change adds no source: the check has no mutant of its own.) The edited tests'
    // mutants before the change, the kills tested after it, and the survivors among them
    // against the whole suite, are reused ...
    let confirming =
        again.stderr.find("running them again before it to confirm them").expect("lost kills confirmed");
    let (before_confirming, confirmation) = again.stderr.split_at(confirming);
    let reused_before: Vec<&str> =
        before_confirming.lines().filter(|line| line.starts_with("reused ")).collect();
    assert_eq!(reused_before.len(), 3, "{again:?}");
    assert!(reused_before[0].starts_with("reused 20 verdicts"), "{again:?}");
    assert!(reused_before[2].starts_with("reused 4 verdicts"), "{again:?}");
    // ... but a seemingly lost kill is run again before the change every time.
    assert!(!confirmation.contains("reused "), "{again:?}");
    assert_eq!(reuse_notes(&again).len(), 3, "{again:?}");
}

/// (line, description, tests that killed it before) of each lost kill of `report`'s audit.
fn lost_kills(report: &Value) -> BTreeSet<(u64, String, String)> {
    audit_of(report)["lostKills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|lost| {
            let killers: Vec<&str> =
                lost["killedBefore"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
            (
                lost["location"]["start"]["line"].as_u64().unwrap(),
                lost["description"].as_str().unwrap().to_string(),
                killers.join(" "),
            )
        })
        .collect()
}

#[test]
fn edits_to_a_mixins_test_or_a_helper_class_audit_their_whole_file() {
    // pytest collects RateChecks' tests only as RateTest::test_*, and the helper class
    // `Expected` holds no test: the names the syntax tree gives select nothing.
    let us = "tests/test_rates.py::RateTest::test_us".to_string();
    let cases = [
        // test_us is loosened to `rate("US") > 0`.
        ("weakened", vec![(5, "force condition to True"), (7, "replace 7 with 8")], "RateChecks::test_us"),
        // `Expected.us = rate("US")`: test_us compares the rate with itself.
        (
            "helper_edited",
            vec![
                (5, "force condition to True"),
                (7, "replace 7 with 0"),
                (7, "replace 7 with 8"),
                (7, "replace `7` with None"),
            ],
            "tests/test_rates.py::Expected)",
        ),
    ];
    for (variant, expected, named) in cases {
        let repo = fixture_repo_variant("mixin_tests", variant);
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("r.json");
        let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
        assert_eq!(run.code, 1, "{variant}: {run:?}");
        let report = read_valid_report(&json);
        let audit = audit_of(&report);
        assert_eq!(audit["editedTests"], serde_json::json!(["tests/test_rates.py"]), "{variant}");
        let note = audit["notes"].as_array().unwrap().iter().filter_map(Value::as_str).find(|note| {
            note.starts_with("pytest collects no test by some of the names the edited code has")
        });
        assert!(note.is_some_and(|note| note.contains(named)), "{variant}: {audit}");
        let expected: BTreeSet<(u64, String, String)> =
            expected.into_iter().map(|(line, what)| (line, what.to_string(), us.clone())).collect();
        assert_eq!(lost_kills(&report), expected, "{variant}: {run:?}");
    }
}

#[test]
fn a_budget_smaller_than_the_audit_tries_one_mutant_per_line_first_and_says_what_it_left() {
    let repo = fixture_repo_variant("kill_loss", "weakened");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let full = check(repo.path(), &["--commit", "HEAD", "--audit-full", "--json", json.to_str().unwrap()]);
    let tried = audit_of(&read_valid_report(&json))["mutants"].as_u64().unwrap() as usize;
    assert_eq!(audit_of(&read_valid_report(&json))["unaudited"], 0, "{full:?}");
    let run =
        check(repo.path(), &["--commit", "HEAD", "--audit-budget", "4", "--json", json.to_str().unwrap()]);

    let report = read_valid_report(&json);
    let audit = audit_of(&report);
    assert_eq!(audit["unaudited"].as_u64().unwrap() as usize, tried - 4, "{run:?}");
    let note = format!(
        "the audit tried 4 of the {tried} mutants of the source the edited tests ran (one per line first); {} were not audited: --audit-full tries them all",
        tried - 4
    );
    assert!(run.stdout.contains(&note) || run.stderr.contains(&note), "{run:?}");
    assert!(audit["notes"].as_array().unwrap().contains(&serde_json::json!(note)), "{audit}");
    // Four lines, a mutant each: every lost kill it finds is on a line of its own.
    let lines: BTreeSet<String> = lost_lines(&run).into_iter().map(|(line, ..)| line).collect();
    assert_eq!(lines.len(), lost_lines(&run).len(), "{run:?}");
    assert!(audit["duration"].as_f64().unwrap() > 0.0);
    assert_phases_add_up(&run);
}

/// The phases line names the check's baseline and mutant time and the audit's apart, and the
/// parts add up: the audit's baseline and mutants within the audit, and check and audit within
/// the total.
fn assert_phases_add_up(run: &Run) {
    let line = run.stderr.lines().find(|line| line.starts_with("phases: ")).expect("a phases line");
    let seconds = |label: &str, from: usize| -> f64 {
        let at =
            line[from..].find(&format!("{label} ")).unwrap_or_else(|| panic!("{label} in {line}")) + from;
        let rest = &line[at + label.len() + 1..];
        rest[..rest.find(' ').unwrap()].parse().unwrap_or_else(|_| panic!("{label} in {line}"))
    };
    let audit_at = line.find("kill-loss audit").unwrap_or_else(|| panic!("no audit in {line}"));
    let (baseline, mutants) = (seconds("baseline", 0), seconds("mutants tested", 0));
    let audit = seconds("kill-loss audit", 0);
    let (audit_baseline, audit_mutants) =
        (seconds("baseline", audit_at), seconds("mutants tested", audit_at));
    let total = seconds("total", 0);
    assert!(audit_baseline > 0.0 && audit_mutants > 0.0, "{line}");
    assert!(audit_baseline + audit_mutants <= audit + 0.02, "{line}");
    assert!(baseline + mutants + audit <= total + 0.02, "{line}");
}

#[test]
fn the_audits_collectors_start_while_the_edited_tests_coverage_run_runs() {
    // The copies the audit tests the old side's mutants in, and their collectors, need nothing
    // that run learns. Under it, an edited test waits up to 5 s for a collector working in a
    // copy of the run, and writes down which came.
    let repo = fixture_repo("early_audit_collector");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let home = tempfile::tempdir().unwrap();
    let python = python();
    let args = ["check", "--python", python.to_str().unwrap(), "-j", "2", "--commit", "HEAD"];
    let run = crate::common::hermetic_with_home(repo.path(), &args, &json, home.path());

    assert_eq!(run.code, 0, "{run:?}");
    let seen = std::fs::read_to_string(home.path().join("collector-seen")).unwrap();
    assert!(!seen.contains("not seen"), "{seen}\n{run:?}");
    let started_beside: BTreeSet<&str> = seen
        .lines()
        .filter_map(|line| line.strip_prefix("before: seen "))
        .flat_map(|pids| pids.split(' '))
        .collect();
    assert!(!started_beside.is_empty(), "{seen}\n{run:?}");
    // Those collectors then test the old side's mutants of `scale`, swapped in (its test, run
    // against a swapped mutant in a collector's forked child, wrote down its parent), and the
    // edited tests kill them.
    let used = std::fs::read_to_string(home.path().join("collectors-used")).unwrap();
    let used_before: BTreeSet<&str> = used.lines().filter_map(|line| line.strip_prefix("before ")).collect();
    assert!(!used_before.is_empty(), "{used}");
    assert!(
        used_before.is_subset(&started_beside),
        "used {used_before:?}, started beside {started_beside:?}"
    );
    let report = read_valid_report(&json);
    let audit = audit_of(&report);
    assert_eq!(audit["editedTests"].as_array().map(Vec::len), Some(2), "{audit}");
    assert!(audit["killedBefore"].as_u64().unwrap() >= 5, "{audit}");
    assert_eq!(audit["lostKills"], serde_json::json!([]), "{audit}");
}
