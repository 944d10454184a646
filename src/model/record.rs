//! The evidence behind a verdict: each command that ran, where, with which environment, how it ended and how long it took.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// How a mutant's tests were run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum How {
    /// A new process for the run.
    Fresh,
    /// A child forked from a warm Python worker that had pytest imported.
    Fork,
    /// `cargo test --no-run`, then the tests when the mutant built.
    BuildThenTest,
    /// Switched on in the one build of every mutant of its package (a mutant schema), and
    /// run against the tests that reached it.
    Schema,
    /// A child forked from a collector that had the tests collected and the project imported,
    /// with the mutated code swapped into the live functions.
    Swap,
}

impl How {
    pub fn name(self) -> &'static str {
        match self {
            How::Fresh => "fresh",
            How::Fork => "fork",
            How::BuildThenTest => "build-then-test",
            How::Schema => "schema",
            How::Swap => "swap",
        }
    }
}

/// One process a verdict rests on, as it ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandRecord {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its working directory: a temporary copy of the state under test.
    pub dir: PathBuf,
    /// The variables mutdelta set whose values differ from its own environment.
    pub env: Vec<(String, String)>,
    pub exit: Exit,
    pub duration: Duration,
}

impl CommandRecord {
    /// The record of a command that set `env` on top of mutdelta's environment.
    pub fn new(
        argv: Vec<String>,
        dir: PathBuf,
        env: &[(String, String)],
        exit: Exit,
        duration: Duration,
    ) -> Self {
        CommandRecord { argv, dir, env: differences(env), exit, duration }
    }

    /// This record with each variable of `names` the command inherited from mutdelta's own
    /// environment (`PYTEST_ADDOPTS`, say), so that it reproduces as it ran where that variable
    /// is not set.
    pub fn with_inherited(mut self, names: &[&str]) -> Self {
        for name in names {
            if let (Ok(value), false) = (std::env::var(name), self.env.iter().any(|(set, _)| set == name)) {
                self.env.push((name.to_string(), value));
            }
        }
        self
    }
}

/// The pairs of `env` whose values are not already those of this process's environment.
fn differences(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter()
        .filter(|(name, value)| std::env::var(name).ok().as_deref() != Some(value.as_str()))
        .cloned()
        .collect()
}

/// A run of tests: how it ran, its commands in order, the end of its output.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    pub how: How,
    pub commands: Vec<CommandRecord>,
    /// The last few kilobytes of its output.
    pub tail: String,
    /// Why the swap path was not taken, when it was tried.
    pub fallback: Option<String>,
    /// On the swap path: the time the swap took, and the tests.
    pub split: Option<(Duration, Duration)>,
}

impl RunRecord {
    /// This record, then `later`'s runs: how the mutant ran last, with every command.
    pub fn followed_by(mut self, later: RunRecord) -> RunRecord {
        self.commands.extend(later.commands);
        self.how = later.how;
        self.tail = later.tail;
        self.fallback = later.fallback.or(self.fallback);
        self.split = later.split.or(self.split);
        self
    }

    /// `earlier`'s runs, then `later`'s (`followed_by`), whichever there are.
    pub fn joined(earlier: Option<RunRecord>, later: Option<RunRecord>) -> Option<RunRecord> {
        match (earlier, later) {
            (Some(first), Some(second)) => Some(first.followed_by(second)),
            (first, second) => second.or(first),
        }
    }

    pub fn of(how: How, runs: &[&Finished]) -> RunRecord {
        RunRecord {
            how,
            commands: runs.iter().filter_map(|run| run.command.clone()).collect(),
            tail: runs.last().map(|run| run.tail.clone()).unwrap_or_default(),
            fallback: None,
            split: None,
        }
    }
}

/// A run that is not a mutant's: the baseline, a canary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRecord {
    /// `baseline`, `canary pkg/mod.py`, `build`, `tests of NAME`.
    pub step: String,
    pub record: RunRecord,
}

impl Exit {
    /// How the process ended, in words.
    pub fn describe(&self) -> String {
        match self {
            Exit::Code(code) => format!("exit code {code}"),
            Exit::Unviable => "did not build".to_string(),
            Exit::Signal(signal) => format!("killed by signal {signal}"),
            Exit::TimedOut => "timed out".to_string(),
            Exit::MemoryLimit(limit) => format!("stopped at the {limit} memory limit"),
            Exit::Interrupted => "interrupted".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_variables_that_differ_from_our_environment_are_recorded() {
        let path = std::env::var("PATH").unwrap_or_default();
        let env =
            vec![("PATH".to_string(), path), ("MUTDELTA_NOT_SET_ANYWHERE".to_string(), "1".to_string())];
        let record = CommandRecord::new(
            vec!["true".into()],
            PathBuf::from("/tmp"),
            &env,
            Exit::Code(0),
            Duration::ZERO,
        );
        assert_eq!(record.env, [("MUTDELTA_NOT_SET_ANYWHERE".to_string(), "1".to_string())]);
    }
}

/// What a finished test process did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Exit {
    Code(i32),
    /// The mutant did not build (compiled languages).
    Unviable,
    Signal(i32),
    TimedOut,
    /// Stopped when it and what it started held more memory than the run's limit.
    MemoryLimit(Bytes),
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
    /// The last lines of standard output and error, combined.
    pub tail: String,
    /// What ran (for a forked run, the command it stands for).
    pub command: Option<CommandRecord>,
}

impl Finished {
    pub fn passed(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

/// A number of bytes, shown in binary units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Bytes(pub u64);

pub const KIB: u64 = 1 << 10;

pub const MIB: u64 = 1 << 20;

pub const GIB: u64 = 1 << 30;

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0 as f64;
        match self.0 {
            n if n >= GIB => write!(f, "{:.1} GiB", bytes / GIB as f64),
            n if n >= MIB => write!(f, "{:.0} MiB", bytes / MIB as f64),
            n => write!(f, "{n} bytes"),
        }
    }
}
