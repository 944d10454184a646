//! What the runner tells its reporters, in order: each phase as it starts, the baseline, notes, each mutant's verdict.

use std::path::Path;
use std::time::Duration;

use crate::model::outcome::MutantResult;
use crate::model::plan::Language;

/// What the phase under way does now, where it does several things in turn (a Rust baseline:
/// building, then running the tests): the progress line names it. The language doing it sets
/// it; a phase's start clears it.
static STAGE: std::sync::Mutex<Option<&'static str>> = std::sync::Mutex::new(None);

/// Says what the phase under way does now (`None`: nothing more than its name says).
pub fn set_stage(stage: Option<&'static str>) {
    *STAGE.lock().unwrap_or_else(|e| e.into_inner()) = stage;
}

/// What the phase under way does now, if it said.
pub fn stage() -> Option<&'static str> {
    *STAGE.lock().unwrap_or_else(|e| e.into_inner())
}

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
