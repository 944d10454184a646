//! Before any mutant: the unmutated tests must pass, and a broken copy of each mutated file must make them fail.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};

use super::process::{Exit, Finished, TestCommand};
use super::Interrupted;
use crate::options::TestRunner;
use crate::plan::Plan;
use crate::python;

/// What every test run of a check shares.
pub struct Setup<'a> {
    pub plan: &'a Plan,
    pub runner: &'a TestRunner,
    pub python: &'a Path,
    pub tests: &'a [String],
}

/// The proven baseline.
#[derive(Debug, Clone, Copy)]
pub struct BaselineRun {
    pub duration: Duration,
    /// How long one mutant's tests may run.
    pub timeout: Duration,
}

/// The shortest timeout a mutant gets, however fast the baseline.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// How much slower than the baseline a mutant's tests may be before they count as hung.
const TIMEOUT_FACTOR: u32 = 5;
/// How long the baseline itself may take before we give up on it.
const BASELINE_LIMIT: Duration = Duration::from_secs(3600);

impl Setup<'_> {
    pub fn command(&self, root: &Path) -> TestCommand {
        python::test_command(self.runner, self.python, root, self.tests)
    }

    /// Runs the unmutated tests, then the canaries, in the copy at `root`.
    pub fn prove(
        &self,
        root: &Path,
        logs: &Path,
        timeout: Option<Duration>,
    ) -> Result<BaselineRun> {
        let command = self.command(root);
        let run = command.run(
            timeout.unwrap_or(BASELINE_LIMIT),
            &logs.join("baseline.log"),
        )?;
        match run.exit {
            Exit::Code(0) => {}
            Exit::Interrupted => return Err(Interrupted.into()),
            Exit::Code(127) if matches!(self.runner, TestRunner::Shell(_)) => bail!(
                "the test command was not found (the shell said: {}): check --test-cmd",
                last_line(&run.tail)
            ),
            Exit::TimedOut => bail!(
                "the tests did not finish within {:.0} s before any mutation: raise --timeout or name faster tests with --test",
                timeout.unwrap_or(BASELINE_LIMIT).as_secs_f64()
            ),
            _ => bail!(
                "the tests fail before any mutation, so a mutant's failure would prove nothing: make them pass first. Their output ended with:\n{}",
                run.tail.trim_end()
            ),
        }
        let timeout = timeout.unwrap_or_else(|| MIN_TIMEOUT.max(run.duration * TIMEOUT_FACTOR));
        self.prove_canaries(root, logs, timeout)?;
        Ok(BaselineRun {
            duration: run.duration,
            timeout,
        })
    }

    /// A file that raises on import must make the tests fail; else they test another copy (an
    /// editable install, say) or none, and every mutant would survive for the wrong reason.
    fn prove_canaries(&self, root: &Path, logs: &Path, timeout: Duration) -> Result<()> {
        for file in &self.plan.files {
            let path = root.join(&file.path);
            std::fs::write(&path, python::CANARY_SOURCE)?;
            let run = self.command(root).run(timeout, &logs.join("canary.log"));
            std::fs::write(&path, &file.source)?;
            let run: Finished = run?;
            match run.exit {
                Exit::Interrupted => return Err(Interrupted.into()),
                Exit::Code(0) => bail!(
                    "the tests still pass when {} is replaced by a file that raises on import, so they do not import the copy under test (an editable install pointing at your checkout?) or do not import it at all: make them import it from the repository, or name the tests that do with --test",
                    file.path.display()
                ),
                _ => {}
            }
        }
        Ok(())
    }
}

pub fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim()
}
