//! The verdicts on the Python fixtures, with the user's repository byte-identical afterwards.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{
    check, copy_tree, fixture_repo, fixture_repo_variant, git, hermetic, leftovers, mutants_on_line,
    mutdelta, mutdelta_with_stdin, python, python_with_rewritten_plugin, read_report, read_valid_report,
    snapshot, Run, FIXTURES,
};

/// (line, status) of every mutant of `file` in a report.
fn statuses(report: &Value, file: &str) -> Vec<(u64, String)> {
    report["files"][file]["mutants"]
        .as_array()
        .unwrap_or_else(|| panic!("no mutants for {file} in {report}"))
        .iter()
        .map(|m| {
            (m["location"]["start"]["line"].as_u64().unwrap(), m["status"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn raise_under_a_test_that_asserts_nothing_survives() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("[MUT-survived] model_client.py:15:9: delete statement"), "{run:?}");
    assert!(run.stdout.contains("-        raise RuntimeError("), "the survivor's diff is shown: {run:?}");
    assert!(run.stdout.contains("+        pass"), "{run:?}");
    let report = read_valid_report(&json);
    let verdicts = statuses(&report, "model_client.py");
    assert!(verdicts.iter().all(|(line, _)| [14, 15].contains(line)), "only added lines: {verdicts:?}");
    assert!(verdicts.iter().filter(|(line, _)| *line == 15).all(|(_, s)| s == "Survived"), "{verdicts:?}");
    assert!(verdicts.contains(&(14, "Killed".to_string())), "`==` -> `!=` breaks the old test: {verdicts:?}");
    let last = run.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("mutation delta: ") && last.ends_with("on 2 new lines; 2 lines with survivors"),
        "{last}"
    );
    assert_eq!(snapshot(repo.path()), before, "the repository is byte-identical afterwards");
}

#[test]
fn strong_tests_catch_every_mutant() {
    let repo = fixture_repo("strong_tests");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "grades.py");
    assert!(verdicts.len() >= 5, "{verdicts:?}");
    assert!(verdicts.iter().all(|(_, status)| status == "Killed"), "{verdicts:?}");
    assert!(!run.stdout.contains("[MUT-"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before);
}

#[test]
fn line_whose_only_test_is_skipped_is_never_killed() {
    let repo = fixture_repo("skipped_test");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "shipping.py");
    assert!(!verdicts.is_empty());
    assert!(
        verdicts.iter().all(|(_, s)| s == "Survived" || s == "NoCoverage"),
        "a skipped test catches nothing: {verdicts:?}"
    );
    assert!(
        run.stdout.contains("mutation delta: 0 of 11 mutants caught on 4 new lines; 0 lines with survivors, 3 lines no test runs"),
        "lines that no test runs are counted apart from lines with survivors: {run:?}"
    );
    assert_eq!(snapshot(repo.path()), before);
}

#[test]
fn staged_change_is_checked_from_the_index_not_the_working_tree() {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["reset", "-q", "--soft", "HEAD~1"]);
    let before = snapshot(repo.path());

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("[MUT-survived] model_client.py:15"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before, "index and checkout untouched");
}

#[test]
fn staged_file_with_unstaged_edits_is_refused() {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["reset", "-q", "--soft", "HEAD~1"]);
    let file = repo.path().join("model_client.py");
    let edited = std::fs::read_to_string(&file).unwrap() + "\nEXTRA = 1\n";
    std::fs::write(&file, edited).unwrap();

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("model_client.py is staged and also has unstaged edits"), "{run:?}");
}

#[test]
fn coverage_gate_list_limits_the_mutants_to_its_lines() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let python = python();

    let run = mutdelta_with_stdin(
        repo.path(),
        &["check", "--python", python.to_str().unwrap(), "--lines", "-", "--json", json.to_str().unwrap()],
        "model_client.py:15\n",
    );

    assert_eq!(run.code, 1, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "model_client.py");
    assert!(!verdicts.is_empty() && verdicts.iter().all(|(line, _)| *line == 15), "{verdicts:?}");
}

#[test]
fn a_listed_line_gets_the_same_verdicts_by_a_relative_an_absolute_or_a_linked_path() {
    let repo = fixture_repo("model_client");
    let links = tempfile::tempdir().unwrap();
    let linked = links.path().join("checkout");
    std::os::unix::fs::symlink(repo.path(), &linked).unwrap();
    let python = python();
    let out = tempfile::tempdir().unwrap();
    let verdicts_of = |entry: String| {
        let json = out.path().join("r.json");
        let run = mutdelta_with_stdin(
            repo.path(),
            &[
                "check",
                "--python",
                python.to_str().unwrap(),
                "--lines",
                "-",
                "--json",
                json.to_str().unwrap(),
            ],
            &format!("{entry}\n"),
        );
        assert_eq!(run.code, 1, "{entry}: {run:?}");
        statuses(&read_report(&json), "model_client.py")
    };

    let plain = verdicts_of("model_client.py:15".to_string());
    assert!(plain.iter().any(|(_, status)| status == "Survived"), "{plain:?}");
    assert!(plain.iter().all(|(line, status)| *line == 15 && status != "NoCoverage"), "{plain:?}");
    assert_eq!(verdicts_of("./model_client.py:15".to_string()), plain);
    assert_eq!(verdicts_of(format!("{}/model_client.py:15", repo.path().display())), plain);
    assert_eq!(verdicts_of(format!("{}/model_client.py:15", linked.display())), plain);
}

#[test]
fn tests_that_import_another_copy_are_refused_by_the_canary() {
    let repo = fixture_repo("model_client");
    let python = python();
    // The tests run against the user's checkout instead of the copy under test.
    let cmd = format!(
        "cd {} && PYTHONDONTWRITEBYTECODE=1 {} -m pytest -q -p no:cacheprovider",
        repo.path().display(),
        python.display()
    );

    let run = check(repo.path(), &["--commit", "HEAD", "--test-cmd", &cmd]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("do not import the copy under test"), "{run:?}");
}

#[test]
fn list_prints_the_mutants_without_running_them() {
    let repo = fixture_repo("model_client");

    let run = crate::common::mutdelta(repo.path(), &["list", "--commit", "HEAD"]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("model_client.py:15:9: delete statement"), "{run:?}");
    assert!(run.stdout.contains("model_client.py:14:20: replace == with !="), "{run:?}");
    assert!(run.stdout.lines().last().unwrap().ends_with("mutants on 2 added executable lines"), "{run:?}");
}

#[test]
fn crashing_and_hanging_mutants_get_verdicts_without_losing_the_worker() {
    let repo = fixture_repo("hazards");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let listed = crate::common::mutdelta(repo.path(), &["list", "--commit", "HEAD", "--json"]);
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();

    let run = check(repo.path(), &["--commit", "HEAD", "--timeout", "2", "--json", json.to_str().unwrap()]);

    let report = read_valid_report(&json);
    let mutants = report["files"]["hazards.py"]["mutants"].as_array().unwrap();
    assert_eq!(
        mutants.len(),
        listed["mutants"].as_array().unwrap().len(),
        "every listed mutant has a verdict: {run:?}"
    );
    let with = |line: u64, status: &str| {
        mutants
            .iter()
            .filter(|m| m["location"]["start"]["line"] == line && m["status"] == status)
            .map(|m| m["statusReason"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let aborted = with(5, "Killed");
    assert!(
        !aborted.is_empty() && aborted.iter().all(|r| r.contains("signal 6")),
        "os.abort() reached: {run:?}"
    );
    assert!(with(12, "Timeout").len() >= 2, "`n -= 1` mutants loop forever: {run:?}");
    assert_eq!(with(6, "NoCoverage").len(), 1, "no test reaches os.abort(): {run:?}");
    assert_eq!(run.code, 1, "the untested abort branch: {run:?}");
    assert!(
        run.stdout.contains("ran under: tests/test_hazards.py::test_checked_keeps_non_negative_values"),
        "{run:?}"
    );
}

#[test]
fn a_swapped_mutant_that_hangs_times_out_at_a_short_limit_once_its_tests_are_seen_to_be_quick() {
    // No --timeout: the usual limit would be 10 s; `countdown`'s tests take milliseconds.
    let repo = fixture_repo("hazards");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    let hung: Vec<&Value> =
        mutants_on_line(&report, "hazards.py", 12).into_iter().filter(|m| m["status"] == "Timeout").collect();
    assert!(hung.len() >= 2, "`n -= 1` mutants loop forever: {run:?}");
    for mutant in hung {
        assert_eq!(mutant["run"]["how"], "swap", "{mutant}");
        let reason = mutant["statusReason"].as_str().unwrap();
        assert!(reason.starts_with("the tests ran past 1.0 s, where unmutated they take "), "{mutant}");
    }
}

#[test]
fn a_hang_past_the_short_limit_runs_again_with_the_usual_one_when_the_tests_are_slower_swapped() {
    // test_drain imports a slow module inside its body. In one process test_warm_up imported
    // it first, so test_drain was measured fast; swapped in alone it pays the import, more
    // than a third of the short limit: that limit cannot tell a hang, the usual one decides.
    // Deleting `n -= 1` loops forever.
    let repo = fixture_repo("lazy_import");
    let out = tempfile::tempdir().unwrap();
    let python = python();
    for (timeout, reason, runs) in [
        (None, "the tests ran past the 10.0 s timeout", 2),
        (Some("3"), "the tests ran past the 3.0 s timeout", 1),
    ] {
        let json = out.path().join("r.json");
        // One process measures the tests, so that test_warm_up runs before test_drain there.
        let mut args = vec!["check", "--python", python.to_str().unwrap(), "-j", "1", "--one-per-line"];
        args.extend(["--commit", "HEAD", "--json", json.to_str().unwrap()]);
        args.extend(timeout.map(|seconds| ["--timeout", seconds]).into_iter().flatten());
        let run = mutdelta(repo.path(), &args);
        assert_eq!(run.code, 0, "{run:?}");
        let report = read_valid_report(&json);
        let hung = mutants_on_line(&report, "pkg/loop.py", 3);
        assert_eq!(hung.len(), 1, "{report}");
        assert_eq!(hung[0]["status"], "Timeout", "{timeout:?}: {}", hung[0]);
        assert_eq!(hung[0]["statusReason"], reason, "{timeout:?}: {}", hung[0]);
        assert_eq!(hung[0]["run"]["how"], "swap", "{timeout:?}: {}", hung[0]);
        assert_eq!(hung[0]["run"]["commands"].as_array().unwrap().len(), runs, "{timeout:?}: {}", hung[0]);
    }
}

#[test]
fn a_plugin_whose_asserts_pytest_rewrites_is_not_imported_before_a_forked_run() {
    // The tests import a helper of an installed pytest plugin, and warnings are errors: had the
    // warm worker imported it beforehand, every forked run would fail on pytest's "Module
    // already imported so cannot be rewritten" instead of testing its mutant.
    let python = python_with_rewritten_plugin();
    let repo = fixture_repo("rewritten_plugin");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = mutdelta(
        repo.path(),
        &[
            "check",
            "--python",
            python.to_str().unwrap(),
            "--commit",
            "HEAD",
            "--no-audit",
            "--json",
            json.to_str().unwrap(),
        ],
    );

    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    // `LIMIT = 10` runs at import: its mutants are imported fresh, in forked runs.
    let mutants = mutants_on_line(&report, "pkg/limits.py", 1);
    assert!(mutants.len() >= 3, "{report}");
    for mutant in mutants {
        assert_eq!(mutant["run"]["how"], "fork", "{mutant}");
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        // Without `LIMIT`, the test module does not import.
        let killer = if mutant["description"] == "delete statement" {
            "tests/test_limits.py"
        } else {
            "tests/test_limits.py::test_clamp_to_the_default_limit"
        };
        assert_eq!(mutant["killedBy"], json!([killer]), "{mutant}");
    }
}

#[test]
fn a_mutant_that_breaks_what_a_conftest_imports_is_killed() {
    // The conftest builds a `pkg.Opts` at import and reads its `label`: without that line, or
    // with `+` on strings made `-`, the conftest does not import and no test can be collected
    // (pytest's usage error, exit 4, "ImportError while loading conftest"). The unmutated run
    // loaded it, so the mutant did that.
    let repo = fixture_repo("conftest_import");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    let mutants = mutants_on_line(&report, "pkg/opts.py", 4);
    let broke_the_conftest: Vec<&Value> = mutants
        .into_iter()
        .filter(|m| m["description"] == "delete statement" || m["description"] == "replace + with -")
        .collect();
    assert_eq!(broke_the_conftest.len(), 2, "{report}");
    for mutant in broke_the_conftest {
        assert_eq!(
            (&mutant["status"], &mutant["run"]["how"]),
            (&json!("Killed"), &json!("fork")),
            "{mutant}"
        );
        let why = mutant["statusReason"].as_str().unwrap();
        assert!(why.starts_with("the tests could no longer be collected: E   "), "{mutant}");
    }
}

#[test]
fn files_the_build_generated_that_git_ignores_are_carried_into_the_copies() {
    // `pkg/_version.py` is written when the package is installed, and git ignores it; the
    // package imports it. The commit's tree lacks it: the copies take it from the checkout.
    let repo = fixture_repo("generated_version");
    std::fs::write(repo.path().join("pkg/_version.py"), "VERSION = \"1.2.3\"\n").unwrap();
    // Ignored too, but no build product: bytecode, and what a test run left among the tests.
    std::fs::write(repo.path().join("pkg/stale.pyc"), "not bytecode").unwrap();
    std::fs::write(repo.path().join("tests/results.db"), "rows").unwrap();
    let before = snapshot(repo.path());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "note: 1 file git ignores copied from the checkout beside the state under test (build products or data the tests may need): pkg/_version.py"
        ),
        "{run:?}"
    );
    let report = read_valid_report(&json);
    let mutants = mutants_on_line(&report, "pkg/calc.py", 6);
    assert!(!mutants.is_empty() && mutants.iter().all(|m| m["status"] == "Killed"), "{report}");
    assert_eq!(snapshot(repo.path()), before, "the checkout is only read");
}

#[test]
fn a_project_a_shared_outside_module_imports_runs_its_fresh_mutants_in_new_interpreters() {
    // The tests import `helperlib`, from outside the project, which imports `pkg.core`: a warm
    // worker that preloads it has the project imported, and its forks could not import a
    // mutant of it afresh. The canary would say the tests do not import the copy.
    let repo = fixture_repo("imported_by_helper");
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let python = python();

    let output = hermetic(repo.path(), tmp.path())
        .env("PYTHONPATH", Path::new(FIXTURES).join("imported_by_helper/outside"))
        .args(["check", "--python", python.to_str().unwrap(), "-j", "2", "--commit", "HEAD", "--no-audit"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let run = Run::of(&output);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(leftovers(tmp.path()).is_empty());
    let report = read_valid_report(&json);
    let step = report["mutdelta"]["steps"].as_array().unwrap().iter().find(|step| {
        step["step"].as_str().unwrap().starts_with("every mutant imported in a new interpreter")
    });
    assert!(step.is_some_and(|step| step["step"].as_str().unwrap().contains("pkg/core.py")), "{report}");
    // `FACTOR = 3` runs at import: its mutants are imported fresh, in new interpreters.
    let at_import = mutants_on_line(&report, "pkg/core.py", 1);
    assert!(at_import.len() >= 3, "{report}");
    for mutant in at_import {
        assert_eq!(
            (&mutant["run"]["how"], &mutant["status"]),
            (&json!("fresh"), &json!("Killed")),
            "{mutant}"
        );
        assert_eq!(mutant["killedBy"], json!(["tests/test_core.py::test_triple"]), "{mutant}");
    }
}

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
fn confirming_survivors_runs_them_against_the_whole_suite_as_it_runs() {
    // `user_pattern` builds its regex once, in the first test that asks: only that test runs
    // line 15, and it passes with the pattern made `r""`; the test after it reads the memo and
    // fails. By the tests that run the line the mutant survives; the whole suite kills it.
    let repo = fixture_repo("shared_memo");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let status_of_empty_pattern = |report: &serde_json::Value| {
        let line = mutants_on_line(report, "pkg/patterns.py", 15);
        let mutant = line.iter().find(|m| m["replacement"] == "r\"\"").copied().cloned();
        mutant.unwrap_or_else(|| panic!("no r\"\" mutant on line 15: {report}"))
    };

    let plain = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert_eq!(plain.code, 1, "{plain:?}");
    let by_its_tests = status_of_empty_pattern(&read_valid_report(&json));
    assert_eq!(by_its_tests["status"], "Survived", "{by_its_tests}");
    assert_eq!(by_its_tests["coveredBy"], json!(["tests/test_patterns.py::test_address_with_a_user"]));

    let confirmed = check(
        repo.path(),
        &["--commit", "HEAD", "--no-audit", "--confirm-survivors", "--json", json.to_str().unwrap()],
    );

    assert!(
        confirmed.stderr.contains("confirming 4 survivors against the whole test suite"),
        "{confirmed:?}"
    );
    let report = read_valid_report(&json);
    let killed = status_of_empty_pattern(&report);
    assert_eq!(killed["status"], "Killed", "{killed}");
    assert_eq!(
        killed["killedBy"],
        json!(["tests/test_patterns.py::test_address_without_a_user"]),
        "{killed}"
    );
    assert_eq!(
        killed["statusReason"],
        "failed in the whole suite, as it runs: tests/test_patterns.py::test_address_without_a_user"
    );
    // A survivor the whole suite lets through too stays one, and says so.
    let port = mutants_on_line(&report, "pkg/patterns.py", 20);
    let survivor = port.iter().find(|m| m["replacement"] == "8081").expect("8080 -> 8081");
    assert_eq!(survivor["status"], "Survived", "{survivor}");
    assert_eq!(
        survivor["statusReason"],
        "every test that runs this line passed, and so did the whole suite, as it runs"
    );
    assert_eq!(confirmed.code, 1, "the other survivors stand: {confirmed:?}");
}

#[test]
fn a_survivor_that_already_faced_the_whole_suite_is_not_confirmed_again() {
    // The change adds a constant no test reads, and no test: its mutants run at import, so they
    // meet the whole suite as it runs already.
    let repo = fixture_repo_variant("shared_memo", "constant");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--confirm-survivors"]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("0 of 4 mutants caught"), "{run:?}");
    assert!(!run.stderr.contains("confirming"), "{run:?}");
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
fn the_collectors_start_while_the_coverage_run_runs() {
    // They need nothing the coverage run learns. Under the coverage run, a test of the change
    // waits up to 5 s for a collector working in its copy, and writes down whether one came.
    let repo = fixture_repo("early_collector");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    // Its HOME, where the test writes, outside the checkout.
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let python = python();
    let args = ["check", "--python", python.to_str().unwrap(), "-j", "2", "--commit", "HEAD", "--no-audit"];
    let guard = crate::common::Untouched::before(repo.path(), &args, &[]);
    let output = crate::common::hermetic(repo.path(), tmp.path())
        .args(args)
        .args(["--json", json.to_str().unwrap()])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let run = crate::common::Run::of(&output);
    guard.assert_after(&run);

    assert_eq!(run.code, 0, "{run:?}");
    let seen = std::fs::read_to_string(home.path().join("collector-seen")).unwrap();
    assert_eq!(seen, "seen\n", "{run:?}");
    // Those collectors then swap the mutants in.
    let report = read_valid_report(&json);
    let mutants = mutants_on_line(&report, "pkg/calc.py", 8);
    assert!(!mutants.is_empty(), "{report}");
    assert!(mutants.iter().all(|m| m["status"] == "Killed" && m["run"]["how"] == "swap"), "{mutants:?}");
}

#[test]
fn a_project_that_makes_warnings_errors_and_warns_on_attribute_access_still_swaps() {
    // `filterwarnings = error`, and `pkg.old` warns on any attribute: looking through the live
    // objects for functions must not touch it.
    let repo = fixture_repo("warning_proxy");
    let out = tempfile::tempdir().unwrap();
    let mut statuses = Vec::new();
    for mode in ["swap", "fresh"] {
        let json = out.path().join(format!("{mode}.json"));
        let mut args = vec!["--commit", "HEAD", "--json", json.to_str().unwrap()];
        if mode == "fresh" {
            args.push("--no-swap");
        }
        let run = check(repo.path(), &args);
        assert_eq!(run.code, 1, "{mode}: {run:?}");
        let report = read_valid_report(&json);
        let mutants = mutants_on_line(&report, "pkg/calc.py", 6);
        assert!(mutants.len() >= 3, "{report}");
        if mode == "swap" {
            assert!(mutants.iter().all(|m| m["run"]["how"] == "swap"), "{mutants:?}");
        }
        let mut of_mode: Vec<(String, String)> = mutants
            .iter()
            .map(|m| {
                (m["description"].as_str().unwrap().to_string(), m["status"].as_str().unwrap().to_string())
            })
            .collect();
        of_mode.sort();
        statuses.push(of_mode);
    }
    assert_eq!(statuses[0], statuses[1]);
    // halve(6) == 3 holds for 6 / 2 too.
    let survivors: Vec<&str> = statuses[0]
        .iter()
        .filter(|(_, status)| status == "Survived")
        .map(|(what, _)| what.as_str())
        .collect();
    assert_eq!(survivors, ["replace // with /"], "{statuses:?}");
}

#[test]
fn forked_and_fresh_interpreters_give_the_same_verdicts() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let forked = out.path().join("forked.json");
    let fresh = out.path().join("fresh.json");

    let run_forked = check(repo.path(), &["--commit", "HEAD", "--json", forked.to_str().unwrap()]);
    let run_fresh = check(repo.path(), &["--commit", "HEAD", "--no-fork", "--json", fresh.to_str().unwrap()]);

    assert_eq!(run_forked.code, 1, "{run_forked:?}");
    assert_eq!(run_fresh.code, 1, "{run_fresh:?}");
    let forked = statuses(&read_valid_report(&forked), "model_client.py");
    let fresh = statuses(&read_valid_report(&fresh), "model_client.py");
    assert_eq!(forked, fresh);
    assert!(forked.iter().any(|(_, s)| s == "Killed") && forked.iter().any(|(_, s)| s == "Survived"));
}

/// (line, status, killedBy) of every mutant of `file` in a report.
fn verdicts_with_killers(report: &Value, file: &str) -> Vec<(u64, String, Vec<String>)> {
    report["files"][file]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let killers =
                m["killedBy"].as_array().map(|k| k.iter().map(|t| t.as_str().unwrap().to_string()).collect());
            (
                m["location"]["start"]["line"].as_u64().unwrap(),
                m["status"].as_str().unwrap().to_string(),
                killers.unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn the_whole_suite_decides_what_the_changes_own_tests_let_through() {
    // The change edits tests/test_text.py. The rest of the suite (an untouched test module
    // that star-imports the package, and a doctest that pytest.ini collects from docs/) is what
    // catches the new module-level lines, which run when the conftest imports the package.
    let repo = fixture_repo("suite_wide");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "one true survivor: {run:?}");
    assert!(run.stderr.contains("baseline: the rest of the test suite passed unmutated"), "{run:?}");
    let verdicts = verdicts_with_killers(&read_valid_report(&json), "pkg/text.py");
    let on = |line: u64| verdicts.iter().filter(move |(l, _, _)| *l == line);
    // `"split_list",` is a continuation line of a multi-line `__all__`, run at import only:
    // changed to "" it breaks the untouched module's star import.
    assert!(on(5).all(|(_, s, k)| s == "Killed" && k == &["tests/test_star.py"]), "{verdicts:?}");
    // Only the doctest in docs/usage.rst tells a broken separator.
    assert!(on(8).all(|(_, s, k)| s == "Killed" && k == &["docs/usage.rst::usage.rst"]), "{verdicts:?}");
    assert!(on(16).all(|(_, s, k)| s == "Killed" && k == &["docs/usage.rst::usage.rst"]), "{verdicts:?}");
    // `+` -> `-` in shout() raises while tests/test_text.py is imported: its tests, which
    // the unmutated run collected, can no longer be collected. That is a kill.
    assert!(on(12).all(|(_, s, _)| s == "Killed"), "{verdicts:?}");
    // Deleting `__all__` leaves every name importable: no test of the suite notices.
    let survivors: Vec<_> = verdicts.iter().filter(|(_, s, _)| s != "Killed").collect();
    assert_eq!(survivors.len(), 1, "{verdicts:?}");
    assert_eq!((survivors[0].0, survivors[0].1.as_str()), (3, "Survived"));
    assert!(verdicts.iter().all(|(_, s, _)| s != "NoCoverage" && s != "RuntimeError"), "{verdicts:?}");
}

/// (line, replacement, status, how it ran) of every mutant of `file` in a report.
fn verdicts_and_paths(report: &Value, file: &str) -> Vec<(u64, String, String, String)> {
    report["files"][file]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["location"]["start"]["line"].as_u64().unwrap(),
                m["replacement"].as_str().unwrap_or("").to_string(),
                m["status"].as_str().unwrap().to_string(),
                m["run"]["how"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The change edits `fee` and tests/test_names.py; only the untouched tests/test_fees.py runs
/// `fee`. In `after` the change's tests run none of it, in `partly_tested` only its first
/// branch: either way the rest of the suite decides, and the mutants it runs are swapped into
/// collectors of the test files they need, with the verdicts of fresh imports.
#[test]
fn mutants_only_the_rest_of_the_suite_runs_are_tested_by_it_and_swapped_in() {
    let python = python();
    for (variant, jobs) in [("after", "1"), ("partly_tested", "2")] {
        let repo = fixture_repo_variant("tested_elsewhere", variant);
        let out = tempfile::tempdir().unwrap();
        let mut reports = Vec::new();
        for mode in ["swap", "fresh"] {
            let json = out.path().join(format!("{mode}.json"));
            let mut args = vec!["check", "--commit", "HEAD", "--python", python.to_str().unwrap()];
            args.extend(["--no-audit", "-j", jobs, "--json", json.to_str().unwrap()]);
            if mode == "fresh" {
                args.push("--no-swap");
            }
            let run = mutdelta(repo.path(), &args);
            assert_eq!(run.code, 1, "{variant} ({mode}): {run:?}");
            assert!(run.stderr.contains("second round"), "{variant} ({mode}): {run:?}");
            reports.push(verdicts_and_paths(&read_valid_report(&json), "pkg/fees.py"));
        }
        let (swapped, fresh) = (&reports[0], &reports[1]);
        let without_path = |verdicts: &[(u64, String, String, String)]| {
            let mut out: Vec<_> = verdicts.iter().map(|(l, r, s, _)| (*l, r.clone(), s.clone())).collect();
            out.sort();
            out
        };
        assert_eq!(without_path(swapped), without_path(fresh), "{variant}");
        let mut survivors: Vec<(u64, &str)> =
            swapped.iter().filter(|v| v.2 == "Survived").map(|v| (v.0, v.1.as_str())).collect();
        survivors.sort();
        // fee(0), fee(250) in (2, 3) and fee(1_000_000) <= 51 let these through.
        let expected = [(2, "1"), (4, "101"), (5, "51"), (5, ">="), (6, "0"), (7, "0")];
        assert_eq!(survivors, expected, "{variant}: {swapped:?}");
        assert_eq!(swapped.iter().filter(|v| v.2 == "Killed").count(), 20, "{variant}: {swapped:?}");
        // Lines 4 to 7 run in the rest of the suite only.
        let later: Vec<_> = swapped.iter().filter(|v| v.0 >= 4).collect();
        assert!(later.iter().all(|v| v.3 == "swap"), "{variant}: {later:?}");
        assert!(fresh.iter().all(|v| v.3 == "fork"), "{variant}: {fresh:?}");
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
        assert_eq!(runs(mutant), [["tests/test_names.py::test_shout"]], "{mutant}");
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
fn a_rest_of_the_suite_that_fails_unmutated_is_refused_as_such() {
    // The change (GREETING and its tests) leaves `fee` as it was: broken, and its tests, the
    // rest of the suite, fail with or without a mutant.
    let repo = fixture_repo_variant("tested_elsewhere", "import_time");
    git(repo.path(), &["reset", "-q", "--soft", "HEAD~1"]);
    git(repo.path(), &["checkout", "-q", "HEAD", "--", "pkg/fees.py"]);
    git(repo.path(), &["commit", "-q", "-m", "names only"]);
    let before = snapshot(repo.path());
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit"]);
    assert_eq!(run.code, 2, "{run:?}");
    let errors: Vec<&str> = run.stderr.lines().filter(|line| line.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{run:?}");
    assert!(
        errors[0].starts_with(
            "error: the change's tests pass, but the rest of the test suite fails without any mutant"
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains("FAILED tests/test_fees.py::test_the_fee_is_capped"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
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
fn verbose_prints_every_verdict_as_it_lands_with_how_it_ran_and_the_id_show_takes() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--verbose", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|line| line.starts_with('[')).collect();
    let total: usize = lines[0].split(['/', ']']).nth(1).unwrap().parse().unwrap();
    assert_eq!(lines.len(), total, "one line per mutant: {run:?}");
    let survivor = lines
        .iter()
        .find(|line| line.contains("Survived model_client.py:15:9 delete statement ("))
        .unwrap_or_else(|| panic!("{run:?}"));
    // Swapped into the collector, or imported fresh with the reason why.
    assert!(survivor.contains("(swap, ") || survivor.contains("(fork: "), "{survivor}");
    assert!(survivor.ends_with(" ms)"), "{survivor}");
    // `[done/total] #ID`: the id is the report's, which `show` and `apply` take.
    let id = survivor.split_whitespace().nth(1).and_then(|word| word.strip_prefix('#')).unwrap();
    let report = read_valid_report(&json);
    let deleted = mutants_on_line(&report, "model_client.py", 15)
        .into_iter()
        .find(|m| m["description"] == "delete statement")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(deleted["id"], id, "{survivor}");
    let shown = mutdelta(repo.path(), &["show", json.to_str().unwrap(), id]);
    assert!(shown.stdout.contains("model_client.py:15:9"), "{shown:?}");
}

#[test]
fn quiet_prints_the_summary_alone_and_the_exit_status_says_the_rest() {
    let repo = fixture_repo("model_client");
    let run = check(repo.path(), &["--commit", "HEAD", "-q"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(lines[0].starts_with("mutation delta: 2 of 6 mutants caught on 2 new lines"), "{run:?}");
    assert_eq!(run.stderr, "", "nothing while it runs, no phases line: {run:?}");

    let both = check(repo.path(), &["--commit", "HEAD", "-q", "-v"]);
    assert_eq!(both.code, 2, "{both:?}");
    assert!(both.stderr.contains("cannot be used with"), "{both:?}");
}

#[test]
fn copies_under_another_projects_directory_keep_their_own_node_ids() {
    // The temporary directory lies inside a project of its own (a pyproject.toml above it):
    // pytest, left alone, would root the copies' node ids there.
    let repo = fixture_repo("strong_tests");
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("pyproject.toml"), "[project]\nname = \"outer\"\n").unwrap();
    let tmp = outer.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let json = outer.path().join("r.json");
    let python = python();

    let run = crate::common::mutdelta_in_tmp(
        repo.path(),
        &tmp,
        &[
            "check",
            "--commit",
            "HEAD",
            "-j",
            "2",
            "--python",
            python.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "grades.py");
    assert!(verdicts.len() >= 5, "{verdicts:?}");
    assert!(verdicts.iter().all(|(_, status)| status == "Killed"), "{verdicts:?}");
}

/// The steps of a report whose name starts with "baseline of the rest of the suite", each
/// with the directory its first command ran in.
fn rest_of_suite_steps(report: &Value) -> Vec<(String, String)> {
    report["mutdelta"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|step| step["step"].as_str().unwrap().starts_with("baseline of the rest of the suite"))
        .map(|step| {
            let cwd = step["commands"][0]["cwd"].as_str().unwrap_or("");
            let dir = Path::new(cwd).file_name().unwrap_or_default().to_string_lossy().into_owned();
            (step["step"].as_str().unwrap().to_string(), dir)
        })
        .collect()
}

/// `tested_elsewhere` with a change to pkg/names.py and tests/test_names.py alone (GREETING,
/// run at import, and `shout`), the rest of the suite being `rest_test` in tests/test_rest.py:
/// every added line runs under the change's tests, and GREETING's mutants survive them.
fn names_only_change(rest_test: &str) -> tempfile::TempDir {
    names_change(rest_test, true)
}

/// `names_only_change`, with GREETING (whose mutants survive) or without (every mutant of the
/// change is killed by its tests).
fn names_change(rest_test: &str, greeting: bool) -> tempfile::TempDir {
    let repo = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    let fixture = Path::new(FIXTURES).join("tested_elsewhere");
    git(repo.path(), &["init", "-q", "-b", "main"]);
    copy_tree(&fixture.join("before"), repo.path());
    std::fs::remove_file(repo.path().join("tests/test_fees.py")).unwrap();
    std::fs::write(repo.path().join("tests/test_rest.py"), rest_test).unwrap();
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "before"]);
    for file in ["pkg/names.py", "tests/test_names.py"] {
        std::fs::copy(fixture.join("import_time").join(file), repo.path().join(file)).unwrap();
    }
    if !greeting {
        let names = std::fs::read_to_string(repo.path().join("pkg/names.py")).unwrap();
        std::fs::write(repo.path().join("pkg/names.py"), names.replace("GREETING = shout(\"hello\")\n", ""))
            .unwrap();
    }
    git(repo.path(), &["commit", "-q", "-am", "the change"]);
    repo
}

/// Appends `source` to the change's test file (tests/test_names.py) of a `names_change`, within
/// the change's commit.
fn add_to_the_changes_tests(repo: &Path, source: &str) {
    let tests = repo.join("tests/test_names.py");
    let mut text = std::fs::read_to_string(&tests).unwrap();
    text.push_str(source);
    std::fs::write(&tests, text).unwrap();
    git(repo, &["commit", "-q", "-a", "--amend", "--no-edit"]);
}

/// The second round's coverage run starts beside the first coverage run, in a copy no mutant is
/// written to, and keeps its share of the CPU when a line is left uncovered (the second round
/// will run); it is given idle CPU time when only a survivor could need it.
#[test]
fn the_rest_of_the_suite_is_measured_beside_the_first_round() {
    // The test of the rest of the suite writes down the tests of each run it is part of, by
    // the directory the run is in.
    let seen = tempfile::tempdir().unwrap();
    let fair = format!(
        "import json\nimport os\nimport pathlib\n\nfrom pkg.names import initials\n\n\n\
         def test_one_name(request):\n    \
         ran = [item.nodeid for item in request.session.items]\n    \
         pathlib.Path({:?}, os.path.basename(os.getcwd())).write_text(json.dumps(ran))\n    \
         assert initials(\"Ada\") == \"A\"\n",
        seen.path().to_str().unwrap()
    );
    for (name, repo, expected) in [
        // `fee` runs under no test of the change: known after the first coverage run.
        (
            "fee untested by the change",
            fixture_repo_variant("tested_elsewhere", "after"),
            "baseline of the rest of the suite (begun beside the first round)",
        ),
        // Every added line runs under the change's tests; GREETING's mutants survive them,
        // which only the first round's end tells.
        (
            "names only",
            names_only_change(&fair),
            "baseline of the rest of the suite (begun beside the first round, on idle CPU while only a survivor could need it)",
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("r.json");
        let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
        assert_eq!(run.code, 1, "{name}: {run:?}");
        let report = read_valid_report(&json);
        assert_eq!(rest_of_suite_steps(&report), [(expected.to_string(), "copy-rest".to_string())], "{name}");
        if name == "names only" {
            // Asked before the first round ran, it leaves out the change's test files whole.
            let ran = std::fs::read_to_string(seen.path().join("copy-rest")).unwrap();
            assert_eq!(ran, r#"["tests/test_rest.py::test_one_name"]"#, "{name}");
        }
        // A re-run of the same content has the measurement kept: nothing is begun beside.
        let again = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
        assert_eq!(again.code, 1, "{name}: {again:?}");
        let reused = "baseline of the rest of the suite (reused: an earlier run measured the same files, interpreter and tests)";
        assert_eq!(
            rest_of_suite_steps(&read_valid_report(&json)),
            [(reused.to_string(), String::new())],
            "{name}"
        );
    }
}

/// When the change's tests kill every mutant, the rest of the suite begun beside them is
/// stopped, not waited for: here one of its tests would sleep for a minute.
#[test]
fn the_rest_of_the_suite_begun_beside_is_stopped_when_nothing_is_left_open() {
    let repo = names_change("import time\n\n\ndef test_a_minute():\n    time.sleep(60)\n", false);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let started = std::time::Instant::now();
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    let took = started.elapsed();
    assert_eq!(run.code, 0, "every mutant of the change is killed by its tests: {run:?}");
    assert!(
        took < std::time::Duration::from_secs(50),
        "the check waited for the rest of the suite: {took:?}"
    );
    assert_eq!(rest_of_suite_steps(&read_valid_report(&json)), [], "no second round");
}

/// A test of the rest of the suite that fails only when starved of CPU (as one with a deadline
/// would) fails the run begun beside the first round once it is given idle CPU time: that run
/// does not decide. The rest of the suite runs again on its own, passes, and the verdicts are
/// those of a check without it.
#[test]
fn a_rest_of_the_suite_failing_only_beside_the_first_round_runs_again_on_its_own() {
    // Begun beside the first round (in `copy-rest`), it waits to be given idle CPU time.
    let starved = "import os\nimport time\n\n\ndef test_a_fair_share_of_the_cpu():\n    \
                   beside = os.path.basename(os.getcwd()) == \"copy-rest\"\n    \
                   deadline = time.monotonic() + (60 if beside else 0)\n    \
                   while True:\n        \
                   assert os.sched_getscheduler(0) != os.SCHED_IDLE\n        \
                   if time.monotonic() >= deadline:\n            break\n        \
                   time.sleep(0.02)\n";
    let repo = names_only_change(starved);
    let before = snapshot(repo.path());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "GREETING's survivors: {run:?}");
    let report = read_valid_report(&json);
    assert_eq!(
        rest_of_suite_steps(&report),
        [("baseline of the rest of the suite".to_string(), "copy-0".to_string())],
        "the run on its own decides"
    );
    let greeting = mutants_on_line(&report, "pkg/names.py", 9);
    assert!(!greeting.is_empty());
    for mutant in greeting {
        assert_eq!(mutant["status"], "Survived", "{mutant}");
        let covered: Vec<&str> =
            mutant["coveredBy"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(covered.contains(&"tests/test_rest.py::test_a_fair_share_of_the_cpu"), "{mutant}");
    }
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
}

/// The rest of the suite starts beside the first coverage run. A test of the change that fails
/// only beside it (its port is taken by a test of the rest of the suite, for as long as that
/// runs) fails that run: the rest of the suite is stopped, the change's tests run again alone,
/// pass, and the check goes on to the verdicts it would give without the rest of the suite
/// beside.
#[test]
fn a_first_coverage_run_failing_only_beside_the_rest_of_the_suite_runs_again_alone() {
    let shared = tempfile::tempdir().unwrap();
    let clashed = shared.path().join("clashed");
    let held = shared.path().join("held");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let header = format!(
        "import pathlib\nimport socket\nimport time\n\nCLASHED = pathlib.Path({:?})\nHELD = pathlib.Path({:?})\nPORT = {port}\n\n\n\
         def bind():\n    \
         sock = socket.socket()\n    \
         deadline = time.monotonic() + 30\n    \
         while True:\n        \
         try:\n            sock.bind((\"127.0.0.1\", PORT))\n            return sock\n        \
         except OSError:\n            \
         if time.monotonic() > deadline:\n                raise\n            \
         time.sleep(0.01)\n",
        clashed.to_str().unwrap(),
        held.to_str().unwrap()
    );
    // The first time it runs, holds the port for longer than the check should take.
    let holder = format!(
        "{header}\n\ndef test_holds_the_port():\n    \
         if HELD.exists():\n        return\n    \
         HELD.touch()\n    \
         sock = bind()\n    sock.listen()\n    \
         time.sleep(60)\n    \
         sock.close()\n"
    );
    let repo = names_only_change(&holder);
    // The change's test needs the port; until it has found it taken, it waits for that.
    let needs_the_port = format!(
        "\n\n{header}\n\ndef test_binds_the_port():\n    \
         deadline = time.monotonic() + 30\n    \
         while not CLASHED.exists() and time.monotonic() < deadline:\n        \
         probe = socket.socket()\n        \
         try:\n            probe.bind((\"127.0.0.1\", PORT))\n        \
         except OSError:\n            \
         CLASHED.touch()\n            \
         raise AssertionError(\"the port is taken\")\n        \
         finally:\n            probe.close()\n        \
         time.sleep(0.02)\n    \
         sock = socket.socket()\n    \
         sock.bind((\"127.0.0.1\", PORT))\n    \
         sock.close()\n"
    );
    add_to_the_changes_tests(repo.path(), &needs_the_port);
    let before = snapshot(repo.path());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert!(clashed.exists(), "the rest of the suite ran beside the first coverage run: {run:?}");
    assert_eq!(run.code, 1, "GREETING's survivors, not a failing baseline: {run:?}");
    let report = read_valid_report(&json);
    let greeting = mutants_on_line(&report, "pkg/names.py", 9);
    assert!(!greeting.is_empty());
    for mutant in greeting {
        assert_eq!(mutant["status"], "Survived", "{mutant}");
    }
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
}

/// While the first coverage run is spread over every core (its tests prove slow), the rest of
/// the suite begun beside it is paused; it goes on afterwards and its measurement decides.
#[test]
fn the_rest_of_the_suite_pauses_while_the_first_coverage_run_takes_every_core() {
    let seen = tempfile::tempdir().unwrap();
    let paused = seen.path().join("paused");
    // Long enough to be seen, where it runs beside the first round.
    let rest_test = "import os\nimport time\n\n\ndef test_a_while():\n    \
                     time.sleep(3 if os.path.basename(os.getcwd()) == \"copy-rest\" else 0)\n";
    let repo = names_only_change(rest_test);
    // The first test keeps the first process busy past the second after which the others
    // start; the next one, in another, looks for the rest of the suite's process, once.
    let slow_then_look = format!(
        "\n\nimport os\nimport pathlib\nimport time\n\nPAUSED = pathlib.Path({:?})\n\n\n\
         def test_slow():\n    time.sleep(2)\n\n\n\
         def rest_of_suite_state():\n    \
         for pid in filter(str.isdigit, os.listdir(\"/proc\")):\n        \
         try:\n            \
         if os.readlink(f\"/proc/{{pid}}/cwd\").endswith(\"copy-rest\"):\n                \
         with open(f\"/proc/{{pid}}/stat\") as stat:\n                    \
         return stat.read().rsplit(\")\", 1)[1].split()[0]\n        \
         except OSError:\n            pass\n    \
         return None\n\n\n\
         def test_looks_at_the_rest_of_the_suite():\n    \
         deadline = time.monotonic() + (10 if not PAUSED.exists() else 0)\n    \
         while time.monotonic() < deadline:\n        \
         if rest_of_suite_state() == \"T\":\n            \
         PAUSED.touch()\n            break\n        \
         time.sleep(0.02)\n",
        paused.to_str().unwrap()
    );
    add_to_the_changes_tests(repo.path(), &slow_then_look);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert!(paused.exists(), "the rest of the suite was seen paused (stopped): {run:?}");
    assert_eq!(run.code, 1, "GREETING's survivors: {run:?}");
    let report = read_valid_report(&json);
    let beside = "baseline of the rest of the suite (begun beside the first round, on idle CPU while only a survivor could need it)";
    assert_eq!(rest_of_suite_steps(&report), [(beside.to_string(), "copy-rest".to_string())]);
    let baseline = report["mutdelta"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["step"] == "baseline")
        .unwrap();
    assert_eq!(
        baseline["commands"].as_array().unwrap().len(),
        2,
        "the first coverage run spread: {baseline}"
    );
    for mutant in mutants_on_line(&report, "pkg/names.py", 9) {
        assert_eq!(mutant["status"], "Survived", "{mutant}");
    }
}
