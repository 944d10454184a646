//! Hostile tests: tests that allocate without bound, loop forever, leave children that ignore SIGTERM, print without end or write where they should not end as a verdict or one sentence, and never change the checkout.

use std::path::Path;

use crate::common::{git, hermetic, python, read_report, Run};
use crate::hostile::checkout_state;

/// A repository whose first commit holds `before` and second adds `added` over it.
pub fn repo_of(before: &[(&str, &str)], added: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("hostile-").tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    for (commit, files) in [("before", before), ("the change", added)] {
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "--allow-empty", "-m", commit]);
    }
    dir
}

/// `mutdelta check --commit HEAD` with `args` in `root`, the checkout compared before and after:
/// asserts it is unchanged and no temporary copy is left behind.
pub fn check_unchanged(root: &Path, args: &[&str]) -> Run {
    let before = checkout_state(root, ".none");
    let tmp = tempfile::tempdir().unwrap();
    let python = python();
    let output = hermetic(root, tmp.path())
        .args(["check", "--python", python.to_str().unwrap(), "-j", "2", "--no-cache", "--commit", "HEAD"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let run = Run::of(&output);
    assert_eq!(checkout_state(root, ".none"), before, "the checkout is as it was: {run:?}");
    assert_eq!(crate::common::leftovers(tmp.path()), Vec::<String>::new(), "copies removed: {run:?}");
    run
}

/// Each mutant of `report`: its replacement (or description) and status and reason.
fn verdicts(report: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for file in report["files"].as_object().unwrap().values() {
        for mutant in file["mutants"].as_array().unwrap() {
            out.push((
                mutant["mutatorName"].as_str().unwrap_or_default().to_string()
                    + ": "
                    + mutant["replacement"].as_str().unwrap_or_default(),
                mutant["status"].as_str().unwrap().to_string(),
                mutant["statusReason"].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    out
}

/// A function whose loop ends only when its step is right: the mutants that break the step
/// make it allocate a mebibyte each turn, without end.
const FILL: &str = "def fill(n):\n    out = []\n    i = 0\n    while i != n:\n        out.append(bytearray(1 << 20))\n        i += 2\n    return sum(len(chunk) for chunk in out)\n";
const FILL_TEST: &str =
    "from fill import fill\n\n\ndef test_fill():\n    assert fill(4) == 2 << 20\n    assert fill(0) == 0\n";

#[test]
fn a_mutant_that_makes_a_test_allocate_without_bound_is_stopped_at_the_memory_limit_on_every_path() {
    let repo = repo_of(&[("README", "x\n")], &[("fill.py", FILL), ("tests/test_fill.py", FILL_TEST)]);
    let root = repo.path();
    let out = tempfile::tempdir().unwrap();
    for path in [&[][..], &["--no-swap"][..], &["--no-fork"][..]] {
        let json = out.path().join("r.json");
        let mut args = vec!["--memory-limit", "300M", "--timeout", "60", "--json", json.to_str().unwrap()];
        args.extend_from_slice(path);
        let run = check_unchanged(root, &args);
        let verdicts = verdicts(&read_report(&json));
        let stopped: Vec<_> = verdicts.iter().filter(|(_, status, _)| status == "Timeout").collect();
        // `i += 2` deleted, `i -= 2`, `i += 0`, `i += 3`: the loop never meets `n`.
        assert!(stopped.len() >= 3, "{path:?}: {verdicts:#?}\n{run:?}");
        for (what, _, reason) in &stopped {
            assert_eq!(
                reason,
                "the tests grew past the 300 MiB memory limit and were stopped (set it with --memory-limit)",
                "{path:?} {what}: {run:?}"
            );
        }
        let survived: Vec<_> =
            verdicts.iter().filter(|(_, status, _)| status != "Killed" && status != "Timeout").collect();
        assert_eq!(survived, Vec::<&(String, String, String)>::new(), "{path:?}: {run:?}");
        assert_eq!(run.code, 0, "{path:?}: {run:?}");
        assert!(run.stdout.contains("300 MiB memory limit"), "the text report names the limit: {run:?}");
    }
}

#[test]
fn tests_that_outgrow_the_memory_limit_before_any_mutation_are_refused_with_what_to_do() {
    let repo = repo_of(&[("README", "x\n")], &[("fill.py", FILL), ("tests/test_fill.py", FILL_TEST)]);
    let run = check_unchanged(repo.path(), &["--memory-limit", "4M"]);
    assert_eq!(run.code, 2, "{run:?}");
    let error = crate::common::error_line(&run);
    assert!(
        error.contains("grew past the 4 MiB memory limit before any mutation: raise it with --memory-limit"),
        "{run:?}"
    );
}
