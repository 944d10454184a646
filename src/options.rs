//! Turns the parsed command line into one resolved `Options` that the rest of the program sees.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};

use crate::cli::{ChangeArgs, CheckArgs};

/// Which change is mutated, and so which state is tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Staged,
    Commit(String),
    Base(String),
    Lines(LineList),
}

/// Where a coverage gate's line list comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineList {
    Stdin,
    File(PathBuf),
}

/// How the tests are run for each mutant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestRunner {
    /// `python -m pytest -x -q -p no:cacheprovider <tests>`.
    Pytest,
    /// Any shell command; exit status 0 means the mutant survived.
    Shell(String),
}

/// What runs a cargo package's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestTool {
    Cargo,
    Nextest,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Where to look for the repository.
    pub directory: PathBuf,
    pub change: Change,
    pub jobs: NonZeroUsize,
    pub python: Option<PathBuf>,
    pub extra_tests: Vec<String>,
    pub runner: TestRunner,
    pub timeout: Option<Duration>,
    pub json: Option<PathBuf>,
    /// Fork each mutant's pytest run from a warm worker (else one process per mutant).
    pub fork: bool,
    /// Runs the tests of cargo packages.
    pub test_tool: TestTool,
}

impl Change {
    pub fn from_args(args: &ChangeArgs) -> Change {
        if let Some(rev) = &args.commit {
            Change::Commit(rev.clone())
        } else if let Some(rev) = &args.base {
            Change::Base(rev.clone())
        } else if let Some(path) = &args.lines {
            if path.as_os_str() == "-" {
                Change::Lines(LineList::Stdin)
            } else {
                Change::Lines(LineList::File(path.clone()))
            }
        } else {
            Change::Staged
        }
    }
}

impl Options {
    /// Options for commands that only read the change (`list`).
    pub fn for_listing() -> Options {
        Options {
            directory: PathBuf::from("."),
            change: Change::Staged,
            jobs: NonZeroUsize::MIN,
            python: None,
            extra_tests: Vec::new(),
            runner: TestRunner::Pytest,
            timeout: None,
            json: None,
            fork: true,
            test_tool: TestTool::Cargo,
        }
    }

    pub fn resolve(directory: Option<PathBuf>, args: &CheckArgs) -> Result<Options> {
        let jobs = match args.jobs {
            Some(0) => bail!("-j 0 would run nothing: give at least one job, e.g. -j 1"),
            Some(n) => NonZeroUsize::new(n).expect("checked above"),
            None => std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN),
        };
        let timeout = match args.timeout {
            Some(seconds) if !(seconds.is_finite() && seconds > 0.0) => {
                bail!("--timeout {seconds} is not a positive number of seconds")
            }
            Some(seconds) => Some(Duration::from_secs_f64(seconds)),
            None => None,
        };
        let runner = match &args.test_cmd {
            Some(cmd) if cmd.trim().is_empty() => {
                bail!("--test-cmd is empty: give the command that runs the tests")
            }
            Some(cmd) => TestRunner::Shell(cmd.clone()),
            None => TestRunner::Pytest,
        };
        Ok(Options {
            directory: directory.unwrap_or_else(|| PathBuf::from(".")),
            change: Change::from_args(&args.change),
            jobs,
            python: args.python.clone(),
            extra_tests: args.tests.clone(),
            runner,
            timeout,
            json: args.json.clone(),
            fork: !args.no_fork,
            test_tool: args.test_tool,
        })
    }
}
