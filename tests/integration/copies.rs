//! The temporary copies the tests run in: tests that import another copy are refused, files the
//! build generated that git ignores are carried in, and node ids stay the copy's own under another
//! project's directory.

use crate::common::{
    check, fixture_repo, git, mutants_on_line, python, read_report, read_valid_report, snapshot, statuses,
};

#[test]
fn tests_that_import_another_copy_are_refused_by_the_canary_and_leave_no_verdict_to_reuse() {
    let repo = fixture_repo("model_client");
    let python = python();
    // The tests run against the user's checkout instead of the copy under test.
    let cmd = format!(
        "cd {} && PYTHONDONTWRITEBYTECODE=1 {} -m pytest -q -p no:cacheprovider",
        repo.path().display(),
        python.display()
    );

    let first = check(repo.path(), &["--commit", "HEAD", "--test-cmd", &cmd]);
    let again = check(repo.path(), &["--commit", "HEAD", "--test-cmd", &cmd]);

    for run in [&first, &again] {
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("do not import the copy under test"), "{run:?}");
    }
    // The mutants ran before the canary (a kill would have shown that the tests see the
    // file): the survivors they reached must not outlive the refusal.
    assert!(!again.stderr.contains("reused "), "{again:?}");
}

#[test]
fn a_file_none_of_whose_mutants_is_killed_gets_its_canary_and_one_with_a_kill_needs_none() {
    // test_weak calls weak() and looks at nothing: every mutant of weak.py survives, so only
    // its canary (the file made to raise) shows that the tests see it. A kill shows it for
    // strong.py.
    let repo = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = repo.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    git(repo.path(), &["init", "-q", "-b", "main"]);
    write("weak.py", "def weak(a):\n    return a\n");
    write("strong.py", "def strong(a):\n    return a + 1\n");
    write(
        "tests/test_both.py",
        "from strong import strong\nfrom weak import weak\n\n\ndef test_weak():\n    weak(1)\n\n\ndef test_strong():\n    assert strong(2) == 3\n",
    );
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "before"]);
    write("weak.py", "def weak(a):\n    return a * 2\n");
    write("strong.py", "def strong(a):\n    return 1 + a\n");
    git(repo.path(), &["commit", "-q", "-am", "the change"]);
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("record");

    let run = check(repo.path(), &["--commit", "HEAD", "--out", record.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_report(record.join("report.json"));
    assert!(statuses(&report, "weak.py").iter().all(|(_, status)| status == "Survived"), "{report}");
    assert!(statuses(&report, "strong.py").iter().any(|(_, status)| status == "Killed"), "{report}");
    let overview = read_report(record.join("run.json"));
    let steps = overview["steps"].as_array().unwrap();
    let canaries: Vec<&str> = steps
        .iter()
        .map(|step| step["step"].as_str().unwrap())
        .filter(|name| name.starts_with("canary "))
        .collect();
    assert_eq!(canaries, ["canary weak.py"], "{steps:?}");
    let canary = steps.iter().find(|step| step["step"] == "canary weak.py").unwrap();
    assert_ne!(canary["commands"][0]["exitCode"], 0, "the canary made the tests fail: {canary}");
    assert!(canary["outputTail"].as_str().unwrap().contains("mutdelta canary"), "{canary}");
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
