//! The worker pool: one thread per worker, the cheapest jobs first; it only schedules, the workers test and read.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Mutex};

use anyhow::Result;

use super::language::{Job, Worker};
use super::{Event, INTERRUPTED};
use crate::plan::Plan;
use crate::report::MutantResult;

/// Tests every job; results come back in completion order. Interrupted, it stops starting
/// jobs and returns the verdicts reached; a job cut off has none.
pub fn run_all<W: Worker>(
    plan: &Plan,
    workers: &mut [W],
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
        for (index, worker) in workers.iter_mut().enumerate() {
            let sender = sender.clone();
            let queue = &queue;
            let log = logs.join(format!("worker-{index}.log"));
            scope.spawn(move || {
                while !INTERRUPTED.load(Ordering::SeqCst) {
                    let Some(job) = queue.lock().expect("queue lock").pop_front() else {
                        break;
                    };
                    let result = worker.test(plan, &job, &log).map(|outcome| outcome.for_mutant(job.planned));
                    if INTERRUPTED.load(Ordering::SeqCst) {
                        break; // its tests may have been killed mid-run: no verdict
                    }
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
                    let path = &plan.files[result.planned.file].path;
                    events(Event::MutantFinished { result, path, done: results.len(), total });
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
    Ok(results)
}
