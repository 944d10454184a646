//! Reading cargo's test runs: any failure after a successful build is the mutant's doing; libtest names the failed tests.

use std::time::Duration;

use crate::model::outcome::{Outcome, Status};
use crate::model::record::Finished;
use crate::run::outcome::{last_line, read_common};

/// The verdict of a build-then-test run.
pub fn read(run: &Finished, timeout: Duration) -> Outcome {
    let mut outcome = read_common(run, timeout).unwrap_or_else(|| {
        let reason = first_panic(&run.tail).unwrap_or_else(|| last_line(&run.tail).to_string());
        Outcome::of_run(run, Status::Killed, reason)
    });
    if outcome.status == Status::Killed {
        outcome.killed_by = failed_tests(&run.tail);
    }
    outcome
}

/// The tests that failed `run`, when libtest failed it (exit status 101); none when something
/// else did.
pub fn failed_in_tests(run: &Finished) -> Vec<String> {
    match run.exit {
        crate::model::record::Exit::Code(101) => failed_tests(&run.tail),
        _ => Vec::new(),
    }
}

/// The tests that failed: libtest's `test name ... FAILED` lines, and the list under its last
/// `failures:` heading (which survives when the output's start was cut off).
fn failed_tests(output: &str) -> Vec<String> {
    let mut failed: Vec<String> = output
        .lines()
        .filter_map(|line| line.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .map(str::to_string)
        .collect();
    // nextest: `        FAIL [   0.004s] (1/3) package::binary tests::name` (also `SIGSEGV`, ...).
    for line in output.lines() {
        let Some((status, rest)) = line.trim_start().split_once(" [") else { continue };
        let is_failure = matches!(status, "FAIL" | "SIGSEGV" | "SIGABRT" | "SIGKILL" | "ABORT" | "TIMEOUT");
        let Some((_, names)) = rest.split_once("] ") else { continue };
        let mut words =
            names.split_whitespace().filter(|word| !(word.starts_with('(') && word.ends_with(')')));
        if let (true, Some(test)) = (is_failure, words.nth(1)) {
            if !failed.iter().any(|known| known == test) {
                failed.push(test.to_string());
            }
        }
    }
    if let Some(at) = output.rfind("\nfailures:\n") {
        let listed = output[at + "\nfailures:\n".len()..]
            .lines()
            .take_while(|line| line.starts_with("    "))
            .map(|line| line.trim().to_string());
        for name in listed {
            if !failed.contains(&name) {
                failed.push(name);
            }
        }
    }
    failed
}

/// The first panic: `name panicked at src/lib.rs:7:5: the message`.
fn first_panic(output: &str) -> Option<String> {
    let mut lines = output.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim_start().strip_prefix("thread '") else { continue };
        // `thread 'name' panicked at`, or with the thread's id: `thread 'name' (4711) panicked at`.
        let Some((name, after)) = rest.split_once('\'') else { continue };
        let Some((_, place)) = after.split_once(" panicked at ") else { continue };
        let message = lines.next().unwrap_or("").trim();
        return Some(
            format!("{name} panicked at {} {message}", place.trim_end_matches(':')).trim_end().to_string(),
        );
    }
    None
}

/// `reason` with the column left out of its panic's place where the place is a line whose text
/// the schema changed (`moved`: such lines by file): the column there counts the switched
/// code, not the source's.
pub fn without_moved_columns(
    reason: &str,
    moved: &[(std::path::PathBuf, std::collections::BTreeSet<usize>)],
) -> String {
    let Some((before, after)) = reason.split_once(" panicked at ") else { return reason.to_string() };
    let place = after.split(' ').next().unwrap_or("");
    let mut parts = place.rsplitn(3, ':');
    let (Some(column), Some(line), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
        return reason.to_string();
    };
    let (Ok(line), true) = (line.parse::<usize>(), column.parse::<usize>().is_ok()) else {
        return reason.to_string();
    };
    let path = std::path::Path::new(path);
    let switched = moved.iter().any(|(file, lines)| file.ends_with(path) && lines.contains(&line));
    if !switched {
        return reason.to_string();
    }
    let rest = &after[place.len()..];
    format!("{before} panicked at {}:{line}{rest}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Exit;

    #[test]
    fn a_panic_on_a_line_the_schema_changed_loses_its_column_and_others_keep_theirs() {
        let moved = vec![(std::path::PathBuf::from("crates/a/src/lib.rs"), [12].into_iter().collect())];
        let reason = "tests::t panicked at src/lib.rs:12:50 attempt to multiply with overflow";
        assert_eq!(
            without_moved_columns(reason, &moved),
            "tests::t panicked at src/lib.rs:12 attempt to multiply with overflow"
        );
        for kept in [
            "tests::t panicked at src/lib.rs:40:9 assertion `left == right` failed",
            "tests::t panicked at tests/it.rs:12:5 boom",
            "the test process died of signal 6",
        ] {
            assert_eq!(without_moved_columns(kept, &moved), kept);
        }
    }

    #[test]
    fn failed_tests_are_read_from_libtest_output() {
        let output = "running 2 tests\ntest parse::ok ... ok\ntest parse::rejects_empty ... FAILED\n";
        assert_eq!(failed_tests(output), ["parse::rejects_empty"]);
    }

    #[test]
    fn failed_tests_are_read_from_nextest_output() {
        let output = "        PASS [   0.002s] (1/3) digits tests::pairs\n        FAIL [   0.108s] (2/3) digits tests::digits\n    test tests::digits ... FAILED\n     SIGSEGV [   0.010s] digits::it crash::deref\n";
        assert_eq!(failed_tests(output), ["tests::digits", "crash::deref"]);
    }

    #[test]
    fn a_failing_test_run_kills_and_names_its_tests() {
        let tail = "test parse::rejects_empty ... FAILED\ntest result: FAILED. 1 passed; 1 failed\n";
        let run =
            Finished { exit: Exit::Code(101), duration: Duration::ZERO, tail: tail.into(), command: None };
        let outcome = read(&run, Duration::from_secs(1));
        assert_eq!(outcome.status, Status::Killed);
        assert_eq!(outcome.reason, "test result: FAILED. 1 passed; 1 failed");
        assert_eq!(outcome.killed_by, ["parse::rejects_empty"]);
    }

    #[test]
    fn a_kill_names_the_first_panic_and_every_failed_test_even_when_the_output_was_cut() {
        // The end of a long run's output: the `... FAILED` lines were cut off the tail.
        let tail = "\
thread 'tests::ge' (4711) panicked at src/impls.rs:53:9:
assertion `left == right` failed
  left: Less
failures:
    tests::ge
    tests::gt

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 5 filtered out; finished in 0.25s
";
        let run =
            Finished { exit: Exit::Code(101), duration: Duration::ZERO, tail: tail.into(), command: None };
        let outcome = read(&run, Duration::from_secs(1));
        assert_eq!(outcome.status, Status::Killed);
        assert_eq!(
            outcome.reason,
            "tests::ge panicked at src/impls.rs:53:9 assertion `left == right` failed"
        );
        assert_eq!(outcome.killed_by, ["tests::ge", "tests::gt"]);
    }
}
