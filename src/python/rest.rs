//! The second round's coverage run over the rest of the suite, begun beside the first round in a copy of its own.
//!
//! The second round needs it when a mutant survives the change's tests or a line is left
//! uncovered. It begins with the first round's coverage run, on the cores that run leaves
//! free, and pauses while that run is spread over every core. When that run ends with every
//! line covered, only a survivor could need it: from then on it takes only the CPU time the
//! first round's mutants leave idle (nothing, where they keep every core busy), and it is
//! stopped when no mutant needs it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::Result;

use super::coverage::{self, Alongside, Measured, Memory};
use super::interpreter::Runner;
use crate::model::record::Exit;
use crate::process::Beside;
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
    /// The tests the test-impact map proved need not run (`coverage::Probe::ruled_out`).
    pub ruled_out: BTreeMap<String, String>,
    pub targets: BTreeMap<PathBuf, Vec<usize>>,
    pub memory: Arc<Memory>,
    pub shards: usize,
    /// The shards that may run before it is waited for: the cores the first round leaves.
    pub shards_at_first: usize,
    pub log: PathBuf,
}

/// The run under way; dropped unfinished, it is stopped and waited for.
pub struct RestOfSuite {
    cancel: Arc<AtomicBool>,
    running: Option<JoinHandle<Result<Measured>>>,
    /// Whether it runs on idle CPU time, nothing being known to need it.
    idle: Arc<AtomicBool>,
    /// Whether it may spread over its shards: it is waited for.
    spread: Arc<AtomicBool>,
    /// Whether it is paused: the first coverage run is spread over every core.
    hold: Arc<AtomicBool>,
    /// Set once the run is over, its processes gone.
    over: Arc<AtomicBool>,
    /// Set once a mutant survived beside it (`Watch::want`).
    wanted: Arc<AtomicBool>,
}

/// What a worker testing mutants beside the run sees of it: whether it still runs, whether a
/// mutant needs it, a way to say one does, and a way to stop it when a mutant's tests failed in
/// a way that may be its doing.
#[derive(Clone)]
pub struct Watch {
    cancel: Arc<AtomicBool>,
    over: Arc<AtomicBool>,
    /// Whether it runs on idle CPU time: no line was left uncovered.
    idle: Arc<AtomicBool>,
    /// Whether a mutant survived beside it.
    wanted: Arc<AtomicBool>,
}

impl Watch {
    /// Whether a mutant is known to need the run: a line no test of the change ran, or a
    /// mutant that survived them.
    pub fn wanted(&self) -> bool {
        !self.idle.load(Ordering::SeqCst) || self.wanted.load(Ordering::SeqCst)
    }

    /// Marks the run as needed: a mutant survived the change's tests.
    pub fn want(&self) {
        self.wanted.store(true, Ordering::SeqCst);
    }

    /// Whether the run still runs: its processes may hold what the tests need (a port, a file
    /// outside the copy).
    pub fn running(&self) -> bool {
        !self.over.load(Ordering::SeqCst)
    }

    /// Stops the run and waits until its processes are gone. The second round then measures
    /// the rest of the suite on its own, if it needs it.
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        while self.running() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// Sets its flag when dropped: when the run's thread ends, however it ends.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl RestOfSuite {
    /// Starts the run on its own thread; on idle CPU time when `idle`.
    pub fn begin(spec: RestSpec, idle: bool) -> Result<RestOfSuite> {
        std::fs::create_dir_all(&spec.files)?;
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let idle = Arc::new(AtomicBool::new(idle));
        let yielding = Arc::clone(&idle);
        let spread = Arc::new(AtomicBool::new(false));
        let spreading = Arc::clone(&spread);
        let hold = Arc::new(AtomicBool::new(false));
        let holding = Arc::clone(&hold);
        let over = Arc::new(AtomicBool::new(false));
        let ended = SetOnDrop(Arc::clone(&over));
        let running = std::thread::Builder::new().name("rest-of-suite".into()).spawn(move || {
            let _ended = ended;
            let probe = coverage::Probe {
                python: &spec.python,
                runner: &spec.runner,
                root: &spec.root,
                support: &spec.support,
                files: &spec.files,
                tests: &[],
                deselect: &spec.deselect,
                ruled_out: &spec.ruled_out,
                targets: spec.targets,
            };
            let alongside = Alongside {
                beside: Beside { cancel: &stop, idle: &yielding, hold: &holding },
                at_first: spec.shards_at_first,
                spread: &spreading,
            };
            coverage::measure_beside(&probe, &spec.memory, spec.shards, BASELINE_LIMIT, &spec.log, alongside)
        })?;
        let wanted = Arc::new(AtomicBool::new(false));
        Ok(RestOfSuite { cancel, running: Some(running), idle, spread, hold, over, wanted })
    }

    /// What the workers testing mutants beside the run see of it.
    pub fn watch(&self) -> Watch {
        Watch {
            cancel: Arc::clone(&self.cancel),
            over: Arc::clone(&self.over),
            idle: Arc::clone(&self.idle),
            wanted: Arc::clone(&self.wanted),
        }
    }

    /// Gives the run only idle CPU time from now on: nothing is known to need it yet.
    pub fn yield_the_cpu(&self) {
        self.idle.store(true, Ordering::SeqCst);
    }

    /// Pauses the run: the first coverage run needs every core.
    pub fn pause(&self) {
        self.hold.store(true, Ordering::SeqCst);
    }

    /// Lets a paused run go on.
    pub fn resume(&self) {
        self.hold.store(false, Ordering::SeqCst);
    }

    /// Whether the run was given only idle CPU time, at its start or later.
    pub fn yielded(&self) -> bool {
        self.idle.load(Ordering::SeqCst)
    }

    /// Waits for the run to end, spread over its shards from now on. Its measurement when the
    /// tests passed (or there were none left to collect); none when they failed, timed out or
    /// were stopped: a test that fails only beside other work (a deadline, a port) must not
    /// decide, so the caller then runs them again on its own.
    pub fn finish(mut self) -> Option<Measured> {
        self.resume();
        self.spread.store(true, Ordering::SeqCst);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_is_wanted_while_it_has_its_share_of_the_cpu_or_once_a_mutant_survived() {
        let idle = Arc::new(AtomicBool::new(false));
        let flag = || Arc::new(AtomicBool::new(false));
        let watch = Watch { cancel: flag(), over: flag(), idle: Arc::clone(&idle), wanted: flag() };
        // Not idle: a line no test of the change ran needs it.
        assert!(watch.wanted());
        idle.store(true, Ordering::SeqCst);
        assert!(!watch.wanted(), "on idle CPU time, nothing needs it yet");
        watch.clone().want();
        assert!(watch.wanted(), "a survivor seen by any worker needs it");
    }
}
