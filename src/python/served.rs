//! A long-lived Python helper that answers JSON requests a line at a time and forks a child per request: the warm worker and the collector (started, or forked from a warm worker and reached through a Unix socket).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
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
    process: Helper,
    /// Its group, registered with the watchdog; dropped after the group is killed.
    _watched: Watched,
    requests: Box<dyn Write + Send>,
    answers: Receiver<Value>,
}

/// The helper's process: mutdelta's child, or a warm worker's (which reaps it).
enum Helper {
    Spawned(Child),
    Forked(i32),
}

impl Helper {
    fn group(&self) -> i32 {
        match self {
            Helper::Spawned(child) => child.id() as i32,
            Helper::Forked(pid) => *pid,
        }
    }
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
        let answers = read_answers(stdout);
        Ok(Served {
            name,
            log,
            process: Helper::Spawned(process),
            _watched: watched,
            requests: Box::new(stdin),
            answers,
        })
    }

    /// Waits up to `limit` for a child of the process `parent` (a warm worker asked to fork
    /// this helper; see `forked_by`) to connect to `listener`, which then closes; connections
    /// from any other process are refused. The helper's standard error goes to `log`.
    pub fn accept(
        name: &'static str,
        listener: UnixListener,
        parent: u32,
        log: PathBuf,
        limit: Duration,
    ) -> Result<Served> {
        listener.set_nonblocking(true)?;
        let start = Instant::now();
        let (stream, pid) = loop {
            match listener.accept() {
                Ok((stream, _)) => {
                    if let Some(pid) = peer_pid(&stream).filter(|&pid| forked_by(pid, parent)) {
                        break (stream, pid);
                    }
                    // Any other process is hung up on.
                }
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(err) => return Err(err).with_context(|| format!("{name} could not connect")),
            }
            if INTERRUPTED.load(Ordering::SeqCst) {
                bail!("{name} was not started: interrupted");
            }
            if start.elapsed() > limit || !is_running(parent) {
                bail!("{name} did not start; it said: {}", last_words_of(&log));
            }
        };
        stream.set_nonblocking(false)?;
        let watched = Watched::group(pid as i32);
        let answers = read_answers(stream.try_clone()?);
        Ok(Served {
            name,
            log,
            process: Helper::Forked(pid as i32),
            _watched: watched,
            requests: Box::new(stream),
            answers,
        })
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

    /// Waits up to `limit` for its next answer, which must not be an error; returns it.
    pub fn answer(&self, limit: Duration) -> Result<Value> {
        match self.answers.recv_timeout(limit) {
            Ok(answer) if answer["error"].is_string() => {
                bail!("{} failed: {}", self.name, answer["error"].as_str().unwrap_or(""))
            }
            Ok(answer) => Ok(answer),
            Err(_) => bail!("{} did not answer; it said: {}", self.name, self.last_words()),
        }
    }

    /// Sends `request` and waits for its final answer, killing the child's process group when
    /// the helper stops answering past `timeout`, on interrupt, or when the child's processes
    /// hold more than the run's memory limit (the answer then says `memory_limit`).
    pub fn request(&mut self, request: &Value, timeout: Duration) -> Result<Answer> {
        self.send(request)?;
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

    /// Sends `request`, for which no answer comes.
    pub fn send(&mut self, request: &Value) -> Result<()> {
        if writeln!(self.requests, "{request}").and_then(|_| self.requests.flush()).is_err() {
            bail!("{} exited; it said: {}", self.name, self.last_words());
        }
        Ok(())
    }

    /// The helper's process id.
    pub fn pid(&self) -> u32 {
        self.process.group() as u32
    }

    /// The last few lines of its standard error, on one line.
    fn last_words(&self) -> String {
        last_words_of(&self.log)
    }
}

/// Kills the children of `parent` waiting on `listener` to be accepted, each with its process
/// group: helpers forked for a connection that will not be taken (any other connection is hung
/// up on).
pub fn end_waiting(listener: &UnixListener, parent: u32) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    while let Ok((stream, _)) = listener.accept() {
        if let Some(pid) = peer_pid(&stream).filter(|&pid| forked_by(pid, parent)) {
            kill_group(pid as i32);
        }
    }
}

/// The last few lines of `log`, on one line.
fn last_words_of(log: &std::path::Path) -> String {
    let text = read_tail(log);
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    if tail.is_empty() {
        "nothing".to_string()
    } else {
        tail
    }
}

/// The JSON lines `output` gives, as they arrive, until it ends.
fn read_answers(output: impl Read + Send + 'static) -> Receiver<Value> {
    let (sender, answers) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if let Ok(value) = serde_json::from_str::<Value>(&line) {
                if sender.send(value).is_err() {
                    break;
                }
            }
        }
    });
    answers
}

/// The process at the other end of a Unix socket.
fn peer_pid(stream: &UnixStream) -> Option<u32> {
    let mut credentials = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut size = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED fills a `ucred` of the size given, on a socket this stream owns.
    let status = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut credentials as *mut libc::ucred).cast(),
            &mut size,
        )
    };
    (status == 0 && credentials.pid > 0).then_some(credentials.pid as u32)
}

/// The fields of `/proc/<pid>/stat` after the command name: its state first, then its parent.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    Some(after.split_whitespace().map(str::to_string).collect())
}

fn parent_of(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// Whether `pid` was forked by the warm worker mutdelta started as `worker`: its child, or,
/// when `worker` is a wrapper that runs the interpreter without `exec` (a shell script naming
/// the real one), the child of that interpreter, which the wrapper started in its own process
/// group. What a forked run starts is never such a process: the run has a group of its own,
/// and what it starts descends from it.
fn forked_by(pid: u32, worker: u32) -> bool {
    let Some(parent) = parent_of(pid) else { return false };
    if parent == worker {
        return true;
    }
    // The parent's own parent and process group, from one reading of its stat.
    let Some(fields) = stat_fields(parent) else { return false };
    let id = |index: usize| fields.get(index).and_then(|field| field.parse::<u32>().ok());
    id(1) == Some(worker) && id(2) == Some(worker)
}

/// Whether `pid` is alive (not ended, nor a zombie waiting to be reaped).
fn is_running(pid: u32) -> bool {
    stat_fields(pid)
        .and_then(|fields| fields.first().cloned())
        .is_some_and(|state| state != "Z" && state != "X")
}

impl Drop for Served {
    fn drop(&mut self) {
        kill_group(self.process.group());
        if let Helper::Spawned(child) = &mut self.process {
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_child_of_the_named_parent_is_accepted_on_the_socket() {
        // An impostor (this process, whose parent is not itself) connects first and claims to
        // be ready; then a child of this process connects. The child is the one served.
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("collector.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let mut impostor = UnixStream::connect(&socket).unwrap();
        writeln!(impostor, r#"{{"ready": true, "who": "impostor"}}"#).unwrap();
        // The child says it is ready, then answers its first request.
        let child_code = "import socket, sys, time\n\
            s = socket.socket(socket.AF_UNIX)\n\
            s.connect(sys.argv[1])\n\
            s.sendall(b'{\"ready\": true, \"who\": \"child\"}\\n')\n\
            s.makefile('rb').readline()\n\
            time.sleep(0.2)\n\
            s.sendall(b'{\"exit\": 0, \"duration\": 0.2}\\n')\n\
            time.sleep(30)\n";
        let mut child = Command::new("python3").args(["-c", child_code]).arg(&socket).spawn().unwrap();
        let log = dir.path().join("log");
        let served =
            Served::accept("the test helper", listener, std::process::id(), log, Duration::from_secs(20));
        let mut served = served.ok();
        let answer = served.as_ref().and_then(|served| served.ready(Duration::from_secs(20)).ok());
        let pid = served.as_ref().map(Served::pid);
        // Its answer comes after a pause: the connection must wait for it.
        let second = served.as_mut().and_then(|served| {
            match served.request(&serde_json::json!({ "args": [] }), Duration::from_secs(20)) {
                Ok(Answer::Done(answer)) => Some(answer),
                _ => None,
            }
        });
        drop(served);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(answer.map(|ready| ready["who"].clone()), Some(serde_json::json!("child")));
        assert_eq!(pid, Some(child.id()));
        assert_eq!(second, Some(serde_json::json!({ "exit": 0, "duration": 0.2 })));
    }

    #[test]
    fn a_child_of_an_interpreter_that_a_wrapper_started_is_accepted_and_its_grandchild_is_not() {
        // `sh` stands for a wrapper that runs the interpreter without `exec`. The interpreter
        // forks a run, whose own child connects first; then it forks the helper, in a group
        // of its own, as a warm worker forks a collector. The helper is the one served.
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("collector.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let interpreter = "import os, socket, sys, time\n\
            def connect(who):\n\
            \x20   s = socket.socket(socket.AF_UNIX)\n\
            \x20   s.connect(sys.argv[1])\n\
            \x20   s.sendall(('{\"ready\": true, \"who\": \"%s\"}\\n' % who).encode())\n\
            \x20   time.sleep(30)\n\
            if os.fork() == 0:\n\
            \x20   if os.fork() == 0:\n\
            \x20       connect('grandchild')\n\
            \x20   time.sleep(30)\n\
            time.sleep(0.5)\n\
            if os.fork() == 0:\n\
            \x20   os.setpgid(0, 0)\n\
            \x20   connect('helper')\n\
            time.sleep(30)\n";
        let script = dir.path().join("interpreter.py");
        std::fs::write(&script, interpreter).unwrap();
        let mut wrapper = Command::new("sh")
            .arg("-c")
            .arg(r#"python3 "$0" "$1"; true"#)
            .arg(&script)
            .arg(&socket)
            .process_group(0)
            .spawn()
            .unwrap();
        let log = dir.path().join("log");
        let served = Served::accept("the test helper", listener, wrapper.id(), log, Duration::from_secs(20));
        let answer = served.as_ref().ok().and_then(|served| served.ready(Duration::from_secs(20)).ok());
        drop(served);
        kill_group(wrapper.id() as i32);
        let _ = wrapper.wait();
        assert_eq!(answer.map(|ready| ready["who"].clone()), Some(serde_json::json!("helper")));
    }

    #[test]
    fn a_process_a_forked_run_started_and_one_that_has_ended_are_refused() {
        // This process stands for the warm worker. A run it forks has a group of its own, and
        // the process that run starts connects first; so does a child that connects and ends
        // before it is looked at. Then the helper, a child in a group of its own, connects.
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("collector.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let connect = "import socket, sys, time\n\
            s = socket.socket(socket.AF_UNIX)\n\
            s.connect(sys.argv[1])\n\
            s.sendall(('{\"ready\": true, \"who\": \"%s\"}\\n' % sys.argv[2]).encode())\n\
            time.sleep(float(sys.argv[3]))\n";
        let mut ended =
            Command::new("python3").args(["-c", connect]).arg(&socket).args(["ended", "0"]).spawn().unwrap();
        ended.wait().unwrap();
        let mut run = Command::new("sh")
            .arg("-c")
            .arg(r#"python3 -c "$0" "$1" started-by-a-run 30; true"#)
            .arg(connect)
            .arg(&socket)
            .process_group(0)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let mut helper = Command::new("python3")
            .args(["-c", connect])
            .arg(&socket)
            .args(["helper", "30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let log = dir.path().join("log");
        let served =
            Served::accept("the test helper", listener, std::process::id(), log, Duration::from_secs(20));
        let answer = served.as_ref().ok().and_then(|served| served.ready(Duration::from_secs(20)).ok());
        drop(served);
        kill_group(run.id() as i32);
        let _ = run.wait();
        let _ = helper.kill();
        let _ = helper.wait();
        assert_eq!(answer.map(|ready| ready["who"].clone()), Some(serde_json::json!("helper")));
    }

    #[test]
    fn a_child_waiting_to_be_accepted_is_killed_when_its_connection_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("collector.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let child_code = "import os, socket, sys, time\n\
            s = socket.socket(socket.AF_UNIX)\n\
            s.connect(sys.argv[1])\n\
            open(sys.argv[1] + '.connected', 'w').close()\n\
            time.sleep(30)\n";
        let mut child =
            Command::new("python3").args(["-c", child_code]).arg(&socket).process_group(0).spawn().unwrap();
        let connected = dir.path().join("collector.sock.connected");
        let start = Instant::now();
        while !connected.exists() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(connected.exists(), "the child connected");

        end_waiting(&listener, std::process::id());

        let status = child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL), "{status:?}");
        assert!(start.elapsed() < Duration::from_secs(25), "{:?}", start.elapsed());
    }

    #[test]
    fn no_connection_from_a_parent_that_ended_is_waited_for() {
        // Ended and reaped, or ended and not yet reaped (a zombie, as a warm worker mutdelta
        // has not waited for yet is).
        for reaped in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let listener = UnixListener::bind(dir.path().join("collector.sock")).unwrap();
            let mut ended = Command::new("true").spawn().unwrap();
            if reaped {
                ended.wait().unwrap();
            } else {
                let stat = format!("/proc/{}/stat", ended.id());
                let zombie = || std::fs::read_to_string(&stat).is_ok_and(|stat| stat.contains(") Z "));
                let start = Instant::now();
                while !zombie() && start.elapsed() < Duration::from_secs(20) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                assert!(zombie(), "{stat}");
            }
            let log = dir.path().join("log");
            std::fs::write(&log, "the parent's last words\n").unwrap();
            let start = Instant::now();
            let error = Served::accept("the test helper", listener, ended.id(), log, Duration::from_secs(60))
                .err()
                .expect("no child can connect");
            let _ = ended.wait();
            assert!(start.elapsed() < Duration::from_secs(30), "reaped: {reaped}, {:?}", start.elapsed());
            assert_eq!(format!("{error}"), "the test helper did not start; it said: the parent's last words");
        }
    }
}
