//! The results of a check and the outputs built from them: terminal text, mutation-testing-elements JSON, and the HTML, JUnit, SARIF and GitHub reports rendered from that JSON.

pub mod document;
pub mod github;
pub mod html;
pub mod json;
pub mod junit;
pub mod list;
pub mod out;
pub mod sarif;
pub mod text;

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::plan::{Plan, PlannedMutant};
use crate::run::outcome::Outcome;
use crate::run::record::StepRecord;

/// A mutant's verdict, named as in the mutation-testing-elements schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Status {
    Killed,
    Survived,
    NoCoverage,
    Timeout,
    CompileError,
    RuntimeError,
    Ignored,
}

impl Status {
    /// Counted as caught in the mutation score.
    pub fn is_caught(self) -> bool {
        matches!(self, Status::Killed | Status::Timeout)
    }

    /// Proves that the line is not really tested.
    pub fn is_missed(self) -> bool {
        matches!(self, Status::Survived | Status::NoCoverage)
    }
}

/// What happened to one mutant.
#[derive(Debug, Clone)]
pub struct MutantResult {
    pub planned: PlannedMutant,
    pub outcome: Outcome,
}

impl MutantResult {
    /// The likely-equivalence rule that labels the verdict: only a survivor carries one.
    pub fn likely_equivalent(&self) -> Option<&'static mutators::catalog::Marker> {
        self.planned.mutant.likely_equivalent.filter(|_| self.outcome.status == Status::Survived)
    }

    /// `Survived (likely equivalent: fast-path-guard)`, or the status alone.
    pub fn verdict(&self) -> String {
        match self.likely_equivalent() {
            Some(rule) => format!("{:?} (likely equivalent: {})", self.outcome.status, rule.name),
            None => format!("{:?}", self.outcome.status),
        }
    }
}

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
    pub audit: Option<crate::audit::Audit>,
    /// Only the audit ran (`audit-tests`): the added lines were not mutated.
    pub audit_only: bool,
    /// Stopped by Ctrl-C or SIGTERM before its end: `results` holds the verdicts reached.
    pub incomplete: Option<Incomplete>,
}

/// What an interrupted check did not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incomplete {
    /// Mutants the check set out to verdict (every planned mutant, the ignored ones too).
    pub planned: usize,
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
    pub state: crate::lines::State,
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
    /// Compiling every mutant.
    pub compile: Duration,
    /// The unmutated run (under the coverage probe with pytest) and the canaries.
    pub baseline: Duration,
    /// Testing the mutants.
    pub mutants: Duration,
    /// The whole check, start to end (the compile check overlaps the baseline).
    pub wall: Duration,
}

/// The counts behind the last line of the report and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub caught: usize,
    /// Killed + Timeout + Survived + NoCoverage: the mutation score's denominator.
    pub scored: usize,
    pub lines: usize,
    /// Added lines with a mutant that Survived.
    pub lines_with_survivors: usize,
    /// Added lines with a NoCoverage mutant and none that Survived: no test runs them.
    pub lines_not_run: usize,
    pub compile_errors: usize,
    pub runtime_errors: usize,
    pub ignored: usize,
}

impl Report {
    pub fn summary(&self) -> Summary {
        let count = |status: Status| self.results.iter().filter(|r| r.outcome.status == status).count();
        let lines_with = |status: Status| -> BTreeSet<_> {
            self.results
                .iter()
                .filter(|r| r.outcome.status == status)
                .map(|r| (r.planned.file, r.planned.mutant.line))
                .collect()
        };
        let lines_with_survivors = lines_with(Status::Survived);
        let lines_not_run = lines_with(Status::NoCoverage).difference(&lines_with_survivors).count();
        Summary {
            caught: self.results.iter().filter(|r| r.outcome.status.is_caught()).count(),
            scored: self
                .results
                .iter()
                .filter(|r| r.outcome.status.is_caught() || r.outcome.status.is_missed())
                .count(),
            lines: self.plan.line_count(),
            lines_with_survivors: lines_with_survivors.len(),
            lines_not_run,
            compile_errors: count(Status::CompileError),
            runtime_errors: count(Status::RuntimeError),
            ignored: count(Status::Ignored),
        }
    }

    /// True when some added line has a mutant that no test caught, or whose run broke, or the
    /// change loses a kill its tests made before it.
    pub fn has_missed(&self) -> bool {
        self.results.iter().any(|r| r.outcome.status.is_missed() || r.outcome.status == Status::RuntimeError)
            || self.audit.as_ref().is_some_and(|audit| !audit.lost.is_empty())
    }
}
