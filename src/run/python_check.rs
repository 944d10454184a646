//! The Python side of a check: the coverage run as baseline, the compile check beside it, canaries, warm workers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use super::baseline::{mutant_timeout, prove_canary, require_pass, BASELINE_LIMIT};
use super::coverage::{self, CoverageMap};
use super::executor::{Executor, Spawn, Warm};
use super::pool::{self, Job, Judge, Worker};
use super::warm::WarmSpec;
use super::{verdict, Event};
use crate::options::{Options, TestRunner};
use crate::plan::{Language, Plan, PlannedMutant};
use crate::python;
use crate::report::{MutantResult, Report, Status, Timings};
use crate::scratch::Scratch;
use crate::select::{self, Selection};
use crate::worktree;

/// Everything the test runs of one check share.
pub struct Session<'a> {
    options: &'a Options,
    plan: &'a Plan,
    /// The relevant tests (empty: the whole suite).
    tests: &'a [String],
    python: PathBuf,
    repo_root: &'a Path,
    scratch: &'a Scratch,
    logs: PathBuf,
    /// mutdelta's Python helpers (the probe plugin, the warm worker), on every test's PYTHONPATH.
    support: PathBuf,
    preload: std::cell::RefCell<Vec<String>>,
}

const WORKER_SCRIPT: &str = include_str!("../python/worker.py");

impl<'a> Session<'a> {
    pub fn new(
        options: &'a Options,
        report: &'a Report,
        python: PathBuf,
        repo_root: &'a Path,
        scratch: &'a Scratch,
    ) -> Result<Session<'a>> {
        let logs = scratch.subdir("logs")?;
        let support = scratch.subdir("support")?;
        std::fs::write(support.join(format!("{}.py", coverage::PROBE_MODULE)), coverage::PROBE_SOURCE)?;
        std::fs::write(support.join("mutdelta_worker.py"), WORKER_SCRIPT)?;
        Ok(Session {
            options,
            plan: &report.plan,
            tests: &report.tests,
            python,
            repo_root,
            scratch,
            logs,
            support,
            preload: Default::default(),
        })
    }

    /// Proves the baseline, selects the tests of each mutant and runs them all; returns the
    /// results and the duration of the unmutated run.
    pub fn run(
        &self,
        base: &Path,
        candidates: Vec<PlannedMutant>,
        compiled: impl FnOnce() -> Result<(Vec<Option<String>>, Duration)>,
        timings: &mut Timings,
        events: &mut dyn FnMut(Event),
    ) -> Result<(Vec<MutantResult>, Duration)> {
        let started = Instant::now();
        let ids: Vec<usize> = candidates.iter().map(|planned| planned.id).collect();
        let proven = self.prove_and_select(base, candidates);
        // A changed file that does not compile explains a failing baseline: report that first.
        let (errors, compile_time) = compiled()?;
        let (jobs, unrun, baseline) = proven?;
        timings.compile = compile_time;
        let errors: HashMap<usize, String> =
            ids.into_iter().zip(errors).filter_map(|(id, error)| Some((id, error?))).collect();
        let (jobs, mut results) = settle_compile_errors(jobs, unrun, &errors);
        events(Event::BaselinePassed { duration: baseline, what: self.describe_tests() });
        if jobs.is_empty() {
            timings.baseline = started.elapsed();
            return Ok((results, baseline));
        }
        let count = self.options.jobs.get().min(jobs.len());
        let mut roots = vec![base.to_path_buf()];
        for index in 1..count {
            let copy = self.scratch.path().join(format!("copy-{index}"));
            worktree::duplicate(base, &copy)?;
            roots.push(copy);
        }
        let mut workers = self.start_workers(&roots)?;
        self.prove_canaries(&mut workers[0], &jobs)?;
        timings.baseline = started.elapsed();
        let started = Instant::now();
        events(Event::MutantsStarting { total: jobs.len(), workers: workers.len() });
        let logs = self.logs.as_path();
        results.extend(pool::run_all(self.plan, workers, logs, jobs, events)?);
        timings.mutants = started.elapsed();
        Ok((results, baseline))
    }

    /// Which tests the baseline ran, in words.
    fn describe_tests(&self) -> String {
        if !self.pytest() {
            return "the test command's tests".to_string();
        }
        match self.tests.len() {
            0 => "the whole test suite".to_string(),
            1 => self.tests[0].clone(),
            n => format!("{n} test files"),
        }
    }

    fn pytest(&self) -> bool {
        self.options.runner == TestRunner::Pytest
    }

    /// Runs the unmutated tests (with the coverage probe under pytest) and decides, per mutant,
    /// which tests to run: returns the jobs, the mutants settled without running, and the
    /// duration of the unmutated run.
    fn prove_and_select(
        &self,
        root: &Path,
        runnable: Vec<PlannedMutant>,
    ) -> Result<(Vec<Job>, Vec<MutantResult>, Duration)> {
        // --timeout is per mutant; the unmutated run only has to finish.
        let limit = BASELINE_LIMIT;
        let log = self.logs.as_path().join("baseline.log");
        if !self.pytest() {
            let mut spawn = self.spawn(root);
            let run = spawn.run(self.tests, limit, &log)?;
            require_pass(&run, &self.options.runner, limit)?;
            let timeout = mutant_timeout(self.options.timeout, run.duration);
            let jobs = runnable
                .into_iter()
                .map(|planned| Job { planned, tests: self.tests.to_vec(), timeout, cost: run.duration })
                .collect();
            return Ok((jobs, Vec::new(), run.duration));
        }
        let (run, map) = coverage::measure(
            &self.python,
            self.plan,
            root,
            self.support.as_path(),
            self.tests,
            limit,
            &log,
        )?;
        require_pass(&run, &self.options.runner, limit)?;
        let map = map.expect("a passing probe run has a map");
        self.refuse_imports_from_checkout(&map)?;
        *self.preload.borrow_mut() = map.outside_modules.clone();
        let mut jobs = Vec::new();
        let mut unrun = Vec::new();
        for planned in runnable {
            let file = &self.plan.files[planned.file].path;
            match select::for_mutant(&map, file, &planned.mutant, self.tests, run.duration) {
                Selection::Run { tests, cost } => {
                    let timeout = mutant_timeout(self.options.timeout, cost);
                    jobs.push(Job { planned, tests, timeout, cost });
                }
                Selection::NoCoverage => unrun.push(MutantResult {
                    planned,
                    status: Status::NoCoverage,
                    reason: "no test runs this line".to_string(),
                    duration: Duration::ZERO,
                    covered_by: Vec::new(),
                    killed_by: Vec::new(),
                }),
            }
        }
        Ok((jobs, unrun, run.duration))
    }

    /// Tests that import a changed file from the user's checkout would never see a mutant.
    fn refuse_imports_from_checkout(&self, map: &CoverageMap) -> Result<()> {
        for file in &self.plan.files {
            let Ok(original) = self.repo_root.join(&file.path).canonicalize() else {
                continue;
            };
            if map.module_files.contains(&original) {
                bail!(
                    "the tests import {} from your checkout ({}) rather than from the copy under test, so no mutant could be seen: uninstall the editable install or put the repository first on the path",
                    file.path.display(),
                    original.display()
                );
            }
        }
        Ok(())
    }

    fn spawn(&self, root: &Path) -> Spawn {
        Spawn {
            runner: self.options.runner.clone(),
            python: self.python.clone(),
            root: root.to_path_buf(),
            support: Some(self.support.as_path().to_path_buf()),
        }
    }

    /// One worker per copy; warm workers import their modules in parallel.
    fn start_workers(&self, roots: &[PathBuf]) -> Result<Vec<Worker>> {
        let judge = if self.pytest() { Judge::Pytest } else { Judge::Command };
        if !(self.pytest() && self.options.fork) {
            return Ok(roots
                .iter()
                .map(|root| Worker { root: root.clone(), executor: Box::new(self.spawn(root)), judge })
                .collect());
        }
        let specs: Vec<WarmSpec> = roots
            .iter()
            .map(|root| WarmSpec {
                python: self.python.clone(),
                script: self.support.as_path().join("mutdelta_worker.py"),
                root: root.clone(),
                env: python::environment(&self.python, root, Some(self.support.as_path())),
                preload: self.preload.borrow().clone(),
                log: self
                    .logs
                    .join(format!("warm-{}.log", root.file_name().unwrap_or_default().to_string_lossy())),
            })
            .collect();
        // Spawned from this thread, which outlives them (they die with the thread that spawned
        // them); they import their modules side by side, and are waited for in turn.
        let started: Vec<Result<Warm>> = specs
            .into_iter()
            .map(Warm::spawn)
            .collect::<Vec<_>>()
            .into_iter()
            .map(|warm| warm.and_then(|warm| warm.ready().map(|()| warm)))
            .collect();
        roots
            .iter()
            .zip(started)
            .map(|(root, warm)| {
                let executor: Box<dyn Executor> = Box::new(warm?);
                Ok(Worker { root: root.clone(), executor, judge })
            })
            .collect()
    }

    /// For each mutated file with mutants to run: its tests must fail when it is broken.
    fn prove_canaries(&self, worker: &mut Worker, jobs: &[Job]) -> Result<()> {
        for (index, file) in self.plan.files.iter().enumerate() {
            let mut tests: Vec<String> = Vec::new();
            let mut cost = Duration::ZERO;
            let mut any = false;
            for job in jobs.iter().filter(|job| job.planned.file == index) {
                any = true;
                cost = cost.max(job.cost);
                for test in &job.tests {
                    if !tests.contains(test) {
                        tests.push(test.clone());
                    }
                }
            }
            if !any {
                continue;
            }
            let timeout = mutant_timeout(self.options.timeout, cost);
            let log = self.logs.as_path().join("canary.log");
            prove_canary(worker.executor.as_mut(), &worker.root, file, &tests, timeout, &log)?;
        }
        Ok(())
    }
}

/// Compiles the changed files and every candidate mutant; a changed file that does not compile
/// is refused (every mutant of it would be CompileError). Returns an error or `None` per mutant.
pub fn compile_check(
    python: &Path,
    plan: &Plan,
    candidates: &[PlannedMutant],
) -> Result<Vec<Option<String>>> {
    let files: Vec<usize> =
        (0..plan.files.len()).filter(|&i| plan.files[i].language == Language::Python).collect();
    let requests: Vec<python::CompileRequest> = files
        .iter()
        .map(|&index| python::CompileRequest {
            name: plan.files[index].path.display().to_string(),
            source: &plan.files[index].source,
            mutants: candidates.iter().filter(|c| c.file == index).map(|c| &c.mutant).collect(),
        })
        .collect();
    let results = python::compile_check(python, &requests)?;
    for (request, error) in requests.iter().zip(&results.originals) {
        if let Some(error) = error {
            bail!("{} does not compile ({error}): fix it before checking its mutants", request.name);
        }
    }
    // Results come file by file; give them back in the candidates' order.
    let mut by_file: Vec<std::collections::VecDeque<Option<String>>> =
        vec![Default::default(); plan.files.len()];
    let mut answers = results.mutants.into_iter();
    for (&index, request) in files.iter().zip(&requests) {
        by_file[index].extend(answers.by_ref().take(request.mutants.len()));
    }
    Ok(candidates.iter().map(|c| by_file[c.file].pop_front().flatten()).collect())
}

/// A mutant that does not compile is CompileError, whatever its selection said: it is never run
/// and never counted as caught.
fn settle_compile_errors(
    jobs: Vec<Job>,
    unrun: Vec<MutantResult>,
    errors: &HashMap<usize, String>,
) -> (Vec<Job>, Vec<MutantResult>) {
    let mut settled = Vec::new();
    let mut runnable = Vec::new();
    for job in jobs {
        match errors.get(&job.planned.id) {
            Some(error) => settled.push(verdict(job.planned, Status::CompileError, error.clone())),
            None => runnable.push(job),
        }
    }
    for result in unrun {
        match errors.get(&result.planned.id) {
            Some(error) => settled.push(verdict(result.planned, Status::CompileError, error.clone())),
            None => settled.push(result),
        }
    }
    (runnable, settled)
}
