//! Stopping a run with SIGINT or SIGTERM: its test processes die, its temporary copies go, the repository is untouched.

use std::path::Path;
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt;

use std::collections::BTreeMap;

use crate::common::{fixture_repo, git, hermetic, leftovers, python, read_valid_report, repo_of, snapshot};

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

/// Reads mutdelta's standard error line by line on a thread, so the test can wait for a line.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stream)) {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// How an interrupted check ended.
struct Stopped {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The `--json` report.
    report: serde_json::Value,
}

/// Runs `mutdelta check -v --json FILE --out DIR args` in `repo` and, once `ready` holds for the lines it
/// printed so far, presses Ctrl-C: SIGINT to the process group, as a terminal sends it.
fn interrupt_when(repo: &Path, args: &[&str], ready: impl Fn(&[String]) -> bool) -> Stopped {
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("report.json");
    let before = snapshot(repo);
    let mut child = hermetic(repo, tmp.path())
        .args(["check", "-v", "--json"])
        .arg(&json)
        .arg("--out")
        .arg(out.path().join("record"))
        .args(args)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    let stderr = lines_of(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    while !ready(&seen) {
        let line = stderr.recv_timeout(Duration::from_secs(120));
        seen.push(
            line.unwrap_or_else(|_| panic!("the moment to interrupt never came:\n{}", seen.join("\n"))),
        );
    }

    // SAFETY: signals the process group of the child we spawned.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let status = child.wait().unwrap();
    seen.extend(stderr.iter());
    let (stdout, stderr) = (stdout.join().unwrap(), seen.join("\n"));

    assert_eq!(status.code(), Some(130), "interrupted runs exit 130\n{stdout}\n{stderr}");
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "temporary copies are removed");
    assert_eq!(snapshot(repo), before, "the repository is untouched");
    let report = read_valid_report(&json);
    let recorded = read_valid_report(&out.path().join("record/report.json"));
    assert_eq!(
        recorded["mutdelta"]["incomplete"], report["mutdelta"]["incomplete"],
        "--out gets the same report"
    );
    assert_eq!(recorded["files"], report["files"], "--out gets the same report");
    Stopped { code: status.code(), stdout, stderr, report }
}

/// The report's verdicts by mutant id.
fn verdicts(report: &serde_json::Value) -> BTreeMap<String, String> {
    let files = report["files"].as_object().unwrap().values();
    let mutants = files.flat_map(|file| file["mutants"].as_array().unwrap());
    mutants
        .map(|m| (m["id"].as_str().unwrap().to_string(), m["status"].as_str().unwrap().to_string()))
        .collect()
}

/// What every interrupted report must say: incomplete, each planned mutant either with a real
/// verdict or counted as not run, no verdict from a run the interrupt cut off, and the summary.
/// Returns (verdicts, not run, planned).
fn assert_incomplete(stopped: &Stopped, repo: &Path) -> (BTreeMap<String, String>, u64, u64) {
    let incomplete = &stopped.report["mutdelta"]["incomplete"];
    assert_eq!(incomplete["reason"], "interrupted", "{incomplete}");
    let planned = incomplete["planned"].as_u64().unwrap();
    let not_run = incomplete["notRun"].as_u64().unwrap();
    let verdicts = verdicts(&stopped.report);
    let statuses = ["Killed", "Survived", "NoCoverage", "Timeout", "CompileError", "RuntimeError", "Ignored"];
    let files = stopped.report["files"].as_object().unwrap().values();
    for mutant in files.flat_map(|file| file["mutants"].as_array().unwrap()) {
        assert!(statuses.contains(&mutant["status"].as_str().unwrap()), "{mutant}");
        for command in mutant["run"]["commands"].as_array().into_iter().flatten() {
            assert_ne!(command["exit"], "interrupted", "a mutant cut off mid-run has no verdict: {mutant}");
        }
    }
    assert!(not_run >= 1, "the mutant cut off mid-run did not run: {incomplete}");
    assert_eq!(verdicts.len() as u64 + not_run, planned, "each planned mutant has a verdict or did not run");
    let listed = crate::common::mutdelta(repo, &["list", "--commit", "HEAD", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed["mutants"].as_array().map(Vec::len), Some(planned as usize), "planned: {listed}");
    let undecided = match incomplete["undecided"].as_u64().unwrap() {
        0 => String::new(),
        count => format!(
            " ({count} of them ran and survived the tests run so far, but had not yet faced the rest of the suite)"
        ),
    };
    let summary = format!(
        "interrupted: {not_run} of {planned} mutants did not run{undecided}; the verdicts above are those reached"
    );
    assert!(stopped.stdout.contains(&summary), "the text report says so:\n{}", stopped.stdout);
    assert_eq!(stopped.code, Some(130));
    (verdicts, not_run, planned)
}

/// model_client's real tests as a `--test-cmd`, slowed down by a second for each mutant so that
/// an interrupt lands mid-run; the unmutated file is kept in `scratch` to tell the two apart.
fn slowed_tests(repo: &Path, scratch: &Path) -> String {
    let original = scratch.join("original.py");
    std::fs::copy(repo.join("model_client.py"), &original).unwrap();
    format!(
        "cmp -s model_client.py {original} || sleep 1; exec {python} -m pytest -q -p no:cacheprovider",
        original = original.display(),
        python = python().display(),
    )
}

#[test]
fn ctrl_c_after_some_verdicts_writes_them_to_the_report_marked_incomplete() {
    let repo = fixture_repo("model_client");
    let scratch = tempfile::tempdir().unwrap();
    let test_cmd = slowed_tests(repo.path(), scratch.path());
    let args = ["--commit", "HEAD", "-j", "1", "--test-cmd", &test_cmd];
    // Two verdicts landed (`-v` prints `[2/6] Survived ...`): the third mutant is mid-run.
    let stopped =
        interrupt_when(repo.path(), &args, |lines| lines.iter().any(|line| line.starts_with("[2/")));

    let (reached, _, _) = assert_incomplete(&stopped, repo.path());
    assert!(reached.len() >= 2, "the verdicts reached before the interrupt are kept: {}", stopped.stderr);
}

#[test]
fn ctrl_c_in_the_second_round_reports_only_verdicts_the_whole_check_would_reach() {
    // suite_wide's change edits tests/test_text.py, whose tests let mutants of import-time
    // lines survive; the rest of the suite kills them in a second round. Its test_star.py is
    // made slow (in both commits) so that the interrupt lands in that round.
    let repo = fixture_repo("suite_wide");
    git(repo.path(), &["checkout", "-q", "-b", "slow", "HEAD~1"]);
    let star = repo.path().join("tests/test_star.py");
    let slow = std::fs::read_to_string(&star).unwrap().replace(
        "def test_star_import_has_shout():\n",
        "def test_star_import_has_shout():\n    __import__(\"time\").sleep(1)\n",
    );
    std::fs::write(&star, slow).unwrap();
    git(repo.path(), &["commit", "-q", "-am", "a slow test"]);
    git(repo.path(), &["cherry-pick", "main"]);
    let python = python();
    let args = ["--commit", "HEAD", "-j", "1", "--python", python.to_str().unwrap()];
    // Two verdicts of the second round landed; the rest of its mutants take a second each.
    let stopped = interrupt_when(repo.path(), &args, |lines| {
        let second = lines.iter().position(|line| line.starts_with("second round: "));
        second.is_some_and(|at| lines[at..].iter().any(|line| line.starts_with("[2/")))
    });

    let (reached, _, _) = assert_incomplete(&stopped, repo.path());
    let undecided = stopped.report["mutdelta"]["incomplete"]["undecided"].as_u64().unwrap();
    assert!(
        undecided >= 1,
        "the first round's survivors the second did not reach are counted:\n{}",
        stopped.stdout
    );
    assert!(
        stopped.stdout.contains(&format!("({undecided} of them ran and survived the tests run so far")),
        "{}",
        stopped.stdout
    );
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("whole.json");
    let whole = crate::common::check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(whole.code, 1, "{whole:?}");
    let whole = verdicts(&read_valid_report(&json));
    for (id, status) in &reached {
        assert_eq!(
            Some(status),
            whole.get(id),
            "mutant {id}: a verdict the second round had not confirmed is not reported\n{}",
            stopped.stderr
        );
    }
}

#[test]
fn ctrl_c_during_the_baseline_writes_no_report_and_says_nothing_was_tested() {
    let repo = fixture_repo("model_client");
    let scratch = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let started = scratch.path().join("started");
    // The unmutated run hangs: the interrupt lands in the baseline.
    let test_cmd = format!("touch {started}; sleep 120", started = started.display());
    let json = scratch.path().join("report.json");
    let child = hermetic(repo.path(), tmp.path())
        .args(["check", "--commit", "HEAD", "--test-cmd", &test_cmd, "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        assert!(Instant::now() < deadline, "the baseline never started");
        std::thread::sleep(Duration::from_millis(20));
    }

    // SAFETY: signals the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);

    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("nothing was tested yet"), "{stderr}");
    assert!(!json.exists(), "no report of a check that tested nothing");
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "temporary copies are removed");
}

#[test]
fn ctrl_c_marks_the_html_junit_sarif_and_github_reports_incomplete() {
    let repo = fixture_repo("model_client");
    let scratch = tempfile::tempdir().unwrap();
    let test_cmd = slowed_tests(repo.path(), scratch.path());
    let (html, junit, sarif) =
        (scratch.path().join("r.html"), scratch.path().join("r.xml"), scratch.path().join("r.sarif"));
    let args = [
        "--commit",
        "HEAD",
        "-j",
        "1",
        "--test-cmd",
        &test_cmd,
        "--format",
        "github",
        "--html",
        html.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--sarif",
        sarif.to_str().unwrap(),
    ];
    let stopped =
        interrupt_when(repo.path(), &args, |lines| lines.iter().any(|line| line.starts_with("[2/")));

    let (_, not_run, planned) = assert_incomplete(&stopped, repo.path());
    let note = format!(
        "interrupted: {not_run} of {planned} mutants did not run; the verdicts shown are those reached"
    );
    assert!(
        stopped.stdout.contains(&format!("::warning title=mutdelta%3A incomplete::{note}\n")),
        "{}",
        stopped.stdout
    );
    let (dom, _) = crate::common::browse(&html);
    assert!(dom.contains(&format!("<p class=\"incomplete\" id=\"incomplete\">{note}</p>")), "{dom}");
    let xml = crate::common::read_valid_junit(&junit);
    assert!(xml.contains(&format!("<property name=\"incomplete\" value=\"{note}\"/>")), "{xml}");
    let log = crate::common::read_valid_sarif(&sarif);
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{log}");
    assert_eq!(invocation["toolExecutionNotifications"][0]["message"]["text"], note.as_str(), "{log}");
}

/// A repository whose last commit rewrites `gen.py`'s `f` as `generated` (every line of it
/// added), tested by `tests/test_gen.py`'s `assert f(1) <assertion>`.
fn generated_change(assertion: &str, generated: &str) -> tempfile::TempDir {
    let test = format!("from gen import f\n\n\ndef test_f():\n    assert f(1) {assertion}\n");
    repo_of(
        &[("gen.py", "def f(x):\n    return x\n"), ("tests/test_gen.py", &test)],
        &[("gen.py", generated)],
    )
}

/// Runs `mutdelta check --no-cache args` in `root` (progress lines every `interval` seconds,
/// when given), and once a line of its standard error is `ready` (`moment` says what that
/// waits for) sends it SIGTERM (`terminated_at_once`); asserts that no temporary copy is left
/// and that the checkout is as it was. What it printed.
fn terminated_when(
    root: &Path,
    args: &[&str],
    interval: Option<&str>,
    moment: &str,
    ready: impl Fn(&str) -> bool,
) -> String {
    let before = snapshot(root);
    let tmp = tempfile::tempdir().unwrap();
    let mut command = hermetic(root, tmp.path());
    if let Some(interval) = interval {
        command.env("MUTDELTA_PROGRESS_INTERVAL", interval);
    }
    let mut child = command
        .args(["check", "--no-cache"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = lines_of(child.stderr.take().unwrap());
    let mut seen: Vec<String> = Vec::new();
    while !seen.iter().any(|line| ready(line)) {
        let line = stderr.recv_timeout(Duration::from_secs(120));
        seen.push(line.unwrap_or_else(|_| panic!("{moment} never came:\n{}", seen.join("\n"))));
    }
    let said = terminated_at_once(&mut child, &stderr, seen);
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "temporary copies are removed");
    assert_eq!(snapshot(root), before, "the repository is untouched");
    said
}

/// A giant generated condition (every line of it added): its compile check compiles the whole
/// condition again for each mutant (its parts are no elements to compile alone), minutes of work. SIGTERM ten seconds in, once the unmutated
/// tests are long over and the check waits for that compile check, is acted on at once: the
/// check stops, says nothing was tested, and leaves no copy behind and the checkout as it was.
#[test]
fn sigterm_while_the_compile_check_of_a_giant_change_runs_stops_the_check_at_once() {
    // One condition of 4,000 lines: each mutant is compiled within it.
    let terms: String = (0..4000).map(|n| format!("        x * {} - {} > 0 or\n", n % 97, n % 13)).collect();
    let repo =
        generated_change("> 0", &format!("def f(x):\n    return (\n{terms}        False\n    ) + 1\n"));
    let python = python();
    let args = ["--python", python.to_str().unwrap(), "--commit", "HEAD", "-v"];
    // The unmutated tests take well under ten seconds; the compile check, beside them, minutes.
    let said = terminated_when(repo.path(), &args, None, "ten seconds of the check", |line| {
        line.contains("10 s elapsed")
    });
    let waiting = "baseline (Python), the compile check (the unmutated tests are over): 10 s elapsed";
    assert!(said.contains(waiting), "the progress named the compile check: {said}");
}

/// SIGTERM while cargo builds the baseline (a build script that takes a minute): the build is
/// killed with the check, which stops at once, says nothing was tested, and leaves no copy
/// behind and the checkout as it was.
#[test]
fn sigterm_while_cargo_builds_the_baseline_stops_the_check_at_once() {
    let build = "fn main() {\n    std::thread::sleep(std::time::Duration::from_secs(120));\n}\n";
    let repo = crate::common::fixture_repo_with("rust_early_exit", &[("build.rs", build)]);
    let root = repo.path();
    // A few seconds into the build, which the build script holds up for two minutes.
    terminated_when(root, &["--commit", "HEAD"], Some("0.2"), "three seconds of the build", |line| {
        line.starts_with("baseline (Rust), building") && line.contains("3 s elapsed")
    });
}

/// SIGTERM during the kill-loss audit's side before the change (its tests then took a minute to
/// import): the audit stops with the check, at once, and nothing is left behind.
#[test]
fn sigterm_during_the_kill_loss_audit_stops_the_check_at_once() {
    let slow = "import time\n\nfrom pkg.calc import add\n\ntime.sleep(120)\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let repo = repo_of(
        &[
            ("pkg/__init__.py", ""),
            ("pkg/calc.py", "def add(a, b):\n    return a + b\n"),
            ("tests/test_calc.py", slow),
        ],
        &[(
            "tests/test_calc.py",
            "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) > 0\n",
        )],
    );
    let root = repo.path();
    let python = python();
    let args = ["--python", python.to_str().unwrap(), "--commit", "HEAD"];
    terminated_when(root, &args, Some("0.2"), "three seconds of the audit", |line| {
        line.starts_with("kill-loss audit") && line.contains("3 s elapsed")
    });
}

/// Sends SIGTERM to `child`, a check that has printed `seen` (the rest of its standard error
/// comes on `stderr`), and asserts that it stopped within 20 s (a long phase ignoring the
/// signal would take minutes), exiting 130 and saying nothing was tested. What it printed.
fn terminated_at_once(
    child: &mut std::process::Child,
    stderr: &std::sync::mpsc::Receiver<String>,
    mut seen: Vec<String>,
) -> String {
    // SAFETY: signals the child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if signalled.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    seen.extend(stderr.iter());
    let said = seen.join("\n");
    let status = status.unwrap_or_else(|| panic!("still running 20 s after SIGTERM:\n{said}"));
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(said.contains("nothing was tested yet"), "{said}");
    said
}

/// SIGTERM while the mutants of a giant generated file are being made (seconds of work): the
/// check stops at once, before any baseline starts, and nothing is left behind.
#[test]
fn sigterm_while_the_mutants_of_a_giant_change_are_made_stops_the_check_before_any_baseline() {
    let body: String = (0..100_000)
        .map(|n| format!("    y = y + (x + {}) * (x - {}) - {}\n", n % 7, n % 11, n % 13))
        .collect();
    let repo = generated_change("is not None", &format!("def f(x):\n    y = 0\n{body}    return y\n"));
    let python = python();
    let args = ["--python", python.to_str().unwrap(), "--commit", "HEAD"];
    let said = terminated_when(repo.path(), &args, Some("0.1"), "making the mutants", |line| {
        line.starts_with("reading the change, making the mutants: ")
    });
    assert!(!said.contains("baseline: "), "stopped before the plan was made, so no baseline began: {said}");
}
