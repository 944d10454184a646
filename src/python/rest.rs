//! The second round's coverage run over the rest of the suite, begun beside the first round's mutants in a copy of its own.
//!
//! The second round needs it when a mutant survives the change's tests or a line is left
//! uncovered. An uncovered line is known as soon as the first coverage run ends, so the run
//! then starts at once; a survivor is known only once the first round is over, so until then
//! the run takes only the CPU time the first round leaves idle (nothing, where the first round
//! keeps every core busy) and is stopped when no mutant needs it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::Result;

use super::coverage::{self, Measured, Memory};
use super::interpreter::Runner;
use crate::run::process::{Beside, Exit};
use crate::run::timeouts::BASELINE_LIMIT;

/// What the run needs, owned: it outlives the call that starts it.
pub struct RestSpec {
    pub python: PathBuf,
    pub runner: Runner,
    pub support: PathBuf,
    /// Where this run's own files go.
    pub files: PathBuf,
    /// A copy of the state under test that no mutant is ever written to.
    pub root: PathBuf,
    /// The tests the first round ran.
    pub deselect: Vec<String>,
    pub targets: BTreeMap<PathBuf, Vec<usize>>,
    pub memory: Arc<Memory>,
    pub shards: usize,
    pub log: PathBuf,
}

/// The run under way; dropped unfinished, it is stopped and waited for.
pub struct RestOfSuite {
    cancel: Arc<AtomicBool>,
    running: Option<JoinHandle<Result<Measured>>>,
    /// Whether it was begun on idle CPU time, before anything was known to need it.
    pub idle: bool,
}

impl RestOfSuite {
    /// Starts the run on its own thread; `idle` while nothing is known to need it.
    pub fn begin(spec: RestSpec, idle: bool) -> Result<RestOfSuite> {
        std::fs::create_dir_all(&spec.files)?;
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let running = std::thread::Builder::new().name("rest-of-suite".into()).spawn(move || {
            let probe = coverage::Probe {
                python: &spec.python,
                runner: &spec.runner,
                root: &spec.root,
                support: &spec.support,
                files: &spec.files,
                tests: &[],
                deselect: &spec.deselect,
                targets: spec.targets,
            };
            let beside = Beside { cancel: &stop, idle };
            coverage::measure_beside(&probe, &spec.memory, spec.shards, BASELINE_LIMIT, &spec.log, beside)
        })?;
        Ok(RestOfSuite { cancel, running: Some(running), idle })
    }

    /// Waits for the run to end. Its measurement when the tests passed (or there were none
    /// left to collect); none when they failed, timed out or were stopped: a test that fails
    /// only beside other work (a deadline, a port) must not decide, so the caller then runs
    /// them again on its own.
    pub fn finish(mut self) -> Option<Measured> {
        let measured = self.running.take()?.join().ok()?.ok()?;
        let usable = match measured.decisive() {
            None => measured.map.is_some(),
            Some(run) => matches!(run.exit, Exit::Code(0) | Exit::Code(5)),
        };
        usable.then_some(measured)
    }
}

impl Drop for RestOfSuite {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        if let Some(running) = self.running.take() {
            let _ = running.join();
        }
    }
}
