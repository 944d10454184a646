//! The kill-loss audit: the source lines the tests a change edits or deletes ran before it, mutated; each mutant those tests killed is carried after the change, for the check to test with its own mutants against every test that runs its line, and each kill lost there confirmed before it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Result;
use git2::Oid;

use super::check::PythonCheck;
use super::first_round::{LinesRun, TestsRun};
use super::spec::{self, LANGUAGE};
use super::touched::TouchedFile;
use super::{audit_budget, interpreter, touched};
use crate::choose::Choice;
use crate::lines::{self, AddedLines};
use crate::model::audit::{Audit, LostKill};
use crate::model::outcome::MutantResult;
use crate::model::plan::{FilePlan, Language, Plan, PlannedMutant, State};
use crate::model::record::StepRecord;
use crate::model::report::Timings;
use crate::options::Options;
use crate::run::event::Event;
use crate::run::language::Context;
use crate::run::plugin::{AuditBegun, AuditRequest, CarriedKills};
use crate::run::verdicts::Verdicts;
use crate::run::{check_language, split_ignored};
use crate::scratch::Scratch;
use crate::worktree;

/// Whether `added` touches test code the audit reads: a Python test file it edits or deletes.
pub fn touches_tests(added: &AddedLines) -> bool {
    !touched_files(added).is_empty()
}

/// The edited tests' unmutated run before the change, or why the audit cannot use it.
enum EditedRun {
    Passed { edited: Vec<String>, side: Box<PythonCheck>, run: LinesRun, widened: Option<String> },
    Unusable { edited: Vec<String>, why: String },
}

/// Runs the edited tests before the change under the probe. The selectors are read from the
/// syntax tree, which does not know what pytest collects: a test of a mixin class runs under
/// the classes that inherit it, and a helper class holds no test at all. When pytest collects
/// some of them by no such name, each one's whole file stands for it.
fn run_edited_tests(ctx: &Context, edited: Vec<String>) -> Result<EditedRun> {
    let side = PythonCheck::confined(ctx, edited.clone())?;
    let (edited, side, widened) = match side.lines_run(ctx)? {
        TestsRun::Passed(run) => {
            return Ok(EditedRun::Passed { edited, side: Box::new(side), run, widened: None });
        }
        TestsRun::Failed => return Ok(failed(edited)),
        TestsRun::NotCollected => {
            let mut files: Vec<String> =
                edited.iter().map(|test| super::select::file_of(test).to_string()).collect();
            files.sort();
            files.dedup();
            if files == edited {
                return Ok(not_collected(edited));
            }
            let widened = format!(
                "pytest collects no test by some of the names the edited code has ({}): a mixin's tests run under the classes that inherit it, a helper class holds none; the audit took {} whole",
                edited.join(", "),
                crate::words::describe_tests(&files)
            );
            (files.clone(), PythonCheck::confined(ctx, files)?, widened)
        }
    };
    match side.lines_run(ctx)? {
        TestsRun::Passed(run) => {
            Ok(EditedRun::Passed { edited, side: Box::new(side), run, widened: Some(widened) })
        }
        TestsRun::Failed => Ok(failed(edited)),
        TestsRun::NotCollected => Ok(not_collected(edited)),
    }
}

fn not_collected(edited: Vec<String>) -> EditedRun {
    let why = format!(
        "pytest does not collect the test files the change edits ({}), so no kill of theirs can be lost",
        crate::words::describe_tests(&edited)
    );
    EditedRun::Unusable { edited, why }
}

fn failed(edited: Vec<String>) -> EditedRun {
    let why = format!(
        "the tests the change edits ({}) fail before it, so they killed nothing there: no kill to lose",
        crate::words::describe_tests(&edited)
    );
    EditedRun::Unusable { edited, why }
}

/// The Python test files (conftest.py files left out) the change edits or deletes, each with
/// its path before and after and the lines removed and added.
fn touched_files(added: &AddedLines) -> Vec<TouchedFile> {
    let is_test = |path: &Path| {
        Language::of(path, &[LANGUAGE]).is_some()
            && spec::is_test_file(path)
            && path.file_name().is_some_and(|name| name != "conftest.py")
    };
    let mut files: BTreeMap<PathBuf, TouchedFile> = BTreeMap::new();
    fn entry<'f>(files: &'f mut BTreeMap<PathBuf, TouchedFile>, path: &Path) -> &'f mut TouchedFile {
        files.entry(path.to_path_buf()).or_insert_with(|| TouchedFile {
            old: None,
            new: None,
            removed: BTreeSet::new(),
            added: BTreeSet::new(),
        })
    }
    for (path, removed) in added.removed.iter().filter(|(path, _)| is_test(path)) {
        let file = entry(&mut files, path);
        file.old = Some(path.clone());
        file.removed = removed.keys().copied().collect();
    }
    for (path, lines) in added.files.iter().filter(|(path, _)| is_test(path)) {
        if added.removed.contains_key(path) {
            let file = entry(&mut files, path);
            file.new = Some(path.clone());
            file.added = lines.clone();
        } else {
            // Lines added to a file with none removed: it existed before when it was not new.
            let file = entry(&mut files, path);
            file.old = Some(path.clone());
            file.new = Some(path.clone());
            file.added = lines.clone();
        }
    }
    files.into_values().collect()
}

/// A note for each kind of test code the audit does not read: a conftest.py, and the test code
/// of languages no audit reads (`unaudited`).
fn unread_test_code(added: &AddedLines, unaudited: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    let paths = || added.files.keys().chain(added.removed.keys());
    if paths().any(|path| path.file_name().is_some_and(|name| name == "conftest.py")) {
        notes.push("the change edits a conftest.py: its fixtures reach tests the audit cannot single out, so they are not audited".to_string());
    }
    notes.extend(unaudited.iter().cloned());
    notes
}

/// Begins the audit of `change`: the edited tests before it, the source they ran there
/// mutated, and the kills they make, carried after the change for the check to test with its
/// own mutants. A change that edits no test before it reports no edited test.
pub fn begin(
    request: &AuditRequest,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<AuditBegun> {
    let AuditRequest { options, change, unaudited, flaky } = request;
    let added = change.added;
    let mut notes = unread_test_code(added, unaudited);
    let files = touched_files(added);
    let done = |notes, edited| Ok(AuditBegun::Done(Audit { notes, edited, ..Audit::default() }));
    if files.is_empty() {
        return done(notes, Vec::new());
    }
    let Some(commit) = added.before else {
        notes.push(
            "the change has no commit before it, so no test of it existed before: nothing to audit"
                .to_string(),
        );
        return done(notes, Vec::new());
    };
    if options.test_cmd.is_some() {
        notes.push("a test command (--test-cmd, or `test-cmd` in the configuration) runs the tests: the audit needs pytest to run the edited tests alone, so it did not run".to_string());
        return done(notes, Vec::new());
    }
    let repo = lines::open_repository(change.repo_root)?;

    // Before the change: the edited tests, the source they ran, and what they kill there.
    let scratch = Scratch::create()?;
    let base = scratch.path().join("copy-0");
    worktree::materialize(&repo, State::Commit(commit), &base)?;
    let python = interpreter::find_interpreter(
        super::settings::PythonSettings::of(options).interpreter.as_deref(),
        change.repo_root,
    )?
    .path;
    let edited = touched::edited_tests(&python, &base, change.after, &files)?;
    if edited.is_empty() {
        return done(notes, Vec::new());
    }
    let logs = scratch.subdir("logs")?;
    let cache = crate::cache::Cache::open(change.repo_root, options.cache);
    let old = OldState { scratch, base, logs, cache, commit, flaky: (*flaky).clone() };
    // Verdicts of the same mutants of the same state against the same edited tests, from an
    // earlier audit (read before any test runs in the copy).
    let memory = Verdicts::open(&old.cache, &old.base).heeding(&old.flaky);
    // The edited tests' first run keeps no verdict.
    let unkept = Verdicts::default();
    let empty = Plan::default();
    let ctx = old.context(options, change.repo_root, &empty, &unkept);
    let (edited, side, ran) = match run_edited_tests(&ctx, edited)? {
        EditedRun::Passed { edited, side, run, widened } => {
            notes.extend(widened);
            (edited, *side, run)
        }
        EditedRun::Unusable { edited, why } => {
            notes.push(why);
            return done(notes, edited);
        }
    };
    let verdicts =
        memory.for_purpose(format!("kill-loss audit before the change, of the edited tests {edited:?}"));
    let audit = Audit { edited, notes, ..Audit::default() };
    audit_kills(request, Before { old, side, verdicts }, ran, audit, timings, events)
}

/// The state before the change, written to a copy of its own.
struct OldState {
    scratch: Scratch,
    base: PathBuf,
    logs: PathBuf,
    cache: crate::cache::Cache,
    commit: Oid,
    flaky: crate::run::flaky::Flaky,
}

impl OldState {
    fn context<'a>(
        &'a self,
        options: &'a Options,
        repo_root: &'a Path,
        plan: &'a Plan,
        verdicts: &'a Verdicts,
    ) -> Context<'a> {
        Context {
            options,
            plan,
            repo_root,
            base: &self.base,
            state: State::Commit(self.commit),
            scratch: &self.scratch,
            logs: &self.logs,
            cache: &self.cache,
            verdicts,
            flaky: &self.flaky,
        }
    }
}

/// The state before the change, the audit's check of the edited tests there, and the verdicts
/// it remembers.
struct Before {
    old: OldState,
    side: PythonCheck,
    verdicts: Verdicts,
}

/// The kills of the edited tests before the change (on the source they ran), carried after it;
/// none carried ends the audit.
fn audit_kills(
    request: &AuditRequest,
    before: Before,
    ran: LinesRun,
    mut audit: Audit,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<AuditBegun> {
    let AuditRequest { options, change, .. } = request;
    let LinesRun { lines: ran, step: first_step } = ran;
    events(Event::Note(format!(
        "kill-loss audit: the change edits or deletes {}; mutating the source they ran before it",
        crate::words::describe_tests(&audit.edited)
    )));
    let ran_lines = AddedLines {
        state: State::Commit(before.old.commit),
        files: ran,
        deleted: Vec::new(),
        binary: Vec::new(),
        removed: BTreeMap::new(),
        removed_from: BTreeMap::new(),
        before: None,
    };
    let every_line = Choice { include_reformatted: true, ..options.choice.clone() };
    let mut old_plan = Plan::make(&ran_lines, &before.old.base, &every_line, &[LANGUAGE])?;
    let empty = Plan::default();
    if let Some(budget) = options.audit_budget {
        let ctx = before.old.context(options, change.repo_root, &empty, &before.verdicts);
        audit_budget::keep_within(budget, &before.side, &ctx, &mut old_plan, &mut audit);
    }
    if let Some(shard) = options.shard {
        crate::shard::restrict(&mut old_plan, shard);
    }
    let (ignored, candidates) = split_ignored(old_plan.mutants());
    audit.plan = Some((old_plan.mutant_count(), crate::shard::digest(&old_plan, &audit.edited)));
    audit.tried = candidates.len() + ignored.len();
    audit.steps = vec![first_step];
    if candidates.is_empty() {
        return Ok(AuditBegun::Done(audit));
    }
    let old_ctx = before.old.context(options, change.repo_root, &old_plan, &before.verdicts);
    let before_results = check_language(&before.side, &old_ctx, candidates, timings, events)?.complete()?;
    audit.steps.extend(before_results.steps);
    let killed: Vec<MutantResult> =
        before_results.results.into_iter().filter(|result| result.outcome.status.is_caught()).collect();
    audit.killed_before = killed.len();
    if killed.is_empty() {
        return Ok(AuditBegun::Done(audit));
    }

    // After the change: the same mutants on the same code, against every test that runs it.
    let carried = carry(&old_plan, killed, change.added, change.after, &options.choice)?;
    audit.dropped = carried.dropped;
    if carried.mutants.is_empty() {
        return Ok(AuditBegun::Done(audit));
    }
    events(Event::Note(format!(
        "kill-loss audit: the edited tests killed {} of {} {}; testing those after the change, with the change's own mutants",
        audit.killed_before,
        audit.tried,
        if audit.tried == 1 { "mutant" } else { "mutants" }
    )));
    let Before { old, side, .. } = before;
    Ok(AuditBegun::Carrying(Box::new(Pending { old, side, old_plan, carried, audit })))
}

/// An audit waiting for the kills it carried to be tested after the change.
struct Pending {
    old: OldState,
    side: PythonCheck,
    old_plan: Plan,
    carried: Carried,
    audit: Audit,
}

impl CarriedKills for Pending {
    fn plan(&self) -> &Plan {
        &self.carried.plan
    }

    fn mutants(&self) -> Vec<PlannedMutant> {
        self.carried.mutants.clone()
    }

    /// A carried kill that no test makes after the change (its survivors faced the whole
    /// suite, as it runs: a test that does not run the line may still fail on what it made)
    /// is confirmed before the change, then reported lost.
    fn finish(
        self: Box<Self>,
        request: &AuditRequest,
        results: Vec<MutantResult>,
        steps: Vec<StepRecord>,
        timings: &mut Timings,
        events: &mut dyn FnMut(Event),
    ) -> Result<Audit> {
        let Pending { old, side, old_plan, mut carried, mut audit } = *self;
        audit.steps.extend(steps);
        let seemingly_lost: Vec<SeeminglyLost> = results
            .into_iter()
            .filter(|result| result.outcome.status.is_missed())
            .filter_map(|result| Some((carried.origins.remove(&result.planned.id)?, result)))
            .collect();
        if !seemingly_lost.is_empty() {
            let before = Lost { request, old: &old, side: &side, plan: &old_plan };
            confirm_lost(&before, seemingly_lost, &mut audit, timings, events)?;
        }
        Ok(audit)
    }
}

/// A kill no test makes after the change: its result before it, and after.
type SeeminglyLost = (MutantResult, MutantResult);

/// What confirming a lost kill needs: the state before the change and the audit's plan there.
struct Lost<'a> {
    request: &'a AuditRequest<'a>,
    old: &'a OldState,
    side: &'a PythonCheck,
    plan: &'a Plan,
}

/// A kill is reported lost only if it happens again before the change: a test that depends on
/// timing or on other tests can fail once by chance, and that kill was never the tests'. Adds
/// those that do to `audit.lost`, and counts the others.
fn confirm_lost(
    before: &Lost,
    seemingly_lost: Vec<SeeminglyLost>,
    audit: &mut Audit,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<()> {
    events(Event::Note(format!(
        "kill-loss audit: {} of those kills no test makes after the change; running them again before it to confirm them",
        seemingly_lost.len()
    )));
    let repo = lines::open_repository(before.request.change.repo_root)?;
    let again = Scratch::create()?;
    let again_base = again.path().join("copy-0");
    worktree::materialize(&repo, State::Commit(before.old.commit), &again_base)?;
    let again_logs = again.subdir("logs")?;
    // Run again, never recalled: a kill that happens once by chance must not confirm itself.
    let fresh = Verdicts::default();
    let old_ctx =
        before.old.context(before.request.options, before.request.change.repo_root, before.plan, &fresh);
    let again_ctx = Context { base: &again_base, scratch: &again, logs: &again_logs, ..old_ctx };
    let rerun: Vec<PlannedMutant> = seemingly_lost.iter().map(|(old, _)| old.planned.clone()).collect();
    let confirmed = check_language(before.side, &again_ctx, rerun, timings, events)?.complete()?;
    audit.steps.extend(confirmed.steps);
    let held: BTreeSet<usize> = confirmed
        .results
        .iter()
        .filter(|result| result.outcome.status.is_caught())
        .map(|result| result.planned.id)
        .collect();
    audit.unconfirmed = seemingly_lost.len() - held.len();
    for (old, result) in seemingly_lost {
        if !held.contains(&old.planned.id) {
            continue;
        }
        let old_file = &before.plan.files[old.planned.file];
        let killed_by = if old.outcome.killed_by.is_empty() {
            old.outcome.covered_by.clone()
        } else {
            old.outcome.killed_by.clone()
        };
        audit.lost.push(LostKill {
            path: old_file.path.clone(),
            source: old_file.source.clone(),
            mutant: old.planned.mutant.clone(),
            killed_by,
            after: result.outcome.status,
            ran_after: result.outcome.covered_by,
        });
    }
    audit.lost.sort_by(|a, b| (&a.path, a.mutant.start).cmp(&(&b.path, b.mutant.start)));
    Ok(())
}

/// The killed mutants made again after the change, on the lines it left as they were.
struct Carried {
    plan: Plan,
    mutants: Vec<PlannedMutant>,
    /// The old result of each carried mutant, by its new id.
    origins: BTreeMap<usize, MutantResult>,
    /// Kills on lines the change edits, moves or deletes.
    dropped: usize,
}

fn carry(
    old_plan: &Plan,
    killed: Vec<MutantResult>,
    added: &AddedLines,
    after: &Path,
    choice: &Choice,
) -> Result<Carried> {
    let nothing = BTreeSet::new();
    let mut wanted: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
    let mut placed: Vec<(MutantResult, PathBuf, usize)> = Vec::new();
    let mut dropped = 0;
    for result in killed {
        let file = &old_plan.files[result.planned.file];
        let removed: BTreeSet<usize> =
            added.removed.get(&file.path).map(|lines| lines.keys().copied().collect()).unwrap_or_default();
        let gained = added.files.get(&file.path).unwrap_or(&nothing);
        match carry_line(result.planned.mutant.line, &removed, gained) {
            Some(line) if after.join(&file.path).is_file() => {
                wanted.entry(file.path.clone()).or_default().insert(line);
                let path = file.path.clone();
                placed.push((result, path, line));
            }
            _ => dropped += 1,
        }
    }
    let wanted_lines = AddedLines {
        state: added.state,
        files: wanted,
        deleted: Vec::new(),
        binary: Vec::new(),
        removed: BTreeMap::new(),
        removed_from: BTreeMap::new(),
        before: None,
    };
    let every_line = Choice { include_reformatted: true, ..choice.clone() };
    let mut plan = Plan::make(&wanted_lines, after, &every_line, &[LANGUAGE])?;
    plan.changed_tests = added
        .files
        .keys()
        .filter(|path| Language::of(path, &[LANGUAGE]).is_some() && spec::is_test_file(path))
        .cloned()
        .collect();
    let made = plan.mutants();
    let mut mutants = Vec::new();
    let mut origins = BTreeMap::new();
    for (old, path, line) in placed {
        let same = made.iter().find(|new| {
            let file: &FilePlan = &plan.files[new.file];
            let (a, b) = (&new.mutant, &old.planned.mutant);
            file.path == path
                && a.line == line
                && a.start.column == b.start.column
                && a.end.line - a.start.line == b.end.line - b.start.line
                && a.original == b.original
                && a.replacement == b.replacement
        });
        match same {
            Some(new) if !origins.contains_key(&new.id) => {
                origins.insert(new.id, old);
                mutants.push(new.clone());
            }
            _ => dropped += 1,
        }
    }
    // The kills came in the order they landed: put them in plan order, the same every run.
    mutants.sort_by_key(|planned| planned.id);
    Ok(Carried { plan, mutants, origins, dropped })
}

/// Where line `old` of a file is after a change that removes `removed` (numbered before) and
/// adds `added` (numbered after); none when the change removes it.
pub fn carry_line(old: usize, removed: &BTreeSet<usize>, added: &BTreeSet<usize>) -> Option<usize> {
    if removed.contains(&old) {
        return None;
    }
    let (mut before, mut after) = (1, 1);
    loop {
        if removed.contains(&before) {
            before += 1;
        } else if added.contains(&after) {
            after += 1;
        } else if before == old {
            return Some(after);
        } else {
            before += 1;
            after += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(lines: &[usize]) -> BTreeSet<usize> {
        lines.iter().copied().collect()
    }

    #[test]
    fn a_line_keeps_its_place_shifted_by_the_lines_added_and_removed_above_it() {
        // Before: a b c d e. The change removes b and adds X Y after c: a c X Y d e.
        let removed = set(&[2]);
        let added = set(&[3, 4]);
        assert_eq!(carry_line(1, &removed, &added), Some(1));
        assert_eq!(carry_line(2, &removed, &added), None, "a removed line is gone");
        assert_eq!(carry_line(3, &removed, &added), Some(2));
        assert_eq!(carry_line(4, &removed, &added), Some(5));
        assert_eq!(carry_line(5, &removed, &added), Some(6));
        assert_eq!(carry_line(7, &set(&[]), &set(&[])), Some(7), "an untouched file");
    }

    #[test]
    fn a_replaced_line_is_gone_and_the_next_one_follows_the_replacement() {
        // Before: a b c. The change replaces b by X Y Z: a X Y Z c.
        let (removed, added) = (set(&[2]), set(&[2, 3, 4]));
        assert_eq!(carry_line(2, &removed, &added), None);
        assert_eq!(carry_line(3, &removed, &added), Some(5));
    }
}
