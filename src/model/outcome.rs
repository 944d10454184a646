//! A mutant's verdict: its status, why, and what ran.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::plan::PlannedMutant;
use super::record::{Bytes, Finished, RunRecord};

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

/// A mutant's verdict: what its tests came to, why, and what ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub status: Status,
    /// Why: the failing test's message, the compile error, ...
    pub reason: String,
    /// Time spent running its tests.
    pub duration: Duration,
    /// Tests that were run against it, by name.
    pub covered_by: Vec<String>,
    /// Tests that failed against it, by name.
    pub killed_by: Vec<String>,
    /// What ran; none when nothing did.
    pub record: Option<RunRecord>,
    /// Reached by an earlier run of the same content, tests and settings, and reused.
    #[serde(default)]
    pub reused: bool,
    /// The limit its tests were stopped at, when they outgrew the memory limit (a Timeout).
    #[serde(default)]
    pub memory_limit: Option<Bytes>,
    /// The flaky tests whose failures under it were run again to decide it (`run::flaky`):
    /// a verdict so reached is not kept for the next run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
}

/// `later`, the outcome that decides, with `earlier`'s time and commands before its own.
pub fn continued(earlier: Outcome, mut later: Outcome) -> Outcome {
    later.duration += earlier.duration;
    later.record = RunRecord::joined(earlier.record, later.record.take());
    later
}

impl Outcome {
    /// A verdict reached without running anything: Ignored, NoCoverage, CompileError.
    pub fn settled(status: Status, reason: impl Into<String>) -> Outcome {
        Outcome {
            status,
            reason: reason.into(),
            duration: Duration::ZERO,
            covered_by: Vec::new(),
            killed_by: Vec::new(),
            record: None,
            reused: false,
            memory_limit: None,
            flaky: Vec::new(),
        }
    }

    /// A verdict from a finished run.
    pub fn of_run(run: &Finished, status: Status, reason: impl Into<String>) -> Outcome {
        Outcome { duration: run.duration, ..Outcome::settled(status, reason) }
    }

    /// On an arid line (`choose`), a mutant no test failed with (or none reached) is Ignored
    /// with the rule's name: nobody would act on it. A kill there counts as any kill.
    pub fn for_mutant(mut self, planned: PlannedMutant) -> MutantResult {
        if let Some(rule) = planned.mutant.arid.filter(|_| self.status.is_missed()) {
            self.reason = format!("arid line: {}; {}", rule.name, self.reason);
            self.status = Status::Ignored;
        }
        MutantResult { planned, outcome: self }
    }
}
