//! Before any mutant: the unmutated tests must pass, and a broken copy of each mutated file must make its tests fail.

use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};

use super::executor::Executor;
use super::process::{Exit, Finished};
use super::Interrupted;
use crate::options::TestRunner;
use crate::plan::FilePlan;
use crate::python;
use crate::worktree::{self, Stamp};

/// The shortest timeout a mutant gets, however fast its tests.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// How much slower than the unmutated run a mutant's tests may be before they count as hung.
const TIMEOUT_FACTOR: u32 = 5;
/// How long the unmutated run may take when no --timeout is given.
pub const BASELINE_LIMIT: Duration = Duration::from_secs(3600);

/// A mutant's timeout: `--timeout`, else max(10 s, 5 x what its tests took unmutated).
pub fn mutant_timeout(explicit: Option<Duration>, unmutated: Duration) -> Duration {
    explicit.unwrap_or_else(|| MIN_TIMEOUT.max(unmutated * TIMEOUT_FACTOR))
}

/// Turns a failed unmutated run into the error the user sees.
pub fn require_pass(run: &Finished, runner: &TestRunner, limit: Duration) -> Result<()> {
    match run.exit {
        Exit::Code(0) => Ok(()),
        Exit::Interrupted => Err(Interrupted.into()),
        Exit::Code(127) if matches!(runner, TestRunner::Shell(_)) => bail!(
            "the test command was not found (the shell said: {}): check --test-cmd",
            last_line(&run.tail)
        ),
        Exit::Code(5) if matches!(runner, TestRunner::Pytest) => bail!(
            "pytest collected no tests, so no mutant could be caught: add tests or name them with --test"
        ),
        Exit::TimedOut => bail!(
            "the tests did not finish within {:.0} s before any mutation: name the tests that matter with --test",
            limit.as_secs_f64()
        ),
        _ => bail!(
            "the tests fail before any mutation, so a mutant's failure would prove nothing: make them pass first. Their output ended with:\n{}",
            run.tail.trim_end()
        ),
    }
}

/// Replaces `file` in the copy at `root` by one that raises on import and runs `tests`: they must
/// fail. If they pass, they test another copy (an editable install, say) or none, and every
/// mutant would survive for the wrong reason.
pub fn prove_canary(
    executor: &mut dyn Executor,
    root: &Path,
    file: &FilePlan,
    tests: &[String],
    timeout: Duration,
    log: &Path,
) -> Result<()> {
    let path = root.join(&file.path);
    worktree::replace_file(&path, python::CANARY_SOURCE, Stamp::FreshSecond)?;
    let run = executor.run(tests, timeout, log);
    worktree::replace_file(&path, &file.source, Stamp::FreshSecond)?;
    match run?.exit {
        Exit::Interrupted => Err(Interrupted.into()),
        Exit::Code(0) => bail!(
            "the tests still pass when {} is replaced by a file that raises on import, so they do not import the copy under test (an editable install pointing at your checkout?) or do not import it at all: make them import it from the repository, or name the tests that do with --test",
            file.path.display()
        ),
        _ => Ok(()),
    }
}

/// The last non-blank line of some output.
pub fn last_line(text: &str) -> &str {
    text.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim()
}
