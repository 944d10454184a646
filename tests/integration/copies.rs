//! The temporary copies the tests run in: tests that import another copy are refused, files the
//! build generated that git ignores are carried in, and node ids stay the copy's own under another
//! project's directory.

use crate::common::{check, fixture_repo, mutants_on_line, python, read_valid_report, snapshot, statuses};

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
