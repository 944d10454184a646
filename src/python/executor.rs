//! How one Python worker runs tests in its copy: a fresh process per run, or a fork from its warm worker.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use super::interpreter::{self, Runner};
use super::warm::{WarmSpec, WarmWorker};
use crate::model::record::{CommandRecord, Finished, How};

/// Runs the given tests in one worker's copy.
pub trait Executor: Send {
    fn run(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<Finished>;
    fn how(&self) -> How;
    /// The warm worker that forks its runs, if any (and it is running).
    fn warm_worker(&mut self) -> Option<&mut WarmWorker> {
        None
    }
}

/// One new process per run: any test command, or pytest without forking.
pub struct Spawn {
    pub runner: Runner,
    pub python: PathBuf,
    pub root: PathBuf,
    pub support: PathBuf,
}

impl Executor for Spawn {
    fn run(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        interpreter::test_command(
            &self.runner,
            &self.python,
            &self.root,
            Some(&self.support),
            ("pytest", &[]),
            tests,
        )
        .run(timeout, log)
        .map(|mut finished| {
            finished.command = finished.command.map(|command| command.with_inherited(interpreter::INHERITED));
            finished
        })
    }

    fn how(&self) -> How {
        How::Fresh
    }
}

/// pytest forked from a warm worker; a worker that broke is started again for the next run.
pub struct Warm {
    spec: WarmSpec,
    worker: Option<WarmWorker>,
    /// Modules it was asked to import after it started, whose answer `ready` awaits.
    preloading: bool,
}

impl Warm {
    /// Starts the worker without waiting for its imports; see `ready`.
    pub fn spawn(spec: WarmSpec) -> Result<Warm> {
        let worker = WarmWorker::spawn(&spec)?;
        Ok(Warm { spec, worker: Some(worker), preloading: false })
    }

    /// Asks a worker started without `modules` to import them too (and a worker started again
    /// after a failure to import them from the start), without waiting: see `ready`.
    pub fn preload(&mut self, modules: &[String]) -> Result<()> {
        self.spec.preload = modules.to_vec();
        if let (Some(worker), false) = (self.worker.as_mut(), modules.is_empty()) {
            worker.ask_preload(modules)?;
            self.preloading = true;
        }
        Ok(())
    }

    /// Waits until the worker is ready to fork, having imported what it preloads; returns the
    /// files of the copy it imported meanwhile (see `WarmWorker::ready`).
    pub fn ready(&mut self) -> Result<Vec<PathBuf>> {
        let Some(worker) = self.worker.as_ref() else { return Ok(Vec::new()) };
        let mut files = worker.ready()?;
        if std::mem::take(&mut self.preloading) {
            files.extend(worker.preloaded()?);
        }
        Ok(files)
    }
}

impl Executor for Warm {
    fn run(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let worker = match self.worker.as_mut() {
            Some(worker) => worker,
            None => self.worker.insert(WarmWorker::start(&self.spec)?),
        };
        let args = interpreter::pytest_args(&self.spec.pytest_options, tests);
        let result = worker.run(&args, timeout, log);
        match result {
            Ok(mut finished) => {
                // The command a forked child stands for: what reproduces it without the worker.
                let argv = [self.spec.python.display().to_string(), "-m".into(), "pytest".into()];
                finished.command = Some(
                    CommandRecord::new(
                        argv.into_iter().chain(args).collect(),
                        self.spec.root.clone(),
                        &self.spec.env,
                        finished.exit.clone(),
                        finished.duration,
                    )
                    .with_inherited(interpreter::INHERITED),
                );
                Ok(finished)
            }
            Err(err) => {
                self.worker = None;
                Err(err)
            }
        }
    }

    fn how(&self) -> How {
        How::Fork
    }

    fn warm_worker(&mut self) -> Option<&mut WarmWorker> {
        self.worker.as_mut()
    }
}
