//! The first round's baseline: the change's tests (or the whole suite) once under the coverage probe, the copies, warm workers and collectors started beside it, and each mutant's tests selected from what it ran; a confined check's lines run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::check::{EarlyStart, FirstRound, PythonCheck};
use super::coverage::{CoverageMap, TestCoverage};
use super::executor::{Executor, Warm};
use super::job::{Fresh, PythonJob};
use super::proof::refuse_imports_from_checkout;
use super::refusal::{self, PythonRun};
use super::rest::RestOfSuite;
use super::select::Selection;
use super::{compile, coverage, pytest, select, tried_first};
use crate::model::plan::PlannedMutant;
use crate::model::record::{Exit, Finished, How, RunRecord, StepRecord};
use crate::run::job::Job;
use crate::run::language::Context;
use crate::run::require;
use crate::run::timeouts::{mutant_timeout, BASELINE_LIMIT};

impl PythonCheck {
    /// Every line of the project's Python source files (test files left out) in `ctx.base`
    /// that the tests of a confined check executed, unmutated, under the probe; with the run.
    /// The copies, warm workers and collectors the round after it needs start beside that run.
    pub(super) fn lines_run(&self, ctx: &Context) -> Result<TestsRun> {
        let early = self.start_early(ctx, ctx.options.jobs.get())?;
        let measured = self.measure_tests(ctx, &ctx.logs.join("lines-run.log"), None)?;
        heed_flaky(ctx, &measured);
        if let Some(run) = measured.decisive() {
            if run.exit == crate::model::record::Exit::Code(1) {
                return Ok(TestsRun::Failed);
            }
            if run.exit == crate::model::record::Exit::Code(4) && pytest::lost_tests(&run.tail) {
                return Ok(TestsRun::NotCollected);
            }
            require::passed(run, &PythonRun::Pytest(self.describe_tests()), BASELINE_LIMIT)?;
        }
        let step = baseline_step("the edited tests before the change", &measured);
        let map = measured.map.expect("a passing probe run has a map");
        *self.begun.lock().unwrap_or_else(|e| e.into_inner()) = early;
        let mut lines: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
        for test in map.tests {
            for (file, ran) in test.lines {
                lines.entry(file).or_default().extend(ran);
            }
        }
        Ok(TestsRun::Passed(LinesRun { lines, step }))
    }

    /// The copies, warm workers and collectors `lines_run` started, for the round after it.
    pub(super) fn take_begun(&self) -> Option<EarlyStart> {
        self.begun.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Runs the unmutated tests (under the coverage probe with pytest); returns the run's
    /// duration, the coverage map (none under a test command) and the jobs.
    /// The rest of the suite begun beside them (`rest`) pauses while they take every core, and
    /// is stopped when they fail beside it.
    pub(super) fn select(
        &self,
        ctx: &Context,
        candidates: Vec<PlannedMutant>,
        rest: &mut Option<RestOfSuite>,
    ) -> Result<Selected> {
        let log = ctx.logs.join("baseline.log");
        if !self.pytest() {
            let run = self.spawn(ctx.base).run(&self.tests, BASELINE_LIMIT, &log)?;
            require::passed(&run, &PythonRun::Command, BASELINE_LIMIT)?;
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
                what: self.describe_tests(),
            });
        }
        let mut measured = self.measure_tests(ctx, &log, rest.as_ref())?;
        if measured.decisive().is_some_and(|run| !run.passed()) && rest.take().is_some() {
            // The rest of the suite ran beside them: a test that fails only beside another (a
            // port, a file outside the copy) must not fail the check. They run again, alone.
            measured = self.measure_tests(ctx, &log, None)?;
        }
        heed_flaky(ctx, &measured);
        if let Some(run) = measured.decisive() {
            let words = crate::words::describe_tests(&self.tests);
            let refused = require::passed(run, &PythonRun::Pytest(words.clone()), BASELINE_LIMIT);
            let alone = self.widens && self.watch.is_none() && !self.tests.is_empty();
            if let (Err(refusal), true, Exit::Code(1 | 2)) = (&refused, alone, &run.exit) {
                let first = refusal::first_failure(&run.tail).map(str::to_string);
                return Err(FailAlone { tests: words, first, refusal: refusal.to_string() }.into());
            }
            refused?;
        }
        let map = measured.map.take().expect("a passing probe run has a map");
        // Of the change's test files, the map leaves out the tests it proves, as of the rest.
        let words = self.impact_words(&map.deselected, self.tests.is_empty());
        let (step, what) = match words {
            Some(words) => (
                baseline_step(&format!("baseline; {words}"), &measured),
                format!("{} ({words})", self.describe_tests()),
            ),
            None => (baseline_step("baseline", &measured), self.describe_tests()),
        };
        refuse_imports_from_checkout(ctx, &map)?;
        let (mut jobs, uncovered) = select_each(ctx, &map, candidates, &self.tests, measured.took);
        if self.suite_context {
            in_suite_context(ctx, &mut jobs, measured.took);
        }
        self.try_likely_first(ctx, &mut jobs, &map);
        let whole_files =
            jobs.iter().filter(|job| job.tests == self.tests).map(|job| job.planned.id).collect();
        let first_round =
            FirstRound { preload: map.outside_modules.clone(), whole_files, ..FirstRound::default() };
        Ok(Selected {
            jobs,
            reused: measured.reused,
            uncovered,
            baseline: measured.took,
            first_round,
            step,
            what,
        })
    }

    /// The check's tests, unmutated, under the probe watching what the check watches (every
    /// source line when confined, else the plan's statements); their output goes to `log`.
    pub(super) fn measure_tests(
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

    /// Starts the copies, their warm workers and the collectors they fork of the change's test
    /// files, when the coverage run is about to run (not reused) and mutants may be swapped in.
    pub(super) fn start_early(&self, ctx: &Context, candidates: usize) -> Result<Option<EarlyStart>> {
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
        let mut warm: Vec<Warm> =
            self.spawn_warm(&roots, ctx.logs, &[]).into_iter().collect::<Result<_>>().unwrap_or_default();
        let parents = warm.iter_mut().map(|warm| warm.warm_worker()).collect();
        let collectors = self.spawn_collectors(ctx, &roots, &files, parents);
        Ok(Some(EarlyStart { roots, files, warm, collectors }))
    }

    /// `tried_first::try_likely_first` for the mutants whose line ran at import: the tests whose
    /// files import its module, or that the test-impact map saw run its file's functions.
    pub(super) fn try_likely_first(&self, ctx: &Context, jobs: &mut [Job<PythonJob>], map: &CoverageMap) {
        if jobs.iter().any(|job| job.data.fresh == Some(Fresh::AtImport)) {
            let users = self.users_of_files(ctx);
            let mut likely = tried_first::importers_and_users(ctx.base, &users);
            tried_first::try_likely_first(jobs, ctx.plan, map, &mut likely);
        }
    }
}

/// Each mutant's tests from `map`: a job, or none when no test ran its statement.
pub(super) fn select_each(
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

/// Each job runs the whole suite, in its order, in a fresh process (`Fresh::SuiteContext`),
/// within the whole suite's limit (it took `whole` unmutated); the tests that ran its line stay
/// what the report says it ran under.
fn in_suite_context(ctx: &Context, jobs: &mut [Job<PythonJob>], whole: Duration) {
    for job in jobs {
        let covering = std::mem::take(&mut job.tests);
        if !covering.is_empty() {
            job.data.covers = covering;
        }
        job.data.in_suite_order = Vec::new();
        job.data.tried_first = Vec::new();
        job.data.fresh = Some(Fresh::SuiteContext);
        job.timeout = mutant_timeout(ctx.options.timeout, whole);
    }
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
pub(super) struct Selected {
    pub(super) jobs: Vec<Job<PythonJob>>,
    /// The coverage run was an earlier run's, reused.
    pub(super) reused: bool,
    /// Mutants whose line no test executed.
    pub(super) uncovered: Vec<PlannedMutant>,
    pub(super) baseline: Duration,
    pub(super) first_round: FirstRound,
    pub(super) step: StepRecord,
    /// Which tests ran, in words (and what the test-impact map left out).
    pub(super) what: String,
}

/// Tells the check's flaky tests what a coverage run found: the tests that failed and then
/// passed, those the project marks flaky, and the reruns it asks of pytest-rerunfailures.
pub(super) fn heed_flaky(ctx: &Context, measured: &coverage::Measured) {
    for found in &measured.flaky {
        ctx.flaky.seen(&found.test, found.runs, found.failures, &found.fingerprints);
    }
    if let Some(map) = &measured.map {
        for test in &map.marked_flaky {
            ctx.flaky.marked(test);
        }
        ctx.flaky.rerun_by_project(map.reruns);
    }
}

/// A coverage run's record; a reused one, or one this check answered before, says so and has
/// no commands; a flaky test it ran again is named.
pub(super) fn baseline_step(step: &str, measured: &coverage::Measured) -> StepRecord {
    let runs: Vec<&Finished> = measured.runs.iter().collect();
    let step = if measured.reused {
        format!("{step} (reused: an earlier run measured the same files, interpreter and tests)")
    } else if measured.answered_before {
        format!("{step} (answered by this check's earlier measurement of the same files and tests)")
    } else {
        step.to_string()
    };
    let flaky: Vec<String> = measured
        .flaky
        .iter()
        .map(|found| format!("{} failed {} of {} runs", found.test, found.failures, found.runs))
        .collect();
    let step = match flaky.is_empty() {
        true => step,
        false => format!("{step}; flaky, run again until they passed: {}", flaky.join(", ")),
    };
    StepRecord { step, record: RunRecord::of(How::Fresh, &runs) }
}

/// What the compile check found, and how long it took.
pub(super) struct CompileCheck {
    /// The error of each mutant that does not compile, and of each that compiles to code
    /// already tested, by mutant id.
    pub(super) found: compile::Compiled,
    pub(super) took: Duration,
}

/// The change's test files failed when run apart from the rest of the suite, before any
/// mutation (tests failing, or a file failing to import): they may pass in the suite's order,
/// needing what another test file sets up as pytest imports it. The plugin then runs the whole
/// suite as the first round; where that fails too, its refusal is the check's.
#[derive(Debug, thiserror::Error)]
#[error("{refusal}")]
pub struct FailAlone {
    /// The change's test files, in words.
    tests: String,
    /// The first failure pytest named.
    first: Option<String>,
    /// The refusal of their run.
    refusal: String,
}

impl FailAlone {
    /// ` (first failure: tests/test_a.py::test_x - KeyError: 'kg')`, when pytest named one.
    fn first_failure(&self) -> String {
        self.first.as_ref().map(|first| format!(" (first failure: {first})")).unwrap_or_default()
    }

    /// What the progress says as the whole suite starts in their stead.
    pub fn retrying(&self) -> String {
        format!(
            "baseline: {} failed when run apart from the rest of the suite{}: running the whole test suite instead",
            self.tests,
            self.first_failure()
        )
    }

    /// What the report says once the whole suite passed in their stead.
    pub fn note(&self) -> String {
        format!(
            "{} failed when run apart from the rest of the suite, before any mutation{}, but the whole test suite passes: it ran as the first round instead, each mutant meeting it whole, in its order",
            self.tests,
            self.first_failure()
        )
    }
}
