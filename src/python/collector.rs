//! The Rust side of a collector: a pytest process per copy that collected the tests once and runs each mutant in a forked child with the mutated code swapped into the live functions.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};

use super::served::{self, Answer, Served};
use super::warm::{read_exit, seconds, WarmWorker};
use crate::model::record::{Exit, Finished};
use crate::process::read_tail;
use crate::run::timeouts::WARM_START_LIMIT;

/// The plugin module, written beside the probe and loaded with `-p mutdelta_collector`.
pub const PLUGIN_SOURCE: &str = include_str!("collector.py");
pub const PLUGIN_MODULE: &str = "mutdelta_collector";

const NAME: &str = "the collector";

/// The variable that names mutdelta's process to a collector forked from a warm worker.
const PARENT_VARIABLE: &str = "MUTDELTA_COLLECTOR_PARENT";

/// What a swap request came to.
pub enum Swapped {
    /// The mutant cannot be swapped in: a fresh import must test it.
    Refused(String),
    Ran {
        finished: Finished,
        /// The tests that failed, by node id, as pytest reported them.
        failed: Vec<String>,
        /// Time spent swapping the code in, and running the tests.
        split: Option<(Duration, Duration)>,
    },
}

pub struct Collector {
    state: State,
}

enum State {
    /// Forked from a warm worker, not connected yet.
    Forking {
        listener: UnixListener,
        socket: PathBuf,
        warm: u32,
        log: PathBuf,
    },
    Served(Served),
    /// Its connection failed.
    Failed,
}

impl Collector {
    /// Starts pytest in the copy at `root` with the collector plugin; it collects the tests
    /// `pytest_args` name (none: the configured suite), reads `files` (paths in the copy) and
    /// waits for requests. Spawn from a thread that outlives it.
    pub fn spawn(
        python: &Path,
        root: &Path,
        env: &[(String, String)],
        pytest_args: &[String],
        files: &[PathBuf],
        log: PathBuf,
    ) -> Result<Collector> {
        let mut command = Command::new(python);
        command
            .args(["-m", "pytest"])
            .args(plugin_args(pytest_args))
            .current_dir(root)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("MUTDELTA_COLLECTOR_FILES", serde_json::to_string(files)?)
            // Set only by a warm worker forking a collector: mutdelta, the process to outlive.
            .env_remove(PARENT_VARIABLE);
        Ok(Collector { state: State::Served(Served::spawn(NAME, &mut command, log)?) })
    }

    /// Asks `warm` (the warm worker of the copy, whose environment and directory are the
    /// collector's) to fork the collector of `spawn`: no interpreter starts, nor imports
    /// pytest again. It connects through a Unix socket at `socket`, a path no file holds.
    pub fn fork(
        warm: &mut WarmWorker,
        socket: &Path,
        pytest_args: &[String],
        files: &[PathBuf],
        log: PathBuf,
    ) -> Result<Collector> {
        let listener = UnixListener::bind(socket)
            .with_context(|| format!("could not listen on {}", socket.display()))?;
        let state =
            State::Forking { listener, socket: socket.to_path_buf(), warm: warm.pid(), log: log.clone() };
        // Made now, the collector ends the socket file however it ends.
        let collector = Collector { state };
        warm.fork_collector(socket, &plugin_args(pytest_args), files, &log)?;
        Ok(collector)
    }

    /// Waits until the tests are collected.
    pub fn ready(&mut self) -> Result<()> {
        self.state = match std::mem::replace(&mut self.state, State::Failed) {
            State::Forking { listener, socket, warm, log } => {
                let connected = Served::accept(NAME, listener, warm, log, WARM_START_LIMIT);
                let _ = std::fs::remove_file(&socket);
                State::Served(connected?)
            }
            state => state,
        };
        self.served()?.ready(WARM_START_LIMIT).map(drop)
    }

    fn served(&mut self) -> Result<&mut Served> {
        match &mut self.state {
            State::Served(served) => Ok(served),
            _ => Err(anyhow!("{NAME} is not connected")),
        }
    }

    /// Runs `tests` against the mutant of `file` (its path in the copy), swapped into the live
    /// functions.
    pub fn mutant(
        &mut self,
        file: &Path,
        source_bytes: usize,
        mutant: &mutators::Mutant,
        tests: &[String],
        timeout: Duration,
        log: &Path,
    ) -> Result<Swapped> {
        let request = json!({
            "mutant": {
                "file": file,
                "start": [mutant.start.line, mutant.start.column],
                "end": [mutant.end.line, mutant.end.column],
                "replacement": mutant.replacement,
                "source_bytes": source_bytes,
            },
            "tests": tests,
            "log": log,
            "timeout": timeout.as_secs_f64(),
        });
        self.ask(&request, timeout, log)
    }

    /// Runs `tests` as collected, without any mutant.
    pub fn unmutated(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<Swapped> {
        let request =
            json!({ "unmutated": true, "tests": tests, "log": log, "timeout": timeout.as_secs_f64() });
        self.ask(&request, timeout, log)
    }

    /// Runs `tests` with every function of `file` swapped for one that raises.
    pub fn canary(
        &mut self,
        file: &Path,
        tests: &[String],
        timeout: Duration,
        log: &Path,
    ) -> Result<Swapped> {
        let request = json!({ "canary": file, "tests": tests, "log": log, "timeout": timeout.as_secs_f64() });
        self.ask(&request, timeout, log)
    }

    fn ask(&mut self, request: &Value, timeout: Duration, log: &Path) -> Result<Swapped> {
        let answer = match self.served()?.request(request, timeout)? {
            Answer::Interrupted(duration) => {
                let finished =
                    Finished { exit: Exit::Interrupted, duration, tail: String::new(), command: None };
                return Ok(Swapped::Ran { finished, failed: Vec::new(), split: None });
            }
            Answer::Done(answer) => answer,
        };
        if let Some(why) = answer["refused"].as_str() {
            return Ok(Swapped::Refused(why.to_string()));
        }
        let finished = Finished {
            exit: read_exit(&answer)?,
            duration: seconds(&answer),
            tail: read_tail(log),
            command: None,
        };
        let failed = answer["failed"]
            .as_array()
            .map(|failed| failed.iter().filter_map(|id| id.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        let split = match (answer["swap"].as_f64(), answer["tests"].as_f64()) {
            (Some(swap), Some(tests)) => {
                Some((Duration::from_secs_f64(swap), Duration::from_secs_f64(tests)))
            }
            _ => None,
        };
        Ok(Swapped::Ran { finished, failed, split })
    }
}

impl Drop for Collector {
    /// A collector forked but never connected ends: on its way (once its socket is gone, it
    /// cannot connect), or killed if it waits to be accepted.
    fn drop(&mut self) {
        if let State::Forking { listener, socket, warm, .. } = &self.state {
            let _ = std::fs::remove_file(socket);
            served::end_waiting(listener, *warm);
        }
    }
}

/// pytest's arguments for a collector: its plugin, native tracebacks, then `pytest_args`.
fn plugin_args(pytest_args: &[String]) -> Vec<String> {
    let plugin = ["-p", PLUGIN_MODULE, "--tb=native"].map(str::to_string);
    plugin.into_iter().chain(pytest_args.iter().cloned()).collect()
}
