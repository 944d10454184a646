//! `mutdelta mcp` driven by the Model Context Protocol's official Python SDK (`mcp` on PyPI), as
//! a coding agent drives it: a check finds the survivors of a weak test, with their evidence; the
//! test strengthened, a check finds none.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{
    fixture_repo, git, leftovers, python, repo_of, sh_as_a_user, snapshot, venv_with_pytest,
};

/// The Python client's script (`mcp_client.py`) run against `mutdelta mcp` in `repo`, in `mode`
/// (`--again`, `--cancel`), with `tmp` as TMPDIR: what it saw.
fn drive(repo: &Path, mode: Option<&str>, tmp: &Path) -> Value {
    let client = venv_with_pytest("mcp-env", Path::new("python3"), &["mcp>=2"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/mcp_client.py");
    let mut command = Command::new(client);
    command.arg(script).arg(env!("CARGO_BIN_EXE_mutdelta")).arg(repo).arg(python()).args(mode);
    let output = command.env_remove("CI").env("TMPDIR", tmp).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed:\n{stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"))
}

#[test]
fn an_agent_finds_the_survivors_of_a_weak_test_and_none_once_it_is_strengthened() {
    let repo = fixture_repo("model_client");
    let tmp = tempfile::tempdir().unwrap();
    let before = snapshot(repo.path());
    let seen = drive(repo.path(), None, tmp.path());
    assert_eq!(snapshot(repo.path()), before, "the server wrote nothing into the checkout");
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "the checks removed their copies");

    assert_eq!(seen["tools"], serde_json::json!(["check", "list", "mutators", "show"]));
    let check = &seen["check"];
    assert_eq!(check["isError"], false, "{check}");
    let result = &check["content"];
    assert_eq!((&result["exitStatus"], &result["passed"]), (&1.into(), &false.into()), "{result}");
    assert_eq!(
        result["summary"],
        "mutation delta: 2 of 6 mutants caught on 2 new lines; 2 lines with survivors"
    );
    let survivors = result["survivors"].as_array().unwrap();
    assert_eq!(survivors.len(), 4, "{result}");
    let deleted =
        survivors.iter().find(|s| s["description"] == "delete statement").expect("the raise deleted");
    assert_eq!((&deleted["file"], &deleted["line"]), (&"model_client.py".into(), &15.into()), "{deleted}");
    assert!(deleted["diff"].as_str().unwrap().contains("\n-        raise RuntimeError("), "{deleted}");
    assert!(deleted["hint"].as_str().unwrap().starts_with("no test expects the error"), "{deleted}");
    assert_eq!(
        deleted["testsRun"],
        serde_json::json!(["tests/test_model_client.py::ParseReplyTest::test_cut_off_reply"])
    );
    // The command it gives reproduces the survivor by hand: its tests pass with the mutant.
    let elsewhere = tempfile::tempdir().unwrap();
    let reproduced = sh_as_a_user(deleted["reproduce"].as_str().unwrap(), elsewhere.path());
    assert!(reproduced.status.success(), "{}", String::from_utf8_lossy(&reproduced.stderr));

    let progress: Vec<&str> =
        seen["progress"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert!(
        progress.iter().any(|line| line.starts_with("baseline: running the unmutated tests")),
        "{progress:?}"
    );
    let shown = &seen["show"]["content"];
    assert!(shown["text"].as_str().unwrap().contains("verdict: Survived"), "{shown}");
    assert_eq!(seen["list"]["content"]["mutants"].as_array().unwrap().len(), 6, "{}", seen["list"]);
    assert_eq!(seen["outside"]["isError"], true, "{}", seen["outside"]);
    assert_eq!(
        seen["outside"]["content"]["error"],
        "test \"../elsewhere/test_x.py\" lies outside the repository: name tests by their path inside it"
    );
    let unknown = &seen["unknown_revision"];
    assert_eq!(
        (&unknown["isError"], &unknown["content"]["exitStatus"]),
        (&true.into(), &2.into()),
        "{unknown}"
    );

    // The agent strengthens the test: the raise is expected, with its message.
    let test = repo.path().join("tests/test_model_client.py");
    let strong = "\n    def test_cut_off_reply_raises(self):\n        with self.assertRaisesRegex(RuntimeError, r\"\\[MAX_TOKENS\\] reply was cut off\"):\n            parse_reply({\"content\": \"partial\", \"stop_reason\": \"max_tokens\"})\n";
    std::fs::write(&test, std::fs::read_to_string(&test).unwrap() + strong).unwrap();
    git(repo.path(), &["commit", "-q", "-a", "--amend", "--no-edit"]);
    let again = &drive(repo.path(), Some("--again"), tmp.path())["check"]["content"];
    assert_eq!((&again["exitStatus"], &again["passed"]), (&0.into(), &true.into()), "{again}");
    assert_eq!(again["survivors"], serde_json::json!([]), "{again}");
    assert_eq!(again["counts"]["Killed"], 6, "{again}");
}

/// A check whose baseline takes a minute, its call cancelled once the baseline has begun: the
/// call ends at once, the check is stopped, and its copies are gone.
#[test]
fn a_cancelled_check_stops_and_leaves_nothing_behind() {
    let test = "import time\nfrom calc import double\n\n\ndef test_double():\n    time.sleep(60)\n    assert double(2) == 4\n";
    let repo = repo_of(
        &[("calc.py", "def double(x):\n    return x\n"), ("tests/test_calc.py", test)],
        &[("calc.py", "def double(x):\n    return x * 2\n")],
    );
    let tmp = tempfile::tempdir().unwrap();
    let before = snapshot(repo.path());
    let seen = drive(repo.path(), Some("--cancel"), tmp.path());
    let ended = seen["session_ended_after"].as_f64().unwrap();
    assert!(
        ended < 30.0,
        "the session ended {ended} s after the cancel, not after the minute's test: {seen}"
    );
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        leftovers(tmp.path()).is_empty()
    });
    assert!(gone, "the check's copies are removed: {:?}", leftovers(tmp.path()));
    assert_eq!(snapshot(repo.path()), before);
}
