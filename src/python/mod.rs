//! The Python side of a check: the coverage run as baseline with the compile check beside it, per-mutant test selection, canaries, warm workers.

pub mod compile;
pub mod coverage;
pub mod executor;
pub mod interpreter;
pub mod pytest;
pub mod select;
pub mod warm;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use self::coverage::CoverageMap;
use self::executor::{Executor, Spawn, Warm};
use self::interpreter::Runner;
use self::select::Selection;
use self::warm::WarmSpec;
use crate::plan::{in_directory_named, FilePlan, Plan, PlannedMutant};
use crate::report::Status;
use crate::run::language::{with_mutant, Context, Job, LanguageCheck, Proven, Started, Worker};
use crate::run::outcome::{self, Outcome};
use crate::run::process::Finished;
use crate::run::record::{How, RunRecord, StepRecord};
use crate::run::require::{self, Subject};
use crate::run::timeouts::{mutant_timeout, BASELINE_LIMIT};
use crate::run::Interrupted;
use crate::worktree::{self, Stamp};

const WORKER_SCRIPT: &str = include_str!("worker.py");

/// A file that fails on import, standing in for a mutated file to prove the tests import the copy.
pub const CANARY_SOURCE: &str =
    "raise RuntimeError('mutdelta canary: this file was replaced to prove the tests import it')\n";

/// Test code, which is not mutated: pytest's discovery rules, plus `conftest.py` and anything
/// under `tests`/`test`.
pub fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    name == "conftest.py"
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || in_directory_named(path, &["tests", "test"])
}

/// Everything the Python test runs of one check share.
pub struct PythonCheck {
    python: PathBuf,
    runner: Runner,
    /// The relevant tests (empty: the whole suite).
    tests: Vec<String>,
    /// mutdelta's Python helpers (the probe plugin, the warm worker), on every test's PYTHONPATH.
    support: PathBuf,
}

impl PythonCheck {
    /// Finds the interpreter and writes the helpers into the scratch directory.
    pub fn new(ctx: &Context) -> Result<PythonCheck> {
        let settings = &ctx.options.python;
        let python = interpreter::find_interpreter(settings.interpreter.as_deref(), ctx.repo_root)?;
        let support = ctx.scratch.subdir("support")?;
        std::fs::write(support.join(format!("{}.py", coverage::PROBE_MODULE)), coverage::PROBE_SOURCE)?;
        std::fs::write(support.join("mutdelta_worker.py"), WORKER_SCRIPT)?;
        Ok(PythonCheck {
            python,
            runner: Runner::new(ctx.options.test_cmd.as_deref()),
            tests: select::relevant_tests(ctx.plan, &settings.extra_tests),
            support,
        })
    }

    fn pytest(&self) -> bool {
        self.runner == Runner::Pytest
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
    fn select(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<Selected> {
        let log = ctx.logs.join("baseline.log");
        if !self.pytest() {
            let run = self.spawn(ctx.base).run(&self.tests, BASELINE_LIMIT, &log)?;
            require::passed(&run, Subject::Command, BASELINE_LIMIT)?;
            let timeout = mutant_timeout(ctx.options.timeout, run.duration);
            let jobs = candidates
                .into_iter()
                .map(|planned| Job { planned, tests: self.tests.clone(), timeout, cost: run.duration })
                .collect();
            return Ok(Selected {
                jobs,
                uncovered: Vec::new(),
                baseline: run.duration,
                preload: Vec::new(),
                step: baseline_step(&run),
            });
        }
        let (run, map) = coverage::measure(
            &self.python,
            ctx.plan,
            ctx.base,
            &self.support,
            &self.tests,
            BASELINE_LIMIT,
            &log,
        )?;
        require::passed(&run, Subject::Pytest, BASELINE_LIMIT)?;
        let map = map.expect("a passing probe run has a map");
        refuse_imports_from_checkout(ctx, &map)?;
        let mut jobs = Vec::new();
        let mut uncovered = Vec::new();
        for planned in candidates {
            let file = &ctx.plan.files[planned.file].path;
            match select::for_mutant(&map, file, &planned.mutant, &self.tests, run.duration) {
                Selection::Run { tests, cost } => {
                    let timeout = mutant_timeout(ctx.options.timeout, cost);
                    jobs.push(Job { planned, tests, timeout, cost });
                }
                Selection::NoCoverage => uncovered.push(planned),
            }
        }
        Ok(Selected {
            jobs,
            uncovered,
            baseline: run.duration,
            preload: map.outside_modules,
            step: baseline_step(&run),
        })
    }

    /// A warm worker per copy, importing their modules side by side.
    fn warm_executors(&self, roots: &[PathBuf], logs: &Path, preload: &[String]) -> Result<Vec<Warm>> {
        let specs = roots.iter().map(|root| WarmSpec {
            python: self.python.clone(),
            script: self.support.join("mutdelta_worker.py"),
            root: root.clone(),
            env: interpreter::environment(&self.python, root, Some(&self.support)),
            preload: preload.to_vec(),
            log: logs.join(format!("warm-{}.log", root.file_name().unwrap_or_default().to_string_lossy())),
        });
        // Spawned from this thread, which outlives them (they die with the thread that spawned
        // them); they import their modules side by side, and are waited for in turn.
        let spawned: Vec<Result<Warm>> = specs.map(Warm::spawn).collect();
        spawned.into_iter().map(|warm| warm.and_then(|warm| warm.ready().map(|()| warm))).collect()
    }
}

/// The baseline's findings before the compile check's are joined in.
struct Selected {
    jobs: Vec<Job>,
    /// Mutants whose line no test executed.
    uncovered: Vec<PlannedMutant>,
    baseline: Duration,
    /// Modules from outside the project the tests imported.
    preload: Vec<String>,
    step: StepRecord,
}

fn baseline_step(run: &Finished) -> StepRecord {
    StepRecord { step: "baseline".to_string(), record: RunRecord::of(How::Fresh, &[run]) }
}

/// What the compile check found, and how long it took.
struct Compiled {
    /// The error of each mutant that does not compile, by mutant id.
    errors: std::collections::HashMap<usize, String>,
    took: Duration,
}

/// Modules for the warm workers to import before forking.
pub struct Preload(Vec<String>);

impl LanguageCheck for PythonCheck {
    type Evidence = Preload;
    type Worker = PythonWorker;

    fn prove(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<Proven<Preload>> {
        // The compile check needs no tests: it overlaps the unmutated run.
        let (compiled, selected) = std::thread::scope(|scope| {
            let compiling = scope.spawn(|| {
                let started = Instant::now();
                compile::compile_check(&self.python, ctx.plan, &candidates)
                    .map(|errors| Compiled { errors, took: started.elapsed() })
            });
            let selected = self.select(ctx, candidates.clone());
            (compiling.join().map_err(|_| anyhow!("the compile check panicked")), selected)
        });
        // A changed file that does not compile explains a failing baseline: report that first.
        let Compiled { errors, took: compile } = compiled??;
        let Selected { jobs, uncovered, baseline, preload, step } = selected?;
        // A mutant that does not compile is CompileError whatever its selection said: it is
        // never run and never counted as caught.
        let compile_error = |planned: &PlannedMutant| {
            errors.get(&planned.id).map(|error| Outcome::settled(Status::CompileError, error.clone()))
        };
        let mut settled = Vec::new();
        let mut runnable = Vec::new();
        for job in jobs {
            match compile_error(&job.planned) {
                Some(outcome) => settled.push(outcome.for_mutant(job.planned)),
                None => runnable.push(job),
            }
        }
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
            compile,
            evidence: Preload(preload),
            steps: vec![step],
        })
    }

    fn workers(
        &self,
        ctx: &Context,
        preload: &Preload,
        count: usize,
        jobs: &[Job],
    ) -> Result<Started<PythonWorker>> {
        let mut roots = vec![ctx.base.to_path_buf()];
        for index in 1..count {
            let copy = ctx.scratch.path().join(format!("copy-{index}"));
            worktree::duplicate(ctx.base, &copy)?;
            roots.push(copy);
        }
        let executors: Vec<Box<dyn Executor>> = if self.pytest() && ctx.options.python.fork {
            let warm = self.warm_executors(&roots, ctx.logs, &preload.0)?;
            warm.into_iter().map(|warm| Box::new(warm) as Box<dyn Executor>).collect()
        } else {
            roots.iter().map(|root| Box::new(self.spawn(root)) as Box<dyn Executor>).collect()
        };
        let mut workers: Vec<PythonWorker> = roots
            .into_iter()
            .zip(executors)
            .map(|(root, executor)| PythonWorker { root, executor, pytest: self.pytest() })
            .collect();
        let steps = prove_canaries(ctx, &mut workers[0], jobs)?;
        Ok(Started { workers, steps })
    }
}

/// Tests that import a changed file from the user's checkout would never see a mutant.
fn refuse_imports_from_checkout(ctx: &Context, map: &CoverageMap) -> Result<()> {
    for file in &ctx.plan.files {
        let Ok(original) = ctx.repo_root.join(&file.path).canonicalize() else {
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

/// For each mutated file with mutants to run: its tests must fail when it is broken.
fn prove_canaries(ctx: &Context, worker: &mut PythonWorker, jobs: &[Job]) -> Result<Vec<StepRecord>> {
    let mut steps = Vec::new();
    for (index, file) in ctx.plan.files.iter().enumerate() {
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
        let timeout = mutant_timeout(ctx.options.timeout, cost);
        let run = worker.canary(file, &tests, timeout, &ctx.logs.join("canary.log"))?;
        require::failed_on_canary(&run, &file.path)?;
        let step = format!("canary {}", file.path.display());
        steps.push(StepRecord { step, record: RunRecord::of(worker.executor.how(), &[&run]) });
    }
    Ok(steps)
}

/// One copy and how tests run there.
pub struct PythonWorker {
    root: PathBuf,
    executor: Box<dyn Executor>,
    /// Under pytest (else a user's command): pytest's exit codes and summary are read.
    pytest: bool,
}

impl PythonWorker {
    /// Runs `tests` with `file` replaced by one that raises on import.
    fn canary(
        &mut self,
        file: &FilePlan,
        tests: &[String],
        timeout: Duration,
        log: &Path,
    ) -> Result<Finished> {
        let path = self.root.join(&file.path);
        worktree::replace_file(&path, CANARY_SOURCE, Stamp::FreshSecond)?;
        let run = self.executor.run(tests, timeout, log);
        worktree::replace_file(&path, &file.source, Stamp::FreshSecond)?;
        run
    }
}

impl Worker for PythonWorker {
    fn test(&mut self, plan: &Plan, job: &Job, log: &Path) -> Result<Outcome> {
        let file = &plan.files[job.planned.file];
        let executor = &mut self.executor;
        let run = with_mutant(&self.root, file, &job.planned, Stamp::FreshSecond, || {
            executor.run(&job.tests, job.timeout, log)
        })??;
        if run.exit == crate::run::process::Exit::Interrupted {
            return Err(Interrupted.into());
        }
        let mut outcome = if self.pytest {
            pytest::read(&run, &job.tests, job.timeout)
        } else {
            outcome::read_command(&run, job.timeout)
        };
        outcome.record = Some(RunRecord::of(self.executor.how(), &[&run]));
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_test_files_follow_pytest_discovery_rules() {
        for test in ["tests/test_a.py", "test_a.py", "pkg/a_test.py", "conftest.py", "tests/helpers.py"] {
            assert!(is_test_file(Path::new(test)), "{test}");
        }
        for source in ["pkg/a.py", "testing.py", "src/contest.py", "latest/x.py"] {
            assert!(!is_test_file(Path::new(source)), "{source}");
        }
    }
}
