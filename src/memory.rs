//! The per-mutant memory limit: what a test process and everything it started hold in memory, read from /proc, the limit a run sets, and the watch that applies it to a running test.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::model::record::{Bytes, GIB, KIB, MIB};

/// The smallest limit the default ever sets: a test suite of a small project fits with room.
const SMALLEST_DEFAULT: u64 = GIB;

/// The limit a run sets when none is given: the machine's memory shared between the `jobs`
/// workers and one more run beside them, but never under 1 GiB. `None` where the machine's
/// memory cannot be read.
pub fn default_limit(jobs: usize) -> Option<Bytes> {
    let total = total_memory()?;
    Some(Bytes((total / (jobs as u64 + 1)).max(SMALLEST_DEFAULT)))
}

/// `MemTotal` from /proc/meminfo.
fn total_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * KIB)
}

/// Reads a limit as a user writes it: `4G`, `512M`, `1.5GiB`, `2000000000`, or `none`.
/// `Ok(None)` is no limit.
pub fn parse_limit(text: &str) -> Result<Option<Bytes>> {
    let text = text.trim();
    if matches!(text.to_ascii_lowercase().as_str(), "none" | "off" | "0") {
        return Ok(None);
    }
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => GIB * KIB,
        _ => bail!("{text:?} is not an amount of memory: write it as 4G, 512M or none"),
    };
    let Ok(number) = number.parse::<f64>() else {
        bail!("{text:?} is not an amount of memory: write it as 4G, 512M or none")
    };
    let bytes = number * scale as f64;
    if !(bytes >= MIB as f64 && bytes < u64::MAX as f64) {
        bail!("{text:?} is not a usable memory limit: give at least 1M, or none for no limit")
    }
    Ok(Some(Bytes(bytes as u64)))
}

/// The limit of this run's test processes; 0 while none is set.
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the limit every test process of this run gets from now on.
pub fn set_limit(limit: Option<Bytes>) {
    LIMIT.store(limit.map_or(0, |limit| limit.0), Ordering::SeqCst);
}

/// The limit set for this run, if any.
pub fn limit() -> Option<Bytes> {
    Some(LIMIT.load(Ordering::SeqCst)).filter(|&bytes| bytes > 0).map(Bytes)
}

/// How many processes of one tree are looked at, at most: a fork bomb is not followed to its end.
const MOST_PROCESSES: usize = 4096;

/// The memory resident for the process `root` and every process it started that still runs
/// (found through `/proc/PID/task/TID/children`), summed. Pages shared between them count for
/// each: an overestimate by what a forked child shares with its parent, small beside a limit.
pub fn resident(root: i32) -> Bytes {
    let page = page_size();
    let mut seen = BTreeSet::new();
    let mut stack = vec![root];
    let mut total = 0;
    while let Some(pid) = stack.pop() {
        if seen.len() >= MOST_PROCESSES || !seen.insert(pid) {
            continue;
        }
        total += resident_pages(pid) * page;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for task in tasks.flatten() {
            let Ok(children) = std::fs::read_to_string(task.path().join("children")) else { continue };
            stack.extend(children.split_whitespace().filter_map(|child| child.parse::<i32>().ok()));
        }
    }
    Bytes(total)
}

/// The second field of `/proc/PID/statm`: resident pages; 0 for a process gone.
fn resident_pages(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

/// How often, at most, a running test's memory is read: a look costs two small reads per
/// process, and a test that allocates without bound gains only some hundreds of megabytes
/// between two looks.
const MEMORY_EVERY: Duration = Duration::from_millis(20);

/// The run's memory limit applied to one process tree, looked at every `MEMORY_EVERY`.
pub struct MemoryWatch {
    root: i32,
    limit: Option<Bytes>,
    last: Option<Instant>,
}

impl MemoryWatch {
    pub fn new(root: i32, limit: Option<Bytes>) -> MemoryWatch {
        MemoryWatch { root, limit, last: None }
    }

    /// The limit, when it is time to look and the tree holds more than it.
    pub fn over(&mut self) -> Option<Bytes> {
        let limit = self.limit?;
        if self.last.is_some_and(|last| last.elapsed() < MEMORY_EVERY) {
            return None;
        }
        self.last = Some(Instant::now());
        (resident(self.root) > limit).then_some(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    #[test]
    fn limits_are_read_in_binary_units_and_none_is_no_limit() {
        assert_eq!(parse_limit("4G").unwrap(), Some(Bytes(4 * GIB)));
        assert_eq!(parse_limit("512MiB").unwrap(), Some(Bytes(512 * MIB)));
        assert_eq!(parse_limit("1.5 g").unwrap(), Some(Bytes(3 * GIB / 2)));
        assert_eq!(parse_limit("2000000000").unwrap(), Some(Bytes(2_000_000_000)));
        assert_eq!(parse_limit("2048k").unwrap(), Some(Bytes(2 * MIB)));
        assert_eq!(parse_limit("1T").unwrap(), Some(Bytes(GIB * KIB)));
        assert_eq!(parse_limit("1M").unwrap(), Some(Bytes(MIB)), "the smallest limit");
        assert_eq!(parse_limit("none").unwrap(), None);
        for bad in ["4X", "G", "-1G", "10", "1023k", "1e400G", "16777216T", ""] {
            let err = parse_limit(bad).unwrap_err().to_string();
            assert!(err.contains("memory"), "{bad}: {err}");
        }
        assert_eq!(Bytes(3 * GIB / 2).to_string(), "1.5 GiB");
        assert_eq!(Bytes(300 * MIB).to_string(), "300 MiB");
        assert_eq!(Bytes(GIB).to_string(), "1.0 GiB");
        assert_eq!(Bytes(MIB).to_string(), "1 MiB");
        assert_eq!(Bytes(MIB - 1).to_string(), "1048575 bytes");
    }

    #[test]
    fn the_default_shares_the_machine_between_the_workers_and_never_goes_under_a_gibibyte() {
        let total = total_memory().expect("Linux has /proc/meminfo");
        assert!(total > 64 * MIB, "{total} bytes: no machine runs this on less");
        assert_eq!(default_limit(1), Some(Bytes((total / 2).max(GIB))));
        assert_eq!(default_limit(100_000), Some(Bytes(GIB)));
    }

    #[test]
    fn a_limit_set_is_the_runs_until_it_is_set_again() {
        // Far above what any test process of this suite holds, as other tests may run now.
        set_limit(Some(Bytes(GIB * KIB)));
        assert_eq!(limit(), Some(Bytes(GIB * KIB)));
        set_limit(None);
        assert_eq!(limit(), None);
    }

    #[test]
    fn what_every_child_holds_counts_for_the_process_that_started_them() {
        // The shell starts two pythons that hold 100 MiB each and one that maps 2 GiB it never
        // touches (resident memory counts, address space does not), then waits for them.
        let hold = "python3 -c 'import time; b = bytearray(100 << 20); time.sleep(30)'";
        let reserve = "python3 -c 'import mmap, time; m = mmap.mmap(-1, 2 << 30); time.sleep(30)'";
        let mut shell = Command::new("sh")
            .args(["-c", &format!("{hold} & {hold} & {reserve}; wait")])
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let root = shell.id() as i32;
        for _ in 0..200 {
            if resident(root).0 >= 200 * MIB {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        // By now the third python has mapped its 2 GiB too.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let seen = resident(root);
        let _ = shell.kill();
        // SAFETY: kill(2) on the group this test created; the pythons the shell started are in it.
        unsafe { libc::kill(-root, libc::SIGKILL) };
        let _ = shell.wait();
        assert!(seen.0 >= 200 * MIB && seen.0 < 400 * MIB, "{seen}");
    }
}
