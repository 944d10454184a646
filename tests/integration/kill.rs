//! SIGKILL mid-run: nothing can clean up then, so the next run sweeps the scratch directory and kills the tests left in it.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{fixture_repo, hermetic, leftovers, mutdelta_in_tmp, python, snapshot};

/// Processes whose working directory is inside `dir`.
fn processes_working_in(dir: &Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            cwd.starts_with(dir).then_some(pid)
        })
        .collect()
}

/// Starts a check, SIGKILLs it after `delay`, then runs mutdelta again with the same TMPDIR.
fn kill_then_sweep(fixture: &str, extra: &[&str], delay: Duration) {
    let repo = fixture_repo(fixture);
    let tmp = tempfile::tempdir().unwrap();
    let before = snapshot(repo.path());
    let python = python();
    let mut args = vec!["check", "--commit", "HEAD", "-j", "2", "--python", python.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut child = hermetic(repo.path(), tmp.path())
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(snapshot(repo.path()), before, "killed after {delay:?}: the repository is untouched");

    let run = mutdelta_in_tmp(repo.path(), tmp.path(), &["list", "--commit", "HEAD"]);

    assert_eq!(run.code, 0, "{run:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_working_in(tmp.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        processes_working_in(tmp.path()),
        Vec::<i32>::new(),
        "killed after {delay:?}: no test left running"
    );
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "killed after {delay:?}: the next run swept up");
    assert_eq!(snapshot(repo.path()), before);
}

#[test]
fn a_run_killed_at_any_point_leaves_nothing_after_the_next_run() {
    for delay in [200, 900, 2500] {
        kill_then_sweep("hazards", &["--timeout", "60"], Duration::from_millis(delay));
    }
}

#[test]
fn a_killed_shell_test_command_is_swept_with_its_background_processes() {
    let scratch = tempfile::tempdir().unwrap();
    let started = scratch.path().join("started");
    // Once the baseline has passed, the canary's run leaves a sleeper in the background.
    let test_cmd = format!(
        "if [ -e {started} ]; then sleep 120 & wait; fi; touch {started}; exit 0",
        started = started.display()
    );
    kill_then_sweep("model_client", &["--test-cmd", &test_cmd], Duration::from_millis(1500));
}
