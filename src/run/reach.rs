//! Coverage that varies: how often the runs of one state reached each mutated line, kept across checks in `.git/mutdelta/reach/`, so that a line its tests reach in some runs and not in others is said to be so, with one verdict in every run.

use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::model::outcome::{MutantResult, Outcome, Status};
use crate::model::plan::PlannedMutant;

const REACH: &str = "reach";
/// Lines kept: enough for the mutants of many changes.
const KEPT_LINES: usize = 20_000;

/// What the runs of one state saw of one line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub runs: u32,
    /// The runs whose tests reached it.
    pub reached: u32,
}

impl Seen {
    /// Reached in some runs and not in others.
    pub fn varies(&self) -> bool {
        self.reached > 0 && self.reached < self.runs
    }

    fn and(self, reached: bool) -> Seen {
        Seen { runs: self.runs.saturating_add(1), reached: self.reached.saturating_add(u32::from(reached)) }
    }
}

/// Whether a verdict says the tests reached its line: a run of tests that reached it decided
/// Killed, Survived and Timeout, and none reached a NoCoverage one; the others say nothing.
fn reached(status: Status) -> Option<bool> {
    match status {
        Status::Killed | Status::Survived | Status::Timeout => Some(true),
        Status::NoCoverage => Some(false),
        Status::CompileError | Status::RuntimeError | Status::Ignored => None,
    }
}

/// Adds what this run saw of each mutated line of `results` (a line's `key`: the state, the
/// toolchain, the settings and the line; none: nothing is kept) to what earlier runs of the
/// same state saw, when `observed` (the run looked anew: not a reused measurement, which would
/// count one run twice). A mutant of a line reached in some runs and not in others becomes
/// NoCoverage in every run, whatever this run found, which its reason says: no test checks
/// that line every time, and a kill that depends on the tests reaching it does not reproduce.
pub fn settle_varying(
    cache: &Cache,
    results: &mut [MutantResult],
    key: &dyn Fn(&PlannedMutant) -> Option<String>,
    observed: bool,
) {
    let mut now: std::collections::BTreeMap<String, bool> = std::collections::BTreeMap::new();
    let keys: Vec<Option<String>> = results.iter().map(|result| key(&result.planned)).collect();
    for (result, key) in results.iter().zip(&keys) {
        if let (Some(key), Some(reached)) = (key, reached(result.outcome.status)) {
            *now.entry(key.clone()).or_insert(false) |= reached;
        }
    }
    let mut seen = std::collections::BTreeMap::new();
    let mut kept = false;
    for (key, reached) in now {
        let name = format!("{REACH}/{key}.json");
        let earlier: Seen =
            cache.read(&name).and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
        if !observed {
            seen.insert(key, earlier);
            continue;
        }
        let all = earlier.and(reached);
        if let Ok(bytes) = serde_json::to_vec(&all) {
            cache.write(&name, &bytes);
            kept = true;
        }
        seen.insert(key, all);
    }
    if kept {
        cache.keep_newest(REACH, KEPT_LINES);
    }
    for (result, key) in results.iter_mut().zip(&keys) {
        let Some(all) = key.as_ref().and_then(|key| seen.get(key)) else { continue };
        if all.varies() && reached(result.outcome.status).is_some() {
            result.outcome = varying(&result.outcome, all);
        }
    }
}

/// The verdict of a mutant whose line the runs of its state reached `all` says, this run's
/// `outcome` told in its reason.
fn varying(outcome: &Outcome, all: &Seen) -> Outcome {
    let this_run = match outcome.status {
        Status::NoCoverage => "this run's did not".to_string(),
        status => format!("this run's did, and it was {status:?}: {}", outcome.reason),
    };
    let reason = format!(
        "coverage varies: the tests reached this line in {} of {} runs of this state, so none checks it every time ({this_run})",
        all.reached, all.runs
    );
    Outcome {
        status: Status::NoCoverage,
        reason,
        covered_by: Vec::new(),
        killed_by: Vec::new(),
        ..outcome.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mutant of line 1, as mutant `id`, with `status`.
    fn result(id: usize, status: Status) -> MutantResult {
        let mutant = mutators::python::mutate("total = a + b\n", &[1]).expect("mutants").mutants[0].clone();
        let mut outcome = Outcome::settled(status, "as it ran");
        outcome.killed_by = vec!["t::lucky".into()];
        outcome.for_mutant(PlannedMutant { id, file: 0, mutant })
    }

    fn repository() -> (tempfile::TempDir, Cache) {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let cache = Cache::open(dir.path(), true);
        (dir, cache)
    }

    /// The statuses of one run of a state whose line `reached` or not, with two mutants on it.
    fn run(cache: &Cache, reached: bool, observed: bool) -> Vec<(Status, String)> {
        let status = if reached { Status::Killed } else { Status::NoCoverage };
        let mut results = vec![result(1, status), result(2, status), result(3, Status::CompileError)];
        settle_varying(cache, &mut results, &|_| Some("line".to_string()), observed);
        results.into_iter().map(|result| (result.outcome.status, result.outcome.reason)).collect()
    }

    #[test]
    fn a_line_reached_in_one_run_and_not_the_next_is_no_coverage_in_every_run_after_saying_why() {
        let (_dir, cache) = repository();
        assert_eq!(run(&cache, true, true)[0].0, Status::Killed, "one run: nothing varies yet");
        assert_eq!(run(&cache, true, false)[0].0, Status::Killed, "a reused measurement is no new run");
        let second = run(&cache, false, true);
        let said = "coverage varies: the tests reached this line in 1 of 2 runs of this state, so none checks it every time (this run's did not)";
        assert_eq!(
            second[..2],
            [(Status::NoCoverage, said.to_string()), (Status::NoCoverage, said.to_string())]
        );
        assert_eq!(
            second[2],
            (Status::CompileError, "as it ran".to_string()),
            "a verdict that says nothing of reach"
        );
        let third = run(&cache, true, true);
        assert_eq!(third[0].0, Status::NoCoverage);
        assert_eq!(
            third[0].1,
            "coverage varies: the tests reached this line in 2 of 3 runs of this state, so none checks it every time (this run's did, and it was Killed: as it ran)"
        );
        // A mutant no line key is kept for comes first: the others are still settled.
        let mut results = vec![result(1, Status::Killed), result(2, Status::Killed)];
        let key = |planned: &PlannedMutant| (planned.id == 2).then(|| "line".to_string());
        settle_varying(&cache, &mut results, &key, false);
        assert_eq!(results[0].outcome.status, Status::Killed, "no key, nothing known");
        assert_eq!(results[1].outcome.status, Status::NoCoverage);
        assert!(results[1].outcome.killed_by.is_empty(), "no test killed what is NoCoverage");
    }

    #[test]
    fn a_reused_measurement_reads_what_every_line_s_runs_saw() {
        let (_dir, cache) = repository();
        let line = |planned: &PlannedMutant| Some(format!("line {}", planned.id));
        for status in [Status::Killed, Status::NoCoverage] {
            settle_varying(&cache, &mut [result(1, status), result(2, status)], &line, true);
        }
        let mut reused = vec![result(1, Status::NoCoverage), result(2, Status::NoCoverage)];
        settle_varying(&cache, &mut reused, &line, false);
        let varied = |result: &MutantResult| result.outcome.reason.starts_with("coverage varies: ");
        assert!(reused.iter().all(varied), "both lines varied before");
    }

    #[test]
    fn a_reused_measurement_is_no_run_of_its_own_even_when_it_differs() {
        let (_dir, cache) = repository();
        run(&cache, true, true);
        assert_eq!(
            run(&cache, false, false)[0],
            (Status::NoCoverage, "as it ran".to_string()),
            "1 run, not 2"
        );
        assert_eq!(run(&cache, true, true)[0].0, Status::Killed, "2 runs, both reached");
    }

    #[test]
    fn lines_of_other_states_and_runs_that_keep_nothing_do_not_vary() {
        let (_dir, cache) = repository();
        run(&cache, true, true);
        let mut other = vec![result(1, Status::NoCoverage)];
        settle_varying(&cache, &mut other, &|_| Some("another state's line".to_string()), true);
        assert_eq!(other[0].outcome.status, Status::NoCoverage);
        assert_eq!(other[0].outcome.reason, "as it ran");
        // A malformed record (the store may be written by anyone with the checkout) is none.
        cache.write(&format!("{REACH}/garbled.json"), b"{\"runs\": \"many\"");
        let mut garbled = vec![result(1, Status::NoCoverage)];
        settle_varying(&cache, &mut garbled, &|_| Some("garbled".to_string()), true);
        assert_eq!(garbled[0].outcome.reason, "as it ran");
        let mut unkept = vec![result(1, Status::NoCoverage)];
        settle_varying(&cache, &mut unkept, &|_| None, true);
        assert_eq!(unkept[0].outcome.reason, "as it ran");
        assert_eq!(run(&cache, true, true)[0].0, Status::Killed, "the first line was reached both times");
    }
}
