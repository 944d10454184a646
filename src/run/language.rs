//! The interface each language implements: prove the baseline and select each mutant's tests, start workers, test one mutant.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::job::{Job, JobData};
use crate::model::outcome::{MutantResult, Outcome, Status};
use crate::model::plan::{FilePlan, Language, Plan, PlannedMutant};
use crate::model::record::StepRecord;
use crate::options::Options;
use crate::scratch::Scratch;
use crate::worktree::{self, Stamp};

/// Where a check works and what it knows: the same for every language.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub options: &'a Options,
    pub plan: &'a Plan,
    /// The user's checkout: only ever read.
    pub repo_root: &'a Path,
    /// The first copy of the state under test.
    pub base: &'a Path,
    /// Which state that is.
    pub state: crate::model::plan::State,
    pub scratch: &'a Scratch,
    /// Where test output goes while it runs.
    pub logs: &'a Path,
    /// What earlier runs measured.
    pub cache: &'a crate::cache::Cache,
    /// The verdicts earlier runs reached.
    pub verdicts: &'a super::verdicts::Verdicts,
    /// The tests known to fail at random, and those this check finds.
    pub flaky: &'a super::flaky::Flaky,
}

/// What proving the baseline found.
pub struct Proven<E, D> {
    /// The mutants left to run, each with its tests.
    pub jobs: Vec<Job<D>>,
    /// The mutants settled without running (NoCoverage, CompileError).
    pub settled: Vec<MutantResult>,
    /// How long the unmutated tests took.
    pub baseline: Duration,
    /// Which tests ran unmutated, in words.
    pub what: String,
    /// Nothing ran: an earlier run's measurement of the same content was reused.
    pub reused: bool,
    /// How long the compile check took (beside the baseline), where there is one.
    pub compile: Duration,
    /// How long building took (within the baseline), for a compiled language.
    pub build: Duration,
    /// What the language learned that its workers need.
    pub evidence: E,
    /// The unmutated runs, as they ran.
    pub steps: Vec<StepRecord>,
}

/// A second round: the mutants whose verdicts need more tests, and the run that found them.
pub struct Widened<D> {
    pub jobs: Vec<Job<D>>,
    /// How long the new unmutated run took.
    pub baseline: Duration,
    /// Which tests it ran, in words.
    pub what: String,
    /// Nothing ran: an earlier run's measurement of the same content was reused.
    pub reused: bool,
    /// Why the wider selection ran no test beyond those the first round ran, in words, when
    /// it ran none: said instead of its unmutated run.
    pub nothing_else: Option<String>,
    pub steps: Vec<StepRecord>,
}

/// Workers ready for their jobs, and the runs that proved them (canaries).
pub struct Started<W> {
    pub workers: Vec<W>,
    pub steps: Vec<StepRecord>,
}

/// One language's way of testing mutants. A new language is a folder implementing this.
pub trait LanguageCheck {
    /// What `prove` hands on to `workers`.
    type Evidence;
    /// What it adds to each job for its workers.
    type Data: JobData;
    type Worker: Worker<Data = Self::Data>;
    const LANGUAGE: Language;

    /// Runs the unmutated tests in `ctx.base` (they must pass) and decides what each of
    /// `candidates` runs.
    fn prove(
        &self,
        ctx: &Context,
        candidates: Vec<PlannedMutant>,
    ) -> Result<Proven<Self::Evidence, Self::Data>>;

    /// `count` workers, the first in `ctx.base`, each in its own copy, ready for `jobs`.
    fn workers(
        &self,
        ctx: &Context,
        evidence: &mut Self::Evidence,
        count: usize,
        jobs: &[Job<Self::Data>],
    ) -> Result<Started<Self::Worker>>;

    /// Readies the workers of an earlier round for `jobs`, and proves that they see mutants of
    /// the files `jobs` mutate, with their tests (a canary), where the language needs that;
    /// `workers` or `Rounds::prove_unseen` does it for its first round.
    fn prove_round(
        &self,
        ctx: &Context,
        workers: &mut [Self::Worker],
        jobs: &[Job<Self::Data>],
    ) -> Result<Vec<StepRecord>>;

    /// What its tests depend on beside the files, for reusing verdicts between runs; `None`
    /// reuses nothing.
    fn verdict_scope(&self, ctx: &Context) -> Option<super::verdicts::Scope>;

    /// Why a test-impact map could not rule out the tests it kept, per reason (none without
    /// one).
    fn floor(&self) -> Vec<crate::model::report::Floor> {
        Vec::new()
    }

    /// What it does after its first round, where that round is not its last.
    fn rounds(&self) -> Option<&RoundsOf<Self>> {
        None
    }
}

/// The `Rounds` of a language check, with its types.
pub type RoundsOf<L> = dyn Rounds<
    Evidence = <L as LanguageCheck>::Evidence,
    Data = <L as LanguageCheck>::Data,
    Worker = <L as LanguageCheck>::Worker,
>;

/// What a language whose first round is not its last adds: one whose first round runs only
/// some of the tests that reach a mutant (the change's own) proves after it what its kills did
/// not, widens it, and confirms survivors against the whole suite. Any language may have them;
/// one whose first round decides every verdict has none.
pub trait Rounds {
    type Evidence;
    type Data: JobData;
    type Worker: Worker<Data = Self::Data>;

    /// After the first round ran `jobs` (`ran`: their verdicts), before any is kept: proves
    /// that the workers saw the mutants of each file where the language needs that and no
    /// mutant of the file was killed (a kill proves it for its file).
    fn prove_unseen(
        &self,
        ctx: &Context,
        workers: &mut [Self::Worker],
        jobs: &[Job<Self::Data>],
        ran: &[MutantResult],
    ) -> Result<Vec<StepRecord>>;

    /// Whether `widen` looks again at the first round's open verdicts (`is_open`): until it
    /// has, they are not final.
    fn widens(&self) -> bool;

    /// After the first round: the mutants whose verdicts rest on fewer tests than the suite
    /// has for them, with the rest of those tests. `None` when every verdict stands.
    fn widen(
        &self,
        ctx: &Context,
        evidence: &mut Self::Evidence,
        results: &[MutantResult],
    ) -> Result<Option<Widened<Self::Data>>>;

    /// After the last round, with `--confirm-survivors`: a job per survivor that runs the whole
    /// suite as it runs, where the language can (a test that does not run a line may still
    /// read what it made: a memo, a registry). `baseline`: what the unmutated runs took.
    fn confirm(
        &self,
        ctx: &Context,
        evidence: &Self::Evidence,
        results: &[MutantResult],
        baseline: Duration,
    ) -> Vec<Job<Self::Data>>;
}

/// The survivors a language confirms against the whole suite, as it runs (`--confirm-survivors`).
pub fn survivors(results: &[MutantResult]) -> impl Iterator<Item = &PlannedMutant> {
    results.iter().filter(|result| result.outcome.status == Status::Survived).map(|result| &result.planned)
}

/// A verdict a second round looks at again: a survivor, or a statement no test of the first
/// round reached.
pub fn is_open(status: Status) -> bool {
    matches!(status, Status::Survived | Status::NoCoverage)
}

/// Tests mutants in its own copy, one at a time.
pub trait Worker: Send {
    /// What its language adds to each job.
    type Data: JobData;

    /// Puts the mutant in place, runs its tests, restores the file, and reads what the tests
    /// did. An interrupted run is `Err(Interrupted)`.
    fn test(&mut self, plan: &Plan, job: &Job<Self::Data>, log: &Path) -> Result<Outcome>;
}

/// Runs `test` with `planned`'s file mutated in the copy at `root`, then restores the file
/// (also when `test` fails).
pub fn with_mutant<T>(
    root: &Path,
    file: &FilePlan,
    planned: &PlannedMutant,
    stamp: Stamp,
    test: impl FnOnce() -> T,
) -> Result<T> {
    let path = root.join(&file.path);
    worktree::replace_file(&path, &planned.mutant.apply(&file.source), stamp)?;
    let result = test();
    worktree::replace_file(&path, &file.source, stamp)?;
    Ok(result)
}
