//! Reading cargo's test runs: any failure after a successful build is the mutant's doing; libtest names the failed tests.

use std::time::Duration;

use crate::report::Status;
use crate::run::outcome::{last_line, read_common, Outcome};
use crate::run::process::Finished;

/// The verdict of a build-then-test run.
pub fn read(run: &Finished, timeout: Duration) -> Outcome {
    let mut outcome = read_common(run, timeout)
        .unwrap_or_else(|| Outcome::of_run(run, Status::Killed, last_line(&run.tail)));
    if outcome.status == Status::Killed {
        outcome.killed_by = failed_tests(&run.tail);
    }
    outcome
}

/// The tests that failed, from libtest's `test name ... FAILED` lines.
fn failed_tests(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::process::Exit;

    #[test]
    fn failed_tests_are_read_from_libtest_output() {
        let output = "running 2 tests\ntest parse::ok ... ok\ntest parse::rejects_empty ... FAILED\n";
        assert_eq!(failed_tests(output), ["parse::rejects_empty"]);
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
}
