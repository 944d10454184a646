//! Hostile reports and hostile tests: a report cannot make `apply` write outside its target, and a test cannot reach the user's checkout through git, `PWD` or `OLDPWD`.

use std::hash::{Hash, Hasher};
use std::path::Path;

use crate::common::{fixture_repo, git, hermetic, python, snapshot, Run};

/// What the user has that a run must never change, as lines a failed assertion reads: each file
/// of `repo` (`.git` included, `.git/mutdelta` and `skip` left out) with a digest of its bytes,
/// then what git says of the stash, refs, HEAD and status.
pub fn checkout_state(repo: &Path, skip: &str) -> Vec<String> {
    let mut lines: Vec<String> = snapshot(repo)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(skip))
        .map(|(path, bytes)| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            bytes.hash(&mut hasher);
            format!("{} {:016x}", path.display(), hasher.finish())
        })
        .collect();
    for args in ["stash list", "for-each-ref", "rev-parse HEAD", "status --porcelain --untracked-files=all"] {
        let out = git(repo, &args.split(' ').collect::<Vec<_>>());
        lines.push(format!("git {args}: {}", String::from_utf8_lossy(&out.stdout).trim()));
    }
    lines
}

/// A test of the change's that stashes, resets, branches, moves `main` and commits with git, and
/// writes through `PWD` and `OLDPWD`; mutdelta run with `args` in a checkout that holds its
/// temporary directory (not ignored) and uncommitted work, and the user's `GIT_DIR`,
/// `GIT_INDEX_FILE`, `PWD` and `OLDPWD` set. Asserts that the checkout is as it was and every
/// mutant of `letter` is still caught.
fn attacked_from_a_checkout_that_holds_the_temporary_directory(args: &[&str]) {
    let repo = fixture_repo("strong_tests");
    let root = repo.path();
    let attack = r#"

def test_that_attacks_the_checkout():
    import os, subprocess
    for args in (["stash", "-u"], ["reset", "--hard", "HEAD~1"], ["checkout", "-q", "-b", "hostile"],
                 ["update-ref", "refs/heads/main", "HEAD~1"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], capture_output=True)
    for variable in ("PWD", "OLDPWD"):
        if os.environ.get(variable):
            with open(os.path.join(os.environ[variable], "written-through-" + variable), "w") as f:
                f.write("a test wrote here\n")
"#;
    let tests = root.join("tests/test_grades.py");
    let text = std::fs::read_to_string(&tests).unwrap() + attack;
    std::fs::write(&tests, text).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "--amend", "--no-edit"]);
    // The user's uncommitted work, which `git stash -u` would take.
    std::fs::write(root.join("notes.txt"), "mine\n").unwrap();
    let tmp = root.join(".tmp");
    std::fs::create_dir(&tmp).unwrap();
    let before = checkout_state(root, ".tmp");

    let python = python();
    let output = hermetic(root, &tmp)
        .args(["check", "--python", python.to_str().unwrap(), "-j", "2", "--no-cache"])
        .args(args)
        .env("PWD", root)
        .env("OLDPWD", root)
        .env("GIT_INDEX_FILE", root.join(".git/index"))
        .env("GIT_DIR", root.join(".git"))
        .output()
        .unwrap();
    let run = Run::of(&output);

    assert_eq!(checkout_state(root, ".tmp"), before, "the checkout, index, stash and refs are as they were: {run:?}");
    assert_eq!(run.code, 0, "every mutant of `letter` is still caught: {run:?}");
    assert!(run.stdout.contains("mutation delta: 10 of 10 mutants caught"), "{run:?}");
}

#[test]
fn a_tests_git_commands_and_writes_through_pwd_cannot_reach_the_checkout_from_a_commits_copy() {
    attacked_from_a_checkout_that_holds_the_temporary_directory(&["--commit", "HEAD"]);
}

#[test]
fn a_tests_git_commands_and_writes_through_pwd_cannot_reach_the_checkout_from_a_working_trees_copy() {
    attacked_from_a_checkout_that_holds_the_temporary_directory(&["--base", "HEAD~1"]);
}
