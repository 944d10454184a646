//! A warm Python worker: one long-lived interpreter per copy that has pytest imported and forks a child per mutant.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, Result};
use serde_json::json;

use super::served::{Answer, Served};
use crate::model::record::{Bytes, Exit, Finished};
use crate::process::read_tail;
use crate::run::timeouts::WARM_START_LIMIT;

/// What a warm worker needs to start.
#[derive(Debug, Clone)]
pub struct WarmSpec {
    pub python: PathBuf,
    /// The worker script, written out once per run.
    pub script: PathBuf,
    pub root: PathBuf,
    pub env: Vec<(String, String)>,
    /// Modules from outside the project to import before forking.
    pub preload: Vec<String>,
    /// pytest options every run gets (besides the tests).
    pub pytest_options: Vec<String>,
    /// Where the worker's own standard error goes (not its children's).
    pub log: PathBuf,
}

const NAME: &str = "the warm Python worker (try --no-fork)";

pub struct WarmWorker {
    served: Served,
}

impl WarmWorker {
    /// Starts a worker and waits until it is ready.
    pub fn start(spec: &WarmSpec) -> Result<WarmWorker> {
        let worker = WarmWorker::spawn(spec)?;
        worker.ready()?;
        Ok(worker)
    }

    /// Starts a worker without waiting for it; spawn from a thread that outlives it.
    pub fn spawn(spec: &WarmSpec) -> Result<WarmWorker> {
        let mut command = Command::new(&spec.python);
        command
            .arg(&spec.script)
            .current_dir(&spec.root)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env("MUTDELTA_PRELOAD", serde_json::to_string(&spec.preload)?)
            // Who the worker and the collectors it forks watch: mutdelta, which is not the
            // worker's parent when `--python` is a wrapper that does not exec.
            .env("MUTDELTA_WORKER_PARENT", std::process::id().to_string());
        Ok(WarmWorker { served: Served::spawn(NAME, &mut command, spec.log.clone())? })
    }

    /// Waits until the worker has imported what it preloads; returns the files of the copy it
    /// imported meanwhile (as a dependency of pytest or of a preloaded module), by path in the
    /// copy: its children cannot import those afresh.
    pub fn ready(&self) -> Result<Vec<PathBuf>> {
        Ok(project_files(&self.served.ready(WARM_START_LIMIT)?))
    }

    /// Asks the worker to import `modules` too (those it did not preload when it started);
    /// see `preloaded`.
    pub fn ask_preload(&mut self, modules: &[String]) -> Result<()> {
        self.served.send(&json!({ "preload": modules }))
    }

    /// Waits until the worker has imported what `ask_preload` asked; returns the files of the
    /// copy it has imported by now (see `ready`).
    pub fn preloaded(&self) -> Result<Vec<PathBuf>> {
        Ok(project_files(&self.served.answer(WARM_START_LIMIT)?))
    }

    /// Asks the worker to fork a collector, which connects to the Unix socket at `socket` and
    /// runs pytest with `args` (the collector plugin among them), reading `files`; its standard
    /// error goes to `log`. No answer comes: the collector's connection is the answer.
    pub fn fork_collector(
        &mut self,
        socket: &Path,
        args: &[String],
        files: &[PathBuf],
        log: &Path,
    ) -> Result<()> {
        let request = json!({ "collector": { "socket": socket, "args": args, "files": files, "log": log } });
        self.served.send(&request)
    }

    /// The worker's process id.
    pub fn pid(&self) -> u32 {
        self.served.pid()
    }

    /// Runs pytest with `args` in a forked child; the child's whole process group is killed on
    /// timeout or interrupt.
    pub fn run(&mut self, args: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let request = json!({ "args": args, "log": log, "timeout": timeout.as_secs_f64() });
        let answer = match self.served.request(&request, timeout)? {
            Answer::Interrupted(duration) => {
                return Ok(Finished { exit: Exit::Interrupted, duration, tail: String::new(), command: None })
            }
            Answer::Done(answer) => answer,
        };
        Ok(Finished {
            exit: read_exit(&answer)?,
            duration: seconds(&answer),
            tail: read_tail(log),
            command: None,
        })
    }
}

/// The `project_files` of an answer.
fn project_files(answer: &serde_json::Value) -> Vec<PathBuf> {
    let files = answer["project_files"].as_array().map(Vec::as_slice).unwrap_or_default();
    files.iter().filter_map(|file| file.as_str().map(PathBuf::from)).collect()
}

/// How a forked child ended, from a helper's answer.
pub fn read_exit(answer: &serde_json::Value) -> Result<Exit> {
    if let Some(limit) = answer["memory_limit"].as_u64() {
        Ok(Exit::MemoryLimit(Bytes(limit)))
    } else if answer["timeout"] == true {
        Ok(Exit::TimedOut)
    } else if let Some(signal) = answer["signal"].as_i64() {
        Ok(Exit::Signal(signal as i32))
    } else if let Some(code) = answer["exit"].as_i64() {
        Ok(Exit::Code(code as i32))
    } else {
        Err(anyhow!("a Python helper answered {answer}"))
    }
}

/// The `duration` of an answer.
pub fn seconds(answer: &serde_json::Value) -> Duration {
    Duration::from_secs_f64(answer["duration"].as_f64().unwrap_or(0.0).max(0.0))
}
