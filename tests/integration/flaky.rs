//! Flaky tests: a test that fails at random kills only what fails it every time, run after run, with the verdict memory kept or not; the test is named; a test the project marks flaky, or the configuration names, has its kills confirmed too.

use std::collections::BTreeMap;

use crate::common::{check, fixture_repo_variant, mutdelta, mutdelta_as, read_report, sh_as_a_user};

/// The mutants that make `tax()` return `None`: `rate = None` on line 8, `return None`.
const BREAK_TAX: [(u64, &str); 2] = [(8, "NoneValue"), (9, "ReturnValue")];

/// Each mutant's status by (line, mutator, replacement), and the report.
fn verdicts(report: &serde_json::Value) -> BTreeMap<(u64, String, String), String> {
    report["files"]["calc.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mutant| {
            let key = (
                mutant["location"]["start"]["line"].as_u64().unwrap(),
                mutant["mutatorName"].as_str().unwrap().to_string(),
                mutant["replacement"].as_str().unwrap_or_default().to_string(),
            );
            (key, mutant["status"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The mutants `verdicts` calls Killed, by (line, mutator).
fn killed(verdicts: &BTreeMap<(u64, String, String), String>) -> Vec<(u64, &str)> {
    verdicts
        .iter()
        .filter(|(_, status)| *status == "Killed")
        .map(|((line, mutator, _), _)| (*line, mutator.as_str()))
        .collect()
}

#[test]
fn a_test_failing_one_run_in_two_kills_only_the_mutants_that_fail_it_every_time_run_after_run() {
    let repo = fixture_repo_variant("flaky", "after");
    let json = repo.path().join("report.json");
    let json_arg = json.to_str().unwrap();
    let mut seen = Vec::new();
    // Five runs with the verdict memory kept, then two without it: none may lean on luck.
    for no_cache in [false, false, false, false, false, true, true] {
        let mut args = vec!["--commit", "HEAD", "--json", json_arg];
        if no_cache {
            args.push("--no-cache");
        }
        let run = check(repo.path(), &args);
        assert_eq!(run.code, 1, "survivors, never a refusal: {run:?}");
        assert!(
            run.stdout.contains("note: flaky test test_calc.py::test_tax_runs: it failed "),
            "the flaky test is named: {run:?}"
        );
        let report = read_report(&json);
        let flaky = &report["mutdelta"]["flaky"]["test_calc.py::test_tax_runs"];
        assert!(flaky.as_str().is_some_and(|said| said.contains(" runs without any mutant")), "{report:#}");
        let verdicts = verdicts(&report);
        assert_eq!(killed(&verdicts), BREAK_TAX, "{run:?}");
        let reasons: Vec<&serde_json::Value> = report["files"]["calc.py"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| &m["statusReason"])
            .collect();
        let decided = verdicts.values().all(|status| status == "Killed" || status == "Survived");
        assert!(decided, "{verdicts:?}\n{reasons:#?}");
        let kills: Vec<&serde_json::Value> = report["files"]["calc.py"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|mutant| mutant["status"] == "Killed")
            .collect();
        for kill in kills {
            // As many runs as its failure rate, as seen so far, asks: at least 14 for one in two.
            let reason = kill["statusReason"].as_str().unwrap();
            let runs: u32 = reason
                .split("failed in all ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|runs| runs.parse().ok())
                .unwrap_or_else(|| panic!("{reason}"));
            assert!(runs >= 14 && reason.contains(" runs under the mutant (flaky: it failed "), "{reason}");
            assert_eq!(kill["flaky"], serde_json::json!(["test_calc.py::test_tax_runs"]));
        }
        seen.push(verdicts);
    }
    assert!(seen.windows(2).all(|pair| pair[0] == pair[1]), "the same verdicts every run: {seen:#?}");
}

#[test]
fn a_test_the_project_marks_flaky_or_the_configuration_names_kills_only_by_failing_every_time() {
    let marked = fixture_repo_variant("flaky", "marked");
    let steady = fixture_repo_variant("flaky", "steady");
    std::fs::write(steady.path().join("mutdelta.toml"), "flaky = [\"test_calc.py\"]\n").unwrap();
    for (repo, why) in
        [(&marked, "the project marks it flaky"), (&steady, "the configuration names it flaky")]
    {
        let json = repo.path().join("report.json");
        let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
        assert_eq!(run.code, 1, "{run:?}");
        let report = read_report(&json);
        assert_eq!(killed(&verdicts(&report)), BREAK_TAX, "{run:?}");
        assert_eq!(report["mutdelta"]["flaky"]["test_calc.py::test_tax_runs"], why, "{report:#}");
        for mutant in report["files"]["calc.py"]["mutants"].as_array().unwrap() {
            let reason = mutant["statusReason"].as_str().unwrap();
            match mutant["status"].as_str().unwrap() {
                // Never measured failing: one chance in two per run, as for an unknown rate.
                "Killed" => assert!(reason.contains("failed in all 14 runs under the mutant"), "{reason}"),
                _ => assert!(mutant.get("flaky").is_none(), "a pass needs no second run: {mutant:#}"),
            }
        }
    }
    // Unmarked and unnamed, the same test's kills stand on one failure: nothing is run again.
    let json = steady.path().join("plain.json");
    let run = check(steady.path(), &["--commit", "HEAD", "--no-config", "--json", json.to_str().unwrap()]);
    let report = read_report(&json);
    assert_eq!(killed(&verdicts(&report)), BREAK_TAX, "{run:?}");
    assert!(report["mutdelta"].get("flaky").is_none(), "{report:#}");
    for mutant in report["files"]["calc.py"]["mutants"].as_array().unwrap() {
        assert!(mutant.get("flaky").is_none(), "{mutant:#}");
    }
}

#[test]
fn the_randomness_the_suite_asks_for_is_seeded_alike_in_every_run_and_in_the_command_that_reproduces_it() {
    let python = crate::common::python_with_seeded_plugins();
    let repo = fixture_repo_variant("flaky", "seeded");
    let mut seen = Vec::new();
    for run in ["first", "second"] {
        let json = repo.path().join(format!("{run}.json"));
        let args =
            ["check", "--commit", "HEAD", "--no-cache", "-j", "2", "--python", python.to_str().unwrap()];
        let run = mutdelta(repo.path(), &[&args[..], &["--json", json.to_str().unwrap()]].concat());
        // pytest-randomly reseeds `random` before each test: the random test draws the same
        // number in every run, and passes.
        assert_eq!(run.code, 1, "{run:?}");
        let said = "seeded alike in every run (--randomly-seed=1 --hypothesis-seed=1)";
        assert!(run.stderr.contains(said), "the seeds are said: {run:?}");
        let report = read_report(&json);
        assert!(report["mutdelta"].get("flaky").is_none(), "nothing fails at random: {report:#}");
        let mutants = report["files"]["calc.py"]["mutants"].as_array().unwrap();
        for mutant in mutants.iter().filter(|mutant| mutant.get("run").is_some()) {
            let commands = mutant["run"]["commands"].as_array().unwrap();
            for argv in commands.iter().map(|command| command["argv"].to_string()) {
                assert!(
                    argv.contains("\"--randomly-seed=1\"") && argv.contains("\"--hypothesis-seed=1\""),
                    "{argv}"
                );
            }
        }
        let killed = mutants.iter().find(|mutant| mutant["status"] == "Killed").expect("a kill");
        let shown = mutdelta(repo.path(), &["show", json.to_str().unwrap(), killed["id"].as_str().unwrap()]);
        let command = crate::common::reproduce_command(&shown.stdout);
        assert!(
            command.contains("--randomly-seed=1") && command.contains("--hypothesis-seed=1"),
            "{shown:?}"
        );
        let reproduced = sh_as_a_user(&command, repo.path());
        assert!(!reproduced.status.success(), "the kill reproduces with the same seeds: {shown:?}");
        seen.push(verdicts(&report));
    }
    assert_eq!(seen[0], seen[1], "the same verdicts, mutant by mutant");
}

#[test]
fn a_libtest_test_failing_one_run_in_two_kills_exactly_what_it_kills_when_steady() {
    let steady = fixture_repo_variant("rust_flaky", "steady");
    let json = steady.path().join("report.json");
    let run = check(steady.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let expected = rust_verdicts(&read_report(&json));
    assert!(
        expected.values().any(|status| status == "Killed")
            && expected.values().any(|status| status == "Survived")
    );

    let flaky = fixture_repo_variant("rust_flaky", "after");
    let json = flaky.path().join("report.json");
    for no_cache in [false, false, true] {
        let mut args = vec!["--commit", "HEAD", "--json", json.to_str().unwrap()];
        if no_cache {
            args.push("--no-cache");
        }
        let run = check(flaky.path(), &args);
        assert_eq!(run.code, 1, "survivors, never a refusal: {run:?}");
        let report = read_report(&json);
        assert_eq!(rust_verdicts(&report), expected, "{run:?}");
        let said = report["mutdelta"]["flaky"]["tests::tax_runs"].as_str().unwrap_or_default();
        assert!(said.contains(" runs without any mutant"), "the flaky test is named: {report:#}");
    }
}

/// Each mutant's status in a Rust report, by (line, description).
fn rust_verdicts(report: &serde_json::Value) -> BTreeMap<(u64, String), String> {
    report["files"]["src/lib.rs"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mutant| {
            let line = mutant["location"]["start"]["line"].as_u64().unwrap();
            let what = mutant["description"].as_str().unwrap().to_string();
            ((line, what), mutant["status"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn a_test_that_fails_before_any_mutant_and_then_passes_is_flaky_and_the_check_goes_on() {
    // One job: the baseline runs in one process, so the test's failure is run again alone (a
    // shard's failure runs the whole selection again in one process first, where it passes).
    let repo = fixture_repo_variant("flaky", "cold");
    let json = repo.path().join("report.json");
    let python = crate::common::python();
    let args = ["check", "--commit", "HEAD", "-j", "1", "--python", python.to_str().unwrap()];
    let run = mutdelta(repo.path(), &[&args[..], &["--json", json.to_str().unwrap()]].concat());
    assert_eq!(run.code, 1, "survivors, not a refusal: {run:?}");
    let report = read_report(&json);
    let said =
        "it failed 1 of 2 runs without any mutant (AssertionError: cold start: # ms over at test_calc.py:";
    let known = report["mutdelta"]["flaky"]["test_calc.py::test_cold_start"].as_str().unwrap_or_default();
    assert!(known.starts_with(said), "its runs and the fingerprint of its failure: {report:#}");
    let steps: Vec<&str> = report["mutdelta"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| step["step"].as_str().unwrap())
        .collect();
    let again = "flaky, run again until they passed: test_calc.py::test_cold_start failed 1 of 2 runs";
    assert!(steps.iter().any(|step| step.starts_with("baseline") && step.ends_with(again)), "{steps:?}");
    assert_eq!(killed(&verdicts(&report)), BREAK_TAX, "{run:?}");
}

#[test]
fn a_rust_mutant_that_hangs_is_a_timeout_once_its_tests_finish_unmutated_well_within_the_limit() {
    let repo = fixture_repo_variant("rust_flaky", "hang");
    let json = repo.path().join("report.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--timeout", "3", "--json", json.to_str().unwrap()]);
    let report = read_report(&json);
    let mutants = report["files"]["src/lib.rs"]["mutants"].as_array().unwrap();
    let timeouts: Vec<&serde_json::Value> =
        mutants.iter().filter(|mutant| mutant["status"] == "Timeout").collect();
    assert!(!timeouts.is_empty(), "deleting `n -= 1` hangs: {run:?}");
    for mutant in timeouts {
        let reason = mutant["statusReason"].as_str().unwrap();
        assert!(reason.contains("; without the mutant, run the same way, the tests take "), "{mutant:#}");
    }
}

#[test]
fn a_line_its_tests_reach_in_one_check_and_not_the_next_is_no_coverage_in_every_check_after_saying_so() {
    let repo = fixture_repo_variant("rust_flaky", "varies");
    let switch = tempfile::tempdir().unwrap();
    let switch_file = switch.path().join("reach");
    let json = repo.path().join("report.json");
    let check_with = |reach: &str, extra: &[&str]| {
        std::fs::write(&switch_file, reach).unwrap();
        let mut args = vec!["check", "--commit", "HEAD", "-j", "2", "--json", json.to_str().unwrap()];
        args.extend_from_slice(extra);
        let run = mutdelta_as(repo.path(), &args, "", &[("REACH_SWITCH", switch_file.to_str().unwrap())]);
        assert_eq!(run.code, 1, "{run:?}");
        let report = read_report(&json);
        let tax: Vec<(String, String)> = report["files"]["src/lib.rs"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|mutant| (6..=10).contains(&mutant["location"]["start"]["line"].as_u64().unwrap()))
            .map(|m| {
                (m["status"].as_str().unwrap().to_string(), m["statusReason"].as_str().unwrap().to_string())
            })
            .collect();
        assert!(!tax.is_empty(), "{report:#}");
        tax
    };
    let statuses =
        |tax: &[(String, String)]| tax.iter().map(|(status, _)| status.clone()).collect::<Vec<_>>();

    // First reached: the test checks tax(150), and kills what breaks it.
    let first = check_with("reach", &[]);
    assert!(statuses(&first).contains(&"Killed".to_string()), "{first:#?}");
    assert!(first.iter().all(|(status, _)| status != "NoCoverage"), "{first:#?}");
    // Then not: no test reached tax(), a run of the same commit that differs from the first.
    let second = check_with("skip", &[]);
    let said = "coverage varies: the tests reached this line in 1 of 2 runs of this state, so none checks it every time (this run's did not)";
    assert!(second.iter().all(|(status, reason)| status == "NoCoverage" && reason == said), "{second:#?}");
    // Reached again: the kill depends on the tests reaching the line, so it is NoCoverage too.
    let third = check_with("reach", &[]);
    assert!(third.iter().all(|(status, _)| status == "NoCoverage"), "{third:#?}");
    let killed_now = "coverage varies: the tests reached this line in 2 of 3 runs of this state, so none checks it every time (this run's did, and it was Killed: ";
    assert!(third.iter().any(|(_, reason)| reason.starts_with(killed_now)), "{third:#?}");
    // Without the store, a check knows only its own run.
    let forgetful = check_with("reach", &["--no-cache"]);
    assert_eq!(statuses(&forgetful), statuses(&first), "{forgetful:#?}");
}

#[test]
fn a_test_nextest_s_configuration_retries_has_its_kills_repeat_as_a_flaky_test_s_do() {
    let steady = fixture_repo_variant("rust_flaky", "steady");
    let json = steady.path().join("report.json");
    let run = check(steady.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let expected = rust_verdicts(&read_report(&json));

    let retried = fixture_repo_variant("rust_flaky", "retried");
    let json = retried.path().join("report.json");
    let run = check(retried.path(), &["--commit", "HEAD", "--no-cache", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = read_report(&json);
    assert_eq!(rust_verdicts(&report), expected, "the same kills, each held by every run");
    let said = report["mutdelta"]["flaky"]["tests::tax_runs"].as_str().unwrap_or_default();
    assert_eq!(said, "the project marks it flaky", "{report:#}");
    let mutants = report["files"]["src/lib.rs"]["mutants"].as_array().unwrap();
    let by_tax_runs: Vec<&serde_json::Value> = mutants
        .iter()
        .filter(|m| m["status"] == "Killed" && m["killedBy"].to_string().contains("tax_runs"))
        .collect();
    assert!(!by_tax_runs.is_empty(), "{report:#}");
    for kill in by_tax_runs {
        let reason = kill["statusReason"].as_str().unwrap();
        assert!(reason.contains("; failed in all 14 runs under the mutant (flaky: tests::tax_runs: the project marks it flaky)"), "{kill:#}");
    }
    // A test no override names is not the project's to retry: its kill holds at once.
    let by_adds: Vec<&serde_json::Value> =
        mutants.iter().filter(|m| m["killedBy"].to_string().contains("adds")).collect();
    assert!(
        by_adds.iter().all(|kill| !kill["statusReason"].as_str().unwrap().contains("runs under the mutant")),
        "{by_adds:#?}"
    );
}

#[test]
fn a_steady_test_failing_as_a_flaky_test_of_its_file_does_has_its_kill_repeat_before_it_counts() {
    let repo = fixture_repo_variant("flaky", "lookalike");
    // An earlier check saw test_service fail one run in two, this way.
    let store = repo.path().join(".git/mutdelta");
    std::fs::create_dir_all(&store).unwrap();
    let seen = serde_json::json!({"tests": {"test_calc.py::test_service": {
        "why": "seen", "runs": 2, "failures": 1,
        "fingerprints": ["RuntimeError: service # unavailable at test_calc.py:10"],
    }}});
    std::fs::write(store.join("flaky.json"), seen.to_string()).unwrap();
    let json = repo.path().join("report.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = read_report(&json);
    let mutants = report["files"]["calc.py"]["mutants"].as_array().unwrap();
    let mutant = |line: u64, replacement: &str| {
        let found = mutants
            .iter()
            .find(|m| m["location"]["start"]["line"] == line && m["replacement"] == replacement);
        found.unwrap_or_else(|| panic!("no `{replacement}` on line {line}: {report:#}"))
    };
    // `rate > 0.5` turned round raises for tax(150), as test_service failed: run again.
    let raising = mutant(9, "<");
    let said = "failed: test_calc.py::test_tax_runs; test_calc.py::test_tax_runs failed in all 14 runs under the mutant (flaky: its failure looks like flaky test_calc.py::test_service's: it failed 1 of 2 runs without any mutant (RuntimeError: service # unavailable at test_calc.py:10)): a kill";
    // A kill made while the rest of the suite ran beside is run again once it is over, and
    // says so after the rest: when that happens depends on the machine's speed.
    let beside =
        "; run again once the rest of the suite, begun beside, was over: it ran beside the first try";
    let reason = |mutant: &serde_json::Value| {
        let reason = mutant["statusReason"].as_str().unwrap_or_default();
        reason.strip_suffix(beside).unwrap_or(reason).to_string()
    };
    assert_eq!(
        (&raising["status"], reason(raising).as_str()),
        (&serde_json::json!("Killed"), said),
        "{raising:#}"
    );
    assert_eq!(raising["flaky"], serde_json::json!(["test_calc.py::test_tax_runs"]), "{raising:#}");
    // `rate = None` fails with a TypeError, unlike the flaky test: a kill at once.
    let unlike = mutant(8, "None");
    assert_eq!(unlike["status"], "Killed", "{unlike:#}");
    assert_eq!(reason(unlike), "failed: test_calc.py::test_tax_runs", "{unlike:#}");
    assert!(unlike.get("flaky").is_none(), "{unlike:#}");
}
