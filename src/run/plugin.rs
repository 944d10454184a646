//! A language plugged into the runner: its descriptor, the tests a change names, how it checks its mutants (what that came to: `Checked`) and its kill-loss audit; which audit a check runs.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::event::Event;
use super::language::Context;
use crate::interrupt::Interrupted;
use crate::lines;
use crate::model::audit::Audit;
use crate::model::outcome::MutantResult;
use crate::model::plan::{Language, Plan, PlannedMutant};
use crate::model::record::StepRecord;
use crate::model::report::Timings;
use crate::options::{AuditMode, Options, SettingsOf, Target};

/// A language plugged into the runner, listed once where the commands begin (`app`): what it
/// is, the tests a change names, how it checks its mutants, and its kill-loss audit.
pub struct Plugin {
    pub language: Language,
    /// Its own settings: its keys in the configuration, the flags it reads, their resolution.
    pub settings: SettingsOf,
    /// The tests the change itself names (those it adds or edits, those the configuration adds):
    /// the report's relevant tests.
    pub relevant_tests: fn(&Plan, &Options) -> Vec<String>,
    /// Its mutants from its baseline to the last verdict: `check_language` with its
    /// `LanguageCheck`.
    pub check: CheckMutants,
    /// The audit of the tests a change edits; none where the language has none yet.
    pub audit: Option<Auditor>,
    /// Its settings, as a check's run record shows them under its name.
    pub record: fn(&Options) -> serde_json::Value,
}

/// How a language checks its mutants, hearing its events out.
pub type CheckMutants =
    fn(&Context, Vec<PlannedMutant>, &mut Timings, &mut dyn FnMut(Event)) -> Result<Checked>;

/// How a language begins the audit of the tests a change edits: the state before the change.
pub type BeginAudit = fn(&AuditRequest, &mut Timings, &mut dyn FnMut(Event)) -> Result<AuditBegun>;

/// A language's kill-loss audit.
pub struct Auditor {
    /// Whether the change edits test code the audit reads.
    pub touches_tests: fn(&lines::AddedLines) -> bool,
    pub begin: BeginAudit,
}

/// What the audit's side before the change came to.
pub enum AuditBegun {
    /// The audit is over: no kill of the edited tests is left to test after the change.
    Done(Audit),
    /// Kills of the edited tests before the change, to be tested after it, with the change's
    /// own mutants, before the audit can end.
    Carrying(Box<dyn CarriedKills>),
}

/// The kills an audit carries after the change, and how it ends once they were tested there
/// against every test that runs their lines (their survivors against the whole suite too).
pub trait CarriedKills {
    /// Their plan, on the state after the change (the check's copy).
    fn plan(&self) -> &Plan;
    /// The mutants to test, numbered as `plan` numbers them.
    fn mutants(&self) -> Vec<PlannedMutant>;
    /// The audit, from `results` (one per mutant, numbered as `plan` numbers them) and the
    /// `steps` of the runs that reached them when they ran apart from the check's own mutants.
    fn finish(
        self: Box<Self>,
        request: &AuditRequest,
        results: Vec<MutantResult>,
        steps: Vec<StepRecord>,
        timings: &mut Timings,
        events: &mut dyn FnMut(Event),
    ) -> Result<Audit>;
}

/// What an audit is asked: the change, the settings, and the notes on the test code the change
/// edits that no language audits.
pub struct AuditRequest<'a> {
    pub options: &'a Options,
    pub change: Change<'a>,
    pub unaudited: Vec<String>,
    /// The check's flaky tests: the audit's runs find and heed them too.
    pub flaky: &'a super::flaky::Flaky,
}

/// Where the change is: the repository, the state after it (already written to `after`), and
/// the lines it adds and removes.
pub struct Change<'a> {
    pub repo_root: &'a Path,
    pub added: &'a lines::AddedLines,
    /// The copy of the state after the change that the check tested (its mutated files
    /// restored): read, and duplicated for the audit's own runs, so that the state is the one
    /// the check saw even when the working tree changes meanwhile.
    pub after: &'a Path,
}

/// The audit a check runs: with `audit-tests`, the first language's that has one; by default,
/// that of the first language whose test code the change edits where its audit reads it
/// (never for a line list, which says nothing of tests); none with `--no-audit`.
pub fn auditor<'p>(
    languages: &'p [Plugin],
    options: &Options,
    added: &lines::AddedLines,
) -> Option<&'p Auditor> {
    let mut auditors = languages.iter().filter_map(|plugin| plugin.audit.as_ref());
    match options.audit {
        AuditMode::Only => auditors.next(),
        AuditMode::WithTestEdits if !matches!(options.target, Target::Lines(_)) => {
            auditors.find(|auditor| (auditor.touches_tests)(added))
        }
        AuditMode::WithTestEdits | AuditMode::Off => None,
    }
}

/// A note for each language with no audit whose test code the change edits.
pub fn unaudited(languages: &[Plugin], added: &lines::AddedLines) -> Vec<String> {
    let audited: Vec<&str> = languages
        .iter()
        .filter(|plugin| plugin.audit.is_some())
        .map(|plugin| plugin.language.display)
        .collect();
    let edits_tests = |language: Language| {
        added
            .files
            .keys()
            .chain(added.removed.keys())
            .any(|path| Language::of(path, &[language]).is_some() && (language.is_test_file)(path))
    };
    languages
        .iter()
        .filter(|plugin| plugin.audit.is_none() && edits_tests(plugin.language))
        .map(|plugin| {
            format!(
                "the change edits {} test code: only {} tests are audited for lost kills",
                plugin.language.display,
                audited.join(" and ")
            )
        })
        .collect()
}

/// What one language's check came to.
pub struct Checked {
    pub results: Vec<MutantResult>,
    /// How long its unmutated tests took.
    pub baseline: Duration,
    pub steps: Vec<StepRecord>,
    /// Stopped by Ctrl-C or SIGTERM after its baseline: `results` holds only final verdicts,
    /// the mutants missing from it did not run.
    pub interrupted: bool,
    /// Of those missing, the mutants an earlier round had let through whose later round did not
    /// finish: dropped, since a survivor is only final once every round has run.
    pub undecided: usize,
    /// Why a test-impact map could not rule out the tests it kept (`LanguageCheck::floor`).
    pub floor: Vec<crate::model::report::Floor>,
    /// What the language says of how the check went, for the report's notes.
    pub notes: Vec<String>,
}

impl Checked {
    /// Every verdict, or `Err(Interrupted)` for a check that was stopped.
    pub fn complete(self) -> Result<Checked> {
        if self.interrupted {
            return Err(Interrupted.into());
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::PathBuf;

    use super::*;
    use crate::model::plan::State;

    fn added(paths: &[&str]) -> lines::AddedLines {
        lines::AddedLines {
            state: State::WorkTree,
            files: paths.iter().map(|path| (PathBuf::from(path), BTreeSet::from([1]))).collect(),
            deleted: Vec::new(),
            binary: Vec::new(),
            removed: BTreeMap::new(),
            removed_from: BTreeMap::new(),
            before: None,
        }
    }

    #[test]
    fn a_change_to_the_test_code_of_a_language_without_an_audit_is_named_in_a_note() {
        let languages = [crate::python::plugin::PLUGIN, crate::cargo::plugin::PLUGIN];
        assert_eq!(
            unaudited(&languages, &added(&["src/lib.rs", "tests/parse.rs"])),
            ["the change edits Rust test code: only Python tests are audited for lost kills"]
        );
        assert!(unaudited(&languages, &added(&["src/lib.rs", "tests/test_a.py"])).is_empty());
        assert!(unaudited(&languages[..1], &added(&["tests/parse.rs"])).is_empty(), "Rust not checked");
    }
}
