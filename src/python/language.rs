//! `PythonCheck` as the runner's `LanguageCheck`: each phase (prove, workers, a later round's proof, the second round, the confirmation) from the state the one before returned.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

use super::check::{FirstRound, PythonCheck, SWAPPED_PER_COLLECTOR};
use super::first_round::{baseline_step, select_each, CompileCheck, Selected};
use super::job::{Fresh, PythonJob};
use super::proof::{prove_canaries, prove_swap, refuse_imports_from_checkout};
use super::refusal::PythonRun;
use super::rest::RestOfSuite;
use super::worker::{PythonWorker, Swap};
use super::{compile, coverage, interpreter, spec};
use crate::model::outcome::{MutantResult, Outcome, Status};
use crate::model::plan::{Language, PlannedMutant};
use crate::model::record::{How, RunRecord, StepRecord};
use crate::run::event;
use crate::run::job::Job;
use crate::run::language::{self, Context, LanguageCheck, Proven, Rounds, RoundsOf, Started, Widened};
use crate::run::require;
use crate::run::timeouts::{mutant_timeout, BASELINE_LIMIT};

impl LanguageCheck for PythonCheck {
    type Data = PythonJob;
    type Evidence = FirstRound;
    type Worker = PythonWorker;
    const LANGUAGE: Language = spec::LANGUAGE;

    /// The interpreter with its packages, the runner and the environment; a changed test
    /// module counts only for the mutants whose tests it holds.
    fn verdict_scope(&self, _ctx: &Context) -> Option<crate::run::verdicts::Scope> {
        let interpreter = interpreter::fingerprint(&self.python).ok()?;
        let identity =
            format!("{interpreter}\n{:?}\n{}", self.runner, crate::cache::environment_fingerprint());
        Some(crate::run::verdicts::Scope { identity, test_module: spec::is_test_module })
    }

    /// Every test the test-impact map kept, by why: those of the change's test files and of the
    /// rest of the suite alike.
    fn floor(&self) -> Vec<crate::model::report::Floor> {
        self.impact.floor_by_reason(&|_| true)
    }

    fn prove(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<Proven<FirstRound, PythonJob>> {
        let mut early = self.start_early(ctx, candidates.len())?.or_else(|| self.take_begun());
        // The first coverage run is one process until it proves slow (then the rest of the
        // suite pauses until it ends): with a second core, the rest of the suite starts beside
        // it, unless the check begins it only once a mutant needs it. Begun or not, the second
        // round measures what it needs: a failure to begin it costs only time.
        let mut rest = None;
        if ctx.options.jobs.get() > 1 && self.rest_before_needed {
            rest = self.begin_rest(ctx, candidates.len(), false).unwrap_or(None);
        }
        // The compile check needs no tests: it overlaps the unmutated run.
        let (compiled, selected) = std::thread::scope(|scope| {
            let compiling = scope.spawn(|| {
                let started = Instant::now();
                compile::compile_check(&self.python, ctx.plan, &candidates, ctx.cache)
                    .map(|found| CompileCheck { found, took: started.elapsed() })
            });
            event::set_stage(Some("the unmutated tests, with the compile check beside them"));
            let selected = self.select(ctx, candidates.clone(), &mut rest);
            if !compiling.is_finished() {
                event::set_stage(Some("the compile check (the unmutated tests are over)"));
            }
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
        let Selected { jobs, reused, uncovered, baseline, mut first_round, step, what } = selected?;
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
        let rest = self.rest_once_covered(ctx, rest, runnable.len(), uncovered.is_empty());
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
            what,
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
        // The warm workers and collectors started beside the coverage run are taken over (the
        // collectors when they collect what these jobs need: others stop before new ones
        // start). A collector is forked from its copy's warm worker once it has started, and
        // collects before any canary or mutant is written into a copy.
        let swapping = self.swapping(ctx);
        let files = PythonCheck::collector_files(jobs);
        let (early_warm, early_collectors) = match first_round.early.take() {
            Some(early) if early.roots.len() >= count => {
                let collected = !files.is_empty() && files.is_subset(&early.files);
                let collectors =
                    collected.then(|| early.collectors.into_iter().take(count).collect::<Vec<_>>());
                (early.warm.into_iter().take(count).collect(), collectors)
            }
            _ => (Vec::new(), None),
        };
        let (mut executors, fresh_why, unused_warm) =
            self.executors(ctx, &roots, &first_round.preload, early_warm)?;
        let collectors = match early_collectors {
            Some(collectors) => collectors,
            None if swapping => {
                let parents = executors.iter_mut().map(|executor| executor.warm_worker()).collect();
                self.spawn_collectors(ctx, &roots, &files, parents)
            }
            None => Vec::new(),
        };
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
                passed_unmutated: HashMap::new(),
                extra_verifications: 0,
                fails_unmutated: Default::default(),
                flaky: ctx.flaky.clone(),
                short_limits: ctx.options.timeout.is_none(),
                quick_unmutated: HashMap::new(),
                beside: first_round.rest.as_ref().map(RestOfSuite::watch),
            })
            .collect();
        if swapping {
            PythonCheck::attach_collectors(&mut workers, collectors);
        }
        // The collectors forked from them have connected, or given up: they may end now.
        drop(unused_warm);
        let mut steps: Vec<StepRecord> = fresh_why
            .map(|step| StepRecord { step, record: RunRecord::of(How::Fresh, &[]) })
            .into_iter()
            .collect();
        // The canaries run after the round, for the files with no kill (`prove_unseen`).
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
        let parents = workers.iter_mut().map(|worker| worker.executor.warm_worker()).collect();
        let collectors = self.spawn_collectors(ctx, &roots, &PythonCheck::collector_files(jobs), parents);
        PythonCheck::attach_collectors(workers, collectors);
        let mut steps = prove_canaries(ctx, &mut workers[0], jobs)?;
        steps.extend(prove_swap(ctx, workers, jobs)?);
        Ok(steps)
    }

    fn rounds(&self) -> Option<&RoundsOf<Self>> {
        Some(self)
    }
}

impl Rounds for PythonCheck {
    type Data = PythonJob;
    type Evidence = FirstRound;
    type Worker = PythonWorker;

    /// Only when the change's own test files ran first, under pytest.
    fn widens(&self) -> bool {
        !self.tests.is_empty() && self.pytest() && self.widens
    }

    /// A kill shows the tests saw the mutants of its file; each file with none (all its
    /// mutants survived, timed out or broke) has its canary: its tests must fail when it is
    /// broken, or no survivor of it can be believed.
    fn prove_unseen(
        &self,
        ctx: &Context,
        workers: &mut [PythonWorker],
        jobs: &[Job<PythonJob>],
        ran: &[MutantResult],
    ) -> Result<Vec<StepRecord>> {
        let seen: BTreeSet<usize> = ran
            .iter()
            .filter(|result| result.outcome.status == Status::Killed)
            .map(|result| result.planned.file)
            .collect();
        let unseen: Vec<Job<PythonJob>> =
            jobs.iter().filter(|job| !seen.contains(&job.planned.file)).cloned().collect();
        prove_canaries(ctx, &mut workers[0], &unseen)
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
        if !self.widens() {
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
        if let Some(tests) = &self.impact.nothing_left {
            return Ok(Some(self.nothing_left_to_run(tests)));
        }
        let (measured, beside) = match begun.map(|begun| (begun.yielded(), begun.finish())) {
            Some((yielded, Some(measured))) => (measured, Some(yielded)),
            _ => (self.measure_rest(ctx)?, None),
        };
        super::first_round::heed_flaky(ctx, &measured);
        let deselected = measured.map.as_ref().map_or(&[][..], |map| &map.deselected[..]);
        let impact = self.impact_words(deselected, true);
        let what = match &impact {
            Some(impact) => format!("the rest of the test suite ({impact})"),
            None => "the rest of the test suite".to_string(),
        };
        let step = baseline_step(&rest_step(beside, impact.as_deref()), &measured);
        let (baseline, reused) = (measured.took, measured.reused);
        let map_left_out = |map: &coverage::CoverageMap| {
            map.deselected.iter().any(|test| self.impact.tests.contains_key(test))
        };
        if let Some(run) = measured.decisive() {
            let left_out_by_map = measured.map.as_ref().is_some_and(map_left_out);
            if run.exit == crate::model::record::Exit::Code(5) && !left_out_by_map {
                // Nothing left to collect: the change's tests are the whole suite.
                let steps = vec![step];
                let why = format!("{what} holds no test: the change's tests are the whole suite");
                return Ok(Some(Widened {
                    jobs: Vec::new(),
                    baseline,
                    what,
                    reused,
                    nothing_else: Some(why),
                    steps,
                }));
            }
            if run.exit != crate::model::record::Exit::Code(5) {
                require::passed(run, &PythonRun::RestOfSuite, BASELINE_LIMIT)?;
            }
        }
        let map =
            measured.map.expect("a passing probe run, or one whose tests the map all left out, has a map");
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
        self.try_likely_first(ctx, &mut jobs, &map);
        first_round.ran_whole_suite.extend(self.whole_suite(&jobs));
        Ok(Some(Widened { jobs, baseline, what, reused, nothing_else: None, steps: vec![step] }))
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
        if !(self.pytest() && self.widens) {
            return Vec::new(); // the user's command is the whole suite; an audit is confined
        }
        // A kill the audit carried that seems lost is confirmed whatever the option says.
        let confirms =
            |planned: &PlannedMutant| self.confirm_survivors || ctx.plan.carried.contains(&planned.id);
        language::survivors(results)
            .filter(|planned| confirms(planned) && !first_round.ran_whole_suite.contains(&planned.id))
            .map(|planned| {
                let timeout = mutant_timeout(ctx.options.timeout, baseline);
                let fresh = PythonJob { fresh: Some(Fresh::Confirming), ..PythonJob::default() };
                Job::new(planned.clone(), Vec::new(), timeout, baseline).with(fresh)
            })
            .collect()
    }
}

/// The name of the rest of the suite's step: how it was begun (`beside` the first round, and
/// whether on idle CPU only; none: when the second round needed it) and what the test-impact
/// map did for it.
fn rest_step(beside: Option<bool>, impact: Option<&str>) -> String {
    let step = match beside {
        Some(true) => "baseline of the rest of the suite (begun beside the first round, on idle CPU while only a survivor could need it)",
        Some(false) => "baseline of the rest of the suite (begun beside the first round)",
        None => "baseline of the rest of the suite",
    };
    match impact {
        Some(impact) => format!("{step}; {impact}"),
        None => step.to_string(),
    }
}
