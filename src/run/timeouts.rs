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
/// runs there; a run past it counts as a timeout only once the same tests, unmutated, are
/// seen to finish well within it (`PythonWorker::run_mutant`).
pub fn short_limit(unmutated: Duration) -> Duration {
    SHORT_FLOOR.max(unmutated * SHORT_FACTOR)
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
    fn a_swapped_mutant_first_gets_ten_times_its_tests_but_never_under_a_second() {
        assert_eq!(short_limit(Duration::from_millis(20)), Duration::from_secs(1));
        assert_eq!(short_limit(Duration::from_millis(300)), Duration::from_secs(3));
    }

    #[test]
    fn a_build_gets_three_times_the_baseline_build_but_never_under_two_minutes() {
        assert_eq!(build_timeout(Duration::from_secs(5)), Duration::from_secs(120));
        assert_eq!(build_timeout(Duration::from_secs(100)), Duration::from_secs(300));
    }
}
