//! `install-hook`: the pre-commit hook written into real repositories and run by real commits.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use crate::common::{fixture_repo, git, git_command, mutdelta, python};

/// `git commit` with the test helpers' isolated git configuration, hooks and all; it may fail.
fn commit(dir: &Path, args: &[&str]) -> Output {
    git_command(dir).arg("commit").args(args).output().unwrap()
}

fn head(dir: &Path) -> String {
    String::from_utf8(git(dir, &["rev-parse", "HEAD"]).stdout).unwrap()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// A fixture's `before/` committed and its `after/` left in the working tree, staged with
/// `reset` = `--soft` or not with `--mixed`.
fn fixture_change(name: &str, reset: &str) -> tempfile::TempDir {
    let repo = fixture_repo(name);
    git(repo.path(), &["reset", "-q", reset, "HEAD~1"]);
    repo
}

/// The hook installed with the shared Python, so that a commit's check runs real pytest.
fn install_with_test_python(repo: &Path) {
    let python = python();
    let run = mutdelta(repo, &["install-hook", "--", "--python", python.to_str().unwrap(), "-j", "2"]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn the_hook_is_an_executable_script_that_runs_this_binary_on_the_staged_change() {
    let repo = fixture_repo("model_client");
    let run = mutdelta(repo.path(), &["install-hook"]);
    assert_eq!(run.code, 0, "{run:?}");
    let hook = repo.path().join(".git/hooks/pre-commit");
    assert!(run.stdout.contains(&format!("wrote {}", hook.display())), "{run:?}");
    assert!(run.stdout.contains("git commit --no-verify"), "{run:?}");
    let mode = std::fs::metadata(&hook).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "the hook is executable by all: {mode:o}");
    let script = std::fs::read_to_string(&hook).unwrap();
    let binary = assert_cmd::cargo::cargo_bin!("mutdelta");
    assert!(script.starts_with("#!/bin/sh\n"), "{script}");
    assert!(script.contains(&format!("mutdelta={}\n", binary.display())), "{script}");
    assert!(script.contains("exec \"$mutdelta\" check --staged\n"), "{script}");
}

#[test]
fn a_second_install_is_refused_and_force_replaces_the_hook() {
    let repo = fixture_repo("model_client");
    assert_eq!(mutdelta(repo.path(), &["install-hook"]).code, 0);
    let hook = repo.path().join(".git/hooks/pre-commit");
    let first = std::fs::read_to_string(&hook).unwrap();

    let again = mutdelta(repo.path(), &["install-hook", "--", "-q"]);
    assert_eq!(again.code, 2, "{again:?}");
    assert_eq!(
        again.stderr,
        format!("error: {} already exists: pass --force to replace it\n", hook.display())
    );
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), first, "a refused install leaves the hook alone");

    let forced = mutdelta(repo.path(), &["install-hook", "--force", "--", "-q"]);
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(std::fs::read_to_string(&hook).unwrap().contains("check --staged -q\n"));
    assert!(!repo.path().join(".git/hooks/pre-commit.bak").exists(), "mutdelta's own hook is not kept");
}

#[test]
fn force_keeps_a_hook_mutdelta_did_not_write_beside_the_new_one() {
    let repo = fixture_repo("model_client");
    let hooks = repo.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\nexec make lint\n").unwrap();

    assert_eq!(mutdelta(repo.path(), &["install-hook"]).code, 2);
    let run = mutdelta(repo.path(), &["install-hook", "--force"]);
    assert_eq!(run.code, 0, "{run:?}");
    let backup = hooks.join("pre-commit.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "#!/bin/sh\nexec make lint\n");
    assert!(run.stdout.contains(&format!("the hook it replaced is kept as {}", backup.display())));
    assert!(std::fs::read_to_string(hooks.join("pre-commit")).unwrap().contains("check --staged"));
}

#[test]
fn the_hook_goes_where_git_runs_hooks_from_a_subdirectory_or_through_c() {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["config", "core.hooksPath", ".githooks"]);
    let run = mutdelta(&repo.path().join("tests"), &["install-hook"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(repo.path().join(".githooks/pre-commit").is_file(), "core.hooksPath is respected");
    assert!(!repo.path().join(".git/hooks/pre-commit").exists());

    let other = fixture_repo("strong_tests");
    let outside = tempfile::tempdir().unwrap();
    let run = mutdelta(outside.path(), &["-C", other.path().to_str().unwrap(), "install-hook"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(other.path().join(".git/hooks/pre-commit").is_file());
}

#[test]
fn install_hook_outside_a_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = mutdelta(dir.path(), &["install-hook"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("is not inside a git repository"), "{run:?}");
}

#[test]
fn hook_options_that_check_would_not_take_are_refused() {
    let repo = fixture_repo("model_client");
    let unknown = mutdelta(repo.path(), &["install-hook", "--", "--no-such-option"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(unknown.stderr.contains("must be options of `mutdelta check`"), "{unknown:?}");
    assert!(unknown.stderr.contains("--no-such-option"), "{unknown:?}");

    let other_change = mutdelta(repo.path(), &["install-hook", "--", "--commit", "HEAD"]);
    assert_eq!(other_change.code, 2, "{other_change:?}");
    assert!(other_change.stderr.contains("the hook checks the staged change"), "{other_change:?}");
    assert!(!repo.path().join(".git/hooks/pre-commit").exists(), "nothing is written");
}

#[test]
fn a_commit_whose_new_line_has_a_survivor_is_stopped_by_the_hook() {
    let repo = fixture_change("model_client", "--soft");
    install_with_test_python(repo.path());
    let before = head(repo.path());
    let output = commit(repo.path(), &["-q", "-m", "Refuse cut-off replies"]);
    assert!(!output.status.success(), "the commit is stopped:\n{}", text(&output));
    assert!(text(&output).contains("model_client.py:15"), "the survivor is shown:\n{}", text(&output));
    assert_eq!(head(repo.path()), before, "no commit was made");

    let skipped = commit(repo.path(), &["-q", "--no-verify", "-m", "Refuse cut-off replies"]);
    assert!(skipped.status.success(), "{}", text(&skipped));
    assert_ne!(head(repo.path()), before, "--no-verify commits");
}

#[test]
fn a_commit_whose_new_lines_are_all_caught_passes_the_hook() {
    let repo = fixture_change("strong_tests", "--soft");
    install_with_test_python(repo.path());
    let before = head(repo.path());
    let output = commit(repo.path(), &["-q", "-m", "Add letter grades"]);
    assert!(output.status.success(), "the commit is made:\n{}", text(&output));
    assert!(text(&output).contains("10 of 10"), "the hook checked the change:\n{}", text(&output));
    assert_ne!(head(repo.path()), before);
}

#[test]
fn commit_all_is_checked_on_the_index_git_commits_from() {
    // `git commit -a` stages into a temporary index and names it in GIT_INDEX_FILE: the
    // repository's own index still holds nothing staged.
    let repo = fixture_change("model_client", "--mixed");
    install_with_test_python(repo.path());
    let before = head(repo.path());
    let output = commit(repo.path(), &["-q", "-a", "-m", "Refuse cut-off replies"]);
    assert!(!output.status.success(), "the commit is stopped:\n{}", text(&output));
    assert!(text(&output).contains("model_client.py:15"), "the survivor is shown:\n{}", text(&output));
    assert_eq!(head(repo.path()), before, "no commit was made");
}
