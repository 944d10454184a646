//! Nothing outlives a run: after a normal exit or SIGKILL mid-run, the watchdog kills every process the run started and removes its scratch directory; a later run still sweeps what a killed one left (should the watchdog have died too).

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
    let deadline = Instant::now() + Duration::from_secs(10);
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

/// Every process mutdelta started is gone within two seconds of `kill -9`, without a next run:
/// the watchdog kills them and removes the scratch directory.
mod without_a_next_run {
    use std::collections::BTreeSet;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use crate::common::{git, hermetic, leftovers, python, snapshot};

    /// "pid start-time" of a live process (neither a zombie nor one the kernel is taking down,
    /// `PF_EXITING`): its identity, safe from pid reuse.
    fn identity(pid: i32) -> Option<String> {
        const PF_EXITING: u64 = 0x4;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
        let exiting = fields.get(6)?.parse::<u64>().ok()? & PF_EXITING != 0;
        (fields.first() != Some(&"Z") && !exiting).then(|| format!("{pid} {}", fields.get(19).unwrap_or(&"")))
    }

    fn parent(pid: i32) -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
    }

    fn pids() -> Vec<i32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect()
    }

    /// The identities of `root`'s live descendants, found through their parents.
    fn descendants(root: i32) -> BTreeSet<String> {
        pids()
            .into_iter()
            .filter(|&pid| {
                let mut at = pid;
                for _ in 0..64 {
                    match parent(at) {
                        Some(up) if up == root => return true,
                        Some(up) if up > 1 => at = up,
                        _ => return false,
                    }
                }
                false
            })
            .filter_map(identity)
            .collect()
    }

    /// Live processes whose working directory, executable or any argument lies under `dir`.
    fn processes_under(dir: &Path) -> Vec<String> {
        let under = |path: &Path| path.starts_with(dir);
        pids()
            .into_iter()
            .filter(|pid| {
                let proc = Path::new("/proc").join(pid.to_string());
                let cmdline = std::fs::read(proc.join("cmdline")).unwrap_or_default();
                std::fs::read_link(proc.join("cwd")).is_ok_and(|p| under(&p))
                    || std::fs::read_link(proc.join("exe")).is_ok_and(|p| under(&p))
                    || cmdline.split(|&b| b == 0).any(|arg| under(Path::new(&*String::from_utf8_lossy(arg))))
            })
            .filter_map(identity)
            .collect()
    }

    /// Runs `check --commit HEAD args` in `repo`, waits until `started` names the processes of
    /// a slow test, `kill -9`s mutdelta, and asserts that within two seconds none of its
    /// descendants (the test's, a process that left its group, the watchdog) is alive, no
    /// process runs in its temporary directory, and the directory is gone.
    fn kill_while_a_test_runs(repo: &Path, args: &[&str], started: &Path) {
        let tmp = tempfile::tempdir().unwrap();
        let before = snapshot(repo);
        let mut child = hermetic(repo, tmp.path())
            .args(["check", "--commit", "HEAD"])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mutdelta = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(60);
        // The slow test as mutdelta runs it now: its processes are among mutdelta's
        // descendants. (A run of it that has just ended, or whose helper is going, is not:
        // the next run of the test writes `started` again.)
        let started_by_it = loop {
            let text = std::fs::read_to_string(started).unwrap_or_default();
            let pids: Vec<i32> = text.split_whitespace().filter_map(|pid| pid.parse().ok()).collect();
            if pids.len() >= 2 {
                let tests: BTreeSet<String> = pids.iter().filter_map(|&pid| identity(pid)).collect();
                let started_by_it = descendants(mutdelta);
                if tests.len() == pids.len() && tests.is_subset(&started_by_it) {
                    break started_by_it;
                }
                assert!(
                    Instant::now() < deadline,
                    "the slow test never ran under mutdelta: {tests:?} {started_by_it:?}"
                );
            }
            assert!(Instant::now() < deadline, "the slow test never started");
            assert!(child.try_wait().unwrap().is_none(), "mutdelta ended before the slow test started");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!processes_under(tmp.path()).is_empty(), "the tests run in the temporary directory");

        child.kill().unwrap();
        child.wait().unwrap();
        let killed = Instant::now();
        let alive = || -> BTreeSet<String> {
            let mut alive: BTreeSet<String> = started_by_it
                .iter()
                .filter(|id| identity(id_pid(id)).as_ref() == Some(*id))
                .cloned()
                .collect();
            alive.extend(processes_under(tmp.path()));
            alive
        };
        while (!alive().is_empty() || !leftovers(tmp.path()).is_empty())
            && killed.elapsed() < Duration::from_secs(2)
        {
            std::thread::sleep(Duration::from_millis(20));
        }

        assert_eq!(alive(), BTreeSet::new(), "processes outlived mutdelta by two seconds");
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "the temporary directory is removed");
        assert_eq!(snapshot(repo), before, "the repository is untouched");
    }

    fn id_pid(identity: &str) -> i32 {
        identity.split_whitespace().next().unwrap().parse().unwrap()
    }

    /// A repository whose second commit adds `added` to `path` (first commit: `before`).
    fn repo_with_change(files: &[(&str, &str)], path: &str, before: &str, added: &str) -> tempfile::TempDir {
        let repo = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
        git(repo.path(), &["init", "-q", "-b", "main"]);
        for (name, text) in files {
            let file = repo.path().join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        std::fs::create_dir_all(repo.path().join(path).parent().unwrap()).unwrap();
        std::fs::write(repo.path().join(path), before).unwrap();
        git(repo.path(), &["add", "-A"]);
        git(repo.path(), &["commit", "-q", "-m", "before"]);
        std::fs::write(repo.path().join(path), format!("{before}{added}")).unwrap();
        git(repo.path(), &["commit", "-q", "-am", "the change"]);
        repo
    }

    /// The live processes whose environment marks them as started by the run of `mutdelta`
    /// ("pid start-time").
    fn marked(mutdelta: &str) -> Vec<i32> {
        let entry = format!("MUTDELTA_RUN={mutdelta}").into_bytes();
        pids()
            .into_iter()
            .filter(|&pid| identity(pid).is_some())
            .filter(|pid| {
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                environ.split(|&b| b == 0).any(|var| var == entry)
            })
            .collect()
    }

    #[test]
    fn a_finished_run_leaves_no_process_behind_not_even_one_that_left_its_group() {
        let repo = crate::common::fixture_repo("model_client");
        let tmp = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let pids = scratch.path().join("pids");
        // Every test run leaves a sleeper behind in a session of its own, out of reach of the
        // group kill that ends each test run.
        let test_cmd = format!(
            "setsid sh -c 'echo $$ >> {pids}; exec sleep 30' & exec {python} -m pytest -q -p no:cacheprovider",
            pids = pids.display(),
            python = python().display(),
        );
        let child = hermetic(repo.path(), tmp.path())
            .args(["check", "--commit", "HEAD", "-j", "2", "--test-cmd", &test_cmd])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let run_identity = identity(child.id() as i32).unwrap();
        let run = crate::common::Run::of(&child.wait_with_output().unwrap());

        assert_eq!(run.code, 1, "{run:?}");
        let sleepers: Vec<i32> =
            std::fs::read_to_string(&pids).unwrap().lines().map(|line| line.parse().unwrap()).collect();
        assert!(sleepers.len() > 2, "the baseline, the canary and the mutants each left one: {sleepers:?}");
        // At once: mutdelta waited for its watchdog, which killed them before it exited.
        let alive: Vec<i32> = sleepers.into_iter().filter(|&pid| identity(pid).is_some()).collect();
        let described: Vec<String> = alive
            .iter()
            .map(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                let mark = environ.split(|&b| b == 0).find(|var| var.starts_with(b"MUTDELTA_RUN="));
                format!(
                    "{pid} {:?} {:?} {:?}",
                    String::from_utf8_lossy(&cmdline),
                    mark.map(String::from_utf8_lossy),
                    std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default()
                )
            })
            .collect();
        assert_eq!(described, Vec::<String>::new(), "no sleeper outlives the run ({run_identity})");
        assert_eq!(marked(&run_identity), Vec::<i32>::new(), "no process of the run (the watchdog either)");
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "the temporary directory is removed");
    }

    #[test]
    fn cargo_test_binaries_and_their_children_die_with_a_killed_run() {
        let scratch = tempfile::tempdir().unwrap();
        let started = scratch.path().join("started");
        // Once `double` is mutated, its test records its pid and that of a child that leaves
        // its process group, then sleeps for 30 s.
        let test = format!(
            r#"
#[cfg(test)]
mod tests {{
    use std::os::unix::process::CommandExt;

    #[test]
    fn double_doubles() {{
        if super::double(3) != 6 {{
            let child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
            let pids = format!("{{}} {{}}\n", std::process::id(), child.id());
            std::fs::write("{started}.part", pids).unwrap();
            std::fs::rename("{started}.part", "{started}").unwrap();
            std::thread::sleep(std::time::Duration::from_secs(30));
        }}
        assert_eq!(super::double(2), 4);
    }}
}}
"#,
            started = started.display()
        );
        let repo = repo_with_change(
            &[
                ("Cargo.toml", "[package]\nname = \"doubling\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
                ("tests/it.rs", "#[test]\nfn nothing() {}\n"),
            ],
            "src/lib.rs",
            &format!("//! Doubling.\n{test}"),
            "\n/// Twice `x`.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n",
        );

        kill_while_a_test_runs(repo.path(), &["-j", "2"], &started);
    }

    #[test]
    fn pytest_workers_and_their_forked_children_die_with_a_killed_run() {
        let scratch = tempfile::tempdir().unwrap();
        let started = scratch.path().join("started");
        let original = scratch.path().join("calc.py");
        let before = "\"\"\"Arithmetic.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n";
        let added = "\n\ndef double(x):\n    return x * 2\n";
        std::fs::write(&original, format!("{before}{added}")).unwrap();
        // Once calc.py differs from the committed file, the test records its pid and that of
        // a child in a new session, then sleeps for 30 s.
        let test = format!(
            r#"import os
import pathlib
import subprocess
import time

from calc import add, double


def test_add():
    assert add(1, 2) == 3


def test_double():
    here = pathlib.Path(__file__).parent / "calc.py"
    if here.read_text() != pathlib.Path("{original}").read_text():
        child = subprocess.Popen(["sleep", "30"], start_new_session=True)
        pathlib.Path("{started}.part").write_text(f"{{os.getpid()}} {{child.pid}}\n")
        os.rename("{started}.part", "{started}")
        time.sleep(30)
    assert double(2) == 4
"#,
            original = original.display(),
            started = started.display()
        );
        let repo = repo_with_change(&[("test_calc.py", &test)], "calc.py", before, added);
        let python = python();

        kill_while_a_test_runs(repo.path(), &["-j", "2", "--python", python.to_str().unwrap()], &started);
    }
}
