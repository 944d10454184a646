//! A warm Python worker: one long-lived interpreter per copy that has pytest imported and forks a child per mutant.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};

use crate::run::process::{kill_group, read_tail, DieWithParent, Exit, Finished};
use crate::run::timeouts::{WARM_ANSWER_GRACE, WARM_START_LIMIT};
use crate::run::INTERRUPTED;

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

pub struct WarmWorker {
    log: PathBuf,
    process: Child,
    stdin: ChildStdin,
    answers: Receiver<Value>,
}

impl WarmWorker {
    /// Starts a worker and waits until it is ready.
    pub fn start(spec: &WarmSpec) -> Result<WarmWorker> {
        let worker = WarmWorker::spawn(spec)?;
        worker.ready()?;
        Ok(worker)
    }

    /// Starts a worker without waiting for it. The worker dies with the thread that spawns it
    /// (`PR_SET_PDEATHSIG` follows threads), so spawn from a thread that outlives it.
    pub fn spawn(spec: &WarmSpec) -> Result<WarmWorker> {
        let mut process = Command::new(&spec.python)
            .arg(&spec.script)
            .current_dir(&spec.root)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env("MUTDELTA_PRELOAD", serde_json::to_string(&spec.preload)?)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&spec.log)?)
            .process_group(0)
            .die_with_parent()
            .spawn()
            .with_context(|| format!("could not start a warm worker with {}", spec.python.display()))?;
        let stdin = process.stdin.take().expect("stdin is piped");
        let stdout = process.stdout.take().expect("stdout is piped");
        let (sender, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    if sender.send(value).is_err() {
                        break;
                    }
                }
            }
        });
        Ok(WarmWorker { log: spec.log.clone(), process, stdin, answers })
    }

    /// Waits until the worker has imported what it preloads.
    pub fn ready(&self) -> Result<()> {
        match self.answers.recv_timeout(WARM_START_LIMIT) {
            Ok(answer) if answer["ready"] == true => Ok(()),
            _ => bail!(
                "the warm Python worker did not start (try --no-fork); it said: {}",
                last_lines(&read_tail(&self.log))
            ),
        }
    }

    /// Runs pytest with `args` in a forked child; the child's whole process group is killed on
    /// timeout or interrupt.
    pub fn run(&mut self, args: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let request = json!({ "args": args, "log": log, "timeout": timeout.as_secs_f64() });
        if writeln!(self.stdin, "{request}").and_then(|_| self.stdin.flush()).is_err() {
            bail!(
                "the warm Python worker exited (try --no-fork); it said: {}",
                last_lines(&read_tail(&self.log))
            );
        }
        let start = Instant::now();
        let mut child_group = None;
        loop {
            if INTERRUPTED.load(Ordering::SeqCst) {
                if let Some(group) = child_group {
                    kill_group(group);
                }
                return Ok(Finished {
                    exit: Exit::Interrupted,
                    duration: start.elapsed(),
                    tail: String::new(),
                    command: None,
                });
            }
            if start.elapsed() > timeout + WARM_ANSWER_GRACE {
                if let Some(group) = child_group {
                    kill_group(group);
                }
                bail!("the warm worker stopped answering");
            }
            match self.answers.recv_timeout(Duration::from_millis(50)) {
                Ok(answer) => {
                    if let Some(pid) = answer["child"].as_i64() {
                        child_group = Some(pid as i32);
                        continue;
                    }
                    let duration = Duration::from_secs_f64(answer["duration"].as_f64().unwrap_or(0.0));
                    let exit = if answer["timeout"] == true {
                        Exit::TimedOut
                    } else if let Some(signal) = answer["signal"].as_i64() {
                        Exit::Signal(signal as i32)
                    } else if let Some(code) = answer["exit"].as_i64() {
                        Exit::Code(code as i32)
                    } else {
                        return Err(anyhow!("the warm worker answered {answer}"));
                    };
                    return Ok(Finished { exit, duration, tail: read_tail(log), command: None });
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    bail!(
                        "the warm Python worker exited (try --no-fork); it said: {}",
                        last_lines(&read_tail(&self.log))
                    )
                }
            }
        }
    }
}

impl Drop for WarmWorker {
    fn drop(&mut self) {
        kill_group(self.process.id() as i32);
        let _ = self.process.wait();
    }
}

/// The last few lines of a log, on one line.
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    if tail.is_empty() {
        "nothing".to_string()
    } else {
        tail
    }
}
