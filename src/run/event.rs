//! What the runner tells its reporters, in order: each phase as it starts, the baseline, notes, each mutant's verdict.

use std::path::Path;
use std::time::Duration;

use crate::model::outcome::MutantResult;
use crate::model::plan::Language;

/// A part of the run that is about to start, said before it runs so a long build is not silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The unmutated tests of one language: built (Rust), run under the coverage probe (Python).
    Baseline(Language),
    /// The parallel copies made and their workers started.
    Workers { count: usize },
    /// The rest of the suite measured for the mutants the first round left open.
    SecondRound { open: usize },
    /// `--confirm-survivors`: the survivors face the whole suite.
    Confirming { count: usize },
    /// A stage of the kill-loss audit of the tests the change edits.
    Audit,
    /// Back to the check of the change after a stage of the audit.
    Check,
}

/// What the runner tells its reporters, in order.
#[derive(Debug)]
pub enum Event<'a> {
    Phase(Phase),
    /// The unmutated tests passed; `what` says which ran. `reused`: an earlier run measured
    /// them on the same content, and nothing ran now.
    BaselinePassed {
        duration: Duration,
        what: String,
        reused: bool,
    },
    /// Mutants are about to run.
    MutantsStarting {
        total: usize,
        workers: usize,
    },
    /// A phase of the run that needs saying (the kill-loss audit's steps).
    Note(String),
    MutantFinished {
        result: &'a MutantResult,
        /// The mutated file, relative to the repository.
        path: &'a Path,
        done: usize,
        total: usize,
    },
}
