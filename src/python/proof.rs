//! The proofs that the tests see the copy under test: no import from the user's checkout, a canary per file (replaced by one that raises on import), a swap canary per file (every function made to raise in the collector).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Result};

use super::coverage::CoverageMap;
use super::job::PythonJob;
use super::worker::PythonWorker;
use crate::model::record::{How, RunRecord, StepRecord};
use crate::run::job::Job;
use crate::run::language::Context;
use crate::run::require;
use crate::run::timeouts::mutant_timeout;

/// For each mutated file, in the first worker's collector: its tests must fail when every
/// function of the file raises, or its mutants are not swapped in (anywhere). Each finding is
/// a step of the record.
pub fn prove_swap(
    ctx: &Context,
    workers: &mut [PythonWorker],
    jobs: &[Job<PythonJob>],
) -> Result<Vec<StepRecord>> {
    let mut steps = Vec::new();
    let mut unswappable = BTreeMap::new();
    // Only the mutants that may be swapped in: the others run their tests fresh.
    let swappable: Vec<Job<PythonJob>> =
        jobs.iter().filter(|job| job.data.fresh.is_none()).cloned().collect();
    for (index, file) in ctx.plan.files.iter().enumerate() {
        let Some((tests, cost)) = tests_of_file(&swappable, index) else { continue };
        let timeout = mutant_timeout(ctx.options.timeout, cost);
        let log = ctx.logs.join("swap-canary.log");
        if let Some(why) = workers[0].swap_canary(file, &tests, timeout, &log)? {
            unswappable
                .insert(index, format!("the swap canary of {} did not hold: {why}", file.path.display()));
        }
        let record = RunRecord {
            how: How::Swap,
            commands: Vec::new(),
            tail: crate::process::read_tail(&log),
            fallback: unswappable.get(&index).cloned(),
            split: None,
        };
        steps.push(StepRecord { step: format!("swap canary {}", file.path.display()), record });
    }
    for worker in workers {
        worker.unswappable = unswappable.clone();
    }
    Ok(steps)
}

/// Tests that import a changed file from the user's checkout would never see a mutant.
pub fn refuse_imports_from_checkout(ctx: &Context, map: &CoverageMap) -> Result<()> {
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

/// The tests `jobs` run against mutants of file `index`, and the longest any of them takes;
/// `None` when no job mutates the file.
fn tests_of_file(jobs: &[Job<PythonJob>], index: usize) -> Option<(Vec<String>, Duration)> {
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
    any.then_some((tests, cost))
}

/// For each mutated file with mutants to run: its tests must fail when it is broken.
pub fn prove_canaries(
    ctx: &Context,
    worker: &mut PythonWorker,
    jobs: &[Job<PythonJob>],
) -> Result<Vec<StepRecord>> {
    let mut steps = Vec::new();
    for (index, file) in ctx.plan.files.iter().enumerate() {
        let Some((tests, cost)) = tests_of_file(jobs, index) else { continue };
        let timeout = mutant_timeout(ctx.options.timeout, cost);
        let run = worker.canary(file, &tests, timeout, &ctx.logs.join("canary.log"))?;
        require::failed_on_canary(&run, &file.path)?;
        let step = format!("canary {}", file.path.display());
        steps.push(StepRecord { step, record: RunRecord::of(worker.executor.how(), &[&run]) });
    }
    Ok(steps)
}
