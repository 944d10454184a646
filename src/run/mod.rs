//! Runs a check: plan the mutants, compile-check them, prove the baseline, then test every mutant in parallel worktrees.

pub mod baseline;
pub mod pool;
pub mod process;

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;

use crate::lines::{self, workdir};
use crate::options::Options;
use crate::plan::{Plan, PlannedMutant};
use crate::python;
use crate::report::{MutantResult, Report, Status};
use crate::select;
use crate::worktree::Worktree;

/// Set by the Ctrl-C / SIGTERM handler; workers stop and kill their tests when they see it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The run was stopped by a signal before it finished.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: no mutant results were kept, and the temporary copies were removed")]
pub struct Interrupted;

/// What the runner tells its reporters, in order.
#[derive(Debug)]
pub enum Event<'a> {
    /// The unmutated tests passed.
    BaselinePassed {
        duration: Duration,
        timeout: Duration,
    },
    /// Mutants are about to run.
    MutantsStarting { total: usize, workers: usize },
    MutantFinished {
        result: &'a MutantResult,
        done: usize,
        total: usize,
    },
}

/// The planned mutants of the change in `options`, without running anything.
pub fn plan(options: &Options, stdin: &mut dyn Read) -> Result<Plan> {
    let repo = lines::open_repository(&options.directory)?;
    let added = lines::find(&repo, &options.change, stdin)?;
    let base = Worktree::materialize(&repo, added.state)?;
    Plan::make(&added, base.root())
}

/// Mutates the change in `options` and tests every mutant; `events` hears of the progress.
pub fn check(
    options: &Options,
    stdin: &mut dyn Read,
    events: &mut dyn FnMut(Event),
) -> Result<Report> {
    let repo = lines::open_repository(&options.directory)?;
    let repo_root: PathBuf = workdir(&repo).to_path_buf();
    let added = lines::find(&repo, &options.change, stdin)?;
    let base = Worktree::materialize(&repo, added.state)?;
    let plan = Plan::make(&added, base.root())?;
    let tests = select::relevant_tests(&plan, &options.extra_tests);
    let mut report = Report {
        plan,
        tests,
        ..Report::default()
    };
    let mutants = report.plan.mutants();
    if mutants.is_empty() {
        return Ok(report);
    }

    let python = python::find_interpreter(options.python.as_deref(), &repo_root)?;
    let (mut results, runnable) = settle_without_running(&report.plan, mutants, &python)?;

    if !runnable.is_empty() {
        let workers = options.jobs.get().min(runnable.len());
        let mut copies = vec![base];
        for _ in 1..workers {
            copies.push(copies[0].duplicate()?);
        }
        let logs = tempfile::Builder::new()
            .prefix("mutdelta-logs-")
            .tempdir()?;
        let setup = baseline::Setup {
            plan: &report.plan,
            runner: &options.runner,
            python: &python,
            tests: &report.tests,
        };
        let baseline_run = setup.prove(copies[0].root(), logs.path(), options.timeout)?;
        events(Event::BaselinePassed {
            duration: baseline_run.duration,
            timeout: baseline_run.timeout,
        });
        report.baseline = Some(baseline_run.duration);
        events(Event::MutantsStarting {
            total: runnable.len(),
            workers,
        });
        let roots: Vec<_> = copies
            .iter()
            .map(|copy| copy.root().to_path_buf())
            .collect();
        results.extend(pool::run_all(
            &setup,
            &roots,
            logs.path(),
            baseline_run.timeout,
            runnable,
            events,
        )?);
    }
    results.sort_by_key(|result| result.planned.id);
    report.results = results;
    Ok(report)
}

/// Gives Ignored and CompileError mutants their verdicts; returns them and the mutants left to run.
fn settle_without_running(
    plan: &Plan,
    mutants: Vec<PlannedMutant>,
    python: &std::path::Path,
) -> Result<(Vec<MutantResult>, Vec<PlannedMutant>)> {
    let mut settled = Vec::new();
    let mut candidates = Vec::new();
    for planned in mutants {
        match planned.mutant.ignored.clone() {
            Some(reason) => settled.push(verdict(planned, Status::Ignored, reason)),
            None => candidates.push(planned),
        }
    }
    let sources: Vec<(String, String)> = candidates
        .iter()
        .map(|planned| {
            let file = &plan.files[planned.file];
            (
                file.path.display().to_string(),
                planned.mutant.apply(&file.source),
            )
        })
        .collect();
    let compiled = python::compile_all(python, &sources)?;
    let mut runnable = Vec::new();
    for (planned, error) in candidates.into_iter().zip(compiled) {
        match error {
            Some(message) => settled.push(verdict(planned, Status::CompileError, message)),
            None => runnable.push(planned),
        }
    }
    Ok((settled, runnable))
}

fn verdict(planned: PlannedMutant, status: Status, reason: String) -> MutantResult {
    MutantResult {
        planned,
        status,
        reason,
        duration: Duration::ZERO,
        covered_by: Vec::new(),
        killed_by: Vec::new(),
    }
}
