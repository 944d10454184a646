//! Bad input: each case gets one sentence on standard error and exit status 2.

use crate::common::{check, fixture_repo, mutdelta, mutdelta_with_stdin, python};

/// Asserts exit 2 and a single `error:` line that contains `phrase`, after at most the phase
/// lines of what had started (`baseline: running the unmutated tests (Python)`).
fn assert_refused(run: &crate::common::Run, phrase: &str) {
    assert_eq!(run.code, 2, "{run:?}");
    let error = crate::common::error_line(run);
    assert!(error.contains(phrase), "expected {phrase:?}: {run:?}");
}

#[test]
fn a_directory_that_is_not_a_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert_refused(&mutdelta(dir.path(), &["check"]), "is not inside a git repository");
}

#[test]
fn an_unknown_revision_is_refused() {
    let repo = fixture_repo("model_client");
    assert_refused(&check(repo.path(), &["--commit", "no-such-branch"]), "unknown revision 'no-such-branch'");
    assert_refused(&check(repo.path(), &["--base", "no-such-branch"]), "unknown revision 'no-such-branch'");
}

#[test]
fn line_lists_naming_what_is_not_there_are_refused() {
    let repo = fixture_repo("model_client");
    std::fs::write(repo.path().join("latin1.py"), b"NAME = '\xe9t\xe9'\n").unwrap();
    std::fs::write(repo.path().join("blob.py"), b"x = 1\n\x00\x01\x02\n").unwrap();
    let python = python();
    let cases = [
        ("missing.py:3\n", "missing.py, which is not in the working tree"),
        ("latin1.py:1\n", "latin1.py, which is not UTF-8 text: mutdelta mutates UTF-8 source text only"),
        ("blob.py:1\n", "blob.py, which is a binary file"),
        ("/etc/hosts:1\n", "/etc/hosts, which is outside the repository"),
        ("../model_client.py:1\n", "../model_client.py, which is outside the repository"),
        ("model_client.py:999\n", "model_client.py:999, but that file has 16 lines"),
        ("model_client.py:two\n", "line 1 of the line list"),
        ("{\"model_client.py\": \"3\"}", "not a JSON object of the form"),
    ];
    for (list, phrase) in cases {
        let run = mutdelta_with_stdin(
            repo.path(),
            &["check", "--python", python.to_str().unwrap(), "--lines", "-"],
            list,
        );
        assert_refused(&run, phrase);
    }
}

#[test]
fn a_test_command_that_does_not_exist_is_refused() {
    let repo = fixture_repo("model_client");
    assert_refused(
        &check(repo.path(), &["--commit", "HEAD", "--test-cmd", "no-such-test-runner --quick"]),
        "the test command was not found",
    );
}

#[test]
fn tests_failing_before_mutation_are_refused_with_their_output() {
    let repo = fixture_repo("model_client");
    let run = check(repo.path(), &["--commit", "HEAD", "--test-cmd", "echo 'assert 1 == 2' && exit 1"]);
    assert_refused(&run, "the tests fail before any mutation");
    assert!(run.stderr.contains("assert 1 == 2"), "the tail of their output is shown: {run:?}");
}

#[test]
fn a_python_that_is_not_python_is_refused() {
    let repo = fixture_repo("model_client");
    let run = mutdelta(repo.path(), &["check", "--commit", "HEAD", "--python", "/bin/false"]);
    assert_refused(&run, "/bin/false is not a working Python 3 interpreter");
}

#[test]
fn zero_jobs_is_refused() {
    let repo = fixture_repo("model_client");
    assert_refused(&mutdelta(repo.path(), &["check", "-j", "0"]), "-j 0 would run nothing");
}

#[test]
fn an_interpreter_without_pytest_is_named_with_the_command_that_installs_it() {
    let repo = fixture_repo("model_client");
    let envs = tempfile::tempdir().unwrap();
    let bare = envs.path().join("bare");
    crate::common::run_ok(
        std::process::Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(&bare),
    );
    let interpreter = bare.join("bin/python");
    let run =
        mutdelta(repo.path(), &["check", "--commit", "HEAD", "--python", interpreter.to_str().unwrap()]);
    assert_refused(&run, &format!("pytest is not installed for {}", interpreter.display()));
    assert!(run.stderr.contains(&format!("`{} -m pip install pytest`", interpreter.display())), "{run:?}");
}

#[test]
fn python_given_a_virtual_environments_directory_uses_its_interpreter() {
    let repo = fixture_repo("model_client");
    let venv = python().parent().unwrap().parent().unwrap().to_path_buf();
    let run =
        mutdelta(repo.path(), &["check", "--commit", "HEAD", "-j", "2", "--python", venv.to_str().unwrap()]);
    assert_eq!(run.code, 1, "the fixture's survivors, found with the venv's pytest: {run:?}");
    assert!(run.stdout.contains("[MUT-survived] model_client.py:15:9: delete statement"), "{run:?}");

    let empty = tempfile::tempdir().unwrap();
    let run =
        mutdelta(repo.path(), &["check", "--commit", "HEAD", "--python", empty.path().to_str().unwrap()]);
    assert_refused(&run, "is a directory with no bin/python in it");
}

#[test]
fn a_plain_check_with_nothing_staged_says_so_and_names_the_other_changes() {
    let repo = fixture_repo("model_client");
    let run = mutdelta(repo.path(), &["check", "--python", python().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "note: nothing is staged: stage a change to check it, or try --commit HEAD or --base main"
        ),
        "{run:?}"
    );
}
