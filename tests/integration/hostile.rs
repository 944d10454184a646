//! Hostile reports and hostile tests: a report cannot make `apply` write outside its target, and a test cannot reach the user's checkout through git, `PWD` or `OLDPWD`.

use std::hash::{Hash, Hasher};
use std::path::Path;

use crate::common::{fixture_repo, fixture_repo_with, git, hermetic, python, snapshot, Run};

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

/// A test of the change's that stashes, resets, branches, moves `main` and commits with git (in
/// the environment mutdelta gave it, in an empty one, from the copy and from the directory above
/// it), and writes through `PWD`, `OLDPWD` and `__file__`; mutdelta run with `args` in a checkout that holds its
/// temporary directory (not ignored) and uncommitted work, and the user's `GIT_DIR`,
/// `GIT_INDEX_FILE`, `PWD` and `OLDPWD` set. Asserts that the checkout is as it was and every
/// mutant of `letter` is still caught.
fn attacked_from_a_checkout_that_holds_the_temporary_directory(args: &[&str]) {
    let repo = fixture_repo("strong_tests");
    let root = repo.path();
    let attack = r#"

def test_that_attacks_the_checkout():
    import os, shlex, subprocess
    bare = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    for args in (["stash", "-u"], ["reset", "--hard", "HEAD~1"], ["checkout", "-q", "-b", "hostile"],
                 ["update-ref", "refs/heads/main", "HEAD~1"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], capture_output=True)
        # Without the environment mutdelta gave it: git searches upwards from the copy, from
        # the directory above it, and from there through a shell started with `env -i`.
        subprocess.run(["git", *args], env=bare, capture_output=True)
        subprocess.run(["git", "-C", "..", *args], env={}, capture_output=True)
        line = "cd .. && git " + shlex.join(args)
        subprocess.run(["env", "-i", "PATH=" + os.environ["PATH"], "sh", "-c", line], capture_output=True)
    for variable in ("PWD", "OLDPWD"):
        if os.environ.get(variable):
            with open(os.path.join(os.environ[variable], "written-through-" + variable), "w") as f:
                f.write("a test wrote here\n")
    with open(os.path.join(os.path.dirname(__file__), "..", "written-beside-the-test-file"), "w") as f:
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

    assert_eq!(
        checkout_state(root, ".tmp"),
        before,
        "the checkout, index, stash and refs are as they were: {run:?}"
    );
    assert_eq!(run.code, 0, "every mutant of `letter` is still caught: {run:?}");
    assert!(run.stdout.contains("mutation delta: 10 of 10 mutants caught"), "{run:?}");
    let moved =
        format!("the temporary directory {} lies in the git repository {}", tmp.display(), root.display());
    assert!(run.stdout.contains(&moved), "the copies were made elsewhere, and the check says so: {run:?}");
}

#[test]
fn a_tests_git_commands_and_writes_through_pwd_cannot_reach_the_checkout_from_a_commits_copy() {
    attacked_from_a_checkout_that_holds_the_temporary_directory(&["--commit", "HEAD"]);
}

#[test]
fn a_tests_git_commands_and_writes_through_pwd_cannot_reach_the_checkout_from_a_working_trees_copy() {
    attacked_from_a_checkout_that_holds_the_temporary_directory(&["--base", "HEAD~1"]);
}

/// A build script that runs git with an empty environment, from the package's directory in the
/// copy and from the directory above it, while the checkout holds the temporary directory:
/// cargo runs it in each build of the copy, and nothing of the checkout changes.
#[test]
fn a_build_script_running_git_cannot_reach_the_checkout_that_holds_the_temporary_directory() {
    let build = r#"use std::process::Command;

fn main() {
    let path = std::env::var("PATH").unwrap_or_default();
    let attacks: [&[&str]; 4] = [
        &["stash", "-u"],
        &["reset", "--hard", "HEAD~1"],
        &["update-ref", "refs/heads/main", "HEAD~1"],
        &["commit", "-q", "--allow-empty", "-m", "x"],
    ];
    for args in attacks {
        let _ = Command::new("git").args(args).env_clear().env("PATH", &path).output();
        let _ = Command::new("git").arg("-C").arg("..").args(args).env_clear().env("PATH", &path).output();
    }
}
"#;
    let repo = fixture_repo_with("rust_early_exit", &[("build.rs", build)]);
    let root = repo.path();
    std::fs::write(root.join("notes.txt"), "mine\n").unwrap();
    let tmp = root.join(".tmp");
    std::fs::create_dir(&tmp).unwrap();
    let before = checkout_state(root, ".tmp");

    let output =
        hermetic(root, &tmp).args(["check", "-j", "2", "--no-cache", "--commit", "HEAD"]).output().unwrap();
    let run = Run::of(&output);

    assert_eq!(
        checkout_state(root, ".tmp"),
        before,
        "the checkout, index, stash and refs are as they were: {run:?}"
    );
    assert_eq!(run.code, 0, "every mutant is caught, as without the build script: {run:?}");
}

/// A report of a real check of `strong_tests` (all its mutants Killed), with the checkout.
fn checked_report() -> (tempfile::TempDir, tempfile::TempDir, serde_json::Value) {
    let repo = fixture_repo("strong_tests");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = crate::common::check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = crate::common::read_report(&json);
    (repo, out, report)
}

/// Asserts that `run` was refused with exit 2 in one `error:` sentence that says `says`.
fn refused(run: &Run, says: &str) {
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "one sentence: {run:?}");
    assert!(run.stderr.starts_with("error: ") && run.stderr.contains(says), "{says:?} not in {run:?}");
}

#[test]
fn apply_and_show_refuse_a_report_that_names_a_file_outside_its_target_or_a_mutant_outside_its_file() {
    let (repo, out, report) = checked_report();
    let root = repo.path();
    // A file outside the checkout whose content the report's author knows.
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim.py");
    let victims_text = "def passed(score):\n    return score >= 50\n";
    std::fs::write(&victim, victims_text).unwrap();
    // A symbolic link the repository tracks, and a file it does not, both with that content.
    std::os::unix::fs::symlink(&victim, root.join("link.py")).unwrap();
    git(root, &["add", "link.py"]);
    git(root, &["commit", "-q", "-m", "a link"]);
    std::fs::write(root.join("untracked.py"), victims_text).unwrap();
    let before = checkout_state(root, ".none");

    let mutant = report["files"]["grades.py"]["mutants"][0].clone();
    let id = mutant["id"].as_str().unwrap().to_string();
    // The report names `path` for a file holding the victim's text, the mutant rewriting its
    // first line.
    let naming = |path: &str| {
        let mut hostile = mutant.clone();
        hostile["location"] =
            serde_json::json!({"start": {"line": 1, "column": 1}, "end": {"line": 2, "column": 1}});
        hostile["replacement"] = "import os; os.system('touch /tmp/pwned')\n".into();
        let mut document = report.clone();
        document["files"] =
            serde_json::json!({ path: {"language": "python", "source": victims_text, "mutants": [hostile]} });
        document
    };
    let write = |name: &str, document: &serde_json::Value| {
        let path = out.path().join(name);
        std::fs::write(&path, document.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let to = root.to_str().unwrap();
    for (name, path, says) in [
        ("absolute", victim.to_str().unwrap(), "is not a plain relative path"),
        ("climbing", "../../victim.py", "is not a plain relative path"),
        ("dotted", "./grades.py", "is not a plain relative path"),
        ("through-link", "link.py", "reached without a symbolic link"),
        ("untracked", "untracked.py", "is not a file git tracks"),
    ] {
        let file = write(name, &naming(path));
        refused(&crate::common::mutdelta(out.path(), &["apply", &file, &id, "--to", to]), says);
        if says.contains("plain relative path") {
            refused(&crate::common::mutdelta(root, &["apply", &file, &id]), says);
            refused(&crate::common::mutdelta(root, &["show", &file, &id]), says);
        }
    }
    // --to names a directory inside the checkout, not its root: the paths would not be the report's.
    let file = write("real", &report);
    std::fs::create_dir(root.join("tests/sub")).unwrap();
    let sub = root.join("tests/sub");
    refused(
        &crate::common::mutdelta(out.path(), &["apply", &file, &id, "--to", sub.to_str().unwrap()]),
        "is not the root of a git checkout",
    );
    std::fs::remove_dir(&sub).unwrap();

    // Mutants that do not lie within their file's recorded text, or end before they start.
    for (name, location) in [
        (
            "past-the-end",
            serde_json::json!({"start": {"line": 90, "column": 1}, "end": {"line": 90, "column": 2}}),
        ),
        (
            "backwards",
            serde_json::json!({"start": {"line": 2, "column": 5}, "end": {"line": 1, "column": 1}}),
        ),
        (
            "past-the-line",
            serde_json::json!({"start": {"line": 1, "column": 400}, "end": {"line": 1, "column": 401}}),
        ),
    ] {
        let mut document = report.clone();
        document["files"]["grades.py"]["mutants"][0]["location"] = location;
        let file = write(name, &document);
        refused(
            &crate::common::mutdelta(out.path(), &["apply", &file, &id, "--to", to]),
            "does not lie within the text",
        );
        refused(&crate::common::mutdelta(root, &["show", &file, &id]), "does not lie within the text");
    }
    // A command that sets a "variable" whose name is shell code, and a mutant given twice.
    let mut document = report.clone();
    document["files"]["grades.py"]["mutants"][0]["run"]["commands"][0]["env"]["X=1; touch pwned; Y"] =
        "1".into();
    let file = write("variable", &document);
    refused(&crate::common::mutdelta(root, &["show", &file, &id]), "which is no shell variable name");
    let mut document = report.clone();
    let twice = document["files"]["grades.py"]["mutants"][0].clone();
    document["files"]["grades.py"]["mutants"].as_array_mut().unwrap().push(twice);
    let file = write("twice", &document);
    refused(&crate::common::mutdelta(root, &["show", &file, &id]), &format!("holds mutant {id} 2 times"));

    assert_eq!(std::fs::read_to_string(&victim).unwrap(), victims_text, "the file outside is as it was");
    assert!(!Path::new("/tmp/pwned").exists() && !root.join("pwned").exists());
    assert_eq!(checkout_state(root, ".none"), before, "the checkout is as it was");
}

#[test]
fn malformed_truncated_huge_and_deeply_nested_reports_are_refused_by_every_reader() {
    let (repo, out, report) = checked_report();
    let root = repo.path();
    let write = |name: &str, bytes: &[u8]| {
        let path = out.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    let text = report.to_string();
    // Well-formed JSON whose fields have the wrong types: refused as it is read, as a whole.
    let mut wrong_types = report.clone();
    wrong_types["mutdelta"]["shard"] = serde_json::json!({ "index": "0", "count": [2] });
    wrong_types["files"]["grades.py"]["mutants"][0]["location"]["start"]["line"] = "one".into();
    let wrong_types = wrong_types.to_string();
    let cases = [
        (
            "truncated",
            write("truncated", &text.as_bytes()[..text.len() / 2]),
            "is not a mutdelta JSON report",
        ),
        ("nested", write("nested", "[".repeat(1_000_000).as_bytes()), "is not a mutdelta JSON report"),
        ("binary", write("binary", b"\xff\xfe\x00\x01garbage"), "is not a mutdelta JSON report"),
        ("empty", write("empty", b""), "is not a mutdelta JSON report"),
        ("wrong types", write("wrong-types", wrong_types.as_bytes()), "is not a mutdelta JSON report"),
        ("device", "/dev/zero".to_string(), "is larger than 256 MiB"),
    ];
    for (name, file, says) in &cases {
        for args in [vec!["show", file, "1"], vec!["apply", file, "1"], vec!["merge", file]] {
            let run = crate::common::mutdelta(root, &args);
            assert!(!run.stderr.contains("panicked"), "{name}: {run:?}");
            refused(&run, says);
        }
    }
    // A shard report claiming a plan of 10^18 mutants: named by count, never walked.
    let mut claimed = report.clone();
    claimed["mutdelta"]["shard"] = serde_json::json!({"index": 0, "count": 1});
    claimed["mutdelta"]["plan"]["mutants"] = 1_000_000_000_000_000_000u64.into();
    let file = write("claimed", claimed.to_string().as_bytes());
    refused(
        &crate::common::mutdelta(root, &["merge", &file]),
        "mutants of the plan are in no shard's report",
    );
}

#[test]
fn the_reproduce_command_show_prints_keeps_hostile_file_names_and_node_ids_inert_and_correct_under_sh() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "before"]);
    std::fs::write(
        root.join("calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 2\n",
    )
    .unwrap();
    // A test file and a parametrized id made of shell syntax, quotes, spaces and non-ASCII.
    std::fs::create_dir(root.join("tests")).unwrap();
    let test_file = "tests/test_x é $(touch pwned) `touch pwned2` 'q\".py";
    std::fs::write(
        root.join(test_file),
        "import pytest\nfrom calc import double\n\n\n\
         @pytest.mark.parametrize(\"x\", [0], ids=[\"sp ace $(touch pwned3) `touch pwned4` 'q\\\" né\"])\n\
         def test_double(x):\n    assert double(x) == 0\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "the change"]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = crate::common::check(root, &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "`x * 2` -> `x / 2` survives double(0) == 0, `None` does not: {run:?}");
    let report = crate::common::read_report(&json);
    let mutants = report["files"]["calc.py"]["mutants"].as_array().unwrap().clone();
    let elsewhere = tempfile::tempdir().unwrap();

    for status in ["Survived", "Killed"] {
        let mutant = mutants
            .iter()
            .find(|m| m["status"] == status)
            .unwrap_or_else(|| panic!("a {status}: {mutants:?}"));
        let covered = mutant["coveredBy"][0].as_str().unwrap();
        assert!(covered.contains("$(touch pwned3)") && covered.contains("n\\xe9"), "{covered}");
        let shown =
            crate::common::mutdelta(root, &["show", json.to_str().unwrap(), mutant["id"].as_str().unwrap()]);
        assert_eq!(shown.code, 0, "{shown:?}");
        let command = crate::common::reproduce_command(&shown.stdout);
        assert!(command.contains("pwned3"), "the node id is on the command line: {command}");
        let output = crate::common::sh_as_a_user(&command, elsewhere.path());
        let said = format!(
            "{command}\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.success(), status == "Survived", "a survivor passes, a kill fails: {said}");
        assert!(said.contains("1 passed") || said.contains("1 failed"), "the one test ran: {said}");
        let copies: Vec<_> =
            std::fs::read_dir(elsewhere.path()).unwrap().map(|e| e.unwrap().path()).collect();
        for copy in &copies {
            let made: Vec<_> = std::fs::read_dir(copy).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert!(!made.iter().any(|name| name.to_string_lossy().starts_with("pwned")), "{made:?}");
            std::fs::remove_dir_all(copy).unwrap();
        }
    }
    assert!(!root.join("pwned").exists() && !elsewhere.path().join("pwned").exists());
}

#[test]
fn a_report_whose_tests_are_undefined_given_twice_or_huge_is_refused_by_show_and_merge() {
    let (repo, out, report) = checked_report();
    let root = repo.path();
    let mutant = &report["files"]["grades.py"]["mutants"][0];
    let id = mutant["id"].as_str().unwrap().to_string();
    let killer = mutant["killedBy"][0].as_str().unwrap().to_string();
    let file = killer.split("::").next().unwrap().to_string();
    assert_eq!(
        report["testFiles"][&file]["tests"].as_array().unwrap().iter().filter(|t| t["id"] == killer).count(),
        1,
        "the killer is defined once: {report}"
    );
    // Each document as one shard of one, so `merge` reads it too.
    let mut shard = report.clone();
    shard["mutdelta"]["shard"] = serde_json::json!({"index": 0, "count": 1});
    let write = |name: &str, document: &serde_json::Value| {
        let path = out.path().join(name);
        std::fs::write(&path, document.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let undefined = {
        let mut document = shard.clone();
        document["files"]["grades.py"]["mutants"][0]["killedBy"] = serde_json::json!(["tests/nowhere.py::t"]);
        document
    };
    let twice = {
        let mut document = shard.clone();
        document["testFiles"]["other.py"] = serde_json::json!({"tests": [{"id": killer, "name": "t"}]});
        document
    };
    let huge = {
        let mut document = shard.clone();
        let long = "t".repeat(200_000);
        document["testFiles"]["other.py"] = serde_json::json!({"tests": [{"id": long, "name": "t"}]});
        document["files"]["grades.py"]["mutants"][0]["coveredBy"] = serde_json::json!([long]);
        document
    };
    let mistyped = {
        let mut document = shard.clone();
        document["testFiles"] = serde_json::json!({ file.clone(): {"tests": [{"id": 7}]} });
        document
    };
    for (name, document, says) in [
        (
            "undefined",
            undefined,
            "names test \"tests/nowhere.py::t\", which the report's testFiles does not define",
        ),
        ("twice", twice, &format!("defines test {killer:?} twice")),
        ("huge", huge, "has a test of more than 65536 bytes in \"other.py\""),
        // `show` says the report is not one, `merge` that its testFiles is not.
        ("mistyped", mistyped, "is not a "),
    ] {
        let file = write(name, &document);
        for args in [vec!["show", &file, &id], vec!["merge", &file]] {
            let run = crate::common::mutdelta(root, &args);
            assert!(!run.stderr.contains("panicked"), "{name}: {run:?}");
            refused(&run, says);
        }
    }
    let file = write("sound", &shard);
    assert_eq!(crate::common::mutdelta(root, &["show", &file, &id]).code, 0, "the untouched report is read");
    let merged = crate::common::mutdelta(root, &["merge", &file]);
    assert_eq!(merged.code, 0, "{merged:?}");
}
