//! The watchdog: a small process started once per run that outlives mutdelta only to kill every process the run started and remove its scratch directories, also after `kill -9`.
//!
//! mutdelta re-executes itself (`current_exe`) with a hidden subcommand. The watchdog reads
//! its standard input, a pipe whose write end only mutdelta holds (Rust opens pipes
//! close-on-exec, so no test process inherits it): lines that register and forget process
//! groups and scratch directories. When the pipe reaches end of file, mutdelta has ended, by
//! a normal exit, an error, Ctrl-C or SIGKILL alike. The watchdog then SIGKILLs every group
//! still registered, then every process that carries this run's mark in its environment
//! (`MUTDELTA_RUN`, set before anything starts, so every descendant inherits it: cargo,
//! rustc, the test binaries, pytest, warm workers, collectors and their forked children, even
//! those that left their group) or works inside a registered directory, until none is left,
//! and removes the directories. On a normal exit mutdelta waits for it, so no process or
//! zombie stays behind; after SIGKILL it is reparented and reaped like any orphan.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::io::{BufRead, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// The environment variable every process of a run inherits: "pid start-time" of mutdelta.
pub const MARK: &str = "MUTDELTA_RUN";

/// The hidden subcommand that runs the watchdog.
pub const SUBCOMMAND: &str = "__watchdog";

/// How long the watchdog keeps finding and killing marked processes before it gives up.
const KILL_FOR: Duration = Duration::from_secs(2);

struct Running {
    child: Child,
    pipe: ChildStdin,
}

static WATCHDOG: Mutex<Option<Running>> = Mutex::new(None);

/// Whether this process is a run of the mutdelta binary (`mark_this_run`), which alone starts
/// a watchdog: a library caller (a unit test) has no `__watchdog` to re-execute.
static MARKED: AtomicBool = AtomicBool::new(false);

/// Marks this process's environment with the run's identity, so that every process it starts,
/// directly or not, carries it. Call it first, before any thread starts.
pub fn mark_this_run() {
    let identity = crate::watchdog::process_identity(std::process::id())
        .unwrap_or_else(|| std::process::id().to_string());
    std::env::set_var(MARK, identity);
    MARKED.store(true, Ordering::SeqCst);
}

/// Starts the watchdog if it is not running yet (in a marked run), and has it remove `dir`
/// once mutdelta ends.
pub fn watch_dir(dir: &Path) -> Result<()> {
    let mut watchdog = WATCHDOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if watchdog.is_none() && MARKED.load(Ordering::SeqCst) {
        *watchdog = Some(start()?);
    }
    send(&mut watchdog, &format!("dir {}", hex(dir.as_os_str().as_bytes())));
    Ok(())
}

/// Tells the watchdog that `dir` is gone (removed by mutdelta itself).
pub fn forget_dir(dir: &Path) {
    let mut watchdog = WATCHDOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    send(&mut watchdog, &format!("undir {}", hex(dir.as_os_str().as_bytes())));
}

/// A process group registered with the watchdog (when one runs) while this value lives.
#[derive(Debug)]
pub struct Watched(i32);

impl Watched {
    /// Registers the process group `group` (its leader's pid), created by mutdelta or one of
    /// its helpers.
    pub fn group(group: i32) -> Watched {
        let mut watchdog = WATCHDOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        send(&mut watchdog, &format!("group {group}"));
        Watched(group)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let mut watchdog = WATCHDOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        send(&mut watchdog, &format!("ungroup {}", self.0));
    }
}

/// Ends the watchdog and waits for it: called as mutdelta exits normally, after everything
/// it started is gone. (A killed mutdelta closes the pipe all the same.)
pub fn stop() {
    let running = WATCHDOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    if let Some(Running { mut child, pipe }) = running {
        drop(pipe);
        let _ = child.wait();
    }
}

fn start() -> Result<Running> {
    let exe = std::env::current_exe().context("could not find mutdelta's own executable")?;
    let mut child = Command::new(&exe)
        .arg(SUBCOMMAND)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Out of the terminal's foreground group: Ctrl-C stops mutdelta, which then ends it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("could not start mutdelta's watchdog ({})", exe.display()))?;
    let pipe = child.stdin.take().expect("stdin is piped");
    Ok(Running { child, pipe })
}

fn send(watchdog: &mut Option<Running>, line: &str) {
    if let Some(running) = watchdog {
        // One short write per line, so lines from several threads never interleave.
        let _ = running.pipe.write_all(format!("{line}\n").as_bytes());
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<PathBuf> {
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|at| text.get(at..at + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect();
    Some(PathBuf::from(OsString::from_vec(bytes?)))
}

/// The watchdog process itself: reads registrations until mutdelta ends, then cleans up.
pub fn serve() -> crate::exit::Exit {
    // SAFETY: signal(2) with SIG_IGN touches no memory; a hang-up or an interrupt aimed at
    // mutdelta's terminal must not end the watchdog before it has cleaned up.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // SAFETY: getppid(2) cannot fail and touches no memory.
    let parent = unsafe { libc::getppid() };
    let mark = std::env::var(MARK).ok();
    let mut groups = BTreeSet::new();
    let mut dirs = BTreeSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        match line.split_once(' ') {
            Some(("group", group)) => groups.extend(group.parse::<i32>().ok().filter(|&g| g > 1)),
            Some(("ungroup", group)) => {
                group.parse::<i32>().ok().map(|group| groups.remove(&group));
            }
            Some(("dir", dir)) => dirs.extend(unhex(dir)),
            Some(("undir", dir)) => {
                unhex(dir).map(|dir| dirs.remove(&dir));
            }
            _ => {}
        }
    }
    let dirs: Vec<PathBuf> = dirs.into_iter().collect();
    kill_everything(&groups, mark.as_deref(), &dirs, parent);
    for dir in &dirs {
        remove(dir);
    }
    crate::exit::Exit::Clean
}

/// Does for a run that ended without its watchdog what the watchdog would have done: kills
/// every process that carries the run's `mark` or works inside `dir`, pass after pass, then
/// removes `dir`. Returns whether `dir` is gone.
pub fn clear_away(mark: &str, dir: &Path) -> bool {
    kill_everything(&BTreeSet::new(), Some(mark), &[dir.to_path_buf()], std::process::id() as i32);
    remove(dir);
    !dir.exists()
}

/// SIGKILLs the groups, then every process marked with `mark` or working in one of `dirs`
/// (but never this process or `parent`, mutdelta while it waits), pass after pass until a
/// pass finds none: a process may fork while an earlier pass kills its parent.
fn kill_everything(groups: &BTreeSet<i32>, mark: Option<&str>, dirs: &[PathBuf], parent: i32) {
    for &group in groups {
        crate::watchdog::kill_group(group);
    }
    let me = std::process::id() as i32;
    let start = Instant::now();
    loop {
        let found: Vec<i32> =
            belonging(mark, dirs).into_iter().filter(|&pid| pid != me && pid != parent).collect();
        if found.is_empty() || start.elapsed() > KILL_FOR {
            return;
        }
        for pid in found {
            // SAFETY: kill(2) on a pid just read from /proc; no memory is touched.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The live processes that carry `mark` in their environment or work inside one of `dirs`.
pub fn belonging(mark: Option<&str>, dirs: &[PathBuf]) -> Vec<i32> {
    let entry = mark.map(|mark| format!("{MARK}={mark}").into_bytes());
    let Ok(processes) = fs::read_dir("/proc") else { return Vec::new() };
    processes
        .flatten()
        .filter_map(|process| {
            let pid = process.file_name().to_str()?.parse::<i32>().ok()?;
            let path = process.path();
            if has_ended(&path) {
                return None;
            }
            let marked = entry.as_ref().is_some_and(|entry| {
                fs::read(path.join("environ"))
                    .is_ok_and(|environ| environ.split(|&byte| byte == 0).any(|var| var == entry))
            });
            let inside =
                || fs::read_link(path.join("cwd")).is_ok_and(|cwd| dirs.iter().any(|d| cwd.starts_with(d)));
            (marked || inside()).then_some(pid)
        })
        .collect()
}

/// Whether a process has ended or is ending: a zombie (only its parent's wait is missing) or
/// one the kernel is taking down (`PF_EXITING`: it runs no more code of its own).
fn has_ended(process: &Path) -> bool {
    const PF_EXITING: u64 = 0x4;
    fs::read_to_string(process.join("stat")).is_ok_and(|stat| {
        let Some(end) = stat.rfind(')') else { return false };
        let fields: Vec<&str> = stat[end + 1..].split_whitespace().collect();
        let flags = fields.get(6).and_then(|flags| flags.parse::<u64>().ok()).unwrap_or(0);
        fields.first() == Some(&"Z") || flags & PF_EXITING != 0
    })
}

/// Removes `dir`, trying again for a moment while a process killed in it is still going.
fn remove(dir: &Path) {
    for _ in 0..50 {
        match fs::remove_dir_all(dir) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => return,
        }
    }
}

/// Kills every process in `group`.
pub fn kill_group(group: i32) {
    signal_group(group, libc::SIGKILL);
}

/// Sends `signal` to every process in `group`.
pub fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group we created; no memory is touched.
    unsafe {
        libc::kill(-group, signal);
    }
}

/// "pid start-time": start time (clock ticks since boot) tells a live owner from a reused pid.
pub fn process_identity(pid: u32) -> Option<String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let start_time = after_name.split_whitespace().nth(19)?;
    Some(format!("{pid} {start_time}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_travels_through_the_pipe_byte_for_byte() {
        let odd = Path::new("/tmp/mutdelta-run-x/with space\nand newline/\u{e9}");
        assert_eq!(unhex(&hex(odd.as_os_str().as_bytes())).as_deref(), Some(odd));
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn a_process_working_in_a_directory_belongs_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut inside = Command::new("sleep").arg("30").current_dir(dir.path()).spawn().unwrap();
        let mut outside = Command::new("sleep").arg("30").spawn().unwrap();
        let found = belonging(None, &[dir.path().to_path_buf()]);
        inside.kill().unwrap();
        outside.kill().unwrap();
        inside.wait().unwrap();
        outside.wait().unwrap();
        assert!(found.contains(&(inside.id() as i32)), "{found:?}");
        assert!(!found.contains(&(outside.id() as i32)), "{found:?}");
    }

    #[test]
    fn a_process_started_with_the_mark_belongs_whatever_its_directory() {
        let mark = format!("test-{}", std::process::id());
        let mut marked = Command::new("sleep").arg("30").env(MARK, &mark).spawn().unwrap();
        let mut other = Command::new("sleep").arg("30").env(MARK, "another run").spawn().unwrap();
        // `spawn` returns once the child has begun its exec, which sets up the new environment
        // a moment later: until then /proc shows none.
        for child in [&marked, &other] {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            let environ = format!("/proc/{}/environ", child.id());
            while fs::read(&environ).map_or(true, |environ| environ.is_empty())
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let found = belonging(Some(&mark), &[]);
        marked.kill().unwrap();
        other.kill().unwrap();
        marked.wait().unwrap();
        other.wait().unwrap();
        assert!(found.contains(&(marked.id() as i32)), "{found:?}");
        assert!(!found.contains(&(other.id() as i32)), "{found:?}");
    }

    #[test]
    fn clearing_away_a_dead_runs_directory_kills_its_marked_processes_elsewhere_and_their_forks() {
        let dir = tempfile::tempdir().unwrap();
        let dir_path = dir.path().to_path_buf();
        std::fs::create_dir_all(dir_path.join("copy-0/__pycache__")).unwrap();
        let mark = format!("dead-run-{}", std::process::id());
        // Works outside the directory and forks a new sleeper as fast as it can, as a worker
        // forks a child per mutant: a single pass would miss the fork made during it.
        let mut forker =
            Command::new("sh").args(["-c", "while :; do sleep 30 & done"]).env(MARK, &mark).spawn().unwrap();
        let mut inside =
            Command::new("sleep").arg("30").current_dir(dir_path.join("copy-0")).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(belonging(Some(&mark), &[]).len() > 1, "the forker has children");

        assert!(clear_away(&mark, &dir_path), "{} is gone", dir_path.display());

        forker.wait().unwrap();
        inside.wait().unwrap();
        assert_eq!(belonging(Some(&mark), std::slice::from_ref(&dir_path)), Vec::<i32>::new());
        assert!(!dir_path.exists());
    }
}
