//! The worker pool: one thread per worker, the costliest jobs first; it only schedules, the workers test and read.

use std::cmp::Reverse;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Mutex};

use anyhow::Result;

use super::language::Worker;
use crate::interrupt::INTERRUPTED;
use crate::model::outcome::MutantResult;
use crate::model::plan::Plan;
use crate::run::event::Event;
use crate::run::job::{Job, JobData};

/// Tests every job; results come back in completion order. Interrupted, it stops starting
/// jobs and returns the verdicts reached; a job cut off has none.
pub fn run_all<W: Worker>(
    plan: &Plan,
    workers: &mut [W],
    logs: &Path,
    mut jobs: Vec<Job<W::Data>>,
    events: &mut dyn FnMut(Event),
) -> Result<Vec<MutantResult>> {
    schedule(&mut jobs);
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

/// The order jobs start in: the costliest first, so that no costly job starting last keeps one
/// worker busy while the others wait. A job that imports the project afresh pays that import on
/// top of its tests, so those come before the rest.
fn schedule<D: JobData>(jobs: &mut [Job<D>]) {
    jobs.sort_by_key(|job| (Reverse((job.data.starts_slowly(), job.cost)), job.planned.id));
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::plan::PlannedMutant;

    /// What a language's job adds here: whether it starts slowly.
    #[derive(Debug, Clone, Default)]
    struct Slow(bool);

    impl JobData for Slow {
        fn starts_slowly(&self) -> bool {
            self.0
        }
    }

    fn job(id: usize, millis: u64, fresh: bool) -> Job<Slow> {
        let mutant = mutators::python::mutate("total = a + b\n", &[1]).expect("mutants").mutants[0].clone();
        let planned = PlannedMutant { id, file: 0, mutant };
        Job::new(planned, Vec::new(), Duration::from_secs(60), Duration::from_millis(millis))
            .with(Slow(fresh))
    }

    #[test]
    fn fresh_imports_start_first_then_the_costliest_tests_ties_in_id_order() {
        let mut jobs =
            vec![job(1, 5, false), job(2, 900, false), job(3, 20, true), job(4, 5, false), job(5, 300, true)];
        schedule(&mut jobs);
        let order: Vec<usize> = jobs.iter().map(|job| job.planned.id).collect();
        assert_eq!(order, [5, 3, 2, 1, 4]);
    }
}
