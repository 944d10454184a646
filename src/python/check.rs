//! The Python check: the coverage run as baseline with the compile check beside it, per-mutant test selection, canaries, warm workers and collectors, the second round.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

use super::collector::Collector;
use super::coverage::{CoverageMap, TestCoverage};
use super::executor::{Executor, Spawn, Warm};
use super::interpreter::Runner;
use super::job::{Fresh, PythonJob};
use super::proof::{prove_canaries, prove_swap, refuse_imports_from_checkout};
use super::rest::{RestOfSuite, RestSpec};
use super::select::Selection;
use super::warm::WarmSpec;
use super::worker::{Equivalent, PythonWorker, Swap};
use super::{collector, compile, coverage, interpreter, pytest, select, spec};
use crate::model::outcome::Outcome;
use crate::model::outcome::{MutantResult, Status};
use crate::model::plan::{Language, PlannedMutant};
use crate::model::record::Finished;
use crate::model::record::{How, RunRecord, StepRecord};
use crate::run::job::Job;
use crate::run::language::{self, Context, LanguageCheck, Proven, Started, Widened};
use crate::run::require::{self, Subject};
use crate::run::timeouts::{mutant_timeout, BASELINE_LIMIT};
use crate::worktree;

const WORKER_SCRIPT: &str = include_str!("worker.py");
/// What the warm worker and the collector share: their forked children.
const FORKED_MODULE: &str = include_str!("forked.py");

/// Mutants a worker must have to swap in before a later round starts a collector for them
/// (fewer are imported fresh).
const SWAPPED_PER_COLLECTOR: usize = 4;

/// Everything the Python test runs of one check share.
pub struct PythonCheck {
    python: PathBuf,
    /// Why `python` was chosen, said with the baseline's tests when it is not plain.
    python_chosen: Option<String>,
    runner: Runner,
    /// The relevant tests (empty: the whole suite).
    tests: Vec<String>,
    /// mutdelta's Python helpers (the probe plugin, the warm worker), on every test's PYTHONPATH.
    support: PathBuf,
    /// Coverage runs of earlier checks.
    memory: Arc<coverage::Memory>,
    /// Whether mutants the relevant tests let through face the rest of the suite.
    widens: bool,
    /// Survivors face the whole suite, as it runs, after the last round (`confirm`).
    confirm_survivors: bool,
    /// What the coverage runs watch, when not the plan's statements: every source line, for
    /// a check confined to some tests (its first coverage run, `lines_run`, is then the same
    /// question as its baseline's, which reuses it).
    watch: Option<BTreeMap<PathBuf, Vec<usize>>>,
}

/// An executor per copy, in the copies' order.
type Executors = Vec<Box<dyn Executor>>;

/// Copies, and a collector in each collecting the change's test files, started while the
/// first round's coverage run runs (they need nothing it learns); its workers take them over.
struct EarlyStart {
    /// The copies, the first being the state under test itself.
    roots: Vec<PathBuf>,
    /// The test files the collectors collect.
    files: BTreeSet<String>,
    collectors: Vec<Result<Collector>>,
}

impl PythonCheck {
    /// Finds the interpreter and writes the helpers into the scratch directory.
    pub fn new(ctx: &Context) -> Result<PythonCheck> {
        let tests = select::relevant_tests(ctx.plan, &ctx.options.python.extra_tests);
        PythonCheck::with_tests(ctx, tests, true, None)
    }

    /// The same check confirming its survivors against the whole suite, as it runs, whatever
    /// `--confirm-survivors` says (the audit's check after the change).
    pub fn confirming_survivors(self) -> PythonCheck {
        PythonCheck { confirm_survivors: true, ..self }
    }

    /// A check that runs `tests` alone (never the rest of the suite), watching every source
    /// line of `ctx.base`: what they run, and what they kill.
    pub fn confined(ctx: &Context, tests: Vec<String>) -> Result<PythonCheck> {
        PythonCheck::with_tests(ctx, tests, false, Some(every_source_line(ctx.base)?))
    }

    fn with_tests(
        ctx: &Context,
        tests: Vec<String>,
        widens: bool,
        watch: Option<BTreeMap<PathBuf, Vec<usize>>>,
    ) -> Result<PythonCheck> {
        let settings = &ctx.options.python;
        let interpreter::Found { path: python, why: python_chosen } =
            interpreter::find_interpreter(settings.interpreter.as_deref(), ctx.repo_root)?;
        let runner = Runner::new(ctx.options.test_cmd.as_deref(), &python, ctx.scratch.path());
        if runner.is_pytest() {
            interpreter::require_pytest(&python)?;
        }
        let support = ctx.scratch.subdir("support")?;
        coverage::write_probe(&support)?;
        std::fs::write(support.join("mutdelta_worker.py"), WORKER_SCRIPT)?;
        std::fs::write(support.join("mutdelta_forked.py"), FORKED_MODULE)?;
        std::fs::write(support.join(format!("{}.py", collector::PLUGIN_MODULE)), collector::PLUGIN_SOURCE)?;
        // The copy is still as the state under test left it: no test has run in it.
        let memory = Arc::new(coverage::Memory::new(ctx.cache.clone(), &python, &runner, ctx.base));
        Ok(PythonCheck {
            python,
            python_chosen,
            runner,
            tests,
            support,
            memory,
            widens,
            confirm_survivors: ctx.options.python.confirm_survivors,
            watch,
        })
    }

    /// Every line of the project's Python source files (test files left out) in `ctx.base`
    /// that the tests of a confined check executed, unmutated, under the probe; with the run.
    pub fn lines_run(&self, ctx: &Context) -> Result<TestsRun> {
        let measured = self.measure_tests(ctx, &ctx.logs.join("lines-run.log"), None)?;
        if let Some(run) = measured.decisive() {
            if run.exit == crate::model::record::Exit::Code(1) {
                return Ok(TestsRun::Failed);
            }
            if run.exit == crate::model::record::Exit::Code(4) && pytest::lost_tests(&run.tail) {
                return Ok(TestsRun::NotCollected);
            }
            require::passed(run, Subject::Pytest, BASELINE_LIMIT)?;
        }
        let step = baseline_step("the edited tests before the change", &measured);
        let map = measured.map.expect("a passing probe run has a map");
        let mut lines: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
        for test in map.tests {
            for (file, ran) in test.lines {
                lines.entry(file).or_default().extend(ran);
            }
        }
        Ok(TestsRun::Passed(LinesRun { lines, step }))
    }

    fn pytest(&self) -> bool {
        self.runner.is_pytest()
    }

    /// Whether mutants may be swapped into collectors: under pytest, forking, not `--no-swap`.
    fn swapping(&self, ctx: &Context) -> bool {
        self.pytest() && ctx.options.python.fork && ctx.options.python.swap
    }

    /// Which tests the baseline ran, in words.
    fn describe_tests(&self) -> String {
        let tests = if self.pytest() {
            crate::words::describe_tests(&self.tests)
        } else {
            "the test command's tests".to_string()
        };
        match &self.python_chosen {
            Some(why) => format!("{tests} with {} ({why})", self.python.display()),
            None => tests,
        }
    }

    fn spawn(&self, root: &Path) -> Spawn {
        Spawn {
            runner: self.runner.clone(),
            python: self.python.clone(),
            root: root.to_path_buf(),
            support: self.support.clone(),
        }
    }

    /// Runs the unmutated tests (under the coverage probe with pytest); returns the run's
    /// duration, the coverage map (none under a test command) and the jobs.
    /// The rest of the suite begun beside them (`rest`) pauses while they take every core, and
    /// is stopped when they fail beside it.
    fn select(
        &self,
        ctx: &Context,
        candidates: Vec<PlannedMutant>,
        rest: &mut Option<RestOfSuite>,
    ) -> Result<Selected> {
        let log = ctx.logs.join("baseline.log");
        if !self.pytest() {
            let run = self.spawn(ctx.base).run(&self.tests, BASELINE_LIMIT, &log)?;
            require::passed(&run, Subject::Command, BASELINE_LIMIT)?;
            let timeout = mutant_timeout(ctx.options.timeout, run.duration);
            let jobs = candidates
                .into_iter()
                .map(|planned| {
                    let fresh = PythonJob { fresh: Some(Fresh::TestCommand), ..PythonJob::default() };
                    Job::new(planned, self.tests.clone(), timeout, run.duration).with(fresh)
                })
                .collect();
            return Ok(Selected {
                jobs,
                reused: false,
                uncovered: Vec::new(),
                baseline: run.duration,
                first_round: FirstRound::default(),
                step: StepRecord { step: "baseline".to_string(), record: RunRecord::of(How::Fresh, &[&run]) },
            });
        }
        let mut measured = self.measure_tests(ctx, &log, rest.as_ref())?;
        if measured.decisive().is_some_and(|run| !run.passed()) && rest.take().is_some() {
            // The rest of the suite ran beside them: a test that fails only beside another (a
            // port, a file outside the copy) must not fail the check. They run again, alone.
            measured = self.measure_tests(ctx, &log, None)?;
        }
        if let Some(run) = measured.decisive() {
            require::passed(run, Subject::Pytest, BASELINE_LIMIT)?;
        }
        let step = baseline_step("baseline", &measured);
        let map = measured.map.expect("a passing probe run has a map");
        refuse_imports_from_checkout(ctx, &map)?;
        let (jobs, uncovered) = select_each(ctx, &map, candidates, &self.tests, measured.took);
        let whole_files =
            jobs.iter().filter(|job| job.tests == self.tests).map(|job| job.planned.id).collect();
        let first_round =
            FirstRound { preload: map.outside_modules.clone(), whole_files, ..FirstRound::default() };
        Ok(Selected { jobs, reused: measured.reused, uncovered, baseline: measured.took, first_round, step })
    }

    /// The check's tests, unmutated, under the probe watching what the check watches (every
    /// source line when confined, else the plan's statements); their output goes to `log`.
    fn measure_tests(
        &self,
        ctx: &Context,
        log: &Path,
        beside: Option<&RestOfSuite>,
    ) -> Result<coverage::Measured> {
        // Spread over every core, it leaves none to the rest of the suite begun beside it.
        let pause_the_rest = || {
            if let Some(rest) = beside {
                rest.pause();
            }
        };
        coverage::measure(
            &self.probe(ctx),
            &self.memory,
            ctx.options.jobs.get(),
            BASELINE_LIMIT,
            log,
            &pause_the_rest,
        )
    }

    fn probe<'a>(&'a self, ctx: &'a Context) -> coverage::Probe<'a> {
        coverage::Probe {
            python: &self.python,
            runner: &self.runner,
            root: ctx.base,
            support: &self.support,
            files: &self.support,
            tests: &self.tests,
            deselect: &[],
            targets: self.watch.clone().unwrap_or_else(|| coverage::plan_targets(ctx.plan)),
        }
    }

    /// Starts the copies and their collectors of the change's test files, when the coverage
    /// run is about to run (not reused) and mutants may be swapped in.
    fn start_early(&self, ctx: &Context, candidates: usize) -> Result<Option<EarlyStart>> {
        let count = ctx.options.jobs.get().min(candidates);
        if count == 0
            || self.tests.is_empty()
            || !self.swapping(ctx)
            || self.memory.remembers(&self.probe(ctx))
        {
            return Ok(None);
        }
        let roots = self.copies(ctx, count)?;
        let files: BTreeSet<String> =
            self.tests.iter().map(|test| select::file_of(test).to_string()).collect();
        let collectors = self.spawn_collectors(ctx, &roots, &files);
        Ok(Some(EarlyStart { roots, files, collectors }))
    }

    /// `ctx.base` and `count - 1` copies of it (a copy made already, beside the coverage run,
    /// is reused).
    fn copies(&self, ctx: &Context, count: usize) -> Result<Vec<PathBuf>> {
        let mut roots = vec![ctx.base.to_path_buf()];
        for index in 1..count {
            let copy = ctx.scratch.path().join(format!("copy-{index}"));
            if !copy.exists() {
                worktree::duplicate(ctx.base, &copy)?;
            }
            roots.push(copy);
        }
        Ok(roots)
    }

    /// pytest's arguments before the tests, in every run of a mutant.
    fn pytest_args(&self) -> Vec<String> {
        match &self.runner {
            Runner::Pytest { options } => interpreter::pytest_args(options, &[]),
            Runner::Shell(_) => Vec::new(),
        }
    }

    /// The command line a forked or swapped run in the copy at `root` stands for.
    fn equivalent(&self, root: &Path) -> Equivalent {
        Equivalent {
            python: self.python.clone(),
            env: interpreter::environment(&self.python, root, Some(&self.support)),
            pytest_args: self.pytest_args(),
        }
    }

    /// A collector per copy, all collecting the test `files` side by side (spawned from this
    /// thread, which outlives them).
    fn spawn_collectors(
        &self,
        ctx: &Context,
        roots: &[PathBuf],
        files: &BTreeSet<String>,
    ) -> Vec<Result<Collector>> {
        if files.is_empty() {
            let none = || Err(anyhow!("no mutant of this round can be swapped in"));
            return roots.iter().map(|_| none()).collect();
        }
        let mut args = self.pytest_args();
        args.extend(files.iter().cloned());
        roots
            .iter()
            .map(|root| {
                let name = root.file_name().unwrap_or_default().to_string_lossy().into_owned();
                let env = interpreter::environment(&self.python, root, Some(&self.support));
                let files: Vec<PathBuf> = ctx.plan.files.iter().map(|file| root.join(&file.path)).collect();
                let log = ctx.logs.join(format!("collector-{name}.log"));
                Collector::spawn(&self.python, root, &env, &args, &files, log)
            })
            .collect()
    }

    /// Which of `jobs` run the whole suite as it runs (under pytest, naming no test and leaving
    /// none out): a survivor among them needs no confirming.
    fn whole_suite(&self, jobs: &[Job<PythonJob>]) -> Vec<usize> {
        if !self.pytest() {
            return Vec::new();
        }
        let whole = jobs.iter().filter(|job| job.tests.is_empty() && job.data.left_out.is_empty());
        whole.map(|job| job.planned.id).collect()
    }

    /// The test files of the `jobs` that may be swapped in.
    fn collector_files(jobs: &[Job<PythonJob>]) -> BTreeSet<String> {
        jobs.iter()
            .filter(|job| job.data.fresh.is_none())
            .flat_map(|job| &job.tests)
            .map(|test| select::file_of(test).to_string())
            .collect()
    }

    /// Each worker's collector, once it has collected; a worker whose collector does not start
    /// imports every mutant fresh.
    fn attach_collectors(workers: &mut [PythonWorker], spawned: Vec<Result<Collector>>) {
        for (worker, collector) in workers.iter_mut().zip(spawned) {
            worker.swap = match collector.and_then(|collector| collector.ready().map(|()| collector)) {
                Ok(collector) => Swap::On(Box::new(collector)),
                Err(err) => Swap::Unavailable(format!("{err:#}")),
            };
        }
    }

    /// An executor per copy: a warm worker that forks a child per mutant, or (no forking, or
    /// a warm worker whose imports brought in a file the change mutates, which its forks could
    /// not import afresh) a new interpreter per mutant, and then why, for the run record.
    fn executors(
        &self,
        ctx: &Context,
        roots: &[PathBuf],
        preload: &[String],
    ) -> Result<(Executors, Option<String>)> {
        let fresh = || roots.iter().map(|root| Box::new(self.spawn(root)) as Box<dyn Executor>).collect();
        if !(self.pytest() && ctx.options.python.fork) {
            return Ok((fresh(), None));
        }
        let (warm, held) = self.warm_executors(roots, ctx.logs, preload)?;
        let mutated: Vec<String> = ctx
            .plan
            .files
            .iter()
            .filter(|file| held.contains(&file.path))
            .map(|file| file.path.display().to_string())
            .collect();
        if mutated.is_empty() {
            return Ok((warm.into_iter().map(|warm| Box::new(warm) as Box<dyn Executor>).collect(), None));
        }
        let why = format!(
            "every mutant imported in a new interpreter: importing pytest and the modules the tests share imports {} of the project, which a fork of that interpreter could not import afresh",
            mutated.join(", ")
        );
        Ok((fresh(), Some(why)))
    }

    /// A warm worker per copy, importing their modules side by side.
    /// Also returns the files of the project any of them imported before forking.
    fn warm_executors(
        &self,
        roots: &[PathBuf],
        logs: &Path,
        preload: &[String],
    ) -> Result<(Vec<Warm>, BTreeSet<PathBuf>)> {
        let specs = roots.iter().map(|root| WarmSpec {
            python: self.python.clone(),
            script: self.support.join("mutdelta_worker.py"),
            root: root.clone(),
            env: interpreter::environment(&self.python, root, Some(&self.support)),
            preload: preload.to_vec(),
            pytest_options: match &self.runner {
                Runner::Pytest { options } => options.clone(),
                Runner::Shell(_) => Vec::new(),
            },
            log: logs.join(format!("warm-{}.log", root.file_name().unwrap_or_default().to_string_lossy())),
        });
        // Spawned from this thread, which outlives them (they die with the thread that spawned
        // them); they import their modules side by side, and are waited for in turn.
        let spawned: Vec<Result<Warm>> = specs.map(Warm::spawn).collect();
        let mut held = BTreeSet::new();
        let mut ready = Vec::new();
        for warm in spawned {
            let warm = warm?;
            held.extend(warm.ready()?);
            ready.push(warm);
        }
        Ok((ready, held))
    }
}

/// Every line of every Python file under `root` that is not a test file, by path relative to
/// `root`: what the probe watches to learn all the source a test runs.
fn every_source_line(root: &Path) -> Result<BTreeMap<PathBuf, Vec<usize>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<usize>>) -> Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') || name == "__pycache__" {
                continue;
            }
            if entry.file_type()?.is_dir() {
                walk(root, &path, out)?;
                continue;
            }
            let relative = path.strip_prefix(root).expect("under root").to_path_buf();
            if relative.extension().is_some_and(|ext| ext == "py") && !spec::is_test_file(&relative) {
                let count = std::fs::read(&path)?.split(|&b| b == b'\n').count();
                out.insert(relative, (1..=count).collect());
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

/// Each mutant's tests from `map`: a job, or none when no test ran its statement.
fn select_each(
    ctx: &Context,
    map: &CoverageMap,
    candidates: Vec<PlannedMutant>,
    everything: &[String],
    baseline: Duration,
) -> (Vec<Job<PythonJob>>, Vec<PlannedMutant>) {
    let mut jobs = Vec::new();
    let mut uncovered = Vec::new();
    // Every test the coverage run ran, in the suite's order: what running the whole suite
    // runs, which no test argument names.
    let every_test = std::cell::OnceCell::new();
    let every_test = || {
        every_test.get_or_init(|| {
            let mut tests: Vec<&TestCoverage> = map.tests.iter().collect();
            tests.sort_by_key(|test| test.order);
            tests.into_iter().map(|test| test.id.clone()).collect::<Vec<String>>()
        })
    };
    for planned in candidates {
        let file = &ctx.plan.files[planned.file];
        let statement = file.statement_of(planned.mutant.line);
        match select::for_mutant(map, &file.path, &statement, everything, baseline) {
            Selection::Run { tests, in_suite_order, cost, at_import, tried_first } => {
                let timeout = mutant_timeout(ctx.options.timeout, cost);
                let in_suite_order = if in_suite_order == tests { Vec::new() } else { in_suite_order };
                let covers = if tests.is_empty() { every_test().clone() } else { Vec::new() };
                let fresh = at_import.then_some(Fresh::AtImport);
                let data = PythonJob { in_suite_order, tried_first, covers, fresh, ..PythonJob::default() };
                jobs.push(Job::new(planned, tests, timeout, cost).with(data));
            }
            Selection::NoCoverage => uncovered.push(planned),
        }
    }
    (jobs, uncovered)
}

/// How a confined check's tests ran unmutated.
pub enum TestsRun {
    Passed(LinesRun),
    /// Some of them failed.
    Failed,
    /// pytest did not collect some of the tests named (a test class it does not collect).
    NotCollected,
}

/// The source lines some tests ran, per file, and the run that found them.
pub struct LinesRun {
    pub lines: BTreeMap<PathBuf, BTreeSet<usize>>,
    pub step: StepRecord,
}

/// The baseline's findings before the compile check's are joined in.
struct Selected {
    jobs: Vec<Job<PythonJob>>,
    /// The coverage run was an earlier run's, reused.
    reused: bool,
    /// Mutants whose line no test executed.
    uncovered: Vec<PlannedMutant>,
    baseline: Duration,
    first_round: FirstRound,
    step: StepRecord,
}

/// A coverage run's record; a reused one says so, and has no commands.
fn baseline_step(step: &str, measured: &coverage::Measured) -> StepRecord {
    let runs: Vec<&Finished> = measured.runs.iter().collect();
    let step = if measured.reused {
        format!("{step} (reused: an earlier run measured the same files, interpreter and tests)")
    } else {
        step.to_string()
    };
    StepRecord { step, record: RunRecord::of(How::Fresh, &runs) }
}

/// What the compile check found, and how long it took.
struct CompileCheck {
    /// The error of each mutant that does not compile, and of each that compiles to code
    /// already tested, by mutant id.
    found: compile::Compiled,
    took: Duration,
}

/// What the first round's coverage run learned, and what it began for the phases after it:
/// returned by `prove`, handed to `workers`, `widen` and `confirm`.
#[derive(Default)]
pub struct FirstRound {
    /// Modules from outside the project the tests imported: the warm workers import them
    /// before forking.
    preload: Vec<String>,
    /// The mutants it ran against all of the change's test files, whole (their code ran at
    /// import): a second round need not run those files again.
    whole_files: BTreeSet<usize>,
    /// The copies and their collectors, started beside the coverage run; `workers` takes them.
    early: Option<EarlyStart>,
    /// The second round's coverage run, begun beside the first round; `widen` takes it.
    rest: Option<RestOfSuite>,
    /// The mutants whose tests were the whole suite as it runs (no test named, none left out):
    /// `--confirm-survivors` would only run them again.
    ran_whole_suite: BTreeSet<usize>,
}

/// The second round's coverage run: the rest of the suite (every test but those of the change's
/// test files), watching every statement of the plan. The question reads the same whichever
/// mutants are left open, and is known before the first round runs, so that a run begun
/// beside the first round, and a re-run, can answer it.
impl PythonCheck {
    fn rest_probe<'a>(&'a self, ctx: &'a Context) -> coverage::Probe<'a> {
        coverage::Probe {
            python: &self.python,
            runner: &self.runner,
            root: ctx.base,
            support: &self.support,
            files: &self.support,
            tests: &[],
            deselect: &self.tests,
            targets: coverage::plan_targets(ctx.plan),
        }
    }

    /// Measures the rest of the suite now, in the state under test.
    fn measure_rest(&self, ctx: &Context) -> Result<coverage::Measured> {
        let probe = self.rest_probe(ctx);
        let log = ctx.logs.join("baseline-rest.log");
        coverage::measure(&probe, &self.memory, ctx.options.jobs.get(), BASELINE_LIMIT, &log, &|| {})
    }

    /// Begins measuring the rest of the suite beside the first round, in a copy no mutant is
    /// written to (made now, before any is), on the cores its `mutants` leave (at least one);
    /// on idle CPU time while only a survivor could need it. Not when an earlier run's
    /// measurement answers the question already.
    fn begin_rest(&self, ctx: &Context, mutants: usize, idle: bool) -> Result<Option<RestOfSuite>> {
        let question = self.rest_probe(ctx);
        if !self.second_round() || self.memory.remembers(&question) {
            return Ok(None);
        }
        let root = ctx.scratch.path().join("copy-rest");
        worktree::duplicate(ctx.base, &root)?;
        let spec = RestSpec {
            python: self.python.clone(),
            runner: self.runner.clone(),
            support: self.support.clone(),
            files: self.support.join("rest"),
            root,
            deselect: self.tests.clone(),
            targets: question.targets,
            memory: Arc::clone(&self.memory),
            shards: ctx.options.jobs.get(),
            shards_at_first: ctx.options.jobs.get().saturating_sub(mutants).max(1),
            log: ctx.logs.join("baseline-rest-beside.log"),
        };
        Ok(Some(RestOfSuite::begin(spec, idle)?))
    }
}

impl LanguageCheck for PythonCheck {
    type Data = PythonJob;
    type Evidence = FirstRound;
    type Worker = PythonWorker;
    const LANGUAGE: Language = spec::LANGUAGE;

    /// Only when the change's own test files ran first, under pytest.
    fn second_round(&self) -> bool {
        !self.tests.is_empty() && self.pytest() && self.widens
    }

    /// The interpreter with its packages, the runner and the environment; a changed test
    /// module counts only for the mutants whose tests it holds.
    fn verdict_scope(&self, _ctx: &Context) -> Option<crate::run::verdicts::Scope> {
        let interpreter = interpreter::fingerprint(&self.python).ok()?;
        let identity =
            format!("{interpreter}\n{:?}\n{}", self.runner, crate::cache::environment_fingerprint());
        Some(crate::run::verdicts::Scope { identity, test_module: spec::is_test_module })
    }

    fn prove(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<Proven<FirstRound, PythonJob>> {
        let mut early = self.start_early(ctx, candidates.len())?;
        // The first coverage run is one process until it proves slow (then the rest of the
        // suite pauses until it ends): with a second core, the rest of the suite starts beside
        // it. Begun or not, the second round measures what it needs: a failure to begin it
        // costs only time.
        let mut rest = None;
        if ctx.options.jobs.get() > 1 {
            rest = self.begin_rest(ctx, candidates.len(), false).unwrap_or(None);
        }
        // The compile check needs no tests: it overlaps the unmutated run.
        let (compiled, selected) = std::thread::scope(|scope| {
            let compiling = scope.spawn(|| {
                let started = Instant::now();
                compile::compile_check(&self.python, ctx.plan, &candidates, ctx.cache)
                    .map(|found| CompileCheck { found, took: started.elapsed() })
            });
            let selected = self.select(ctx, candidates.clone(), &mut rest);
            (compiling.join().map_err(|_| anyhow!("the compile check panicked")), selected)
        });
        if !matches!(&selected, Ok(selected) if !selected.jobs.is_empty()) {
            early = None; // no worker will need them
        }
        if selected.is_err() {
            rest = None;
        }
        // A changed file that does not compile explains a failing baseline: report that first.
        let CompileCheck { found, took: compile } = compiled??;
        let Selected { jobs, reused, uncovered, baseline, mut first_round, step } = selected?;
        // A mutant that does not compile is CompileError whatever its selection said: it is
        // never run and never counted as caught. One that compiles to the original's code, or
        // to another mutant's, is no mutant of its own: Ignored, with the reason, not run.
        let compile_error = |planned: &PlannedMutant| {
            let error = found.errors.get(&planned.id);
            let compile_error = error.map(|error| Outcome::settled(Status::CompileError, error.clone()));
            compile_error.or_else(|| {
                let same = found.equivalent.get(&planned.id)?;
                Some(Outcome::settled(Status::Ignored, same.reason()))
            })
        };
        let mut settled = Vec::new();
        let mut runnable = Vec::new();
        for job in jobs {
            match compile_error(&job.planned) {
                Some(outcome) => settled.push(outcome.for_mutant(job.planned)),
                None => runnable.push(job),
            }
        }
        first_round.ran_whole_suite.extend(self.whole_suite(&runnable));
        // With every line covered, only a survivor could need the rest of the suite.
        match &rest {
            Some(begun) => {
                if uncovered.is_empty() {
                    begun.yield_the_cpu();
                }
                begun.resume();
            }
            None => rest = self.begin_rest(ctx, runnable.len(), uncovered.is_empty()).unwrap_or(None),
        }
        first_round.early = early;
        first_round.rest = rest;
        for planned in uncovered {
            let outcome = compile_error(&planned)
                .unwrap_or_else(|| Outcome::settled(Status::NoCoverage, "no test runs this line"));
            settled.push(outcome.for_mutant(planned));
        }
        Ok(Proven {
            jobs: runnable,
            settled,
            baseline,
            what: self.describe_tests(),
            reused,
            compile,
            build: Duration::ZERO,
            evidence: first_round,
            steps: vec![step],
        })
    }

    fn workers(
        &self,
        ctx: &Context,
        first_round: &mut FirstRound,
        count: usize,
        jobs: &[Job<PythonJob>],
    ) -> Result<Started<PythonWorker>> {
        let roots = self.copies(ctx, count)?;
        // The collectors import the project and collect the tests while the warm workers start
        // (or started beside the coverage run, when they collect what these jobs need), and
        // before any canary or mutant is written into a copy.
        let swapping = self.swapping(ctx);
        let files = PythonCheck::collector_files(jobs);
        let early = first_round.early.take();
        let collectors = match early {
            Some(early)
                if !files.is_empty() && files.is_subset(&early.files) && early.roots.len() >= count =>
            {
                early.collectors.into_iter().take(count).collect()
            }
            early => {
                drop(early); // they collected other tests: they stop before the new ones start
                if swapping {
                    self.spawn_collectors(ctx, &roots, &files)
                } else {
                    Vec::new()
                }
            }
        };
        let (executors, fresh_why) = self.executors(ctx, &roots, &first_round.preload)?;
        let mut workers: Vec<PythonWorker> = roots
            .into_iter()
            .zip(executors)
            .map(|(root, executor)| PythonWorker {
                equivalent: self.equivalent(&root),
                root,
                executor,
                pytest: self.pytest(),
                swap: Swap::Off,
                unswappable: BTreeMap::new(),
                // The baselines ran these selections unmutated, in full and in order: the
                // change's tests, and (both rounds together) the whole suite.
                verified: HashMap::from([(self.tests.clone(), true), (Vec::new(), true)]),
                short_limits: ctx.options.timeout.is_none(),
                quick_unmutated: HashMap::new(),
            })
            .collect();
        if swapping {
            PythonCheck::attach_collectors(&mut workers, collectors);
        }
        let mut steps: Vec<StepRecord> = fresh_why
            .map(|step| StepRecord { step, record: RunRecord::of(How::Fresh, &[]) })
            .into_iter()
            .collect();
        steps.extend(prove_canaries(ctx, &mut workers[0], jobs)?);
        if swapping {
            steps.extend(prove_swap(ctx, &mut workers, jobs)?);
        }
        Ok(Started { workers, steps })
    }

    /// The first round's collectors collected the change's tests only: when enough of the
    /// second round's mutants could be swapped in, each worker gets a collector of the test
    /// files they need. A collector collects all of those files, a fresh import only its
    /// mutant's: it pays off from a few mutants per worker.
    fn prove_round(
        &self,
        ctx: &Context,
        workers: &mut [PythonWorker],
        jobs: &[Job<PythonJob>],
    ) -> Result<Vec<StepRecord>> {
        let swapping = self.swapping(ctx);
        let swappable = jobs.iter().filter(|job| job.data.fresh.is_none()).count();
        if !swapping || swappable < SWAPPED_PER_COLLECTOR * workers.len() {
            return prove_canaries(ctx, &mut workers[0], jobs);
        }
        for worker in workers.iter_mut() {
            worker.swap = Swap::Off; // the old collector ends before the new one starts
        }
        let roots: Vec<PathBuf> = workers.iter().map(|worker| worker.root.clone()).collect();
        let collectors = self.spawn_collectors(ctx, &roots, &PythonCheck::collector_files(jobs));
        PythonCheck::attach_collectors(workers, collectors);
        let mut steps = prove_canaries(ctx, &mut workers[0], jobs)?;
        steps.extend(prove_swap(ctx, workers, jobs)?);
        Ok(steps)
    }

    /// The change's own tests ran first. A mutant they let survive, or whose statement they did
    /// not run, faces the rest of the suite as the project's configuration collects it
    /// (doctests included): one more coverage run, watching only those statements, leaving
    /// out the tests that already ran.
    fn widen(
        &self,
        ctx: &Context,
        first_round: &mut FirstRound,
        results: &[MutantResult],
    ) -> Result<Option<Widened<PythonJob>>> {
        if !self.second_round() {
            return Ok(None); // the whole suite, the user's command, or the tests asked for ran already
        }
        let open: Vec<PlannedMutant> = results
            .iter()
            .filter(|result| crate::run::language::is_open(result.outcome.status))
            .map(|result| result.planned.clone())
            .collect();
        // Taken even when no mutant is left open: then it is stopped here.
        let begun = first_round.rest.take();
        if open.is_empty() {
            return Ok(None);
        }
        let (measured, beside) = match begun.map(|begun| (begun.yielded(), begun.finish())) {
            Some((yielded, Some(measured))) => (measured, Some(yielded)),
            _ => (self.measure_rest(ctx)?, None),
        };
        let what = "the rest of the test suite".to_string();
        let step = match beside {
            Some(true) => "baseline of the rest of the suite (begun beside the first round, on idle CPU while only a survivor could need it)",
            Some(false) => "baseline of the rest of the suite (begun beside the first round)",
            None => "baseline of the rest of the suite",
        };
        let step = baseline_step(step, &measured);
        let (baseline, reused) = (measured.took, measured.reused);
        if let Some(run) = measured.decisive() {
            if run.exit == crate::model::record::Exit::Code(5) {
                // Nothing left to collect: the change's tests are the whole suite.
                let steps = vec![step];
                return Ok(Some(Widened {
                    jobs: Vec::new(),
                    baseline,
                    what,
                    reused,
                    nothing_else: true,
                    steps,
                }));
            }
            require::passed(run, Subject::RestOfSuite, BASELINE_LIMIT)?;
        }
        let map = measured.map.expect("a passing probe run has a map");
        refuse_imports_from_checkout(ctx, &map)?;
        let (mut jobs, _still_uncovered) = select_each(ctx, &map, open, &[], baseline);
        // A mutant that faces the whole suite here (its code ran at import) need not face
        // again the test files the first round ran against it in full.
        let files: Vec<String> =
            self.tests.iter().filter(|test| test.ends_with(".py") && !test.contains("::")).cloned().collect();
        for job in jobs.iter_mut() {
            if job.tests.is_empty() && first_round.whole_files.contains(&job.planned.id) {
                job.data.left_out = files.clone();
            }
        }
        first_round.ran_whole_suite.extend(self.whole_suite(&jobs));
        Ok(Some(Widened { jobs, baseline, what, reused, nothing_else: false, steps: vec![step] }))
    }

    /// Each survivor against the whole suite, as it runs (pytest's own order, `-x`), in a
    /// fresh import: the tests that run its line passed, but a test that runs after them may
    /// read what the line made (a memo, a registry) without running it.
    fn confirm(
        &self,
        ctx: &Context,
        first_round: &FirstRound,
        results: &[MutantResult],
        baseline: Duration,
    ) -> Vec<Job<PythonJob>> {
        if !(self.confirm_survivors && self.pytest() && self.widens) {
            return Vec::new(); // the user's command is the whole suite; an audit is confined
        }
        language::survivors(results)
            .filter(|planned| !first_round.ran_whole_suite.contains(&planned.id))
            .map(|planned| {
                let timeout = mutant_timeout(ctx.options.timeout, baseline);
                let fresh = PythonJob { fresh: Some(Fresh::Confirming), ..PythonJob::default() };
                Job::new(planned.clone(), Vec::new(), timeout, baseline).with(fresh)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_test_files_follow_pytest_discovery_rules() {
        for test in ["tests/test_a.py", "test_a.py", "pkg/a_test.py", "conftest.py", "tests/helpers.py"] {
            assert!(spec::is_test_file(Path::new(test)), "{test}");
        }
        for source in ["pkg/a.py", "testing.py", "src/contest.py", "latest/x.py"] {
            assert!(!spec::is_test_file(Path::new(source)), "{source}");
        }
    }
}
