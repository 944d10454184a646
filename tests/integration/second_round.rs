//! The rest of the test suite: the second round that decides what the change's own tests let
//! through, begun beside the first round (on idle CPU, paused, stopped, or run again alone when
//! only beside it a run fails), refused when it fails unmutated; and `--confirm-survivors`, which
//! runs survivors against the whole suite as it runs.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{
    check, copy_tree, fixture_repo, fixture_repo_variant, git, mutants_on_line, mutdelta, python,
    read_valid_report, snapshot, FIXTURES,
};

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

/// `tested_elsewhere` with a change whose every mutant survives the change's tests: GREETING,
/// run at import and read by no test, added to pkg/names.py (at `GREETING_ONLY_LINE`), and a
/// test added to tests/test_names.py; the rest of the suite is `rest_test`. No kill is made
/// beside the rest of the suite, so nothing stops it before the first survivor needs it.
fn greeting_only_change(rest_test: &str) -> tempfile::TempDir {
    let repo = names_change(rest_test, false);
    let fixture = Path::new(FIXTURES).join("tested_elsewhere/before");
    let names = std::fs::read_to_string(fixture.join("pkg/names.py")).unwrap();
    std::fs::write(repo.path().join("pkg/names.py"), format!("{names}\n\nGREETING = \"hello\"\n")).unwrap();
    let tests = std::fs::read_to_string(fixture.join("tests/test_names.py")).unwrap();
    let one_name = "\n\ndef test_one_name():\n    assert initials(\"Ada\") == \"A\"\n";
    std::fs::write(repo.path().join("tests/test_names.py"), format!("{tests}{one_name}")).unwrap();
    git(repo.path(), &["commit", "-q", "-a", "--amend", "--no-edit"]);
    repo
}

/// The line of GREETING in a `greeting_only_change`.
const GREETING_ONLY_LINE: u64 = 5;

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
            greeting_only_change(&fair),
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
        // (The test-impact map the first run recorded says what it would rule out.)
        let steps = rest_of_suite_steps(&read_valid_report(&json));
        let reused = "(reused: an earlier run measured the same files, interpreter and tests)";
        assert_eq!(steps.len(), 1, "{name}: {steps:?}");
        let (step, copy) = &steps[0];
        assert!(step.starts_with("baseline of the rest of the suite"), "{name}: {step}");
        assert!(step.ends_with(reused) && copy.is_empty(), "{name}: {step} in {copy}");
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

/// Python: a socket the copies' runs of the change's port tests may bind side by side (they
/// run at once in parallel copies): it may share the port, as long as none listens (the
/// holder's does).
const REUSABLE: &str = "def reusable():\n    \
                        sock = socket.socket()\n    \
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n    \
                        return sock\n";

/// The rest of the suite starts beside the first coverage run. A test of the change that fails
/// only beside it (its port is taken by a test of the rest of the suite, for as long as that
/// runs) decides nothing. When the port is taken before the first coverage run looks, that run
/// fails: the rest of the suite is stopped and the change's tests run again alone. When the
/// rest of the suite gets there later (it pauses while the first coverage run is spread over
/// every core), the mutants' runs fail beside it: their kills do not hold, and the mutants run
/// again once it is stopped. Either way the verdicts are those of a check without it.
#[test]
fn a_test_of_the_change_failing_only_beside_the_rest_of_the_suite_decides_nothing() {
    // Whether a run of the change's test meets the holder at all depends on timing (the rest
    // of the suite may be paused, or stopped, before it holds the port): a check in which none
    // did proves nothing here, and is made again. Its verdicts are checked all the same.
    let missed = (0..3).map(|_| check_beside_a_port_holder()).take_while(|clashed| !clashed).count();
    assert!(missed < 3, "no run of the change's test met the rest of the suite holding the port in 3 checks");
}

/// One check of the change whose test needs a port that a test of the rest of the suite holds;
/// whether a run of the change's test met it held.
fn check_beside_a_port_holder() -> bool {
    let shared = tempfile::tempdir().unwrap();
    let clashed = shared.path().join("clashed");
    let held = shared.path().join("held");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let header = format!(
        "import os\nimport pathlib\nimport socket\nimport time\n\nCLASHED = pathlib.Path({:?})\nHELD = pathlib.Path({:?})\nPORT = {port}\n\n\n{REUSABLE}\n\n\
         def note(what):\n    \
         with open(HELD.parent / \"events\", \"a\") as events:\n        \
         events.write(f\"{{time.time():.3f}} {{os.getpid()}} {{os.path.basename(os.getcwd())}} {{what}}\\n\")\n\n\n\
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
         note(\"holds\")\n    \
         time.sleep(60)\n    \
         sock.close()\n    \
         note(\"released\")\n"
    );
    let repo = names_only_change(&holder);
    // The change's test needs the port; until it has found it taken, it waits for that.
    let needs_the_port = format!(
        "\n\n{header}\n\ndef test_binds_the_port():\n    \
         deadline = time.monotonic() + 30\n    \
         while not CLASHED.exists() and time.monotonic() < deadline:\n        \
         probe = reusable()\n        \
         try:\n            probe.bind((\"127.0.0.1\", PORT))\n        \
         except OSError:\n            \
         CLASHED.touch()\n            \
         note(\"taken\")\n            \
         raise AssertionError(\"the port is taken\")\n        \
         finally:\n            probe.close()\n        \
         time.sleep(0.02)\n    \
         sock = reusable()\n    \
         try:\n        sock.bind((\"127.0.0.1\", PORT))\n    \
         except OSError:\n        \
         note(\"taken after the wait\")\n        \
         raise\n    \
         sock.close()\n    \
         note(\"bound\")\n"
    );
    add_to_the_changes_tests(repo.path(), &needs_the_port);
    let before = snapshot(repo.path());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    let events = std::fs::read_to_string(shared.path().join("events")).unwrap_or_default();
    let shown = format!("{run:?}\n--- events\n{events}");
    assert_eq!(run.code, 1, "GREETING's survivors, not a failing baseline: {shown}");
    let report = read_valid_report(&json);
    let greeting = mutants_on_line(&report, "pkg/names.py", 9);
    assert!(!greeting.is_empty());
    for mutant in greeting {
        assert_eq!(mutant["status"], "Survived", "{mutant}\n{shown}");
    }
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
    clashed.exists()
}

/// While the first coverage run is spread over every core (its tests prove slow), the rest of
/// the suite begun beside it is paused; it goes on afterwards and its measurement decides.
#[test]
fn the_rest_of_the_suite_pauses_while_the_first_coverage_run_takes_every_core() {
    let seen = tempfile::tempdir().unwrap();
    let paused = seen.path().join("paused");
    let looked = seen.path().join("looked");
    // Beside the first round, it runs until the change's test has looked at it (however long
    // the machine takes to start either), so that what that test sees depends only on mutdelta.
    let rest_test = format!(
        "import os\nimport pathlib\nimport time\n\nLOOKED = pathlib.Path({:?})\n\n\n\
         def test_a_while():\n    \
         deadline = time.monotonic() + 60\n    \
         while os.path.basename(os.getcwd()) == \"copy-rest\" and not LOOKED.exists():\n        \
         assert time.monotonic() < deadline, \"the change's test never looked\"\n        \
         time.sleep(0.02)\n",
        looked.to_str().unwrap()
    );
    let repo = greeting_only_change(&rest_test);
    // The first test keeps the first process busy past the second after which the others
    // start; the next one, in another, looks for the rest of the suite's process, once.
    let slow_then_look = format!(
        "\n\nimport os\nimport pathlib\nimport time\n\nPAUSED = pathlib.Path({:?})\nLOOKED = pathlib.Path({:?})\n\n\n\
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
         time.sleep(0.02)\n    \
         LOOKED.touch()\n",
        paused.to_str().unwrap(),
        looked.to_str().unwrap()
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
    let greeting = mutants_on_line(&report, "pkg/names.py", GREETING_ONLY_LINE);
    assert!(!greeting.is_empty(), "{report}");
    for mutant in greeting {
        assert_eq!(mutant["status"], "Survived", "{mutant}");
    }
}

/// A test of the rest of the suite that takes a port a test of the change needs, once a mutant
/// of GREETING runs (its run calls `wait_for_the_holder()`, which says so), and holds it for
/// longer than a check should take. Its header (the paths, the port, `reusable()`,
/// `greeting_mutated()` and `wait_for_the_holder()`) is for the change's test too. Unmutated
/// runs (the coverage runs, a kill's check) never wait: whether one clashes with the holder
/// depends only on whether it holds the port then, not on how fast the machine is.
struct PortHolder {
    held: std::path::PathBuf,
    header: String,
    test: String,
}

fn port_holder(shared: &Path) -> PortHolder {
    let started = shared.join("a-mutant-of-greeting-runs");
    let held = shared.join("held");
    let holder_pid = shared.join("holder-pid");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // A holder not started yet is gone only when no process runs in the rest of the suite's
    // copy: on a busy machine the rest of the suite may still be starting.
    let header = format!(
        "import os\nimport pathlib\nimport socket\nimport time\n\n\
         STARTED = pathlib.Path({:?})\nHELD = pathlib.Path({:?})\nHOLDER = pathlib.Path({:?})\nPORT = {port}\n\n\n\
         {REUSABLE}\n\n\
         def greeting_mutated():\n    \
         return 'GREETING = shout(\"hello\")\\n' not in pathlib.Path(\"pkg/names.py\").read_text()\n\n\n\
         def _rest_of_the_suite_runs():\n    \
         for pid in os.listdir(\"/proc\"):\n        \
         try:\n            \
         if pid.isdigit() and os.readlink(f\"/proc/{{pid}}/cwd\").endswith(\"/copy-rest\"):\n                \
         return True\n        \
         except OSError:\n            pass\n    \
         return False\n\n\n\
         def _holder_gone():\n    \
         try:\n        os.kill(int(HOLDER.read_text()), 0)\n        return False\n    \
         except FileNotFoundError:\n        return not _rest_of_the_suite_runs()\n    \
         except ValueError:\n        return False\n    \
         except OSError:\n        return True\n\n\n\
         def wait_for_the_holder():\n    \
         STARTED.touch()\n    \
         deadline = time.monotonic() + 120\n    \
         while not HELD.exists() and not _holder_gone() and time.monotonic() < deadline:\n        \
         time.sleep(0.02)\n",
        started.to_str().unwrap(),
        held.to_str().unwrap(),
        holder_pid.to_str().unwrap()
    );
    let test = format!(
        "{header}\n\ndef test_holds_the_port():\n    \
         if HELD.exists():\n        return\n    \
         HOLDER.write_text(str(os.getpid()))\n    \
         deadline = time.monotonic() + 120\n    \
         while not STARTED.exists():\n        \
         assert time.monotonic() < deadline, \"no mutant of GREETING ran\"\n        \
         time.sleep(0.02)\n    \
         sock = socket.socket()\n    \
         while True:\n        \
         try:\n            sock.bind((\"127.0.0.1\", PORT))\n            break\n        \
         except OSError:\n            \
         assert time.monotonic() < deadline\n            \
         time.sleep(0.01)\n    \
         sock.listen()\n    \
         HELD.touch()\n    \
         time.sleep(120)\n    \
         sock.close()\n"
    );
    PortHolder { held, header, test }
}

/// Adds to the change's commit a function no test runs: a mutant then needs the rest of the
/// suite from the start, which keeps its share of the CPU (not idle time, which a busy machine
/// may never leave it), and kills beside it are checked.
fn add_an_uncovered_line(repo: &Path) {
    let names = repo.join("pkg/names.py");
    let source = std::fs::read_to_string(&names).unwrap();
    std::fs::write(&names, format!("{source}\n\ndef never_called():\n    return 0\n")).unwrap();
    git(repo, &["commit", "-q", "-a", "--amend", "--no-edit"]);
}

/// A check of a `port_holder` change: the rest of the suite took the port, GREETING's mutants
/// survived, and the rest of the suite, stopped, was measured again on its own for the second
/// round; the checkout is untouched. The report, for what else the test looks at.
fn check_the_port_holders_change(repo: &Path, holder: &PortHolder) -> Value {
    let before = snapshot(repo);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    // A mutant of GREETING waits for the holder, which a busy machine may schedule late: its
    // limit is not what these tests are about. One worker: the first mutant whose run clashes
    // with the holder is the one whose check stops it, not whichever of two checks came first.
    let python = python();
    let (python, json_arg) = (python.to_str().unwrap(), json.to_str().unwrap());
    let args = ["check", "--python", python, "-j", "1", "--commit", "HEAD", "--no-audit", "--timeout", "150"];
    let run = mutdelta(repo, &[&args[..], &["--json", json_arg]].concat());
    assert!(holder.held.exists(), "the rest of the suite took the port beside the mutants: {run:?}");
    assert_eq!(run.code, 1, "GREETING's survivors: {run:?}");
    let report = read_valid_report(&json);
    let greeting = mutants_on_line(&report, "pkg/names.py", 9);
    assert!(!greeting.is_empty());
    for mutant in &greeting {
        assert_eq!(mutant["status"], "Survived", "{mutant}");
    }
    assert_eq!(
        rest_of_suite_steps(&report),
        [("baseline of the rest of the suite".to_string(), "copy-0".to_string())],
        "measured again after it was stopped"
    );
    assert_eq!(snapshot(repo), before, "the checkout is untouched");
    report
}

/// Each mutant of pkg/names.py in a line: its status, its first run's exit status and its
/// status reason; short enough to be read whole in a failing test's output.
fn outcomes(report: &Value) -> String {
    let mutants = report["files"]["pkg/names.py"]["mutants"].as_array().cloned().unwrap_or_default();
    let line = |mutant: &Value| {
        let first_exit = mutant.get("run").map(|run| run["commands"][0]["exitCode"].clone());
        format!(
            "\n{} {}: first exit {first_exit:?}: {}",
            mutant["id"], mutant["status"], mutant["statusReason"]
        )
    };
    mutants.iter().map(line).collect()
}

/// The rest of the suite, begun beside the first round, takes a port a test of the change needs
/// once a mutant of GREETING runs, and holds it: the mutants' runs of that test fail beside
/// it. Those kills do not hold (the test fails without the mutant too, there and then): the rest
/// of the suite is stopped, the mutants run again without it, and GREETING's survive.
#[test]
fn a_kill_made_only_beside_the_rest_of_the_suite_is_tried_again_without_it() {
    let shared = tempfile::tempdir().unwrap();
    let holder = port_holder(shared.path());
    let repo = names_only_change(&holder.test);
    // Unmutated, it binds the port at once; under a mutant of GREETING, once the holder holds it.
    let needs_the_port = format!(
        "\n\n{}\n\ndef test_binds_the_port():\n    \
         if greeting_mutated():\n        wait_for_the_holder()\n    \
         sock = reusable()\n    \
         try:\n        sock.bind((\"127.0.0.1\", PORT))\n    \
         finally:\n        sock.close()\n",
        holder.header
    );
    add_to_the_changes_tests(repo.path(), &needs_the_port);
    add_an_uncovered_line(repo.path());
    let report = check_the_port_holders_change(repo.path(), &holder);
    let again = "run again once the rest of the suite, begun beside, was";
    let tried_again: Vec<&Value> = report["files"]["pkg/names.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|mutant| mutant["statusReason"].as_str().unwrap_or("").contains(again))
        .collect();
    assert!(
        !tried_again.is_empty(),
        "a kill beside the rest of the suite was tried again: {}",
        outcomes(&report)
    );
}

/// As above, with the port needed as the change's test file is imported: beside the rest of the
/// suite, the mutants' runs fail to collect it. Such a kill is checked by collecting the tests
/// again without the mutant (not by running them, which for code run at import is the whole
/// file): that fails too, the rest of the suite is stopped, and GREETING's mutants survive.
#[test]
fn a_collection_failing_only_beside_the_rest_of_the_suite_is_checked_by_collecting_again() {
    let shared = tempfile::tempdir().unwrap();
    let holder = port_holder(shared.path());
    let repo = names_only_change(&holder.test);
    // Imported unmutated, it binds the port at once; under a mutant of GREETING, once the holder
    // holds it.
    let needs_the_port = format!(
        "\n\n{}\n\n\
         if greeting_mutated():\n    wait_for_the_holder()\n\
         _sock = reusable()\n\
         try:\n    _sock.bind((\"127.0.0.1\", PORT))\n\
         finally:\n    _sock.close()\n",
        holder.header
    );
    add_to_the_changes_tests(repo.path(), &needs_the_port);
    add_an_uncovered_line(repo.path());
    let report = check_the_port_holders_change(repo.path(), &holder);
    // A mutant whose first run could not collect the tests (pytest's exit status 2, or 4 for a
    // test named in a file that failed to collect), checked by collecting them again without it:
    // that failed too, so the rest of the suite was stopped and the mutant ran again.
    let again = "run again once the rest of the suite, begun beside, was stopped: beside it, the tests failed without the mutant too";
    let mutants = report["files"]["pkg/names.py"]["mutants"].as_array().unwrap();
    let collected_again = mutants.iter().any(|mutant| {
        let first_exit = mutant.get("run").and_then(|run| run["commands"][0]["exitCode"].as_i64());
        matches!(first_exit, Some(2 | 4)) && mutant["statusReason"].as_str().unwrap_or("").contains(again)
    });
    assert!(
        collected_again,
        "a collection beside the rest of the suite failed, and ran again: {}",
        outcomes(&report)
    );
}

/// When every line ran under the change's tests, the rest of the suite runs beside the mutants
/// on idle CPU time for a survivor that may never come. A kill beside it is not believed
/// unchecked: the rest of the suite is stopped (cheaper than running each killing test again)
/// and the mutant runs again without it. Killed mutants stay killed; the rest of the suite,
/// holding on, is never waited for.
#[test]
fn a_kill_beside_the_rest_of_the_suite_that_no_mutant_needs_stops_it() {
    let shared = tempfile::tempdir().unwrap();
    let finished = shared.path().join("finished");
    let slow = format!(
        "import pathlib\nimport time\n\n\ndef test_takes_its_time():\n    \
         time.sleep(120)\n    \
         pathlib.Path({:?}).touch()\n",
        finished.to_str().unwrap()
    );
    let repo = names_change(&slow, false);
    let before = snapshot(repo.path());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 0, "every mutant killed: {run:?}");
    let report = read_valid_report(&json);
    let mutants = report["files"]["pkg/names.py"]["mutants"].as_array().unwrap();
    assert!(!mutants.is_empty());
    for mutant in mutants {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
    }
    let stopped = "run again once the rest of the suite, begun beside, was stopped: no mutant needed it yet";
    assert!(
        mutants.iter().any(|mutant| mutant["statusReason"].as_str().unwrap_or("").contains(stopped)),
        "a kill beside the rest of the suite stopped it: {report}"
    );
    assert!(
        mutants.iter().all(|mutant| !mutant["statusReason"]
            .as_str()
            .unwrap_or("")
            .contains("beside it, the tests failed")),
        "no kill was checked beside it: {report}"
    );
    assert!(!finished.exists(), "the rest of the suite was stopped, not waited for");
    assert!(rest_of_suite_steps(&report).is_empty(), "no survivor: the rest of the suite is not measured");
    assert_eq!(snapshot(repo.path()), before, "the checkout is untouched");
}

/// A kill at import (shout's `+` made `-` raises as pkg/names.py is imported) is a failure to
/// collect the whole test file. Beside the rest of the suite it is checked by collecting the
/// file again unmutated, not by running every test in it: the kill holds, and no test of the
/// file runs unmutated after the first coverage run.
#[test]
fn a_kill_at_import_beside_the_rest_of_the_suite_is_checked_by_collecting_not_running() {
    let shared = tempfile::tempdir().unwrap();
    let first = shared.path().join("first-coverage-run");
    let collected = shared.path().join("collected-unmutated");
    let ran = shared.path().join("ran-unmutated");
    let paths = format!(
        "import pathlib\n\nFIRST = pathlib.Path({:?})\nCOLLECTED = pathlib.Path({:?})\nRAN = pathlib.Path({:?})\n",
        first.to_str().unwrap(),
        collected.to_str().unwrap(),
        ran.to_str().unwrap()
    );
    // The rest of the suite holds on until the kill at import was checked, one way or the other.
    let rest = format!(
        "import time\n\n{paths}\n\ndef test_waits_for_the_check():\n    \
         deadline = time.monotonic() + 60\n    \
         while not (COLLECTED.exists() or RAN.exists()) and time.monotonic() < deadline:\n        \
         time.sleep(0.02)\n"
    );
    let repo = names_only_change(&rest);
    add_an_uncovered_line(repo.path());
    let unmutated = std::fs::read_to_string(repo.path().join("pkg/names.py")).unwrap();
    let is_unmutated = format!(
        "def is_unmutated():\n    \
         return pathlib.Path(\"pkg/names.py\").read_text() == {unmutated:?}\n"
    );
    std::fs::write(
        repo.path().join("tests/conftest.py"),
        format!(
            "{paths}\n\n{is_unmutated}\n\ndef pytest_sessionstart(session):\n    \
             if session.config.option.collectonly and FIRST.exists() and is_unmutated():\n        \
             COLLECTED.touch()\n"
        ),
    )
    .unwrap();
    add_to_the_changes_tests(
        repo.path(),
        &format!(
            "\n\n{paths}\n\n{is_unmutated}\n\ndef test_records_the_run():\n    \
             if FIRST.exists() and is_unmutated():\n        RAN.touch()\n    \
             FIRST.touch()\n"
        ),
    );
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "--amend", "--no-edit"]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "GREETING's survivors: {run:?}");
    let report = read_valid_report(&json);
    let at_import: Vec<&Value> = mutants_on_line(&report, "pkg/names.py", 6)
        .into_iter()
        .filter(|mutant| mutant["replacement"] == "-")
        .collect();
    assert_eq!(at_import.len(), 1, "{report}");
    assert_eq!(at_import[0]["status"], "Killed", "{}", at_import[0]);
    assert!(
        !at_import[0]["statusReason"].as_str().unwrap_or("").contains("run again"),
        "the kill held beside the rest of the suite: {}",
        at_import[0]
    );
    assert!(collected.exists(), "the kill at import was checked by collecting the tests: {report}");
    assert!(!ran.exists(), "no test of the file ran unmutated to check it: {report}");
}
