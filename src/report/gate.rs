//! The counts behind the summary lines and the exit status (`Summary`, `Gate`), counted once from the report document (`of`): a check's, a shard's or a merge's.

use std::collections::BTreeSet;

use super::document::{Document, MutantEntry};
use crate::exit::Exit;
use crate::model::outcome::Status;

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

/// Everything the summary lines say and the exit status follows, counted from a document
/// (`gate::of`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gate {
    pub summary: Summary,
    pub audit: Option<AuditSummary>,
    /// Only the audit ran (`audit-tests`).
    pub audit_only: bool,
    /// Stopped by Ctrl-C or SIGTERM before its end.
    pub incomplete: Option<Interruption>,
    /// The languages the check looks for, as a person reads their names: said when the change
    /// adds no executable line of any (none read from a document).
    pub languages: Vec<&'static str>,
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

/// The summary counts of a document: a check's (`check` adds whether only the audit ran, which
/// the document does not say), a shard's, or a merge of shards. The one place they are counted.
pub fn of(document: &Document) -> Gate {
    let section = &document.mutdelta;
    let summary = Summary {
        shard: section.shard.zip(section.plan.as_ref()).map(|(shard, plan)| {
            (crate::model::plan::Shard { index: shard.index, count: shard.count }, plan.mutants)
        }),
        ..count(document.mutants(), section.added_lines.values().map(Vec::len).sum())
    };
    let audit = section.audit.as_ref().map(|audit| AuditSummary {
        edited: audit.edited_tests.clone(),
        tried: audit.mutants,
        killed_before: audit.killed_before,
        lost: audit.lost_kills.len(),
    });
    let incomplete = section.incomplete.as_ref().map(|incomplete| Interruption {
        not_run: incomplete.not_run,
        planned: incomplete.planned,
        undecided: incomplete.undecided,
        audit_cut_off: incomplete.audit_cut_off,
    });
    Gate { summary, audit, audit_only: false, incomplete, languages: Vec::new() }
}

/// The verdict counts of `mutants` (each with its file's path), over `lines` added executable
/// lines.
fn count<'a>(mutants: impl Iterator<Item = (&'a str, &'a MutantEntry)>, lines: usize) -> Summary {
    let mut summary = Summary { lines, ..Summary::default() };
    let mut survived = BTreeSet::new();
    let mut not_run = BTreeSet::new();
    for (path, mutant) in mutants {
        let (status, line) = (mutant.status, (path, mutant.line()));
        summary.mutants += 1;
        summary.caught += usize::from(status.is_caught());
        summary.scored += usize::from(status.is_caught() || status.is_missed());
        match status {
            Status::Survived => {
                survived.insert(line);
            }
            Status::NoCoverage => {
                not_run.insert(line);
            }
            Status::CompileError => summary.compile_errors += 1,
            Status::RuntimeError => summary.runtime_errors += 1,
            Status::Ignored => summary.ignored += 1,
            Status::Killed | Status::Timeout => {}
        }
    }
    summary.lines_with_survivors = survived.len();
    summary.lines_not_run = not_run.difference(&survived).count();
    summary
}

/// The exit status a check with these counts ends with.
pub fn exit(gate: &Gate) -> Exit {
    if gate.fails() {
        Exit::Survivors
    } else {
        Exit::Clean
    }
}
