//! What Python's unmutated runs say when they do not pass: pytest collecting nothing, a test command not found, the rest of the suite failing, a run past its limit.

use std::time::Duration;

use crate::model::record::{Exit, Finished};
use crate::run::outcome::last_line;
use crate::run::require::Unmutated;

/// A Python run that must pass before any mutant counts.
#[derive(Debug, Clone, Copy)]
pub enum PythonRun {
    /// pytest's run of the relevant tests.
    Pytest,
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
            (Exit::Code(5), PythonRun::Pytest) => Some(
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
        let failed = refusal(Exit::Code(1), "FAILED test_x\n", PythonRun::Pytest);
        assert!(
            failed.starts_with("the tests fail before any mutation") && failed.ends_with("FAILED test_x")
        );
        let rest = refusal(Exit::Code(1), "FAILED test_x\n", PythonRun::RestOfSuite);
        assert!(rest.starts_with("the change's tests pass, but the rest of the test suite fails"), "{rest}");
        assert!(rest.contains("--deselect") && rest.ends_with("FAILED test_x"), "{rest}");
        assert!(refusal(Exit::Code(127), "sh: x: not found", PythonRun::Command)
            .starts_with("the test command was not found (the shell said: sh: x: not found)"));
        assert!(
            refusal(Exit::Code(127), "", PythonRun::Pytest).starts_with("the tests fail"),
            "pytest's 127"
        );
        assert!(refusal(Exit::Code(5), "", PythonRun::Pytest).starts_with("pytest collected no tests"));
        assert!(
            refusal(Exit::Code(5), "", PythonRun::Command).starts_with("the tests fail"),
            "a command's 5"
        );
        for run in [PythonRun::Pytest, PythonRun::RestOfSuite, PythonRun::Command] {
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
