//! What the kill-loss audit found: the kills a change's edits to its tests lose, and what it passed over.

use std::path::PathBuf;

use mutators::Mutant;

use super::outcome::Status;
use super::record::StepRecord;

/// What the audit found.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    /// The tests the change edits or deletes, as they were before it (pytest selectors).
    pub edited: Vec<String>,
    /// Mutants made on the source lines those tests ran before the change (with `--shard`,
    /// those of its share).
    pub tried: usize,
    /// The whole audit plan, once made: its mutant count and digest (`shard::digest`), the
    /// same in every shard when they audit the same mutants.
    pub plan: Option<(usize, String)>,
    /// How many of them the edited tests killed before the change.
    pub killed_before: usize,
    /// The kills no test makes after the change.
    pub lost: Vec<LostKill>,
    /// What was passed over, and why (the counts below aside: `all_notes` says them too).
    pub notes: Vec<String>,
    /// Kills on lines the change edits, moves or deletes: not tested again.
    pub dropped: usize,
    /// Kills the change seemed to lose that did not happen again before it: not reported.
    pub unconfirmed: usize,
    /// The runs before any mutant, before and after the change.
    pub steps: Vec<StepRecord>,
    /// Mutants of the source the edited tests ran that the budget left untried.
    pub unaudited: usize,
    /// How long the audit took, start to end.
    pub took: std::time::Duration,
}

impl Audit {
    /// Every note: what was passed over, then the kills set aside.
    pub fn all_notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        notes.extend(count_notes(self.dropped, self.killed_before, self.unconfirmed));
        notes
    }
}

/// The notes on kills the audit set aside: `dropped` of the `killed_before` kills not carried
/// over the change, `unconfirmed` seeming losses that did not happen again. (Also what a merge of
/// shards says for their sums.)
pub fn count_notes(dropped: usize, killed_before: usize, unconfirmed: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if dropped > 0 {
        notes.push(format!(
            "{dropped} of the {killed_before} kills are on lines the change edits, moves or deletes: they are not tested again"
        ));
    }
    if unconfirmed > 0 {
        notes.push(format!(
            "{unconfirmed} of the kills the change seemed to lose did not happen again before it when run again (a test that depends on timing or on other tests?): not reported as lost"
        ));
    }
    notes
}

/// A mutant the edited tests killed before the change that no test kills after it.
#[derive(Debug, Clone)]
pub struct LostKill {
    /// The mutated file (relative to the repository root) and its text before the change.
    pub path: PathBuf,
    pub source: String,
    /// The mutant, made on the source before the change.
    pub mutant: Mutant,
    /// The tests that killed it before the change.
    pub killed_by: Vec<String>,
    /// Its verdict after the change: Survived or NoCoverage.
    pub after: Status,
    /// The tests that ran it after the change.
    pub ran_after: Vec<String>,
}
