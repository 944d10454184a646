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

use crate::model::outcome::Status;
use crate::model::report::Report;

/// The counts behind the summary line of the mutation delta and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Every verdict, of any status.
    pub mutants: usize,
    /// With `--shard`: the shard, and how many mutants the whole plan has.
    pub shard: Option<(crate::model::plan::Shard, usize)>,
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
