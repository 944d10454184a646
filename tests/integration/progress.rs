//! What a check prints while it runs: a line as each phase starts, plain periodic progress lines
//! when standard error is not a terminal, a bar when it is, every verdict as it lands with
//! `--verbose`, nothing with `-q` (the summary alone at the end).

use std::path::Path;
use std::process::Command;

use crate::common::{
    check, fixture_repo, hermetic, leftovers, mutants_on_line, mutdelta, python, read_valid_report, Run,
};

/// `check --commit HEAD` of the model_client fixture, progress lines every 50 ms.
fn check_with_progress(repo: &Path, extra: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let python = python();
    let output = hermetic(repo, tmp.path())
        .env("MUTDELTA_PROGRESS_INTERVAL", "0.05")
        .args(["check", "--commit", "HEAD", "--python", python.to_str().unwrap(), "-j", "2"])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "temporary copies are removed");
    Run::of(&output)
}

/// `(done, total, survived)` from `mutants: 12/40 done, 2 survived, ...`.
fn counts(line: &str) -> Option<(u64, u64, u64)> {
    let rest = line.strip_prefix("mutants: ")?;
    let (done, rest) = rest.split_once('/')?;
    let (total, rest) = rest.split_once(" done, ")?;
    let (survived, _) = rest.split_once(" survived")?;
    Some((done.parse().ok()?, total.parse().ok()?, survived.parse().ok()?))
}

#[test]
fn off_a_terminal_periodic_lines_count_the_mutants_and_end_on_the_report_s_counts() {
    let repo = fixture_repo("model_client");
    let json = tempfile::tempdir().unwrap();
    let json = json.path().join("report.json");
    let run = check_with_progress(repo.path(), &["--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = read_valid_report(&json);
    let mutants = report["files"]["model_client.py"]["mutants"].as_array().unwrap();
    let tested = mutants.iter().filter(|mutant| mutant.get("run").is_some()).count() as u64;
    let survived = mutants.iter().filter(|mutant| mutant["status"] == "Survived").count() as u64;

    let lines: Vec<&str> = run.stderr.lines().collect();
    let position = |wanted: &str| lines.iter().position(|line| line.starts_with(wanted));
    let phase = position("baseline: running the unmutated tests").expect("a line as the baseline starts");
    let passed =
        position("baseline: tests/test_model_client.py passed unmutated").expect("the baseline passed");
    assert!(phase < passed, "the phase is said before it runs:\n{}", run.stderr);
    let interpreter = format!("baseline: the tests run with {}", crate::common::python().display());
    assert_eq!(position(&interpreter), Some(phase - 1), "the interpreter is named first:\n{}", run.stderr);
    assert!(
        lines[phase..passed]
            .iter()
            .any(|line| line.starts_with("baseline (Python), the unmutated tests")
                && line.ends_with(" elapsed")),
        "a slow phase gets periodic lines while it runs, naming what it does:\n{}",
        run.stderr
    );
    let progress: Vec<(u64, u64, u64)> = lines.iter().filter_map(|line| counts(line)).collect();
    let last = *progress.last().unwrap_or_else(|| panic!("no progress line:\n{}", run.stderr));
    assert_eq!(last, (tested, tested, survived), "the last line's counts are the report's:\n{}", run.stderr);
    assert!(progress.windows(2).all(|pair| pair[0].0 <= pair[1].0), "done only grows:\n{}", run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "no terminal control codes off a terminal:\n{}", run.stderr);
    // The change's test file is the whole suite: the second round finds nothing else to run,
    // and says so rather than that the rest of the suite passed.
    assert!(
        lines.contains(
            &"second round: the rest of the test suite holds no test: the change's tests are the whole suite"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("the rest of the test suite passed unmutated"), "{}", run.stderr);
}

#[test]
fn quiet_prints_no_progress() {
    let repo = fixture_repo("model_client");
    let run = check_with_progress(repo.path(), &["-q"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stderr, "", "-q prints nothing while it runs");
    assert_eq!(run.stdout.lines().count(), 1, "the summary line alone: {run:?}");
}

#[test]
fn a_bad_progress_interval_is_refused_with_what_to_set() {
    let repo = fixture_repo("model_client");
    let tmp = tempfile::tempdir().unwrap();
    let output = hermetic(repo.path(), tmp.path())
        .env("MUTDELTA_PROGRESS_INTERVAL", "soon")
        .args(["check", "--commit", "HEAD"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("MUTDELTA_PROGRESS_INTERVAL is \"soon\": set it to a number of seconds"),
        "{stderr}"
    );
}

/// What a check of model_client writes to a pseudo-terminal (`script`), stdout and stderr both.
fn on_a_terminal(repo: &Path, ci: bool) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let typescript = tmp.path().join("typescript");
    let mutdelta = assert_cmd::cargo::cargo_bin!("mutdelta");
    // Plain text: the colours of the report are `cli::`'s to test; here the bar is.
    let inner = format!(
        "{} check --commit HEAD -v --color never --python {} -j 2",
        mutdelta.display(),
        python().display()
    );
    let mut command = Command::new("script");
    command.args(["-qfec", &inner]).arg(&typescript).current_dir(repo);
    let scripted = command.env("TERM", "xterm").env_remove("CI").env("MUTDELTA_PROGRESS_INTERVAL", "0.05");
    if ci {
        scripted.env("CI", "true");
    }
    let status = scripted.stdout(std::process::Stdio::null()).status().expect("`script` (util-linux) runs");
    assert_eq!(status.code(), Some(1), "survivors: exit 1");
    String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned()
}

#[test]
fn on_a_terminal_a_bar_shows_the_progress_and_is_gone_before_the_report() {
    let repo = fixture_repo("model_client");
    let screen = on_a_terminal(repo.path(), false);
    // indicatif redraws its line by clearing it (ESC [2K): each piece between two is one frame
    // of the bar or a line printed above it.
    let pieces: Vec<&str> = screen.split("\u{1b}[2K").collect();
    assert!(
        pieces.iter().any(|piece| piece.contains("baseline (Python)") && piece.contains(" elapsed")),
        "the bar shows the phase and its time:\n{screen}"
    );
    assert!(
        pieces.iter().any(|piece| piece.contains("] mutants: ")),
        "the bar counts the mutants:\n{screen}"
    );
    for k in 1..=6 {
        let verdict = pieces.iter().find(|piece| piece.starts_with(&format!("[{k}/6] ")));
        let verdict =
            verdict.unwrap_or_else(|| panic!("-v's line [{k}/6] is printed whole, above the bar:\n{screen}"));
        assert!(verdict.contains(" model_client.py:1"), "{verdict}");
    }
    let report = screen.find("ran under: ").expect("the survivors are reported");
    let last_frame = screen.rfind('\u{1b}').unwrap();
    assert!(last_frame < report, "the bar is cleared before the report starts:\n{}", &screen[report..]);
    assert!(screen[report..].contains("mutation delta: 2 of 6 mutants caught"), "{screen}");
}

#[test]
fn with_ci_set_a_terminal_gets_plain_lines() {
    let repo = fixture_repo("model_client");
    let screen = on_a_terminal(repo.path(), true);
    assert!(!screen.contains("\u{1b}[2K"), "no bar:\n{screen}");
    assert!(
        screen.lines().any(|line| line.trim_end().starts_with("mutants: 6/6 done, 4 survived")),
        "plain progress lines:\n{screen}"
    );
}

#[test]
fn verbose_prints_every_verdict_as_it_lands_with_how_it_ran_and_the_id_show_takes() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--verbose", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().filter(|line| line.starts_with('[')).collect();
    let total: usize = lines[0].split(['/', ']']).nth(1).unwrap().parse().unwrap();
    assert_eq!(lines.len(), total, "one line per mutant: {run:?}");
    let survivor = lines
        .iter()
        .find(|line| line.contains("Survived model_client.py:15:9 delete statement ("))
        .unwrap_or_else(|| panic!("{run:?}"));
    // Swapped into the collector, or imported fresh with the reason why.
    assert!(survivor.contains("(swap, ") || survivor.contains("(fork: "), "{survivor}");
    assert!(survivor.ends_with(" ms)"), "{survivor}");
    // `[done/total] #ID`: the id is the report's, which `show` and `apply` take.
    let id = survivor.split_whitespace().nth(1).and_then(|word| word.strip_prefix('#')).unwrap();
    let report = read_valid_report(&json);
    let deleted = mutants_on_line(&report, "model_client.py", 15)
        .into_iter()
        .find(|m| m["description"] == "delete statement")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(deleted["id"], id, "{survivor}");
    let shown = mutdelta(repo.path(), &["show", json.to_str().unwrap(), id]);
    assert!(shown.stdout.contains("model_client.py:15:9"), "{shown:?}");
}

#[test]
fn quiet_prints_the_summary_alone_and_the_exit_status_says_the_rest() {
    let repo = fixture_repo("model_client");
    let run = check(repo.path(), &["--commit", "HEAD", "-q"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{run:?}");
    assert!(lines[0].starts_with("mutation delta: 2 of 6 mutants caught on 2 new lines"), "{run:?}");
    assert_eq!(run.stderr, "", "nothing while it runs, no phases line: {run:?}");

    let both = check(repo.path(), &["--commit", "HEAD", "-q", "-v"]);
    assert_eq!(both.code, 2, "{both:?}");
    assert!(both.stderr.contains("cannot be used with"), "{both:?}");
}

/// A Rust baseline's periodic lines say whether it is building or running the tests: a slow
/// build is not taken for a slow suite.
#[test]
fn a_rust_baselines_progress_lines_say_building_before_running_the_tests() {
    let repo = fixture_repo("rust_early_exit");
    let tmp = tempfile::tempdir().unwrap();
    let output = hermetic(repo.path(), tmp.path())
        .env("MUTDELTA_PROGRESS_INTERVAL", "0.05")
        .args(["check", "--commit", "HEAD", "-j", "2", "--no-cache"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let run = Run::of(&output);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    let building = "baseline (Rust), building, every mutant switched into one build: ";
    let testing = "baseline (Rust), running the tests, recording which reach each mutant: ";
    let first_building = lines.iter().position(|line| line.starts_with(building));
    let first_building =
        first_building.unwrap_or_else(|| panic!("a line says it is building:\n{}", run.stderr));
    let after_testing = lines.iter().position(|line| line.starts_with(testing)).unwrap_or(lines.len());
    assert!(first_building < after_testing, "building comes before the tests:\n{}", run.stderr);
    assert!(
        lines[after_testing..].iter().all(|line| !line.starts_with(building)),
        "once the tests run, the build is over:\n{}",
        run.stderr
    );
}
