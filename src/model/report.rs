//! What a check came to: its verdicts, its plan, the runs before any mutant, its timings, where it ran, and whether it was cut short.

use std::time::Duration;

use super::outcome::MutantResult;
use super::plan::Plan;
use super::record::StepRecord;

/// Everything a reporter needs.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub plan: Plan,
    /// In mutant id order.
    pub results: Vec<MutantResult>,
    /// The relevant tests (empty: the whole suite).
    pub tests: Vec<String>,
    pub baseline: Option<Duration>,
    pub timings: Timings,
    /// The runs before any mutant: baselines, canaries.
    pub steps: Vec<StepRecord>,
    /// Where the check ran and on what.
    pub origin: Option<Origin>,
    /// The kill-loss audit of the change's edits to tests, when it ran.
    pub audit: Option<crate::model::audit::Audit>,
    /// Only the audit ran (`audit-tests`): the added lines were not mutated.
    pub audit_only: bool,
    /// Stopped by Ctrl-C or SIGTERM before its end: `results` holds the verdicts reached.
    pub incomplete: Option<Incomplete>,
    /// The flaky tests the check met (found, or consulted to decide a verdict): what is known
    /// of each, in words.
    pub flaky: std::collections::BTreeMap<String, String>,
    /// Why a test-impact map could not rule out the tests it kept, one entry per reason.
    pub floor: Vec<Floor>,
}

/// Tests a test-impact map kept for one reason, and their recorded time: the floor a check
/// pays for that reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Floor {
    pub reason: String,
    pub tests: usize,
    pub seconds: f64,
}

/// What an interrupted check did not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incomplete {
    /// Mutants the check set out to verdict (every planned mutant, the ignored ones too).
    pub planned: usize,
    /// Of those without a verdict, the mutants the tests run so far let through, whose later
    /// round (the rest of the suite, the whole suite) did not finish.
    pub undecided: usize,
    /// The interrupt came during the kill-loss audit, after every mutant's verdict.
    pub audit_cut_off: bool,
}

impl Report {
    /// Planned mutants without a verdict.
    pub fn not_run(&self) -> usize {
        self.incomplete.map_or(0, |incomplete| incomplete.planned.saturating_sub(self.results.len()))
    }
}

/// The repository, the state under test and where the temporary copies lived: what it takes to
/// reproduce a verdict later.
#[derive(Debug, Clone)]
pub struct Origin {
    pub repository: std::path::PathBuf,
    pub state: crate::model::plan::State,
    /// The run's temporary directory (removed when the check ends).
    pub scratch: std::path::PathBuf,
}

/// Wall time of each phase of a check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Reading the change and writing the state under test to a temporary copy.
    pub diff: Duration,
    /// Making the mutants.
    pub generate: Duration,
    /// Compiling every mutant (Python: beside the baseline).
    pub compile: Duration,
    /// Building (Rust: the schema's or the unmutated build, within the baseline).
    pub build: Duration,
    /// The check's unmutated runs (under the coverage probe with pytest) and canaries.
    pub baseline: Duration,
    /// Testing the check's mutants.
    pub mutants: Duration,
    /// The whole check, start to end (the compile check overlaps the baseline).
    pub wall: Duration,
    /// The kill-loss audit, start to end.
    pub audit: Duration,
    /// Of `audit`: its unmutated runs and canaries, and its mutants' runs (`baseline` and
    /// `mutants` are the check's own).
    pub audit_baseline: Duration,
    pub audit_mutants: Duration,
}
