//! Hostile tests: tests that allocate without bound, loop forever, leave children that ignore SIGTERM, print without end or write where they should not end as a verdict or one sentence, and never change the checkout.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{git, hermetic, python, read_report, repo_of, Run};
use crate::hostile::checkout_state;

/// `mutdelta check --commit HEAD` with `args` in `root`: `check_in` of that commit.
pub fn check_unchanged(root: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--commit", "HEAD"];
    all.extend_from_slice(args);
    check_in(root, &all)
}

/// `mutdelta check` with `args` in `root`, the checkout compared before and after: asserts it
/// is unchanged and no temporary copy is left behind.
pub fn check_in(root: &Path, args: &[&str]) -> Run {
    let before = checkout_state(root, ".none");
    let tmp = tempfile::tempdir().unwrap();
    let python = python();
    let output = hermetic(root, tmp.path())
        .args(["check", "--python", python.to_str().unwrap(), "-j", "2", "--no-cache"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let run = Run::of(&output);
    assert_eq!(checkout_state(root, ".none"), before, "the checkout is as it was: {run:?}");
    assert_eq!(crate::common::leftovers(tmp.path()), Vec::<String>::new(), "copies removed: {run:?}");
    run
}

/// `check_in` with `args` and `--json`, and the JSON report it wrote.
pub fn check_reporting(root: &Path, args: &[&str]) -> (Run, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut all = args.to_vec();
    all.extend(["--json", json.to_str().unwrap()]);
    let run = check_in(root, &all);
    let report = read_report(&json);
    (run, report)
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
    for path in [&[][..], &["--no-swap"][..], &["--no-fork"][..]] {
        let mut args = vec!["--commit", "HEAD", "--memory-limit", "300M", "--timeout", "60"];
        args.extend_from_slice(path);
        let (run, report) = check_reporting(root, &args);
        let verdicts = verdicts(&report);
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
        // `1 >> 20` folds to the 0 that `0 << 20` does, `1 << 21` to `2 << 20`'s constant:
        // those twins are Ignored, not run.
        let twin = |status: &str, reason: &str| status == "Ignored" && reason.starts_with("equivalent: ");
        let survived: Vec<_> = verdicts
            .iter()
            .filter(|(_, status, reason)| status != "Killed" && status != "Timeout" && !twin(status, reason))
            .collect();
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

/// Each mutant's status by its description (`mutatorName: replacement`), from a report.
fn statuses(report: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    verdicts(report).into_iter().map(|(what, status, _)| (what, status)).collect()
}

/// Whether the process `pid` is gone (a zombie waiting for its parent counts as gone).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

const STEPS: &str = "def steps(n):\n    i = 0\n    taken = 0\n    while i != n:\n        i += 2\n        taken += 1\n    return taken\n";

#[test]
fn a_mutant_that_loops_forever_is_a_timeout_and_a_child_that_ignores_sigterm_is_gone_after_the_run() {
    let pids = tempfile::tempdir().unwrap();
    // Each run of the test leaves a child in a session of its own that ignores SIGTERM, and
    // waits until it has written its pid.
    let linger = "import os, signal, sys, time\n\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n\
                  open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\ntime.sleep(600)\n";
    let test = format!(
        "import os, subprocess, sys, time\nfrom steps import steps\n\nPIDS = {dir:?}\n\n\n\
         def test_steps():\n    linger = os.path.join(os.path.dirname(__file__), 'linger.py')\n    \
         child = subprocess.Popen([sys.executable, linger, PIDS], start_new_session=True)\n    \
         while not os.path.exists(os.path.join(PIDS, str(child.pid))):\n        time.sleep(0.01)\n    \
         assert steps(4) == 2\n    assert steps(0) == 0\n",
        dir = pids.path().to_str().unwrap()
    );
    let repo = repo_of(
        &[("README", "x\n"), ("tests/linger.py", linger)],
        &[("steps.py", STEPS), ("tests/test_steps.py", &test)],
    );
    let (run, report) = check_reporting(repo.path(), &["--commit", "HEAD", "--timeout", "3"]);

    let verdicts = verdicts(&report);
    let timeouts: Vec<_> = verdicts.iter().filter(|(_, status, _)| status == "Timeout").collect();
    // `i = 1`, `i -= 2`, `i = 2`, `i += 0`, `i += 3`, `i += 2` deleted: the loop never meets `n`.
    assert!(timeouts.len() >= 4, "{verdicts:#?}\n{run:?}");
    for (what, _, reason) in &timeouts {
        assert!(reason.starts_with("the tests ran past"), "{what}: {reason}");
    }
    assert!(verdicts.iter().all(|(_, status, _)| status == "Killed" || status == "Timeout"), "{verdicts:#?}");
    assert_eq!(run.code, 0, "{run:?}");
    let children: Vec<String> = std::fs::read_dir(pids.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(children.len() > verdicts.len() / 2, "the test ran and left its children: {children:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !children.iter().all(|pid| gone(pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let alive: Vec<_> = children.iter().filter(|pid| !gone(pid)).collect();
    for pid in &alive {
        // SAFETY: kill(2) of a process this test's fixture started; no memory is touched.
        unsafe { libc::kill(pid.parse().unwrap(), libc::SIGKILL) };
    }
    assert_eq!(alive, Vec::<&String>::new(), "no child of a test outlives the run");
}

#[test]
fn a_test_that_prints_a_hundred_megabytes_on_failure_is_killed_and_the_reports_stay_small() {
    let test = "import sys\nfrom level import level\n\n\ndef test_level():\n    value = level(3)\n    \
                if value != 4:\n        sys.stdout.write('x' * 100_000_000)\n    assert value == 4\n";
    let repo = repo_of(
        &[("README", "x\n")],
        &[("level.py", "def level(n):\n    return n + 1\n"), ("tests/test_level.py", test)],
    );
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    // A time limit of its own: printing can take longer than the quick first limit of a swap.
    let run = check_unchanged(repo.path(), &["--timeout", "120", "--json", json.to_str().unwrap()]);

    let statuses = statuses(&read_report(&json));
    assert!(
        statuses.len() >= 3 && statuses.values().all(|status| status == "Killed"),
        "{statuses:?} {run:?}"
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(std::fs::metadata(&json).unwrap().len() < 1 << 20, "the report keeps the end of the output only");
    assert!(run.stdout.len() + run.stderr.len() < 64 << 10, "{} bytes printed", run.stdout.len());
}

const GRADE: &str = "def grade(score):\n    if score >= 50:\n        return 'pass'\n    return 'fail'\n";
const GRADE_TEST: &str =
    "from grade import grade\n\n\ndef test_grade():\n    assert grade(80) == 'pass'\n    assert grade(10) == 'fail'\n";

#[test]
fn two_checks_at_once_in_one_repository_reach_the_verdicts_of_one_alone_and_leave_a_sound_cache() {
    let repo = repo_of(&[("README", "x\n")], &[("grade.py", GRADE), ("tests/test_grade.py", GRADE_TEST)]);
    let root = repo.path();
    let out = tempfile::tempdir().unwrap();
    let python = python();
    let alone = out.path().join("alone.json");
    let run = check_unchanged(root, &["--json", alone.to_str().unwrap()]);
    assert_eq!(run.code, 1, "the boundary survives: {run:?}");
    let expected = statuses(&read_report(&alone));
    assert!(
        expected.values().any(|s| s == "Survived") && expected.values().any(|s| s == "Killed"),
        "{expected:?}"
    );

    let before = checkout_state(root, ".git/mutdelta");
    let tmp = tempfile::tempdir().unwrap();
    let start = |name: &str| {
        let json = out.path().join(name);
        let child = hermetic(root, tmp.path())
            .args(["check", "--python", python.to_str().unwrap(), "-j", "1", "--commit", "HEAD"])
            .args(["--json", json.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        (child, json)
    };
    // Twice two at once: the second pair finds the verdicts the first pair remembered.
    for pair in ["first", "second"] {
        let (one, two) = (start(&format!("{pair}-1.json")), start(&format!("{pair}-2.json")));
        for (child, json) in [one, two] {
            let run = Run::of(&child.wait_with_output().unwrap());
            assert_eq!(run.code, 1, "{pair}: {run:?}");
            assert_eq!(statuses(&read_report(&json)), expected, "{pair}: {run:?}");
        }
    }
    let (child, json) = start("after.json");
    let run = Run::of(&child.wait_with_output().unwrap());
    let report = read_report(&json);
    assert_eq!(statuses(&report), expected, "{run:?}");
    let reused = verdicts(&report).len();
    let all_reused =
        report["files"]["grade.py"]["mutants"].as_array().unwrap().iter().all(|m| m["reused"] == true);
    assert!(all_reused, "the remembered verdicts of {reused} mutants are whole and reused: {run:?}");
    assert_eq!(checkout_state(root, ".git/mutdelta"), before, "the checkout is as it was");
    assert_eq!(crate::common::leftovers(tmp.path()), Vec::<String>::new(), "copies removed");
}

const PLUS_ONE: &str = "def f(x):\n    return x + 1\n";
const PLUS_ONE_TEST: &str = "from calc import f\n\n\ndef test_f():\n    assert f(3) == 4\n";

#[test]
fn a_file_that_begins_with_a_byte_order_mark_is_mutated_and_every_mutant_caught() {
    let source = "\u{feff}STEP = 1\n\n\ndef f(x):\n    return x + STEP\n";
    let repo = repo_of(&[("README", "x\n")], &[("calc.py", source), ("tests/test_calc.py", PLUS_ONE_TEST)]);
    let (run, report) = check_reporting(repo.path(), &["--commit", "HEAD", "-v"]);
    assert_eq!(run.code, 0, "{run:?}");
    let statuses = statuses(&report);
    assert!(statuses.len() >= 5 && statuses.values().all(|status| status == "Killed"), "{statuses:?}");
    assert!(run.stderr.contains("(swap, "), "the swap path reads the file too: {run:?}");
}

#[test]
fn a_five_megabyte_line_is_shown_shortened_on_the_terminal_and_whole_in_the_report() {
    let big = format!("BIG = '{}'\n", "a".repeat(5_000_000));
    let source = format!("{big}\n\ndef f(x):\n    return x + 1\n");
    let repo = repo_of(&[("README", "x\n")], &[("calc.py", &source), ("tests/test_calc.py", PLUS_ONE_TEST)]);
    let (run, report) = check_reporting(repo.path(), &["--commit", "HEAD"]);
    assert_eq!(run.code, 1, "the unused constant's mutants survive: {run:?}");
    assert!(run.stdout.len() < 32 << 10, "{} bytes printed", run.stdout.len());
    assert!(run.stdout.contains("characters left out"), "{run:?}");
    assert_eq!(report["files"]["calc.py"]["source"], source.as_str(), "the report keeps the source whole");
}

#[test]
fn twenty_thousand_added_lines_get_every_verdict_right() {
    let mut source = PLUS_ONE.to_string();
    for i in 0..10_000 {
        source.push_str(&format!("\n\ndef f{i}(x):\n    return x * {i}\n"));
    }
    let repo = repo_of(&[("README", "x\n")], &[("calc.py", &source), ("tests/test_calc.py", PLUS_ONE_TEST)]);
    // Every mutant, past the default bound (`--max-mutants` samples a change this large).
    let (run, report) = check_reporting(repo.path(), &["--commit", "HEAD", "--max-mutants", "0"]);
    assert_eq!(run.code, 1, "{run:?}");
    let mutants = report["files"]["calc.py"]["mutants"].as_array().unwrap();
    let status_of = |line: u64| -> BTreeSet<&str> {
        mutants
            .iter()
            .filter(|m| m["location"]["start"]["line"] == line)
            .map(|m| m["status"].as_str().unwrap())
            .collect()
    };
    assert_eq!(status_of(2), BTreeSet::from(["Killed"]), "the tested function's mutants are caught");
    let untested = mutants.iter().filter(|m| m["location"]["start"]["line"].as_u64() > Some(2)).count();
    assert!(untested >= 20_000, "{untested}");
    let no_coverage = mutants.iter().filter(|m| m["status"] == "NoCoverage").count();
    assert_eq!(no_coverage, untested, "no test runs the other 10,000 functions");
    assert!(run.stdout.contains("mutation delta: "), "{run:?}");
}

#[test]
fn a_change_with_a_syntax_error_is_refused_in_one_sentence_naming_the_line() {
    let repo = repo_of(
        &[("README", "x\n")],
        &[("calc.py", "def f(x):\n    return x + 1\n)\n"), ("tests/test_calc.py", PLUS_ONE_TEST)],
    );
    let run = check_unchanged(repo.path(), &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(crate::common::error_line(&run).starts_with("error: calc.py: line 3: "), "{run:?}");
}

#[test]
fn a_file_with_spaces_and_non_ascii_in_its_path_loaded_by_its_path_is_traced_and_checked() {
    let test = "import importlib.util, pathlib\n\nPATH = pathlib.Path(__file__).parent.parent / 'src dir' / 'módulo $x.py'\n\
                spec = importlib.util.spec_from_file_location('m', PATH)\nm = importlib.util.module_from_spec(spec)\n\
                spec.loader.exec_module(m)\n\n\ndef test_f():\n    assert m.f(3) == 4\n";
    let repo =
        repo_of(&[("README", "x\n")], &[("src dir/módulo $x.py", PLUS_ONE), ("tests/test_m.py", test)]);
    let (run, report) = check_reporting(repo.path(), &["--commit", "HEAD"]);
    assert_eq!(run.code, 0, "{run:?}");
    let statuses = statuses(&report);
    assert!(statuses.len() >= 3 && statuses.values().all(|status| status == "Killed"), "{statuses:?}");
}

#[test]
fn a_submodule_the_tests_import_is_in_every_copy() {
    let vendor = repo_of(&[("README", "x\n")], &[("helper.py", "def h():\n    return 1\n")]);
    let repo = repo_of(&[("README", "x\n")], &[]);
    let root = repo.path();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            vendor.path().to_str().unwrap(),
            "vendor",
        ],
    );
    git(root, &["commit", "-q", "-m", "the submodule"]);
    let calc = "import os, sys\n\nsys.path.append(os.path.join(os.path.dirname(__file__), 'vendor'))\n\
                from helper import h\n\n\ndef f(x):\n    return x + h()\n";
    std::fs::write(root.join("calc.py"), calc).unwrap();
    std::fs::create_dir(root.join("tests")).unwrap();
    std::fs::write(root.join("tests/test_calc.py"), PLUS_ONE_TEST).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "the change"]);
    for state in [&["--commit", "HEAD"][..], &["--base", "HEAD~1"][..]] {
        let (run, report) = check_reporting(root, state);
        assert_eq!(run.code, 0, "{state:?}: {run:?}");
        let statuses = statuses(&report);
        assert!(statuses.values().all(|status| status == "Killed"), "{state:?}: {statuses:?}");
    }
}

#[test]
fn a_check_in_a_linked_worktree_checks_its_change_and_leaves_both_checkouts_as_they_were() {
    let repo = repo_of(&[("README", "x\n")], &[("calc.py", PLUS_ONE), ("tests/test_calc.py", PLUS_ONE_TEST)]);
    let holder = tempfile::tempdir().unwrap();
    let linked = holder.path().join("linked tree");
    git(repo.path(), &["worktree", "add", "-q", "-b", "side", linked.to_str().unwrap()]);
    let main_before = checkout_state(repo.path(), ".none");
    std::fs::write(linked.join("calc.py"), format!("{PLUS_ONE}\n\ndef g(x):\n    return x * 2\n")).unwrap();
    let test = format!("{PLUS_ONE_TEST}\n\ndef test_g():\n    from calc import g\n    assert g(3) == 6\n");
    std::fs::write(linked.join("tests/test_calc.py"), test).unwrap();
    let (run, report) = check_reporting(&linked, &["--base", "HEAD"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: BTreeSet<u64> = report["files"]["calc.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["location"]["start"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, BTreeSet::from([6]), "only the linked tree's added line: {run:?}");
    assert!(statuses(&report).values().all(|status| status == "Killed"), "{run:?}");
    assert_eq!(checkout_state(repo.path(), ".none"), main_before, "the main checkout is as it was");
}

#[test]
fn a_tracked_symbolic_link_to_a_file_outside_the_repository_is_skipped_and_its_target_never_written() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("lib.py");
    let text = "STEP = 3\n\n\ndef f(x):\n    return x + STEP\n";
    std::fs::write(&target, text).unwrap();
    let repo = repo_of(
        &[("README", "x\n")],
        &[("tests/test_lib.py", "from lib import f\n\n\ndef test_f():\n    assert f(1) == 4\n")],
    );
    let root = repo.path();
    std::os::unix::fs::symlink(&target, root.join("lib.py")).unwrap();
    // A real change beside the link, so that copies are made and the tests run.
    std::fs::write(root.join("calc.py"), PLUS_ONE).unwrap();
    std::fs::write(root.join("tests/test_calc.py"), PLUS_ONE_TEST).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "a link"]);
    // Watch the target while both states are checked: no mutant is ever written through it.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (stop, target) = (stop.clone(), target.clone());
        std::thread::spawn(move || {
            let mut seen = BTreeSet::new();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                seen.insert(std::fs::read_to_string(&target).unwrap());
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            seen
        })
    };
    for state in [&["--commit", "HEAD"][..], &["--base", "HEAD~1"][..]] {
        let run = check_in(root, state);
        assert_eq!(run.code, 0, "{state:?}: {run:?}");
        assert!(run.stdout.contains("note: lib.py: a symbolic link, skipped"), "{state:?}: {run:?}");
        assert!(run.stdout.contains("mutation delta: 4 of 4 mutants caught"), "{state:?}: {run:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(watcher.join().unwrap(), BTreeSet::from([text.to_string()]), "the target was never changed");
}

/// A `sitecustomize.py` at the root, which every interpreter of the tests imports as it starts:
/// the first to import it leaves behind an impostor, a process of its own session that
/// connects to every Unix socket beside its copy, again and again, and answers each as a
/// collector whose tests all pass would. It writes the sockets it reached to `{REACHED}`.
const IMPOSTOR: &str = r#"import os

REACHED = {REACHED}


def answer_every_line(channel):
    try:
        channel.sendall(b'{"ready": true, "items": 2}\n')
        for _ in channel.makefile("rb"):
            channel.sendall(b'{"exit": 0, "failed": [], "duration": 0.01, "swap": 0.0, "tests": 0.01}\n')
    except OSError:
        pass


def impostor(scratch):
    import socket
    import threading
    import time

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and os.path.isdir(scratch):
        for name in os.listdir(scratch):
            if not name.endswith(".sock"):
                continue
            channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                channel.connect(os.path.join(scratch, name))
            except OSError:
                continue
            threading.Thread(target=answer_every_line, args=(channel,), daemon=True).start()
            with open(REACHED, "a") as out:
                out.write(name + "\n")
        time.sleep(0.005)


def leave_an_impostor():
    try:
        os.close(os.open(REACHED + ".lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:
        return  # another interpreter left it
    scratch = os.path.dirname(os.getcwd())
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                impostor(scratch)
        finally:
            os._exit(0)
    os.waitpid(child, 0)


leave_an_impostor()
"#;

/// The change's test: under the coverage run, it waits until the impostor has reached a socket.
const IMPOSTOR_TEST: &str = r#"import os
import sys
import time

from scale import scale

REACHED = {REACHED}


def test_scale():
    assert scale(3, 4) == 12
    assert scale(3, 0) == 0


def test_the_impostor_reached_a_socket_before_the_coverage_run_ends():
    if "mutdelta_probe" in sys.modules and "mutdelta_collector" not in sys.modules:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not os.path.exists(REACHED):
            time.sleep(0.02)
"#;

#[test]
fn an_impostor_on_the_collectors_sockets_is_refused_and_the_verdicts_stay_honest() {
    // The collectors are forked from the warm workers and reach mutdelta through a Unix socket
    // in the run's directory. A process the project leaves behind connects there before them
    // and answers every request with passing tests: were it taken for a collector, the mutants
    // would survive.
    let reached_dir = tempfile::tempdir().unwrap();
    let reached = reached_dir.path().join("reached");
    let quoted = format!("{:?}", reached.to_str().unwrap());
    let impostor = IMPOSTOR.replace("{REACHED}", &quoted);
    let test = IMPOSTOR_TEST.replace("{REACHED}", &quoted);
    let scale = "def scale(value, factor):\n    return value * factor\n";
    let repo = repo_of(
        &[("README", "x\n"), ("sitecustomize.py", &impostor)],
        &[("scale.py", scale), ("tests/test_scale.py", &test)],
    );

    let (run, report) = check_reporting(repo.path(), &["--commit", "HEAD", "--no-audit"]);

    assert_eq!(run.code, 0, "{run:?}");
    let reached = std::fs::read_to_string(&reached).unwrap_or_default();
    assert!(
        reached.lines().any(|name| name.starts_with("collector-")),
        "the impostor reached no socket: {run:?}"
    );
    let mutants = report["files"]["scale.py"]["mutants"].as_array().unwrap();
    assert!(mutants.len() >= 2, "{report}");
    for mutant in mutants {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
    }
    assert!(mutants.iter().any(|mutant| mutant["run"]["how"] == "swap"), "{report}");
}
