//! The runs that must go one way before any mutant counts: the unmutated tests must pass (and build), a canary must make them fail.

use std::time::Duration;

use anyhow::{bail, Result};

use crate::interrupt::Interrupted;
use crate::model::record::{Exit, Finished};

/// What ran unmutated, as its language reads a run of it that did not pass.
pub trait Unmutated {
    /// What ran, as the refusal names it: "the tests", "the tests of core".
    fn tests(&self) -> String {
        "the tests".to_string()
    }

    /// The language's own refusal of a run that did not pass, read before the readings every
    /// language shares; none when it has nothing to add.
    fn refusal(&self, run: &Finished, limit: Duration) -> Option<String>;
}

/// The unmutated run must pass: else nothing a mutant does proves anything.
pub fn passed(run: &Finished, subject: &dyn Unmutated, limit: Duration) -> Result<()> {
    let tests = subject.tests();
    match &run.exit {
        Exit::Code(0) => return Ok(()),
        Exit::Interrupted => return Err(Interrupted.into()),
        _ => {}
    }
    if let Some(refusal) = subject.refusal(run, limit) {
        bail!(refusal);
    }
    match &run.exit {
        Exit::MemoryLimit(limit) => bail!(
            "{tests} grew past the {limit} memory limit before any mutation: raise it with --memory-limit (or `memory-limit` in the configuration), or give --memory-limit none"
        ),
        Exit::TimedOut => bail!(
            "{tests} did not finish within {:.0} s before any mutation: make them faster or fix what hangs",
            limit.as_secs_f64()
        ),
        _ => bail!(
            "{tests} fail before any mutation, so a mutant's failure would prove nothing: make them pass first. Their output ended with:\n{}",
            run.tail.trim_end()
        ),
    }
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

    use crate::model::record::Bytes;

    fn refusal(run: &Finished, subject: &dyn Unmutated) -> String {
        passed(run, subject, Duration::from_secs(60)).unwrap_err().to_string()
    }

    /// A language with nothing of its own to say of a run that did not pass.
    struct Plain;

    impl Unmutated for Plain {
        fn refusal(&self, _: &Finished, _: Duration) -> Option<String> {
            None
        }
    }

    /// One whose tests are named, and whose own refusal is of exit status 3.
    struct Named;

    impl Unmutated for Named {
        fn tests(&self) -> String {
            "the tests of core".to_string()
        }

        fn refusal(&self, run: &Finished, _: Duration) -> Option<String> {
            (run.exit == Exit::Code(3)).then(|| "three".to_string())
        }
    }

    #[test]
    fn only_a_passing_baseline_is_accepted_and_each_refusal_says_what_to_do() {
        assert!(passed(&finished(Exit::Code(0), ""), &Named, Duration::ZERO).is_ok());
        let failed = finished(Exit::Code(1), "FAILED test_x\n");
        assert!(refusal(&failed, &Plain).starts_with("the tests fail before any mutation"));
        assert!(refusal(&failed, &Named).starts_with("the tests of core fail before any mutation"));
        assert!(refusal(&failed, &Plain).ends_with("FAILED test_x"));
        assert_eq!(refusal(&finished(Exit::Code(3), ""), &Named), "three", "the language's own first");
        let timed_out = refusal(&finished(Exit::TimedOut, ""), &Named);
        assert_eq!(
            timed_out,
            "the tests of core did not finish within 60 s before any mutation: make them faster or fix what hangs"
        );
        let memory = refusal(&finished(Exit::MemoryLimit(Bytes(1 << 30)), ""), &Plain);
        assert!(memory.starts_with("the tests grew past the 1.0 GiB memory limit"), "{memory}");
        let interrupted = passed(&finished(Exit::Interrupted, ""), &Named, Duration::ZERO);
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
