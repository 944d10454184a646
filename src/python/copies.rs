//! The copies a round's workers test in, their collectors and their executors (a warm worker or a fresh process per mutant).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{anyhow, Result};

use super::check::{Executors, PythonCheck};
use super::collector::Collector;
use super::executor::{Executor, Warm};
use super::interpreter::Runner;
use super::job::PythonJob;
use super::warm::{WarmSpec, WarmWorker};
use super::worker::{PythonWorker, Swap};
use super::{interpreter, select};
use crate::run::job::Job;
use crate::run::language::Context;
use crate::worktree;

/// Numbers the collectors' sockets in the run's scratch directory.
static SOCKETS: AtomicUsize = AtomicUsize::new(0);

impl PythonCheck {
    /// `ctx.base` and `count - 1` copies of it (a copy made already, beside the coverage run,
    /// is reused).
    pub(super) fn copies(&self, ctx: &Context, count: usize) -> Result<Vec<PathBuf>> {
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

    /// A collector per copy, all collecting the test `files` side by side, each reading the
    /// files mutants may be made of: the plan's, or every source file it watches for a confined
    /// check that has no plan yet. A copy's collector is forked from its warm worker in
    /// `warm` when it has one (no interpreter starts), else started from this thread, which
    /// outlives it.
    pub(super) fn spawn_collectors(
        &self,
        ctx: &Context,
        roots: &[PathBuf],
        files: &BTreeSet<String>,
        warm: Vec<Option<&mut WarmWorker>>,
    ) -> Vec<Result<Collector>> {
        if files.is_empty() {
            let none = || Err(anyhow!("no mutant of this round can be swapped in"));
            return roots.iter().map(|_| none()).collect();
        }
        let mutable: Vec<PathBuf> = match &self.watch {
            Some(watched) if ctx.plan.files.is_empty() => watched.keys().cloned().collect(),
            _ => ctx.plan.files.iter().map(|file| file.path.clone()).collect(),
        };
        let mut args = self.pytest_args();
        args.extend(files.iter().cloned());
        let warm = warm.into_iter().chain(std::iter::repeat_with(|| None));
        roots
            .iter()
            .zip(warm)
            .map(|(root, warm)| {
                let name = root.file_name().unwrap_or_default().to_string_lossy().into_owned();
                let files: Vec<PathBuf> = mutable.iter().map(|path| root.join(path)).collect();
                let log = ctx.logs.join(format!("collector-{name}.log"));
                if let Some(warm) = warm {
                    let socket = ctx
                        .scratch
                        .path()
                        .join(format!("collector-{}.sock", SOCKETS.fetch_add(1, Ordering::Relaxed)));
                    if let Ok(forked) = Collector::fork(warm, &socket, &args, &files, log.clone()) {
                        return Ok(forked);
                    }
                }
                let env = interpreter::environment(&self.python, root, Some(&self.support));
                Collector::spawn(&self.python, root, &env, &args, &files, log)
            })
            .collect()
    }

    /// The test files of the `jobs` that may be swapped in.
    pub(super) fn collector_files(jobs: &[Job<PythonJob>]) -> BTreeSet<String> {
        jobs.iter()
            .filter(|job| job.data.fresh.is_none())
            .flat_map(|job| &job.tests)
            .map(|test| select::file_of(test).to_string())
            .collect()
    }

    /// Each worker's collector, once it has collected; a worker whose collector does not start
    /// imports every mutant fresh.
    pub(super) fn attach_collectors(workers: &mut [PythonWorker], spawned: Vec<Result<Collector>>) {
        for (worker, collector) in workers.iter_mut().zip(spawned) {
            worker.swap = match collector.and_then(|mut collector| collector.ready().map(|()| collector)) {
                Ok(collector) => Swap::On(Box::new(collector)),
                Err(err) => Swap::Unavailable(format!("{err:#}")),
            };
        }
    }

    /// An executor per copy: a warm worker that forks a child per mutant, or (no forking, or
    /// a warm worker whose imports brought in a file the change mutates, which its forks could
    /// not import afresh) a new interpreter per mutant, and then why, for the run record.
    /// The warm workers started early (`early`, one per copy) are taken over, importing
    /// `preload` now.
    pub(super) fn executors(
        &self,
        ctx: &Context,
        roots: &[PathBuf],
        preload: &[String],
        early: Vec<Warm>,
    ) -> Result<(Executors, Option<String>, Vec<Warm>)> {
        let fresh = || roots.iter().map(|root| Box::new(self.spawn(root)) as Box<dyn Executor>).collect();
        if !(self.pytest() && super::settings::PythonSettings::of(ctx.options).fork) {
            return Ok((fresh(), None, early));
        }
        let (warm, held) = if early.len() == roots.len() {
            take_over(early, preload)?
        } else {
            drop(early);
            self.warm_executors(roots, ctx.logs, preload)?
        };
        let mutated: Vec<String> = ctx
            .plan
            .files
            .iter()
            .filter(|file| held.contains(&file.path))
            .map(|file| file.path.display().to_string())
            .collect();
        if mutated.is_empty() {
            let executors = warm.into_iter().map(|warm| Box::new(warm) as Box<dyn Executor>).collect();
            return Ok((executors, None, Vec::new()));
        }
        let why = format!(
            "every mutant imported in a new interpreter: importing pytest and the modules the tests share imports {} of the project, which a fork of that interpreter could not import afresh",
            mutated.join(", ")
        );
        Ok((fresh(), Some(why), warm))
    }

    /// A warm worker per copy, importing their modules side by side.
    /// Also returns the files of the project any of them imported before forking.
    pub(super) fn warm_executors(
        &self,
        roots: &[PathBuf],
        logs: &Path,
        preload: &[String],
    ) -> Result<(Vec<Warm>, BTreeSet<PathBuf>)> {
        let spawned: Vec<Warm> = self.spawn_warm(roots, logs, preload).into_iter().collect::<Result<_>>()?;
        all_ready(spawned)
    }

    /// A warm worker per copy, started without waiting for them, importing `preload`.
    pub(super) fn spawn_warm(&self, roots: &[PathBuf], logs: &Path, preload: &[String]) -> Vec<Result<Warm>> {
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
        // them); they import their modules side by side.
        specs.map(Warm::spawn).collect()
    }
}

/// The warm workers started early, once ready, importing `preload` too; with the files of the
/// project any of them imported.
fn take_over(mut early: Vec<Warm>, preload: &[String]) -> Result<(Vec<Warm>, BTreeSet<PathBuf>)> {
    for warm in &mut early {
        warm.preload(preload)?;
    }
    all_ready(early)
}

/// `warm`, each waited for in turn until ready; with the files of the project any of them
/// imported.
fn all_ready(mut warm: Vec<Warm>) -> Result<(Vec<Warm>, BTreeSet<PathBuf>)> {
    let mut held = BTreeSet::new();
    for worker in &mut warm {
        held.extend(worker.ready()?);
    }
    Ok((warm, held))
}
