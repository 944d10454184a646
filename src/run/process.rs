//! One test process in its own process group: waited for with a deadline, the whole group killed on timeout or interrupt.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

use super::record::CommandRecord;
use super::INTERRUPTED;

/// What a finished test process did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Exit {
    Code(i32),
    /// The mutant did not build (compiled languages).
    Unviable,
    Signal(i32),
    TimedOut,
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct Finished {
    pub exit: Exit,
    pub duration: Duration,
    /// The last lines of standard output and error, combined.
    pub tail: String,
    /// What ran (for a forked run, the command it stands for).
    pub command: Option<CommandRecord>,
}

impl Finished {
    pub fn passed(&self) -> bool {
        self.exit == Exit::Code(0)
    }
}

/// A command line with its working directory and environment.
#[derive(Debug, Clone)]
pub struct TestCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub dir: PathBuf,
    pub env: Vec<(String, String)>,
}

/// How many bytes of output are kept for a report.
const TAIL_BYTES: u64 = 4000;

impl TestCommand {
    /// Runs the command to completion or `timeout`; output goes to `log`.
    pub fn run(&self, timeout: Duration, log: &Path) -> Result<Finished> {
        let out = File::create(log)?;
        let err = out.try_clone()?;
        let start = Instant::now();
        let mut command = Command::new(&self.program);
        command.args(&self.args).current_dir(&self.dir).envs(self.env.iter().map(|(k, v)| (k, v)));
        crate::scratch::keep_temporary_files_inside(&mut command);
        let mut child = command
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
            })?;
        let group = child.id() as i32;
        let _watched = crate::watchdog::Watched::group(group);
        let mut pause = Duration::from_millis(2);
        let exit = loop {
            if let Some(status) = child.try_wait()? {
                break match (status.code(), status.signal()) {
                    (Some(code), _) => Exit::Code(code),
                    (None, Some(signal)) => Exit::Signal(signal),
                    (None, None) => Exit::Code(-1),
                };
            }
            if INTERRUPTED.load(Ordering::SeqCst) {
                kill_group(group);
                child.wait()?;
                break Exit::Interrupted;
            }
            if start.elapsed() > timeout {
                kill_group(group);
                child.wait()?;
                break Exit::TimedOut;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(25));
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
}

/// Kills every process in `group`.
pub fn kill_group(group: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group we created; no memory is touched.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
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
