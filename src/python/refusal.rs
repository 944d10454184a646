//! What Python's unmutated runs say when they do not pass: pytest collecting nothing, a test command not found, the rest of the suite failing, a run past its limit.

use std::time::Duration;

use crate::model::record::{Exit, Finished};
use crate::run::outcome::last_line;
use crate::run::require::Unmutated;

/// A Python run that must pass before any mutant counts.
#[derive(Debug, Clone)]
pub enum PythonRun {
    /// pytest's run of the relevant tests, in words (`tests/test_a.py`, `the whole test suite`).
    Pytest(String),
    /// pytest's run of the rest of the suite, after the change's own tests passed.
    RestOfSuite,
    /// The user's `--test-cmd`.
    Command,
}

impl Unmutated for PythonRun {
    fn refusal(&self, run: &Finished, limit: Duration) -> Option<String> {
        match (&run.exit, self) {
            (Exit::Code(127), PythonRun::Command) => Some(format!(
                "the test command was not found (the shell said: {}): check --test-cmd",
                last_line(&run.tail)
            )),
            (Exit::Code(1 | 2), PythonRun::Pytest(selection)) => Some(format!(
                "pytest's run of {selection} fails before any mutation{}, so a mutant's failure would prove nothing: make it pass, or leave the failing tests out (PYTEST_ADDOPTS=\"--deselect NODE_ID\", or `addopts` in the project's pytest configuration). Its output ended with:\n{}",
                first_failure(&run.tail).map(|first| format!(" (first failure: {first})")).unwrap_or_default(),
                run.tail.trim_end()
            )),
            (Exit::Code(5), PythonRun::Pytest(_)) => Some(
                "pytest collected no tests, so no mutant could be caught: add tests or name them with --test"
                    .to_string(),
            ),
            (Exit::Code(_), PythonRun::RestOfSuite) => Some(format!(
                "the change's tests pass, but the rest of the test suite fails without any mutant, so no survivor can be checked against it: make those tests pass, or leave them out (PYTEST_ADDOPTS=\"--deselect NODE_ID\", or `addopts` in the project's pytest configuration). Their output ended with:\n{}",
                run.tail.trim_end()
            )),
            (Exit::TimedOut, _) => Some(format!(
                "the tests did not finish within {:.0} s before any mutation: name the tests that matter with --test",
                limit.as_secs_f64()
            )),
            _ => None,
        }
    }
}

/// The first failure pytest's short summary names (`FAILED tests/test_a.py::test_x - Error`,
/// `ERROR tests/test_b.py`), without its word.
pub fn first_failure(tail: &str) -> Option<&str> {
    tail.lines()
        .find_map(|line| line.strip_prefix("FAILED ").or_else(|| line.strip_prefix("ERROR ")))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::require::passed;

    fn refusal(exit: Exit, tail: &str, run: PythonRun) -> String {
        let finished = Finished { exit, duration: Duration::ZERO, tail: tail.to_string(), command: None };
        passed(&finished, &run, Duration::from_secs(60)).unwrap_err().to_string()
    }

    #[test]
    fn each_python_refusal_says_what_to_do() {
        let tail = "F\n=== short test summary info ===\nFAILED tests/t.py::test_x - KeyError: 'kg'\nERROR tests/u.py\n";
        let failed = refusal(Exit::Code(1), tail, PythonRun::Pytest("tests/t.py".into()));
        assert!(
            failed.starts_with("pytest's run of tests/t.py fails before any mutation (first failure: tests/t.py::test_x - KeyError: 'kg'), so a mutant's failure would prove nothing")
                && failed.ends_with("ERROR tests/u.py"),
            "{failed}"
        );
        let unnamed =
            refusal(Exit::Code(2), "no summary\n", PythonRun::Pytest("the whole test suite".into()));
        assert!(
            unnamed.starts_with("pytest's run of the whole test suite fails before any mutation, so"),
            "{unnamed}"
        );
        let rest = refusal(Exit::Code(1), "FAILED test_x\n", PythonRun::RestOfSuite);
        assert!(rest.starts_with("the change's tests pass, but the rest of the test suite fails"), "{rest}");
        assert!(rest.contains("--deselect") && rest.ends_with("FAILED test_x"), "{rest}");
        assert!(refusal(Exit::Code(127), "sh: x: not found", PythonRun::Command)
            .starts_with("the test command was not found (the shell said: sh: x: not found)"));
        assert!(
            refusal(Exit::Code(127), "", PythonRun::Pytest("tests/t.py".into()))
                .starts_with("the tests fail"),
            "pytest's 127"
        );
        assert!(refusal(Exit::Code(5), "", PythonRun::Pytest("tests/t.py".into()))
            .starts_with("pytest collected no tests"));
        assert!(
            refusal(Exit::Code(5), "", PythonRun::Command).starts_with("the tests fail"),
            "a command's 5"
        );
        for run in [PythonRun::Pytest("tests/t.py".into()), PythonRun::RestOfSuite, PythonRun::Command] {
            assert_eq!(
                refusal(Exit::TimedOut, "", run),
                "the tests did not finish within 60 s before any mutation: name the tests that matter with --test"
            );
        }
        let memory =
            refusal(Exit::MemoryLimit(crate::model::record::Bytes(1 << 30)), "", PythonRun::RestOfSuite);
        assert!(memory.starts_with("the tests grew past the 1.0 GiB memory limit"), "{memory}");
    }
}
