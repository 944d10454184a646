//! The runs that must go one way before any mutant counts: the unmutated tests must pass (and build), a canary must make them fail.

use std::time::Duration;

use anyhow::{bail, Result};

use super::outcome::last_line;
use crate::interrupt::Interrupted;
use crate::model::record::{Exit, Finished};

/// What ran unmutated, for the error that says it failed.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// pytest's run of the relevant tests.
    Pytest,
    /// pytest's run of the rest of the suite, after the change's own tests passed.
    RestOfSuite,
    /// The user's `--test-cmd`.
    Command,
    /// The build of a cargo workspace's tests.
    CargoBuild,
    /// The tests of one cargo package.
    CargoTests(&'a str),
}

/// The unmutated run must pass: else nothing a mutant does proves anything.
pub fn passed(run: &Finished, subject: Subject, limit: Duration) -> Result<()> {
    let tests = match subject {
        Subject::CargoTests(package) => format!("the tests of {package}"),
        _ => "the tests".to_string(),
    };
    match (&run.exit, subject) {
        (Exit::Code(0), _) => Ok(()),
        (Exit::Interrupted, _) => Err(Interrupted.into()),
        (Exit::Code(127), Subject::Command) => bail!(
            "the test command was not found (the shell said: {}): check --test-cmd",
            last_line(&run.tail)
        ),
        (Exit::Code(5), Subject::Pytest) => bail!(
            "pytest collected no tests, so no mutant could be caught: add tests or name them with --test"
        ),
        (Exit::Unviable | Exit::Code(_), Subject::CargoBuild) => match cargo_refusal(&run.tail) {
            Some(error) => bail!(
                "cargo refused to build the tests before compiling anything, saying `{error}`: that is about the command or its settings, not your code: check the features given (--features, --all-features, --no-default-features, or the configuration's) and that `cargo test --no-run` works in your checkout. Cargo's output ended with:\n{}",
                run.tail.trim_end()
            ),
            None => bail!(
                "the crate does not build before any mutation: fix the build first. Cargo's output ended with:\n{}",
                run.tail.trim_end()
            ),
        },
        (Exit::Code(_), Subject::RestOfSuite) => bail!(
            "the change's tests pass, but the rest of the test suite fails without any mutant, so no survivor can be checked against it: make those tests pass, or leave them out (PYTEST_ADDOPTS=\"--deselect NODE_ID\", or `addopts` in the project's pytest configuration). Their output ended with:\n{}",
            run.tail.trim_end()
        ),
        (Exit::MemoryLimit(limit), _) => bail!(
            "{tests} grew past the {limit} memory limit before any mutation: raise it with --memory-limit (or `memory-limit` in the configuration), or give --memory-limit none"
        ),
        (Exit::TimedOut, Subject::Pytest | Subject::RestOfSuite | Subject::Command) => bail!(
            "the tests did not finish within {:.0} s before any mutation: name the tests that matter with --test",
            limit.as_secs_f64()
        ),
        (Exit::TimedOut, _) => bail!(
            "{tests} did not finish within {:.0} s before any mutation: make them faster or fix what hangs",
            limit.as_secs_f64()
        ),
        _ => bail!(
            "{tests} fail before any mutation, so a mutant's failure would prove nothing: make them pass first. Their output ended with:\n{}",
            run.tail.trim_end()
        ),
    }
}

/// Cargo's own error when it stopped before any compiler or build script ran (an unknown
/// feature, an ambiguous package): its first `error:` line.
fn cargo_refusal(tail: &str) -> Option<&str> {
    let compiled = ["could not compile", "error[", "failed to run custom build command"];
    if compiled.iter().any(|sign| tail.contains(sign)) {
        return None;
    }
    tail.lines().find_map(|line| line.strip_prefix("error: ")).map(str::trim)
}

/// With a mutated file replaced by one that raises on import, the tests must fail: if they
/// pass, they test another copy (an editable install, say) or none, and every mutant would
/// survive for the wrong reason.
pub fn failed_on_canary(run: &Finished, file: &std::path::Path) -> Result<()> {
    match run.exit {
        Exit::Interrupted => Err(Interrupted.into()),
        Exit::Code(0) => bail!(
            "the tests still pass when {} is replaced by a file that raises on import, so they do not import the copy under test (an editable install pointing at your checkout?) or do not import it at all: make them import it from the repository, or name the tests that do with --test",
            file.display()
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(exit: Exit, tail: &str) -> Finished {
        Finished { exit, duration: Duration::ZERO, tail: tail.to_string(), command: None }
    }

    fn refusal(run: &Finished, subject: Subject) -> String {
        passed(run, subject, Duration::from_secs(60)).unwrap_err().to_string()
    }

    #[test]
    fn only_a_passing_baseline_is_accepted_and_each_refusal_says_what_to_do() {
        assert!(passed(&finished(Exit::Code(0), ""), Subject::CargoBuild, Duration::ZERO).is_ok());
        let failed = finished(Exit::Code(1), "FAILED test_x\n");
        assert!(refusal(&failed, Subject::Pytest).starts_with("the tests fail before any mutation"));
        assert!(refusal(&failed, Subject::CargoTests("core"))
            .starts_with("the tests of core fail before any mutation"));
        assert!(refusal(&failed, Subject::Pytest).ends_with("FAILED test_x"));
        let rest = refusal(&failed, Subject::RestOfSuite);
        assert!(rest.starts_with("the change's tests pass, but the rest of the test suite fails"), "{rest}");
        assert!(rest.contains("--deselect") && rest.ends_with("FAILED test_x"), "{rest}");
        assert!(refusal(&finished(Exit::Unviable, ""), Subject::CargoBuild)
            .starts_with("the crate does not build"));
        let compile_error = "error[E0308]: mismatched types\nerror: could not compile `x` (lib)\n";
        assert!(refusal(&finished(Exit::Unviable, compile_error), Subject::CargoBuild)
            .starts_with("the crate does not build"));
        let unknown_feature = "error: none of the selected packages contains this feature: fast\n";
        let refused = refusal(&finished(Exit::Unviable, unknown_feature), Subject::CargoBuild);
        assert!(
            refused.starts_with("cargo refused to build the tests before compiling anything, saying `none of the selected packages contains this feature: fast`: "),
            "{refused}"
        );
        assert!(refusal(&finished(Exit::Code(127), "sh: x: not found"), Subject::Command)
            .starts_with("the test command was not found"));
        assert!(
            refusal(&finished(Exit::Code(5), ""), Subject::Pytest).starts_with("pytest collected no tests")
        );
        assert!(
            refusal(&finished(Exit::TimedOut, ""), Subject::Pytest).contains("did not finish within 60 s")
        );
        let interrupted = passed(&finished(Exit::Interrupted, ""), Subject::Pytest, Duration::ZERO);
        assert!(interrupted.unwrap_err().is::<Interrupted>());
    }

    #[test]
    fn a_canary_must_make_the_tests_fail() {
        let path = std::path::Path::new("pkg/mod.py");
        assert!(failed_on_canary(&finished(Exit::Code(1), ""), path).is_ok());
        let passed = failed_on_canary(&finished(Exit::Code(0), ""), path).unwrap_err().to_string();
        assert!(passed.contains("pkg/mod.py is replaced by a file that raises on import"), "{passed}");
    }
}
