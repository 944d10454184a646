//! Stopping a run with SIGINT or SIGTERM: its test processes die, its temporary copies go, the repository is untouched.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{fixture_repo, hermetic, leftovers, python, snapshot};

fn process_is_alive(pid: i32) -> bool {
    // A zombie has already exited; only a live process counts.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.split_whitespace().nth(2).is_none_or(|state| state != "Z"))
        .unwrap_or(false)
}

fn stop_mid_run(signal: libc::c_int) {
    let repo = fixture_repo("model_client");
    let scratch = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let original = scratch.path().join("original.py");
    std::fs::copy(repo.path().join("model_client.py"), &original).unwrap();
    let started = scratch.path().join("started");
    let pids = scratch.path().join("pids");
    // Unmutated, the tests pass at once; once the file differs they hang in a background sleep.
    let test_cmd = format!(
        "cmp -s model_client.py {original} || {{ sleep 120 & echo $! >> {pids}; touch {started}; wait; }}; exec {python} -m pytest -q -p no:cacheprovider",
        original = original.display(),
        pids = pids.display(),
        started = started.display(),
        python = python().display(),
    );
    let before = snapshot(repo.path());
    let mut command = hermetic(repo.path(), tmp.path());
    let mut child = command
        .args(["check", "--commit", "HEAD", "-j", "2", "--test-cmd", &test_cmd])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the slow test never started");
        std::thread::sleep(Duration::from_millis(20));
    }

    // SAFETY: signals the child we spawned.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();

    assert_eq!(status.code(), Some(130), "interrupted runs exit 130");
    let sleepers: Vec<i32> =
        std::fs::read_to_string(&pids).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert!(!sleepers.is_empty());
    // SIGKILL is delivered asynchronously: give the kernel a moment to finish them off.
    let deadline = Instant::now() + Duration::from_secs(5);
    while sleepers.iter().any(|&pid| process_is_alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for pid in sleepers {
        assert!(!process_is_alive(pid), "test process {pid} was left running");
    }
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "temporary copies are removed");
    assert_eq!(snapshot(repo.path()), before, "the repository is untouched");
    assert!(Path::new(repo.path()).exists());
}

#[test]
fn sigint_mid_run_kills_the_tests_and_removes_the_copies() {
    stop_mid_run(libc::SIGINT);
}

#[test]
fn sigterm_mid_run_kills_the_tests_and_removes_the_copies() {
    stop_mid_run(libc::SIGTERM);
}
