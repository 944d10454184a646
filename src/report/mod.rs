//! The results of a check and the outputs built from them: terminal text, mutation-testing-elements JSON, and the HTML, JUnit, SARIF, GitHub and Markdown reports rendered from that JSON.

pub mod document;
pub mod gate;
pub mod github;
pub mod hint;
pub mod html;
pub mod input;
pub mod json;
pub mod junit;
pub mod list;
pub mod markdown;
pub mod merge;
pub mod out;
pub mod sarif;
pub mod test_files;
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
    /// Compiling every mutant (Python: beside the baseline).
    pub compile: Duration,
    /// Building (Rust: the schema's or the unmutated build, within the baseline).
    pub build: Duration,
    /// The unmutated run (under the coverage probe with pytest) and the canaries.
    pub baseline: Duration,
    /// Testing the mutants.
    pub mutants: Duration,
    /// The whole check, start to end (the compile check overlaps the baseline).
    pub wall: Duration,
}

/// The counts behind the summary line of the mutation delta and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Every verdict, of any status.
    pub mutants: usize,
    /// With `--shard`: the shard, and how many mutants the whole plan has.
    pub shard: Option<(crate::shard::Shard, usize)>,
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
            mutants: self.results.len(),
            shard: self.plan.share.as_ref().map(|share| (share.shard, share.planned)),
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

    /// What the summary lines say and the exit status follows.
    pub fn gate(&self) -> Gate {
        Gate {
            summary: self.summary(),
            audit: self.audit.as_ref().map(|audit| AuditSummary {
                edited: audit.edited.clone(),
                tried: audit.tried,
                killed_before: audit.killed_before,
                lost: audit.lost.len(),
            }),
            audit_only: self.audit_only,
            incomplete: self.incomplete.map(|incomplete| Interruption {
                not_run: self.not_run(),
                planned: incomplete.planned,
                undecided: incomplete.undecided,
                audit_cut_off: incomplete.audit_cut_off,
            }),
        }
    }
}

impl Summary {
    /// Some mutant Survived or had NoCoverage, or its test run broke.
    pub fn has_missed(&self) -> bool {
        self.scored > self.caught || self.runtime_errors > 0
    }
}

/// The counts of the kill-loss audit's summary line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditSummary {
    /// The tests the change edits or deletes.
    pub edited: Vec<String>,
    /// Mutants made on the source they ran before the change.
    pub tried: usize,
    pub killed_before: usize,
    /// Kills no test makes after the change.
    pub lost: usize,
}

/// Everything the summary lines say and the exit status follows: from a `Report`, or read back
/// from a JSON document (`gate::read`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gate {
    pub summary: Summary,
    pub audit: Option<AuditSummary>,
    /// Only the audit ran (`audit-tests`).
    pub audit_only: bool,
    /// Stopped by Ctrl-C or SIGTERM before its end.
    pub incomplete: Option<Interruption>,
}

/// What the summary says of an interrupted check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interruption {
    /// Planned mutants without a verdict.
    pub not_run: usize,
    /// Mutants the check set out to verdict.
    pub planned: usize,
    /// Of `not_run`, those the tests run so far let through.
    pub undecided: usize,
    /// The interrupt came during the kill-loss audit.
    pub audit_cut_off: bool,
}

impl Gate {
    /// True when the check fails: some added line has a mutant that no test caught, or whose
    /// run broke, or the change loses a kill its tests made before it.
    pub fn fails(&self) -> bool {
        self.summary.has_missed() || self.audit.as_ref().is_some_and(|audit| audit.lost > 0)
    }
}
