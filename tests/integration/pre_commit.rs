//! The hook of the pre-commit framework, run by the real `pre-commit` package: in the hook's own Python environment, on a commit, on a range, and on all files.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{copy_tree, git, git_command, pre_commit, python, FIXTURES};

/// This repository's hook definition (`.pre-commit-hooks.yaml`) as a local hook of the
/// project's `.pre-commit-config.yaml`: the same entry and file filter, with the binary under
/// test for `mutdelta`, in a Python environment pre-commit makes for the hook, as it makes one
/// for the published hook (where it also builds the wheel, which a test need not repeat).
fn config() -> String {
    let hooks = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"))
        .unwrap();
    let value = |key: &str| {
        hooks
            .lines()
            .find_map(|line| line.trim_start_matches("- ").trim().strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("{key} in .pre-commit-hooks.yaml"))
            .to_string()
    };
    let entry = value("entry");
    let binary = assert_cmd::cargo::cargo_bin!("mutdelta");
    let entry = entry.replacen("mutdelta", binary.to_str().unwrap(), 1);
    assert_eq!(value("language"), "python", "the published hook runs in a Python environment");
    format!(
        "repos:\n  - repo: local\n    hooks:\n      - id: {id}\n        name: {id}\n        entry: {entry}\n        language: python\n        types_or: {types}\n        pass_filenames: {pass}\n        require_serial: true\n        verbose: {verbose}\n",
        id = value("id"),
        types = value("types_or"),
        pass = value("pass_filenames"),
        verbose = value("verbose"),
    )
}

/// A repository with model_client's `before/`, then a commit adding the hook's configuration,
/// `.venv` linked to a Python with pytest (as a project's own environment), git-ignored.
fn project() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    copy_tree(&Path::new(FIXTURES).join("model_client/before"), dir.path());
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "before"]);
    std::fs::write(dir.path().join(".pre-commit-config.yaml"), config()).unwrap();
    std::fs::write(dir.path().join(".gitignore"), ".venv\n").unwrap();
    let venv = python().parent().unwrap().parent().unwrap().to_path_buf();
    std::os::unix::fs::symlink(venv, dir.path().join(".venv")).unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "the hook"]);
    dir
}

/// The change that adds the raise and a test that runs it and asserts nothing, staged.
fn stage_the_change(dir: &Path) {
    copy_tree(&Path::new(FIXTURES).join("model_client/after"), dir);
    git(dir, &["add", "-A"]);
}

/// `program` in `dir` with git's isolated configuration and identity, pre-commit's store of
/// hook environments shared between tests, and `CI` set to `ci` alone.
fn in_project(program: &Path, dir: &Path, ci: Option<&str>) -> Command {
    let git = git_command(dir);
    let mut command = Command::new(program);
    command.current_dir(dir).envs(git.get_envs().filter_map(|(name, value)| Some((name, value?))));
    command.env("PRE_COMMIT_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("pre-commit-home"));
    command.env_remove("CI");
    if let Some(ci) = ci {
        command.env("CI", ci);
    }
    command
}

fn pre_commit_in(dir: &Path, args: &[&str], ci: Option<&str>) -> Output {
    in_project(&pre_commit(), dir, ci).args(args).output().unwrap()
}

/// `git commit` through the hook pre-commit installed.
fn commit(dir: &Path, message: &str) -> Output {
    in_project(Path::new("git"), dir, None).args(["commit", "-q", "-m", message]).output().unwrap()
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn head(dir: &Path) -> String {
    String::from_utf8(git(dir, &["rev-parse", "HEAD"]).stdout).unwrap()
}

#[test]
fn a_commit_with_an_untested_line_is_blocked_in_the_projects_environment_and_a_tested_one_passes() {
    let repo = project();
    let installed = pre_commit_in(repo.path(), &["install"], None);
    assert!(installed.status.success(), "{}", text(&installed));
    stage_the_change(repo.path());
    let before = head(repo.path());

    let blocked = commit(repo.path(), "cut-off replies");

    let said = text(&blocked);
    assert!(!blocked.status.success(), "the commit is stopped: {said}");
    assert_eq!(head(repo.path()), before, "no commit was made: {said}");
    assert!(said.contains("[MUT-survived] model_client.py:15:9: delete statement"), "{said}");
    let chosen = repo.path().join(".venv/bin/python");
    assert!(
        said.contains(&format!(
            "with {} (the project's .venv, not pre-commit's hook environment)",
            chosen.display()
        )),
        "the project's interpreter is chosen and named: {said}"
    );
    assert!(!said.contains("pytest is not installed"), "{said}");

    // A test that checks the raise kills every mutant of it: the commit goes through.
    let tests = repo.path().join("tests/test_model_client.py");
    let mut source = std::fs::read_to_string(&tests).unwrap();
    source.push_str(
        "\n    def test_cut_off_reply_raises(self):\n        with self.assertRaisesRegex(RuntimeError, \"MAX_TOKENS\"):\n            parse_reply({\"content\": \"partial\", \"stop_reason\": \"max_tokens\"})\n",
    );
    std::fs::write(&tests, source).unwrap();
    git(repo.path(), &["add", "-A"]);
    let passed = commit(repo.path(), "cut-off replies, tested");
    assert!(passed.status.success(), "{}", text(&passed));
    assert_ne!(head(repo.path()), before, "the commit was made");
}

#[test]
fn a_run_over_a_range_checks_the_lines_the_range_adds() {
    let repo = project();
    stage_the_change(repo.path());
    git(repo.path(), &["commit", "-q", "--no-verify", "-m", "cut-off replies"]);
    // A later commit that adds no code: the range's lines are those of both commits.
    std::fs::write(repo.path().join("NOTES.md"), "notes\n").unwrap();
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "notes"]);

    let run =
        pre_commit_in(repo.path(), &["run", "--from-ref", "HEAD~3", "--to-ref", "HEAD", "--verbose"], None);

    let said = text(&run);
    assert_eq!(run.status.code(), Some(1), "the range holds survivors: {said}");
    assert!(said.contains("[MUT-survived] model_client.py:15:9: delete statement"), "{said}");
    assert!(said.contains("on 2 new lines"), "the range's two added lines are checked: {said}");
    assert!(!said.contains("nothing is staged"), "{said}");
}

#[test]
fn all_files_with_nothing_staged_says_nothing_was_checked_even_without_verbose_and_fails_under_ci() {
    let repo = project();

    // Without --verbose: the hook's own `verbose` shows why it passed.
    let local = pre_commit_in(repo.path(), &["run", "--all-files"], None);
    let said = text(&local);
    assert!(local.status.success(), "{said}");
    assert!(
        said.contains("nothing is staged and pre-commit named no range, so nothing was checked"),
        "{said}"
    );

    let ci = pre_commit_in(repo.path(), &["run", "--all-files", "--verbose"], Some("true"));
    let said = text(&ci);
    assert!(!ci.status.success(), "a CI gate that checks nothing fails: {said}");
    assert!(
        said.contains("error: nothing is staged, so under CI this check would test nothing: run pre-commit with --from-ref and --to-ref"),
        "{said}"
    );
}

#[test]
fn a_hostile_range_from_the_environment_is_an_unknown_revision_and_runs_nothing() {
    let repo = project();
    let marker = repo.path().join("pwned");
    let hostile = format!("--upload-pack=touch {}", marker.display());
    for (from, to) in [(hostile.as_str(), "HEAD"), ("HEAD~1", "$(touch pwned)")] {
        let env = [("PRE_COMMIT", "1"), ("PRE_COMMIT_FROM_REF", from), ("PRE_COMMIT_TO_REF", to)];
        let run = crate::common::mutdelta_as(repo.path(), &["check", "--staged"], "", &env);
        assert_eq!(run.code, 2, "{run:?}");
        let named = if from == hostile { from } else { to };
        assert_eq!(
            run.stderr.trim(),
            format!("error: unknown revision '{named}': give a commit, branch or tag that exists in this repository"),
            "{run:?}"
        );
        assert!(!marker.exists(), "nothing in a ref runs");
    }
}
