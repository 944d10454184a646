//! Mutants that crash or hang the tests: each gets a verdict without losing its worker, and a
//! swapped hang times out at a short limit only once its tests are seen to be quick.

use serde_json::Value;

use crate::common::{check, fixture_repo, mutants_on_line, mutdelta, python, read_valid_report};

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
        !aborted.is_empty()
            && aborted
                .iter()
                .all(|r| r.starts_with("the test process died of SIGABRT (signal 6): it aborted")),
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
        // At least 1 s: more where the machine is busier than its cores (the other tests).
        let reason = mutant["statusReason"].as_str().unwrap();
        let limit: f64 = reason
            .strip_prefix("the tests ran past ")
            .and_then(|rest| rest.split_once(" s, where unmutated they take "))
            .and_then(|(limit, _)| limit.parse().ok())
            .unwrap_or_else(|| panic!("{mutant}"));
        assert!((1.0..=16.0).contains(&limit), "{mutant}");
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
        let said = hung[0]["statusReason"].as_str().unwrap();
        assert!(said.starts_with(reason), "{timeout:?}: {}", hung[0]);
        // Confirmed: the test, unmutated and swapped in alone, takes well under the limit.
        assert!(said.contains("; without the mutant, run the same way, the tests take "), "{said}");
        assert_eq!(hung[0]["run"]["how"], "swap", "{timeout:?}: {}", hung[0]);
        assert_eq!(hung[0]["run"]["commands"].as_array().unwrap().len(), runs, "{timeout:?}: {}", hung[0]);
    }
}

#[test]
fn a_timeout_that_the_limit_not_the_mutant_caused_is_run_again_with_a_limit_the_tests_fit_in() {
    // Every run off the swap path collects for 1.2 s, past `--timeout 1`: the limit stops
    // every mutant at first. Only the one that hangs (`n -= 1` deleted, line 7's first mutant)
    // stays Timeout once run again with five times what the same tests took unmutated, the
    // same way (forked from the warm worker).
    let repo = fixture_repo("slow_start");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let args = ["--commit", "HEAD", "--no-swap", "--timeout", "1", "--one-per-line"];
    let run = check(repo.path(), &[&args[..], &["--json", json.to_str().unwrap()]].concat());
    let report = read_valid_report(&json);
    let mutants = report["files"]["countdown.py"]["mutants"].as_array().unwrap();
    let hanging = |m: &&Value| m["location"]["start"]["line"] == 7;
    assert_eq!((mutants.len(), mutants.iter().filter(hanging).count()), (3, 1), "{report}");
    for mutant in mutants {
        let reason = mutant["statusReason"].as_str().unwrap();
        assert_eq!(mutant["run"]["how"], "fork", "{mutant}");
        if hanging(&mutant) {
            assert_eq!(mutant["status"], "Timeout", "{mutant}");
        } else {
            assert_ne!(mutant["status"], "Timeout", "the limit's, not the mutant's: {mutant}");
        }
        let again = reason.contains("; run again with a limit of ");
        assert!(again && reason.contains("more than a third of the first limit (1.0 s)"), "{mutant}");
        // Stopped at 1 s first; the last run (after the rest of the suite begun beside, maybe,
        // which runs it all again) decided under the raised limit.
        let commands = mutant["run"]["commands"].as_array().unwrap();
        assert_eq!(commands[0]["exit"], "timed out", "{mutant}");
        let last_timed_out = commands.last().unwrap()["exit"] == "timed out";
        assert!(commands.len() >= 2 && last_timed_out == hanging(&mutant), "{mutant}");
    }
    assert!(mutants.iter().any(|m| m["status"] == "Killed"), "{run:?}");
}
