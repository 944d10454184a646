//! Runs a check: plan the mutants, then for each language prove its baseline and test every mutant in parallel copies; emits events, never prints.

pub mod event;
pub mod flaky;
pub mod job;
pub mod language;
pub mod outcome;
pub mod plugin;
pub mod pool;
pub mod reach;
pub mod require;
pub mod timeouts;
pub mod verdicts;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use self::event::{Event, Phase};
use self::language::{Context, LanguageCheck, Proven, Started, Widened};
use self::plugin::{auditor, unaudited, AuditBegun, AuditRequest, CarriedKills, Change, Checked, Plugin};
use crate::choose::Choice;
use crate::interrupt::{is_interruption, Interrupted, INTERRUPTED};
use crate::lines::Target;
use crate::model::outcome::{MutantResult, Outcome, Status};
use crate::model::plan::{Language, Plan, PlannedMutant, Shard};
use crate::model::record::{RunRecord, StepRecord};
use crate::model::report::{Incomplete, Origin, Report, Timings};
use crate::options::{AuditMode, Options};
use crate::scratch::Scratch;
use crate::{lines, memory, worktree};

/// The change read and its state written to the first copy: what `list` and `check` share.
struct Prepared {
    repo_root: PathBuf,
    scratch: Scratch,
    base: PathBuf,
    added: lines::AddedLines,
    /// The ignored files the copy took from the checkout (`worktree::carry_generated`).
    generated: Vec<PathBuf>,
}

fn prepare(directory: &Path, target: &Target) -> Result<Prepared> {
    let repo = lines::open_repository(directory)?;
    let repo_root = lines::workdir(&repo).to_path_buf();
    let added = lines::find(&repo, target)?;
    let scratch = Scratch::create()?;
    let base = scratch.path().join("copy-0");
    let generated = worktree::materialize(&repo, added.state, &base)?;
    Ok(Prepared { repo_root, scratch, base, added, generated })
}

/// Runs `run` in a copy of the state `options.target` names, with nothing to mutate: for the
/// commands that run a suite unmutated (`map`).
pub fn in_state<T>(options: &Options, run: impl FnOnce(&Context) -> Result<T>) -> Result<T> {
    memory::set_limit(options.memory_limit);
    let Prepared { repo_root, scratch, base, added, .. } = prepare(&options.directory, &options.target)?;
    let logs = scratch.subdir("logs")?;
    let cache = crate::cache::Cache::open(&repo_root, options.cache);
    let (plan, verdicts) = (Plan::default(), verdicts::Verdicts::default());
    let flaky = flaky::Flaky::open(&cache, &options.flaky);
    let ctx = Context {
        options,
        plan: &plan,
        repo_root: &repo_root,
        base: &base,
        state: added.state,
        scratch: &scratch,
        logs: &logs,
        cache: &cache,
        verdicts: &verdicts,
        flaky: &flaky,
    };
    run(&ctx)
}

/// The planned mutants of `target` in the repository at `directory` (those of `shard` when
/// given), without running anything.
pub fn plan(
    directory: &Path,
    target: &Target,
    choice: &Choice,
    shard: Option<Shard>,
    languages: &[Language],
) -> Result<Plan> {
    plan_of(&prepare(directory, target)?, target, choice, shard, languages)
}

/// The plan of a prepared change, made one way for `list` and `check`: the same executable
/// lines, mutants and notes.
fn plan_of(
    prepared: &Prepared,
    target: &Target,
    choice: &Choice,
    shard: Option<Shard>,
    languages: &[Language],
) -> Result<Plan> {
    let mut plan = make_plan(prepared, choice, languages)?;
    plan.notes.extend(nothing_staged(target, &prepared.added));
    plan.notes.extend(carried_note(&prepared.generated));
    plan.notes.extend(crate::scratch::location().ok().and_then(|location| location.note.clone()));
    if let Some(shard) = shard {
        crate::shard::restrict(&mut plan, shard);
    }
    Ok(plan)
}

/// `Plan::make`, on a thread of its own that an interrupt does not wait for: the mutants of a
/// giant generated file take seconds to make, and Ctrl-C or SIGTERM must stop the check within
/// one. The thread, left to finish, only reads the copy and builds the plan.
fn make_plan(prepared: &Prepared, choice: &Choice, languages: &[Language]) -> Result<Plan> {
    let (added, base, choice, languages) =
        (prepared.added.clone(), prepared.base.clone(), choice.clone(), languages.to_vec());
    event::set_stage(Some("making the mutants"));
    let making = std::thread::spawn(move || Plan::make(&added, &base, &choice, &languages));
    while !making.is_finished() {
        if INTERRUPTED.load(Ordering::SeqCst) {
            event::set_stage(None);
            return Err(Interrupted.into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    event::set_stage(None);
    making.join().map_err(|_| anyhow::anyhow!("making the mutants panicked"))?
}

/// A note naming the files git ignores that the copies took from the checkout.
fn carried_note(generated: &[PathBuf]) -> Option<String> {
    if generated.is_empty() {
        return None;
    }
    let paths: Vec<String> = generated.iter().map(|path| path.display().to_string()).collect();
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    Some(format!(
        "{} git ignores copied from the checkout beside the state under test (build products or data the tests may need): {}",
        crate::words::count_of(generated.len(), "file", "files"),
        crate::words::some_tests(&paths, 1)
    ))
}

/// Whether the staged change (the default target) is empty.
fn is_nothing_staged(target: &Target, added: &lines::AddedLines) -> bool {
    *target == Target::Staged
        && added.files.is_empty()
        && added.removed.is_empty()
        && added.deleted.is_empty()
        && added.binary.is_empty()
}

/// A note when the staged change is empty: the user most likely meant a commit or a branch;
/// under the pre-commit framework, a run over files (`--all-files`) rather than a change.
fn nothing_staged(target: &Target, added: &lines::AddedLines) -> Option<String> {
    if !is_nothing_staged(target, added) {
        return None;
    }
    Some(if crate::options::under_pre_commit() {
        "nothing is staged and pre-commit named no range, so nothing was checked: `pre-commit run --all-files` names files, and mutdelta checks a change; run `pre-commit run --from-ref origin/main --to-ref HEAD` to check a branch".to_string()
    } else {
        "nothing is staged: stage a change to check it, or try --commit HEAD or --base main".to_string()
    })
}

/// Whether this runs under CI: `CI` set to anything but empty, `0` or `false`, as GitHub
/// Actions, GitLab CI, CircleCI, Travis and pre-commit.ci set it.
fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| !matches!(value.to_ascii_lowercase().as_str(), "" | "0" | "false"))
}

/// Under CI a staged check with nothing staged is a gate that checks nothing: refused unless
/// `--allow-empty` says that is meant.
fn refuse_nothing_staged_under_ci(options: &Options, added: &lines::AddedLines) -> Result<()> {
    if options.allow_empty || !under_ci() || !is_nothing_staged(&options.target, added) {
        return Ok(());
    }
    let how = if crate::options::under_pre_commit() {
        "run pre-commit with --from-ref and --to-ref (the range of the pull request or push)"
    } else {
        "check the pushed change with --commit HEAD or --base origin/main"
    };
    anyhow::bail!("nothing is staged, so under CI this check would test nothing: {how}, or pass --allow-empty if checking nothing is meant")
}

/// Mutates the change in `options` and tests every mutant; `events` hears of the progress.
pub fn check(options: &Options, languages: &[Plugin], events: &mut dyn FnMut(Event)) -> Result<Report> {
    let start = Instant::now();
    let mut clock = start;
    let mut lap = move || std::mem::replace(&mut clock, Instant::now()).elapsed();
    let mut timings = Timings::default();
    memory::set_limit(options.memory_limit);
    let prepared = prepare(&options.directory, &options.target)?;
    refuse_nothing_staged_under_ci(options, &prepared.added)?;
    timings.diff = lap();
    let descriptors: Vec<Language> = languages.iter().map(|plugin| plugin.language).collect();
    let plan = plan_of(&prepared, &options.target, &options.choice, options.shard, &descriptors)?;
    let Prepared { repo_root, scratch, base, added, .. } = prepared;
    let tests = languages.iter().flat_map(|plugin| (plugin.relevant_tests)(&plan, options)).collect();
    let mutants = plan.mutants();
    let mutants_planned = if options.audit == AuditMode::Only { 0 } else { mutants.len() };
    timings.generate = lap();
    let origin =
        Origin { repository: repo_root.clone(), state: added.state, scratch: scratch.path().to_path_buf() };
    let audit_only = options.audit == AuditMode::Only;
    let mut report = Report { tests, origin: Some(origin), audit_only, ..Report::default() };
    let (mut results, mut candidates) = split_ignored(mutants);
    if audit_only {
        results.clear();
        candidates.clear();
    }
    // The audit's side before the change runs first: the kills it carries after the change are
    // tested with the change's own mutants, in the same copies, against the same coverage run.
    let change = Change { repo_root: &repo_root, added: &added, after: &base };
    let flaky = flaky::Flaky::open(&crate::cache::Cache::open(&repo_root, options.cache), &options.flaky);
    let request = AuditRequest { options, change, unaudited: unaudited(languages, &added), flaky: &flaky };
    let mut carrying = None;
    if let Some(auditor) = auditor(languages, options, &added) {
        match audit_stage(&mut timings, events, |timings, events| (auditor.begin)(&request, timings, events))?
        {
            AuditBegun::Done(audit) => report.audit = Some(audit),
            AuditBegun::Carrying(carried) => carrying = Some(carried),
        }
    }
    let site =
        Site { options, repo_root: &repo_root, scratch: &scratch, base: &base, added: &added, flaky: &flaky };
    // Without mutants of the change's own to test, the carried kills' runs are the audit's.
    let mut together = if candidates.is_empty() && carrying.is_some() {
        audit_stage(&mut timings, events, |timings, events| {
            test_together(&site, languages, &plan, Vec::new(), carrying.as_deref(), timings, events)
        })?
    } else {
        test_together(&site, languages, &plan, candidates, carrying.as_deref(), &mut timings, events)?
    };
    let said = std::mem::take(&mut together.own.notes);
    results.extend(report.take_own(together.own, mutants_planned, carrying.is_some()));
    if let Some(carried) = carrying.filter(|_| report.incomplete.is_none()) {
        let ran = (together.carried, together.carried_steps);
        end_audit(&mut report, carried, &request, ran, mutants_planned, &mut timings, events)?;
    }
    if let Some(audit) = &mut report.audit {
        audit.took = timings.audit;
    }
    report.flaky = flaky.named().into_iter().map(|(test, known)| (test, known.describe())).collect();
    timings.wall = start.elapsed();
    report.timings = timings;
    results.sort_by_key(|result| result.planned.id);
    report.results = results;
    report.plan = plan;
    report.plan.notes.extend(said);
    Ok(report)
}

impl Report {
    /// Takes in the runs that reached the change's own verdicts, and returns those verdicts; an
    /// interruption that cut them short marks the report incomplete (with the audit cut off,
    /// when kills it carries were to run with them).
    fn take_own(&mut self, own: AllChecked, planned: usize, audit_cut_off: bool) -> Vec<MutantResult> {
        self.steps.extend(own.steps);
        self.floor = own.floor;
        self.baseline = own.baseline;
        if own.interrupted {
            self.incomplete = Some(Incomplete { planned, undecided: own.undecided, audit_cut_off });
        }
        own.results
    }
}

/// Ends the audit whose kills after the change ran with the change's mutants (`ran`: their
/// verdicts and, where they ran apart, the runs that reached them): its verdicts go in
/// `report`. Interrupted while the change's verdicts are all there, the report is marked
/// incomplete with only the audit cut off.
fn end_audit(
    report: &mut Report,
    carried: Box<dyn CarriedKills>,
    request: &AuditRequest,
    ran: (Vec<MutantResult>, Vec<StepRecord>),
    planned: usize,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<()> {
    let (results, steps) = ran;
    let finished = audit_stage(timings, events, |timings, events| {
        carried.finish(request, results, steps, timings, events)
    });
    match finished {
        Err(err) if !report.audit_only && is_interruption(&err) => {
            report.incomplete = Some(Incomplete { planned, undecided: 0, audit_cut_off: true });
        }
        audit => report.audit = Some(audit?),
    }
    Ok(())
}

/// Where a check runs: its settings, the repository, and the state under test in its copy.
struct Site<'a> {
    options: &'a Options,
    repo_root: &'a Path,
    scratch: &'a Scratch,
    base: &'a Path,
    added: &'a lines::AddedLines,
    flaky: &'a flaky::Flaky,
}

/// The change's own mutants and the kills the audit carried, tested together.
struct Together {
    /// The change's own verdicts, and the runs that reached them (those of the carried kills
    /// too, when the change has no mutant of its own to run).
    own: AllChecked,
    /// The carried kills' verdicts, each numbered as the audit's plan numbers it.
    carried: Vec<MutantResult>,
    /// The runs that reached them, when they ran without the change's own mutants.
    carried_steps: Vec<StepRecord>,
}

/// Tests `candidates` of `plan` and the kills `carrying` holds in the same copies, against the
/// same coverage run, then tells their verdicts apart.
fn test_together(
    site: &Site,
    languages: &[Plugin],
    plan: &Plan,
    mut candidates: Vec<PlannedMutant>,
    carrying: Option<&dyn CarriedKills>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<Together> {
    let own = !candidates.is_empty();
    // With no mutant of its own to run (`audit-tests`, or all Ignored), the change's plan lends
    // the run its tests alone: a plan of carried kills only, which begins the rest of the suite
    // only once a kill needs it.
    let lent;
    let plan = if own {
        plan
    } else {
        lent = Plan { files: Vec::new(), ..plan.clone() };
        &lent
    };
    let carried_originals = carrying.map(|carried| carried.mutants()).unwrap_or_default();
    let (run_plan, carried_mutants) = match carrying {
        Some(carried) => plan.with_carried(carried.plan(), &carried_originals),
        None => (plan.clone(), Vec::new()),
    };
    let originals: BTreeMap<usize, &PlannedMutant> =
        carried_originals.iter().map(|planned| (planned.id, planned)).collect();
    let mut together =
        Together { own: AllChecked::default(), carried: Vec::new(), carried_steps: Vec::new() };
    if !own && carried_mutants.is_empty() {
        return Ok(together);
    }
    let logs = site.scratch.subdir("logs")?;
    let cache = crate::cache::Cache::open(site.repo_root, site.options.cache);
    let verdicts = verdicts::Verdicts::open(&cache, site.base).heeding(site.flaky);
    let ctx = Context {
        options: site.options,
        plan: &run_plan,
        repo_root: site.repo_root,
        base: site.base,
        state: site.added.state,
        scratch: site.scratch,
        logs: &logs,
        cache: &cache,
        verdicts: &verdicts,
        flaky: site.flaky,
    };
    candidates.extend(carried_mutants);
    let mut checked = check_languages(&ctx, languages, candidates, timings, events)?;
    let offset = plan.mutant_count();
    let (carried, mine): (Vec<MutantResult>, Vec<MutantResult>) =
        checked.results.drain(..).partition(|result| run_plan.carried.contains(&result.planned.id));
    together.carried = carried
        .into_iter()
        .filter_map(|mut result| {
            result.planned = (*originals.get(&(result.planned.id - offset))?).clone();
            Some(result)
        })
        .collect();
    checked.results = mine;
    if !own {
        together.carried_steps = std::mem::take(&mut checked.steps);
        checked.baseline = None;
    }
    together.own = checked;
    Ok(together)
}

/// What the languages' checks came to, together.
#[derive(Default)]
struct AllChecked {
    results: Vec<MutantResult>,
    steps: Vec<StepRecord>,
    /// How long their unmutated tests took; none when no language's baseline finished.
    baseline: Option<Duration>,
    interrupted: bool,
    undecided: usize,
    floor: Vec<crate::model::report::Floor>,
    /// What the languages said of how their checks went (`Checked::notes`).
    notes: Vec<String>,
}

/// Each language's share of `candidates`, checked in the order of `languages`. An interrupt
/// during the first baseline fails the check; after it, the verdicts reached stand and the
/// languages not reached run nothing.
fn check_languages(
    ctx: &Context,
    languages: &[Plugin],
    candidates: Vec<PlannedMutant>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<AllChecked> {
    let mut all = AllChecked::default();
    let mut remaining = candidates;
    for plugin in languages {
        let (mine, others): (Vec<_>, Vec<_>) =
            remaining.into_iter().partition(|c| ctx.plan.files[c.file].language == plugin.language);
        remaining = others;
        if mine.is_empty() || all.interrupted {
            continue;
        }
        match (plugin.check)(ctx, mine, timings, events) {
            // The verdicts of the languages before stand: the report holds them, these
            // mutants did not run.
            Err(err) if all.baseline.is_some() && is_interruption(&err) => all.interrupted = true,
            checked => {
                let checked = checked?;
                all.interrupted = checked.interrupted;
                all.undecided += checked.undecided;
                all.results.extend(checked.results);
                all.steps.extend(checked.steps);
                all.floor.extend(checked.floor);
                all.notes.extend(checked.notes);
                all.baseline = Some(all.baseline.unwrap_or_default() + checked.baseline);
            }
        }
    }
    Ok(all)
}

/// A stage of the kill-loss audit (its side before the change, or its end), said as it
/// starts; its error says what failed. Its runs are timed as the check's are, then counted as
/// the audit's.
fn audit_stage<T>(
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
    stage: impl FnOnce(&mut Timings, &mut dyn FnMut(Event)) -> Result<T>,
) -> Result<T> {
    events(Event::Phase(Phase::Audit));
    let started = Instant::now();
    let (baseline, mutants) = (timings.baseline, timings.mutants);
    let done = stage(timings, events)
        .context("the kill-loss audit of the tests the change edits (--no-audit skips it)");
    timings.audit += started.elapsed();
    timings.audit_baseline += timings.baseline.saturating_sub(baseline);
    timings.audit_mutants += timings.mutants.saturating_sub(mutants);
    (timings.baseline, timings.mutants) = (baseline, mutants);
    events(Event::Phase(Phase::Check));
    done
}

/// One language's mutants, from its baseline to the last verdict. Interrupted during the
/// baseline it fails with `Interrupted`; later, it keeps the verdicts that are final.
pub fn check_language<L: LanguageCheck>(
    side: &L,
    ctx: &Context,
    candidates: Vec<PlannedMutant>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<Checked> {
    let started_at = Instant::now();
    let Proven { jobs, settled: mut results, mut baseline, mut evidence, mut steps, reused, .. } =
        prove(side, ctx, candidates, timings, events)?;
    let scope = side.verdict_scope(ctx);
    // With no job, the first round is over; its open verdicts still face the second.
    let any_open = results.iter().any(|result| language::is_open(result.outcome.status));
    if jobs.is_empty() && !(widens(side) && any_open) {
        timings.baseline += started_at.elapsed();
        heed_varying_coverage(ctx, scope.as_ref(), &mut results, !reused);
        return Ok(checked(side, results, baseline, steps, Cut::default()));
    }
    let recalled = ctx.verdicts.recall(scope.as_ref(), ctx.options, ctx.plan, jobs);
    say_reused(&recalled.reused, events);
    results.extend(recalled.reused.iter().cloned());
    let first = Round { side, ctx, evidence: &mut evidence, scope: scope.as_ref(), started: started_at };
    let Some(mut workers) = first.first(&recalled, &mut results, &mut steps, timings, events)? else {
        return cut_off(side, results, baseline, steps);
    };
    if INTERRUPTED.load(Ordering::SeqCst) {
        return cut_off(side, results, baseline, steps);
    }
    let started = Instant::now();
    let open = results.iter().filter(|result| language::is_open(result.outcome.status)).count();
    if widens(side) && open > 0 {
        events(Event::Phase(Phase::SecondRound { open }));
    }
    let widened = side.rounds().map_or(Ok(None), |rounds| rounds.widen(ctx, &mut evidence, &results));
    let widened = match widened {
        Err(err) if is_interruption(&err) => return cut_off(side, results, baseline, steps),
        widened => widened?,
    };
    let mut cut = Cut::default();
    if let Some(widened) = widened {
        events(second_round_said(&widened));
        let Widened { jobs, baseline: took, steps: more, .. } = widened;
        baseline += took;
        steps.extend(more);
        let round = Round { side, ctx, evidence: &mut evidence, scope: scope.as_ref(), started };
        cut = round.run(jobs, &mut workers, &mut results, &mut steps, timings, events)?;
    }
    let confirming =
        side.rounds().map_or(Vec::new(), |rounds| rounds.confirm(ctx, &evidence, &results, baseline));
    if !cut.interrupted && !INTERRUPTED.load(Ordering::SeqCst) && !confirming.is_empty() {
        let round =
            Round { side, ctx, evidence: &mut evidence, scope: scope.as_ref(), started: Instant::now() };
        cut = round.confirm(confirming, &mut workers, &mut results, &mut steps, timings, events)?;
    }
    if !cut.interrupted && !INTERRUPTED.load(Ordering::SeqCst) {
        heed_varying_coverage(ctx, scope.as_ref(), &mut results, !reused);
    }
    Ok(checked(side, results, baseline, steps, cut))
}

/// What the second round's unmutated run came to, in an event: why it ran no test, when it
/// ran none, else what it ran and how long it took.
fn second_round_said<D>(widened: &Widened<D>) -> Event<'static> {
    match &widened.nothing_else {
        Some(why) => Event::Note(format!("second round: {why}")),
        None => Event::BaselinePassed {
            duration: widened.baseline,
            what: widened.what.clone(),
            reused: widened.reused,
        },
    }
}

/// Makes NoCoverage, saying why, each mutant whose line the runs of this state reached in some
/// runs and not in others (`reach::settle_varying`), this run counted when it looked anew
/// (`observed`). Only where the language can say what its tests depend on (`scope`).
fn heed_varying_coverage(
    ctx: &Context,
    scope: Option<&verdicts::Scope>,
    results: &mut [MutantResult],
    observed: bool,
) {
    let Some(scope) = scope else { return };
    let key = |planned: &PlannedMutant| ctx.verdicts.line_key(scope, ctx.options, ctx.plan, planned);
    reach::settle_varying(ctx.cache, results, &key, observed);
}

/// Whether a language's second round looks again at its first round's open verdicts: until it
/// has, they are not final.
fn widens<L: LanguageCheck>(side: &L) -> bool {
    side.rounds().is_some_and(|rounds| rounds.widens())
}

/// What a check cut off before its second round keeps: the verdicts that round would look at
/// again are not final.
fn cut_off<L: LanguageCheck>(
    side: &L,
    mut results: Vec<MutantResult>,
    baseline: Duration,
    steps: Vec<StepRecord>,
) -> Result<Checked> {
    let reached = results.len();
    if widens(side) {
        results.retain(|result| !language::is_open(result.outcome.status));
    }
    let undecided = reached - results.len();
    Ok(checked(side, results, baseline, steps, Cut { interrupted: true, undecided }))
}

/// What a language's check came to, its last round ended as `cut` says, with the test-impact
/// map's floor.
fn checked<L: LanguageCheck>(
    side: &L,
    results: Vec<MutantResult>,
    baseline: Duration,
    steps: Vec<StepRecord>,
    cut: Cut,
) -> Checked {
    let (interrupted, undecided, floor) = (cut.interrupted, cut.undecided, side.floor());
    Checked { results, baseline, steps, interrupted, undecided, floor, notes: Vec::new() }
}

/// Proves a language's baseline, saying so, and counts the time its compile check and build
/// took.
fn prove<L: LanguageCheck>(
    side: &L,
    ctx: &Context,
    candidates: Vec<PlannedMutant>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<Proven<L::Evidence, L::Data>> {
    event::set_stage(None);
    events(Event::Phase(Phase::Baseline(L::LANGUAGE)));
    let proven = side.prove(ctx, candidates);
    event::set_stage(None);
    let proven = proven?;
    timings.compile += proven.compile;
    timings.build += proven.build;
    if proven.jobs.is_empty() && proven.baseline.is_zero() && !proven.reused {
        events(Event::Note("baseline: not run: every mutant was settled without the tests".to_string()));
    } else {
        let (duration, what, reused) = (proven.baseline, proven.what.clone(), proven.reused);
        events(Event::BaselinePassed { duration, what, reused });
    }
    Ok(proven)
}

/// Says in the reason of each confirmed mutant (`ids`) that the whole suite, as it runs, faced it.
fn say_confirmed(results: &mut [MutantResult], ids: &BTreeSet<usize>) {
    for result in results.iter_mut().filter(|result| ids.contains(&result.planned.id)) {
        let outcome = &mut result.outcome;
        outcome.reason = match outcome.status {
            Status::Survived => format!("{}, and so did the whole suite, as it runs", outcome.reason),
            Status::Killed if !outcome.killed_by.is_empty() => {
                format!("failed in the whole suite, as it runs: {}", outcome.killed_by.join(", "))
            }
            _ => format!("the whole suite, as it runs: {}", outcome.reason),
        };
    }
}

/// How a later round ended.
#[derive(Debug, Default, Clone, Copy)]
struct Cut {
    /// Cut short by an interrupt.
    interrupted: bool,
    /// The earlier rounds' survivors it did not reach, dropped from the results.
    undecided: usize,
}

/// A round after the first, on the first round's workers (started now if it had none).
struct Round<'a, L: LanguageCheck> {
    side: &'a L,
    ctx: &'a Context<'a>,
    evidence: &'a mut L::Evidence,
    scope: Option<&'a verdicts::Scope>,
    /// When the round began, its unmutated run included.
    started: Instant,
}

impl<L: LanguageCheck> Round<'_, L> {
    /// The first round of the jobs no remembered verdict answers (`recalled.jobs`): its
    /// workers started (counted, from when the round began, as the baseline's time), its
    /// verdicts and runs added to `results` and `steps`. Its workers, for the later rounds;
    /// none when an interruption cut it off.
    fn first(
        self,
        recalled: &verdicts::Recalled<L::Data>,
        results: &mut Vec<MutantResult>,
        steps: &mut Vec<StepRecord>,
        timings: &mut Timings,
        events: &mut dyn FnMut(Event),
    ) -> Result<Option<Vec<L::Worker>>> {
        let Round { side, ctx, evidence, started, .. } = self;
        if recalled.jobs.is_empty() {
            timings.baseline += started.elapsed();
            return Ok(Some(Vec::new()));
        }
        let count = ctx.options.jobs.get().min(recalled.jobs.len());
        events(Event::Phase(Phase::Workers { count }));
        let Started { mut workers, steps: more } = match side.workers(ctx, evidence, count, &recalled.jobs) {
            Err(err) if is_interruption(&err) => return Ok(None),
            started => started?,
        };
        steps.extend(more);
        timings.baseline += started.elapsed();
        match first_round(side, ctx, &mut workers, recalled, timings, events) {
            Err(err) if is_interruption(&err) => Ok(None),
            ran => {
                let (ran, proofs) = ran?;
                results.extend(ran);
                steps.extend(proofs);
                Ok(Some(workers))
            }
        }
    }

    /// Runs `jobs` and joins their verdicts to `results` (`merge`); says whether the round was
    /// cut short, dropping the verdicts of the mutants it did not reach, and how many.
    fn run(
        self,
        jobs: Vec<job::Job<L::Data>>,
        workers: &mut Vec<L::Worker>,
        results: &mut Vec<MutantResult>,
        steps: &mut Vec<StepRecord>,
        timings: &mut Timings,
        events: &mut dyn FnMut(Event),
    ) -> Result<Cut> {
        let Round { side, ctx, evidence, scope, started } = self;
        let mut cut: BTreeSet<usize> = jobs.iter().map(|job| job.planned.id).collect();
        let recalled = ctx.verdicts.recall(scope, ctx.options, ctx.plan, jobs);
        say_reused(&recalled.reused, events);
        let mut again = recalled.reused.clone();
        if !recalled.jobs.is_empty() {
            let ready = if workers.is_empty() {
                let count = ctx.options.jobs.get().min(recalled.jobs.len());
                events(Event::Phase(Phase::Workers { count }));
                side.workers(ctx, evidence, count, &recalled.jobs).map(|started| {
                    *workers = started.workers;
                    started.steps
                })
            } else {
                side.prove_round(ctx, workers, &recalled.jobs)
            };
            match ready {
                Err(err) if is_interruption(&err) => {}
                ready => {
                    steps.extend(ready?);
                    timings.baseline += started.elapsed();
                    again.extend(run_round(ctx, workers, &recalled, timings, events)?);
                }
            }
        } else {
            timings.baseline += started.elapsed();
        }
        for result in &again {
            cut.remove(&result.planned.id);
        }
        merge(results, again);
        // A mutant the round did not reach has only half a verdict: it did not run.
        results.retain(|result| !cut.contains(&result.planned.id));
        Ok(Cut { interrupted: !cut.is_empty() || INTERRUPTED.load(Ordering::SeqCst), undecided: cut.len() })
    }

    /// Runs the survivors the language confirms (`jobs`) against the whole suite, as it runs,
    /// saying so in their reasons.
    fn confirm(
        self,
        jobs: Vec<job::Job<L::Data>>,
        workers: &mut Vec<L::Worker>,
        results: &mut Vec<MutantResult>,
        steps: &mut Vec<StepRecord>,
        timings: &mut Timings,
        events: &mut dyn FnMut(Event),
    ) -> Result<Cut> {
        events(Event::Phase(Phase::Confirming { count: jobs.len() }));
        let ids: BTreeSet<usize> = jobs.iter().map(|job| job.planned.id).collect();
        let cut = self.run(jobs, workers, results, steps, timings, events)?;
        say_confirmed(results, &ids);
        Ok(cut)
    }
}

/// Runs the jobs no earlier verdict settled on `workers`, and keeps their verdicts for the
/// next run.
fn run_round<W: language::Worker>(
    ctx: &Context,
    workers: &mut [W],
    recalled: &verdicts::Recalled<W::Data>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<Vec<MutantResult>> {
    let ran = run_unkept(ctx, workers, recalled, timings, events)?;
    ctx.verdicts.remember(recalled, &ran);
    Ok(ran)
}

/// The first round's jobs, then what their kills did not prove (`prove_unseen`): only then are
/// its verdicts kept. Returns the verdicts and the proofs' records.
fn first_round<L: LanguageCheck>(
    side: &L,
    ctx: &Context,
    workers: &mut [L::Worker],
    recalled: &verdicts::Recalled<L::Data>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<(Vec<MutantResult>, Vec<StepRecord>)> {
    let ran = run_unkept(ctx, workers, recalled, timings, events)?;
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Ok((ran, Vec::new()));
    }
    let proofs = match side.rounds() {
        Some(rounds) => rounds.prove_unseen(ctx, workers, &recalled.jobs, &ran)?,
        None => Vec::new(),
    };
    ctx.verdicts.remember(recalled, &ran);
    Ok((ran, proofs))
}

/// `run_round` without keeping its verdicts.
fn run_unkept<W: language::Worker>(
    ctx: &Context,
    workers: &mut [W],
    recalled: &verdicts::Recalled<W::Data>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<Vec<MutantResult>> {
    let started = Instant::now();
    events(Event::MutantsStarting { total: recalled.jobs.len(), workers: workers.len() });
    let mut ran = pool::run_all(ctx.plan, workers, ctx.logs, recalled.jobs.clone(), events)?;
    // A kill made before the check found its test flaky is decided again, now that it is known
    // (twice at most: deciding them may find another).
    for _ in 0..2 {
        let again: Vec<_> = recalled
            .jobs
            .iter()
            .filter(|job| {
                ran.iter().any(|result| {
                    result.planned.id == job.planned.id && unconfirmed_flaky_kill(ctx.flaky, &result.outcome)
                })
            })
            .cloned()
            .collect();
        if again.is_empty() || INTERRUPTED.load(Ordering::SeqCst) {
            break;
        }
        events(Event::Note(format!(
            "deciding again {} made by tests found flaky meanwhile",
            crate::words::count_of(again.len(), "kill", "kills")
        )));
        for redone in pool::run_all(ctx.plan, workers, ctx.logs, again, &mut |_| {})? {
            if let Some(result) = ran.iter_mut().find(|result| result.planned.id == redone.planned.id) {
                result.outcome = redone.outcome;
            }
        }
    }
    timings.mutants += started.elapsed();
    Ok(ran)
}

/// A kill whose failing tests are all flaky, reached before that was known (no confirmation ran).
fn unconfirmed_flaky_kill(flaky: &flaky::Flaky, outcome: &Outcome) -> bool {
    outcome.status == Status::Killed
        && outcome.flaky.is_empty()
        && !outcome.killed_by.is_empty()
        && outcome.killed_by.iter().all(|test| flaky.holds(test))
}

/// Says how many verdicts an earlier run reached and this one reuses.
fn say_reused(reused: &[MutantResult], events: &mut dyn FnMut(Event)) {
    if !reused.is_empty() {
        let (count, verdicts) = (reused.len(), if reused.len() == 1 { "verdict" } else { "verdicts" });
        events(Event::Note(format!(
            "reused {count} {verdicts} an earlier run reached with the same files, tests and settings (--no-cache runs them again)"
        )));
    }
}

/// Joins a second round's verdicts to the first's: a mutant survives only if it survived both;
/// the tests and commands of both rounds are kept.
fn merge(results: &mut [MutantResult], later: Vec<MutantResult>) {
    for new in later {
        let Some(old) = results.iter_mut().find(|old| old.planned.id == new.planned.id) else {
            continue;
        };
        old.outcome.duration += new.outcome.duration;
        old.outcome.reused &= new.outcome.reused;
        for test in new.outcome.flaky {
            if !old.outcome.flaky.contains(&test) {
                old.outcome.flaky.push(test);
            }
        }
        for test in new.outcome.covered_by {
            if !old.outcome.covered_by.contains(&test) {
                old.outcome.covered_by.push(test);
            }
        }
        old.outcome.record = RunRecord::joined(old.outcome.record.take(), new.outcome.record);
        if !(old.outcome.status == Status::Survived && new.outcome.status == Status::Survived) {
            old.outcome.status = new.outcome.status;
            old.outcome.reason = new.outcome.reason;
            old.outcome.killed_by = new.outcome.killed_by;
        }
    }
}

/// Gives Ignored mutants their verdicts; returns them and the mutants left to check.
pub fn split_ignored(mutants: Vec<PlannedMutant>) -> (Vec<MutantResult>, Vec<PlannedMutant>) {
    let mut settled = Vec::new();
    let mut candidates = Vec::new();
    for planned in mutants {
        match planned.mutant.ignored.clone() {
            Some(reason) => settled.push(Outcome::settled(Status::Ignored, reason).for_mutant(planned)),
            None => candidates.push(planned),
        }
    }
    (settled, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::{CommandRecord, How, RunRecord};
    use mutators::{Mutant, Position};

    fn result(
        id: usize,
        status: Status,
        reason: &str,
        covered: &[&str],
        killed: &[&str],
        millis: u64,
    ) -> MutantResult {
        let mutant = Mutant {
            line: 1,
            span: 0..1,
            start: Position { line: 1, column: 1 },
            end: Position { line: 1, column: 2 },
            original: "+".into(),
            replacement: "-".into(),
            rule: &mutators::catalog::PYTHON[0],
            description: "replace + with -".into(),
            ignored: None,
            arid: None,
            likely_equivalent: None,
        };
        let command = CommandRecord {
            argv: vec![format!("round of {reason}")],
            dir: PathBuf::from("/copy"),
            env: Vec::new(),
            exit: crate::model::record::Exit::Code(0),
            duration: Duration::from_millis(millis),
        };
        let outcome = Outcome {
            status,
            reason: reason.to_string(),
            duration: Duration::from_millis(millis),
            covered_by: covered.iter().map(|t| t.to_string()).collect(),
            killed_by: killed.iter().map(|t| t.to_string()).collect(),
            record: (status != Status::NoCoverage).then(|| RunRecord {
                how: if reason == "second" { How::Fork } else { How::Swap },
                commands: vec![command],
                tail: reason.to_string(),
                fallback: None,
                split: None,
            }),
            reused: false,
            memory_limit: None,
            flaky: Vec::new(),
        };
        outcome.for_mutant(PlannedMutant { id, file: 0, mutant })
    }

    #[test]
    fn a_mutant_survives_two_rounds_only_if_it_survived_both_and_keeps_what_both_ran() {
        let mut results = vec![
            result(1, Status::Survived, "first", &["a"], &[], 10),
            result(2, Status::NoCoverage, "no test runs this line", &[], &[], 0),
            result(3, Status::Survived, "first", &["a"], &[], 10),
        ];
        let later = vec![
            result(1, Status::Killed, "second", &["b"], &["b"], 5),
            result(2, Status::Survived, "second", &["c"], &[], 5),
            result(3, Status::Survived, "second", &["a", "d"], &[], 5),
            result(9, Status::Killed, "second", &["z"], &["z"], 5),
        ];
        merge(&mut results, later);

        assert_eq!(results.len(), 3, "a verdict for no mutant of the first round is dropped");
        let killed = &results[0];
        assert_eq!((killed.outcome.status, killed.outcome.reason.as_str()), (Status::Killed, "second"));
        assert_eq!(killed.outcome.killed_by, ["b"]);
        assert_eq!(killed.outcome.covered_by, ["a", "b"]);
        assert_eq!(killed.outcome.duration, Duration::from_millis(15));
        let record = killed.outcome.record.as_ref().unwrap();
        let rounds: Vec<&str> = record.commands.iter().map(|c| c.argv[0].as_str()).collect();
        assert_eq!(rounds, ["round of first", "round of second"], "both rounds' commands, in order");
        assert_eq!(
            (record.tail.as_str(), record.how),
            ("second", How::Fork),
            "the last round's output and path"
        );

        let reached = &results[1];
        assert_eq!((reached.outcome.status, reached.outcome.reason.as_str()), (Status::Survived, "second"));
        assert_eq!(reached.outcome.covered_by, ["c"]);
        assert_eq!(reached.outcome.record.as_ref().unwrap().commands.len(), 1);

        let survived = &results[2];
        assert_eq!((survived.outcome.status, survived.outcome.reason.as_str()), (Status::Survived, "first"));
        assert_eq!(survived.outcome.covered_by, ["a", "d"], "each test once");
        assert!(survived.outcome.killed_by.is_empty());
    }
}
