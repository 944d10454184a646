//! Every time limit of a check in one place: the baseline's, each mutant's, a build's, a warm worker's.

use std::time::Duration;

/// The shortest timeout a mutant gets, however fast its tests.
const MIN_TIMEOUT: Duration = Duration::from_secs(10);
/// How much slower than the unmutated run a mutant's tests may be before they count as hung.
const TIMEOUT_FACTOR: u32 = 5;
/// A swapped mutant's first limit, at least this...
const SHORT_FLOOR: Duration = Duration::from_secs(1);
/// ...and this many times what its tests took unmutated.
const SHORT_FACTOR: u32 = 10;
/// How long the unmutated run may take (`--timeout` is per mutant only).
pub const BASELINE_LIMIT: Duration = Duration::from_secs(3600);
/// The shortest time a mutant's build may take before it counts as hung.
const MIN_BUILD_TIMEOUT: Duration = Duration::from_secs(120);
/// How much slower than the baseline build a mutant's build may be.
const BUILD_FACTOR: u32 = 3;
/// How long a warm worker may take to import pytest and the preloaded modules.
pub const WARM_START_LIMIT: Duration = Duration::from_secs(120);
/// How long past a mutant's timeout a warm worker may take to answer before it is deemed hung.
pub const WARM_ANSWER_GRACE: Duration = Duration::from_secs(10);

/// A mutant's timeout: `--timeout`, else max(10 s, 5 x what its tests took unmutated).
pub fn mutant_timeout(explicit: Option<Duration>, unmutated: Duration) -> Duration {
    explicit.unwrap_or_else(|| MIN_TIMEOUT.max(unmutated * TIMEOUT_FACTOR))
}

/// The first limit of a mutant swapped into a collector: max(1 s, 10 x what its tests took
/// unmutated). Its child has the project and the tests imported, so nothing but the tests
/// runs there; a run past it (`stretched` by the machine's load) counts as a timeout only once
/// the same tests, unmutated, are seen to finish within a third of it (`PythonWorker::run_mutant`).
pub fn short_limit(unmutated: Duration) -> Duration {
    SHORT_FLOOR.max(unmutated * SHORT_FACTOR)
}

/// `limit` times how many times more work the machine has than cores (`machine_load`): a
/// mutant that makes its tests slower, not endless, must not cross a short limit only because
/// the machine is loaded.
pub fn stretched(limit: Duration) -> Duration {
    stretched_by(limit, machine_load())
}

fn stretched_by(limit: Duration, load: f64) -> Duration {
    limit.mul_f64(load)
}

/// How many times more work the machine has than cores, at least 1: the greater of the last
/// minute's load average and the processes running now (`/proc/loadavg`), per core; 1 where
/// that file is not there.
pub fn machine_load() -> f64 {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    std::fs::read_to_string("/proc/loadavg").ok().and_then(|text| load_per_core(&text, cores)).unwrap_or(1.0)
}

/// `machine_load` of a `/proc/loadavg` line (`1.52 0.98 0.60 6/345 12345`) on `cores` cores: the
/// running count leaves out the process reading it.
fn load_per_core(loadavg: &str, cores: usize) -> Option<f64> {
    let mut fields = loadavg.split_whitespace();
    let minute: f64 = fields.next()?.parse().ok()?;
    let running: f64 = fields.nth(2)?.split('/').next()?.parse().ok()?;
    let busiest = minute.max(running - 1.0);
    Some((busiest / cores.max(1) as f64).clamp(1.0, 16.0))
}

/// A mutant's build: it rebuilds only the workspace's own crates, so hanging there means
/// something is wrong.
pub fn build_timeout(baseline_build: Duration) -> Duration {
    MIN_BUILD_TIMEOUT.max(baseline_build * BUILD_FACTOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutant_gets_five_times_its_tests_but_never_under_ten_seconds_unless_told() {
        assert_eq!(mutant_timeout(None, Duration::from_millis(300)), Duration::from_secs(10));
        assert_eq!(mutant_timeout(None, Duration::from_secs(4)), Duration::from_secs(20));
        assert_eq!(
            mutant_timeout(Some(Duration::from_secs(1)), Duration::from_secs(4)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn the_machine_s_load_is_its_busiest_of_the_last_minute_and_now_per_core_never_under_one() {
        assert_eq!(load_per_core("6.00 2.00 1.00 3/345 12345", 2), Some(3.0), "the last minute");
        assert_eq!(load_per_core("0.50 0.40 0.30 7/345 12345", 2), Some(3.0), "now, less the reader");
        assert_eq!(load_per_core("0.50 0.40 0.30 1/345 12345", 2), Some(1.0), "an idle machine");
        assert_eq!(load_per_core("900 1 1 1/1 1", 2), Some(16.0), "bounded");
        assert_eq!(load_per_core("garbled", 2), None);
        assert_eq!(load_per_core("3.00 1 1 1/1 1", 1), Some(3.0), "one core");
        assert_eq!(load_per_core("3.00 1 1 1/1 1", 0), Some(3.0), "no core said: one");
    }

    #[test]
    fn a_swapped_mutant_first_gets_ten_times_its_tests_but_never_under_a_second() {
        assert_eq!(short_limit(Duration::from_millis(20)), Duration::from_secs(1));
        assert_eq!(short_limit(Duration::from_millis(300)), Duration::from_secs(3));
        // On a machine three times busier than its cores, a mutant that makes its tests take
        // 2 s where they took 0.66 s calm is as far from its limit as it was calm.
        assert_eq!(stretched_by(Duration::from_secs(1), 3.0), Duration::from_secs(3));
        assert!(stretched(Duration::from_secs(1)) >= Duration::from_secs(1));
    }

    #[test]
    fn a_build_gets_three_times_the_baseline_build_but_never_under_two_minutes() {
        assert_eq!(build_timeout(Duration::from_secs(5)), Duration::from_secs(120));
        assert_eq!(build_timeout(Duration::from_secs(100)), Duration::from_secs(300));
    }
}
