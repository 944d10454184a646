//! Every verdict is evidence: the run record kept with --out, and `show` and `apply` reproducing a verdict by hand.

use std::process::Command;

use serde_json::Value;

use crate::common::{
    check, fixture_repo, git, mutdelta, read_report, reproduce_command, sh_as_a_user, snapshot,
};

/// The model client's mutants in a report: one survivor (the `raise` deleted) and kills.
fn mutants(report: &Value) -> Vec<Value> {
    report["files"]["model_client.py"]["mutants"].as_array().unwrap().clone()
}

fn first_with(mutants: &[Value], status: &str) -> Value {
    mutants
        .iter()
        .find(|m| m["status"] == status)
        .unwrap_or_else(|| panic!("no {status} in {mutants:?}"))
        .clone()
}

/// A test that passes only with an option `PYTEST_ADDOPTS` gives (a project whose tests need
/// `--unprivileged` when run as root): `show`'s command carries the variable, so it passes by
/// hand, from a clean environment, as it did in the check.
#[test]
fn the_command_show_prints_carries_pytest_addopts() {
    let conftest =
        "def pytest_addoption(parser):\n    parser.addoption('--unprivileged', action='store_true')\n";
    let test = "import pytest\nfrom model_client import parse_reply\n\n\n\
                def test_a_cut_off_reply_unprivileged(request):\n\
                \x20   if not request.config.getoption('--unprivileged'):\n\
                \x20       pytest.fail('give --unprivileged when run as root')\n\
                \x20   try:\n        parse_reply({'content': 'x', 'stop_reason': 'max_tokens'})\n\
                \x20   except RuntimeError:\n        pass\n";
    let repo = crate::common::fixture_repo_with(
        "model_client",
        &[("conftest.py", conftest), ("tests/test_root.py", test)],
    );
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let python = crate::common::python();
    let args =
        ["check", "--python", python.to_str().unwrap(), "--commit", "HEAD", "--json", json.to_str().unwrap()];
    let addopts = ("PYTEST_ADDOPTS", "--unprivileged");
    let run = crate::common::mutdelta_as(repo.path(), &args, "", &[addopts]);
    assert_eq!(run.code, 1, "{run:?}");
    let survivor = first_with(&mutants(&read_report(&json)), "Survived");
    let id = survivor["id"].as_str().unwrap();
    let shown = mutdelta(repo.path(), &["show", json.to_str().unwrap(), id]);
    let command = reproduce_command(&shown.stdout);
    assert!(command.contains("PYTEST_ADDOPTS=--unprivileged "), "{command}");
    assert!(command.contains("tests/test_root.py::test_a_cut_off_reply_unprivileged"), "{command}");
    let elsewhere = tempfile::tempdir().unwrap();
    let output = sh_as_a_user(&command, elsewhere.path());
    let printed =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the survivor passes by hand as in the check:\n{printed}");
}

/// The command `show` prints under its "reproduce" heading.
#[test]
fn a_survivor_and_a_kill_reproduce_with_the_command_show_prints() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let before = snapshot(repo.path());
    let all = mutants(&read_report(&json));

    for (mutant, should_pass) in [(first_with(&all, "Survived"), true), (first_with(&all, "Killed"), false)] {
        let id = mutant["id"].as_str().unwrap();
        let shown = mutdelta(repo.path(), &["show", json.to_str().unwrap(), id]);
        assert_eq!(shown.code, 0, "{shown:?}");
        assert!(
            shown.stdout.contains(&format!("verdict: {}", mutant["status"].as_str().unwrap())),
            "{shown:?}"
        );
        assert!(shown.stdout.contains("--- a/model_client.py"), "the diff is shown: {shown:?}");
        let command = reproduce_command(&shown.stdout);
        assert!(command.contains(" apply ") && command.contains("-m pytest"), "{command}");

        // Run it as a user would paste it, from an unrelated directory, in a clean environment.
        let elsewhere = tempfile::tempdir().unwrap();
        let output = sh_as_a_user(&command, elsewhere.path());
        let printed =
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert_eq!(
            output.status.success(),
            should_pass,
            "mutant {id} ({}) by hand:\n{printed}",
            mutant["status"]
        );
        if !should_pass {
            let test = mutant["killedBy"][0].as_str().expect("a kill names its test");
            let name = test.rsplit("::").next().unwrap();
            assert!(printed.contains(name), "the test that killed it fails again ({name}):\n{printed}");
        }
        // The copy `apply` made holds the mutated file, not the original.
        let copy = std::fs::read_dir(elsewhere.path())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.file_name().unwrap().to_string_lossy().starts_with("mutdelta-apply-"))
            .expect("apply made a copy in TMPDIR");
        let mutated = std::fs::read_to_string(copy.join("model_client.py")).unwrap();
        let original = std::fs::read_to_string(repo.path().join("model_client.py")).unwrap();
        assert_ne!(mutated, original);
        let replacement = mutant["replacement"].as_str().unwrap();
        assert!(mutated.contains(replacement), "{replacement:?} is in the copy");
        // A git repository whose commit is the state under test: `git diff` there is the mutant.
        let diff = Command::new("git").args(["diff", "--name-only"]).current_dir(&copy).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&diff.stdout), "model_client.py\n", "{diff:?}");
        let unmutated =
            Command::new("git").args(["show", "HEAD:model_client.py"]).current_dir(&copy).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&unmutated.stdout), original);
    }
    assert_eq!(snapshot(repo.path()), before, "show and apply never touch the checkout");
}

#[test]
fn the_run_record_keeps_each_mutants_diff_commands_and_output() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("record");
    let run = check(repo.path(), &["--commit", "HEAD", "--out", record.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");

    let overview = read_report(record.join("run.json"));
    assert_eq!(overview["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(overview["options"]["target"]["commit"], "HEAD");
    assert_eq!(
        (&overview["options"]["arid"], &overview["options"]["onePerLine"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
    // Each language's settings, under its name.
    let python = &overview["options"]["python"];
    assert_eq!(
        (&python["fork"], &python["extraTests"]),
        (&Value::Bool(true), &serde_json::json!([])),
        "{python}"
    );
    assert_eq!(overview["options"]["rust"], serde_json::json!({ "testTool": "cargo" }));
    assert!(overview["state"].as_str().unwrap().starts_with("commit "), "{overview}");
    let steps = overview["steps"].as_array().unwrap();
    let baseline = steps.iter().find(|s| s["step"] == "baseline").expect("the baseline's record");
    let argv: Vec<&str> =
        baseline["commands"][0]["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    // pytest, run by the module that imports the probe before it, with the probe's plugin.
    assert!(argv.windows(2).any(|pair| pair == ["-m", "mutdelta_probe_main"]), "{argv:?}");
    assert!(argv.windows(2).any(|pair| pair == ["-p", "mutdelta_probe"]), "{argv:?}");
    assert_eq!(baseline["commands"][0]["exitCode"], 0);
    // A mutant of model_client.py was killed: that shows the tests see it, and no canary ran
    // (copies.rs has a file whose canary runs).
    assert!(steps.iter().all(|s| s["step"] != "canary model_client.py"), "{steps:?}");

    let report = read_report(record.join("report.json"));
    for mutant in mutants(&report) {
        let id = mutant["id"].as_str().unwrap();
        let own = record.join("mutants").join(id);
        let diff = std::fs::read_to_string(own.join("diff.patch")).unwrap();
        assert!(diff.starts_with("--- a/model_client.py\n+++ b/model_client.py\n"), "{diff}");
        let kept = read_report(own.join("record.json"));
        assert_eq!(kept["status"], mutant["status"]);
        assert_eq!(kept["run"], mutant["run"], "the JSON report carries the same commands");
        let command = &kept["run"]["commands"][0];
        assert_eq!(kept["run"]["how"], "swap", "swapped into the collector's live code");
        let tests: Vec<&str> =
            mutant["coveredBy"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        let argv: Vec<&str> =
            command["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert!(argv.ends_with(&tests), "the command names the tests that ran: {argv:?}");
        let output = std::fs::read_to_string(own.join("output.log")).unwrap();
        match mutant["status"].as_str().unwrap() {
            "Survived" => assert_eq!(command["exitCode"], 0),
            "Killed" => {
                assert_ne!(command["exitCode"], 0);
                let test = mutant["killedBy"][0].as_str().unwrap();
                let name = test.rsplit("::").next().unwrap();
                assert!(
                    output.contains(name) && output.contains("FAILED"),
                    "the tail of the output: {output}"
                );
            }
            other => panic!("unexpected {other}"),
        }
    }

    // A second run replaces the record; a directory holding other files is refused before work.
    let again = check(repo.path(), &["--commit", "HEAD", "--out", record.to_str().unwrap()]);
    assert_eq!(again.code, 1, "{again:?}");
    let busy = out.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    let refused = check(repo.path(), &["--commit", "HEAD", "--out", busy.to_str().unwrap()]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.starts_with("error: --out") && refused.stderr.contains("not a mutdelta run record"),
        "{refused:?}"
    );
    assert_eq!(std::fs::read_to_string(busy.join("notes.txt")).unwrap(), "mine");
}

#[test]
fn apply_to_a_checkout_writes_the_mutant_only_over_the_source_the_report_tested() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    let killed = first_with(&mutants(&read_report(&json)), "Killed");
    let id = killed["id"].as_str().unwrap();
    let file = repo.path().join("model_client.py");
    let original = std::fs::read_to_string(&file).unwrap();

    let applied =
        mutdelta(out.path(), &["apply", json.to_str().unwrap(), id, "--to", repo.path().to_str().unwrap()]);
    assert_eq!(applied.code, 0, "{applied:?}");
    let mutated = std::fs::read_to_string(&file).unwrap();
    assert_ne!(mutated, original);
    assert_eq!(mutated.lines().count(), original.lines().count());
    git(repo.path(), &["checkout", "--", "model_client.py"]);

    std::fs::write(&file, format!("{original}# an edit of mine\n")).unwrap();
    let refused =
        mutdelta(out.path(), &["apply", json.to_str().unwrap(), id, "--to", repo.path().to_str().unwrap()]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("differs from the model_client.py the report tested"), "{refused:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{original}# an edit of mine\n"),
        "nothing is lost"
    );
}

#[test]
fn show_refuses_an_unknown_id_and_a_file_that_is_no_report() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    let unknown = mutdelta(out.path(), &["show", json.to_str().unwrap(), "999"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown.stderr.starts_with("error: ") && unknown.stderr.contains("has no mutant 999"),
        "{unknown:?}"
    );
    let not_a_report = out.path().join("notes.json");
    std::fs::write(&not_a_report, "{\"hello\": 1}").unwrap();
    let refused = mutdelta(out.path(), &["show", not_a_report.to_str().unwrap(), "1"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("is not a mutdelta JSON report"), "{refused:?}");
}
