//! Which tests are relevant: to the change as a whole, and to each mutant (the tests that executed its line).

use std::path::Path;
use std::time::Duration;

use mutators::Mutant;

use crate::plan::Plan;
use crate::run::coverage::CoverageMap;

/// The test files the change adds or edits, plus those named with `--test`; empty means the
/// whole suite.
pub fn relevant_tests(plan: &Plan, extra: &[String]) -> Vec<String> {
    let mut tests: Vec<String> = plan
        .changed_tests
        .iter()
        .filter(|path| path.file_name().is_some_and(|name| name != "conftest.py"))
        .map(|path| path.display().to_string())
        .collect();
    for test in extra {
        if !tests.contains(test) {
            tests.push(test.clone());
        }
    }
    tests
}

/// What to run against one mutant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These tests, fastest first; `cost` is what they took unmutated.
    Run { tests: Vec<String>, cost: Duration },
    /// No test executes the mutated line: nothing can catch it.
    NoCoverage,
}

/// The tests that executed the mutant's line. A line that ran only while the tests were being
/// collected (module-level code) can affect any of them, so all relevant tests run.
pub fn for_mutant(
    map: &CoverageMap,
    file: &Path,
    mutant: &Mutant,
    relevant: &[String],
    baseline: Duration,
) -> Selection {
    let covering = map.tests_covering(file, mutant.line);
    if !covering.is_empty() {
        return Selection::Run {
            cost: covering.iter().map(|test| test.duration).sum(),
            tests: covering.into_iter().map(|test| test.id.clone()).collect(),
        };
    }
    if map.ran_at_collection(file, mutant.line) {
        return Selection::Run { tests: relevant.to_vec(), cost: baseline };
    }
    Selection::NoCoverage
}
