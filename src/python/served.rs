//! A long-lived Python helper that answers JSON requests a line at a time and forks a child per request: the warm worker and the collector.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;

use crate::interrupt::INTERRUPTED;
use crate::memory::{self, MemoryWatch};
use crate::model::record::Bytes;
use crate::process::{read_tail, DieWithParent};
use crate::run::timeouts::WARM_ANSWER_GRACE;
use crate::watchdog::{kill_group, Watched};

/// What a request came to.
pub enum Answer {
    /// The helper's final answer (its child's exit, or a refusal).
    Done(Value),
    /// Interrupted by Ctrl-C or SIGTERM; the child's group was killed.
    Interrupted(Duration),
}

/// The helper process, its request pipe, and its answers as they arrive.
pub struct Served {
    /// What it is, for errors: "the warm Python worker".
    name: &'static str,
    /// Its own standard error.
    log: PathBuf,
    process: Child,
    /// Its group, registered with the watchdog; dropped after the group is killed.
    _watched: Watched,
    stdin: ChildStdin,
    answers: Receiver<Value>,
}

impl Served {
    /// Starts `command` in its own process group, dying with mutdelta; its standard error goes
    /// to `log`. It dies with the thread that spawns it (`PR_SET_PDEATHSIG` follows threads),
    /// so spawn from a thread that outlives it.
    pub fn spawn(name: &'static str, command: &mut Command, log: PathBuf) -> Result<Served> {
        crate::seal::seal(command);
        let mut process = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log)?)
            .process_group(0)
            .die_with_parent()
            .spawn()
            .with_context(|| format!("could not start {name}"))?;
        let watched = Watched::group(process.id() as i32);
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
        Ok(Served { name, log, process, _watched: watched, stdin, answers })
    }

    /// Waits up to `limit` for its first answer, which must say it is ready; returns it.
    pub fn ready(&self, limit: Duration) -> Result<Value> {
        match self.answers.recv_timeout(limit) {
            Ok(answer) if answer["ready"] == true => Ok(answer),
            Ok(answer) if answer["error"].is_string() => {
                bail!("{} did not start: {}", self.name, answer["error"].as_str().unwrap_or(""))
            }
            _ => bail!("{} did not start; it said: {}", self.name, self.last_words()),
        }
    }

    /// Sends `request` and waits for its final answer, killing the child's process group when
    /// the helper stops answering past `timeout`, on interrupt, or when the child's processes
    /// hold more than the run's memory limit (the answer then says `memory_limit`).
    pub fn request(&mut self, request: &Value, timeout: Duration) -> Result<Answer> {
        if writeln!(self.stdin, "{request}").and_then(|_| self.stdin.flush()).is_err() {
            bail!("{} exited; it said: {}", self.name, self.last_words());
        }
        let start = Instant::now();
        // The forked child's own group, registered with the watchdog until the request ends
        // (the helper kills the group before its final answer).
        // Its memory is watched too, and the limit it was stopped at kept for the answer.
        let mut child_group: Option<(i32, Watched, MemoryWatch)> = None;
        let mut stopped_at: Option<Bytes> = None;
        loop {
            if INTERRUPTED.load(Ordering::SeqCst) {
                if let Some((group, _, _)) = child_group {
                    kill_group(group);
                }
                return Ok(Answer::Interrupted(start.elapsed()));
            }
            if start.elapsed() > timeout + WARM_ANSWER_GRACE {
                if let Some((group, _, _)) = child_group {
                    kill_group(group);
                }
                bail!("{} stopped answering", self.name);
            }
            if let (Some((group, _, watch)), None) = (&mut child_group, stopped_at) {
                if let Some(limit) = watch.over() {
                    kill_group(*group);
                    stopped_at = Some(limit);
                }
            }
            match self.answers.recv_timeout(Duration::from_millis(25)) {
                Ok(answer) => {
                    if let Some(pid) = answer["child"].as_i64() {
                        let group = pid as i32;
                        child_group =
                            Some((group, Watched::group(group), MemoryWatch::new(group, memory::limit())));
                        continue;
                    }
                    let mut answer = answer;
                    if let Some(limit) = stopped_at {
                        answer["memory_limit"] = limit.0.into();
                    }
                    return Ok(Answer::Done(answer));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(anyhow!("{} exited; it said: {}", self.name, self.last_words()));
                }
            }
        }
    }

    /// The last few lines of its standard error, on one line.
    fn last_words(&self) -> String {
        let text = read_tail(&self.log);
        let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
        if tail.is_empty() {
            "nothing".to_string()
        } else {
            tail
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        kill_group(self.process.id() as i32);
        let _ = self.process.wait();
    }
}
