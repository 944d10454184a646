//! One test process in its own process group: waited for with a deadline, the whole group killed on timeout or interrupt.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

use super::memory::{self, MemoryWatch};
use crate::interrupt::INTERRUPTED;
use crate::model::record::{Bytes, CommandRecord, Exit, Finished};
use crate::watchdog::{kill_group, signal_group};

/// A command line with its working directory and environment.
#[derive(Debug, Clone)]
pub struct TestCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub dir: PathBuf,
    pub env: Vec<(String, String)>,
}

/// A run begun beside other work before it is known to be needed: stopped (as interrupted)
/// once `cancel` is set; once `idle` is set (at its start or while it runs), given only the
/// CPU time nothing else wants; paused (`SIGSTOP`) while `hold` is set, that time not counting
/// towards its timeout.
#[derive(Debug, Clone, Copy)]
pub struct Beside<'a> {
    pub cancel: &'a AtomicBool,
    pub idle: &'a AtomicBool,
    pub hold: &'a AtomicBool,
}

/// How many bytes of output are kept for a report.
const TAIL_BYTES: u64 = 4000;

impl TestCommand {
    /// Runs the command to completion or `timeout`; output goes to `log`.
    pub fn run(&self, timeout: Duration, log: &Path) -> Result<Finished> {
        self.run_as(timeout, log, None, memory::limit())
    }

    /// Runs a build: as `run`, but free of the memory limit, which is the tests' (a compiler
    /// may need more than a test, and a mutant does not change what it needs).
    pub fn run_build(&self, timeout: Duration, log: &Path) -> Result<Finished> {
        self.run_as(timeout, log, None, None)
    }

    /// Runs the command beside other work (`Beside`).
    pub fn run_beside(&self, timeout: Duration, log: &Path, beside: Beside) -> Result<Finished> {
        self.run_as(timeout, log, Some(beside), memory::limit())
    }

    fn run_as(
        &self,
        timeout: Duration,
        log: &Path,
        beside: Option<Beside>,
        limit: Option<Bytes>,
    ) -> Result<Finished> {
        let out = File::create(log)?;
        let start = Instant::now();
        let idle_from_start = beside.is_some_and(|beside| beside.idle.load(Ordering::SeqCst));
        let mut child = self.spawn(out, idle_from_start)?;
        let group = child.id() as i32;
        let _watched = crate::watchdog::Watched::group(group);
        let mut pause = Pause { yielded: idle_from_start, held_since: None, held_for: Duration::ZERO };
        let mut memory = MemoryWatch::new(group, limit);
        let mut poll = Duration::from_millis(2);
        let exit = loop {
            if let Some(status) = child.try_wait()? {
                break match (status.code(), status.signal()) {
                    (Some(code), _) => Exit::Code(code),
                    (None, Some(signal)) => Exit::Signal(signal),
                    (None, None) => Exit::Code(-1),
                };
            }
            let stop = if INTERRUPTED.load(Ordering::SeqCst)
                || beside.is_some_and(|beside| beside.cancel.load(Ordering::SeqCst))
            {
                Some(Exit::Interrupted)
            } else if start.elapsed().saturating_sub(pause.held()) > timeout {
                Some(Exit::TimedOut)
            } else {
                memory.over().map(Exit::MemoryLimit)
            };
            if let Some(exit) = stop {
                kill_group(group);
                child.wait()?;
                break exit;
            }
            if let Some(beside) = beside {
                pause.follow(beside, group);
            }
            std::thread::sleep(poll);
            poll = (poll * 2).min(Duration::from_millis(25));
        };
        let duration = start.elapsed();
        // Whatever the tests left running in the background goes too.
        kill_group(group);
        let command = CommandRecord::new(
            std::iter::once(self.program.display().to_string()).chain(self.args.iter().cloned()).collect(),
            self.dir.clone(),
            &self.env,
            exit.clone(),
            duration,
        );
        Ok(Finished { exit, duration, tail: read_tail(log), command: Some(command) })
    }

    /// Starts the command sealed from the checkout, in its own process group, its output in
    /// `out`; `idle`: on the CPU time nothing else wants from its start.
    fn spawn(&self, out: File, idle: bool) -> Result<Child> {
        let err = out.try_clone()?;
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.dir).envs(self.env.iter().map(|(k, v)| (k, v)));
        crate::scratch::keep_temporary_files_inside(&mut command);
        crate::seal::seal(&mut command);
        if idle {
            // SAFETY: between fork and exec only async-signal-safe calls are made, on this process.
            unsafe {
                command.pre_exec(|| {
                    yield_the_cpu();
                    Ok(())
                });
            }
        }
        command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .die_with_parent()
            .spawn()
            .map_err(|err| {
                anyhow!(
                    "could not start the test command {}: {err}; check that it is installed and on PATH",
                    self.program.display()
                )
            })
    }
}

/// How a run beside other work has been paused and put on idle CPU time so far.
struct Pause {
    /// On idle CPU time.
    yielded: bool,
    /// Stopped (`SIGSTOP`) since then.
    held_since: Option<Instant>,
    /// The time it was stopped before, which does not count towards its timeout.
    held_for: Duration,
}

impl Pause {
    /// The time it has been stopped, up to now.
    fn held(&self) -> Duration {
        self.held_for + self.held_since.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Does what `beside` now asks of the run's `group`: idle CPU time, a pause, going on.
    fn follow(&mut self, beside: Beside, group: i32) {
        if !self.yielded && beside.idle.load(Ordering::SeqCst) {
            yield_the_cpu_as(group);
            self.yielded = true;
        }
        match (beside.hold.load(Ordering::SeqCst), self.held_since) {
            (true, None) => {
                signal_group(group, libc::SIGSTOP);
                self.held_since = Some(Instant::now());
            }
            (false, Some(since)) => {
                signal_group(group, libc::SIGCONT);
                self.held_for += since.elapsed();
                self.held_since = None;
            }
            _ => {}
        }
    }
}

/// Puts the calling process (and what it starts) on the CPU time nothing else wants: the
/// `SCHED_IDLE` policy, or nice 19 where that is refused. Lowering one's own priority needs no
/// privilege; alone on a core such a process runs at full speed.
fn yield_the_cpu() {
    // SAFETY: sched_setscheduler and setpriority act on the calling process and read only the
    // parameter passed; both are async-signal-safe.
    unsafe {
        let param = idle_param();
        if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) != 0 {
            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        }
    }
}

/// `yield_the_cpu` for a running process group: its leader (the test command, where the
/// tests run) gets `SCHED_IDLE`, and every process of the group nice 19. Lowering the priority
/// of one's own processes needs no privilege; raising it again would.
fn yield_the_cpu_as(group: i32) {
    // SAFETY: both calls act on processes of the group we created and read only the parameter.
    unsafe {
        let param = idle_param();
        libc::sched_setscheduler(group, libc::SCHED_IDLE, &param);
        libc::setpriority(libc::PRIO_PGRP, group as libc::id_t, 19);
    }
}

/// The scheduling parameter `SCHED_IDLE` takes: priority 0. Zeroed rather than built field by
/// field, since musl's `sched_param` has fields glibc's lacks.
fn idle_param() -> libc::sched_param {
    // SAFETY: sched_param is plain integers (and, on musl, timespecs), for which zero is valid.
    unsafe { std::mem::zeroed() }
}

/// The last few kilobytes of a log.
pub fn read_tail(log: &Path) -> String {
    let mut text = Vec::new();
    if let Ok(mut file) = File::open(log) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)));
        let _ = file.read_to_end(&mut text);
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// Child processes that are killed when the thread that started them ends, even by SIGKILL
/// (`PR_SET_PDEATHSIG`). A second line only: it reaches the direct child, not what the child
/// starts; the watchdog (`crate::watchdog`) is what ends every process of a killed run.
pub trait DieWithParent {
    fn die_with_parent(&mut self) -> &mut Self;
}

impl DieWithParent for Command {
    fn die_with_parent(&mut self) -> &mut Self {
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of the parent.
        unsafe {
            self.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            })
        }
    }
}
