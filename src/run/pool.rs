//! The worker pool: one thread, one copy and one executor per worker; each mutant is applied, tested and reverted in its worker's copy.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use anyhow::Result;

use super::baseline::last_line;
use super::executor::Executor;
use super::process::{Exit, Finished};
use super::{Event, Interrupted, INTERRUPTED};
use crate::plan::{Language, Plan, PlannedMutant};
use crate::report::{MutantResult, Status};
use crate::worktree::{self, Stamp};

/// One mutant and the tests to run against it.
#[derive(Debug, Clone)]
pub struct Job {
    pub planned: PlannedMutant,
    /// Test ids or paths for the runner (empty: the whole suite).
    pub tests: Vec<String>,
    pub timeout: Duration,
    /// What its tests took unmutated: the cheapest jobs run first.
    pub cost: Duration,
}

/// A worker: its copy, how it runs tests there, and how their outcome is read.
pub struct Worker {
    pub root: PathBuf,
    pub executor: Box<dyn Executor>,
    pub judge: Judge,
}

/// How a test run's exit is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// pytest: 1 (tests failed) and 2 (collection or import failed) are the mutant's doing;
    /// other codes mean the run itself broke.
    Pytest,
    /// `cargo test`: any failure after a successful build is the mutant's doing.
    Cargo,
    /// A user's command: any non-zero exit is the mutant's doing.
    Command,
}

/// Tests every job; results come back in completion order.
pub fn run_all(
    plan: &Plan,
    workers: Vec<Worker>,
    logs: &Path,
    mut jobs: Vec<Job>,
    events: &mut dyn FnMut(Event),
) -> Result<Vec<MutantResult>> {
    jobs.sort_by_key(|job| (job.cost, job.planned.id));
    let total = jobs.len();
    let queue = Mutex::new(VecDeque::from(jobs));
    let (sender, receiver) = mpsc::channel::<Result<MutantResult>>();
    let mut results = Vec::with_capacity(total);
    let mut failure = None;
    std::thread::scope(|scope| {
        for (index, mut worker) in workers.into_iter().enumerate() {
            let sender = sender.clone();
            let queue = &queue;
            let log = logs.join(format!("worker-{index}.log"));
            scope.spawn(move || {
                while !INTERRUPTED.load(Ordering::SeqCst) {
                    let Some(job) = queue.lock().expect("queue lock").pop_front() else {
                        break;
                    };
                    let result = test_one(plan, &mut worker, &log, job);
                    let stop = result.is_err();
                    if sender.send(result).is_err() || stop {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for message in receiver {
            match message {
                Ok(result) => {
                    results.push(result);
                    let result = results.last().expect("just pushed");
                    events(Event::MutantFinished { result, done: results.len(), total });
                }
                Err(err) => {
                    // Empty the queue so the other workers stop after their current mutant.
                    queue.lock().expect("queue lock").clear();
                    failure.get_or_insert(err);
                }
            }
        }
    });
    if let Some(err) = failure {
        return Err(err);
    }
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(Interrupted.into());
    }
    Ok(results)
}

fn test_one(plan: &Plan, worker: &mut Worker, log: &Path, job: Job) -> Result<MutantResult> {
    let file = &plan.files[job.planned.file];
    let path = worker.root.join(&file.path);
    let stamp = match file.language {
        Language::Python => Stamp::FreshSecond,
        Language::Rust => Stamp::Now,
    };
    worktree::replace_file(&path, &job.planned.mutant.apply(&file.source), stamp)?;
    let run = worker.executor.run(&job.tests, job.timeout, log);
    worktree::replace_file(&path, &file.source, stamp)?;
    let run = run?;
    if run.exit == Exit::Interrupted {
        return Err(Interrupted.into());
    }
    let (status, reason) = classify(worker.judge, &run, job.timeout);
    let killed_by = if status == Status::Killed { failed_tests(worker.judge, &run.tail) } else { Vec::new() };
    Ok(MutantResult {
        planned: job.planned,
        status,
        reason,
        duration: run.duration,
        // Only pytest's selection names tests; a package or a command is no test id.
        covered_by: if worker.judge == Judge::Pytest { job.tests } else { Vec::new() },
        killed_by,
    })
}

fn classify(judge: Judge, run: &Finished, timeout: Duration) -> (Status, String) {
    match (run.exit.clone(), judge) {
        (Exit::Code(0), _) => (Status::Survived, "every test that runs this line passed".to_string()),
        (Exit::Unviable, _) => (Status::CompileError, format!("does not build: {}", first_error(&run.tail))),
        (Exit::TimedOut, _) => {
            (Status::Timeout, format!("the tests ran past the {:.1} s timeout", timeout.as_secs_f64()))
        }
        (Exit::Signal(signal), _) => (Status::Killed, format!("the test process died of signal {signal}")),
        (Exit::Code(1 | 2), Judge::Pytest) => (Status::Killed, last_line(&run.tail).to_string()),
        (Exit::Code(code), Judge::Pytest) => {
            (Status::RuntimeError, format!("pytest exited with status {code}: {}", last_line(&run.tail)))
        }
        (Exit::Code(_), Judge::Cargo) => (Status::Killed, last_line(&run.tail).to_string()),
        (Exit::Code(code), Judge::Command) => {
            (Status::Killed, format!("the test command exited with status {code}"))
        }
        (Exit::Interrupted, _) => (Status::RuntimeError, "interrupted".to_string()),
    }
}

/// The first compiler error in a build's output.
fn first_error(output: &str) -> &str {
    output.lines().find(|line| line.starts_with("error")).unwrap_or_else(|| last_line(output)).trim()
}

/// The tests that failed, as the runner names them: pytest's short summary
/// (`FAILED tests/test_x.py::test_y - AssertionError`) or libtest's `test name ... FAILED`.
fn failed_tests(judge: Judge, output: &str) -> Vec<String> {
    match judge {
        Judge::Pytest => output
            .lines()
            .filter_map(|line| line.strip_prefix("FAILED ").or_else(|| line.strip_prefix("ERROR ")))
            .map(|rest| rest.split(" - ").next().unwrap_or(rest).trim().to_string())
            .collect(),
        Judge::Cargo => output
            .lines()
            .filter_map(|line| line.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
            .map(str::to_string)
            .collect(),
        Judge::Command => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_tests_are_read_from_pytest_short_summary() {
        let output = "F.\nFAILED tests/test_a.py::test_x - AssertionError: 1 != 2\nERROR tests/test_b.py\n1 failed in 0.1s\n";
        assert_eq!(failed_tests(Judge::Pytest, output), ["tests/test_a.py::test_x", "tests/test_b.py"]);
    }

    #[test]
    fn failed_tests_are_read_from_libtest_output() {
        let output = "running 2 tests\ntest parse::ok ... ok\ntest parse::rejects_empty ... FAILED\n";
        assert_eq!(failed_tests(Judge::Cargo, output), ["parse::rejects_empty"]);
    }
}
