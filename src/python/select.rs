//! Which tests are relevant: to the change as a whole, and to each mutant (the tests that executed its line).

use std::path::Path;
use std::time::Duration;

use mutators::Mutant;

use super::coverage::CoverageMap;
use crate::plan::Plan;

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

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::PathBuf;

    use mutators::Position;

    use super::*;
    use crate::python::coverage::TestCoverage;

    fn mutant_on(line: usize) -> Mutant {
        Mutant {
            line,
            span: 0..1,
            start: Position { line, column: 1 },
            end: Position { line, column: 2 },
            original: "+".into(),
            replacement: "-".into(),
            rule: &mutators::catalog::PYTHON[0],
            description: "replace + with -".into(),
            ignored: None,
        }
    }

    fn test(id: &str, millis: u64, lines: &[usize]) -> TestCoverage {
        TestCoverage {
            id: id.into(),
            duration: Duration::from_millis(millis),
            lines: BTreeMap::from([(PathBuf::from("a.py"), lines.iter().copied().collect::<BTreeSet<_>>())]),
        }
    }

    fn map() -> CoverageMap {
        CoverageMap {
            tests: vec![test("t::slow", 300, &[3, 4]), test("t::fast", 10, &[4]), test("t::other", 1, &[9])],
            collection: BTreeMap::from([(PathBuf::from("a.py"), BTreeSet::from([1]))]),
            ..CoverageMap::default()
        }
    }

    #[test]
    fn relevant_tests_are_the_changed_test_files_then_the_named_ones_without_conftest_or_repeats() {
        let plan = Plan {
            changed_tests: vec![PathBuf::from("tests/test_a.py"), PathBuf::from("tests/conftest.py")],
            ..Plan::default()
        };
        let extra = vec!["tests/test_b.py::test_x".to_string(), "tests/test_a.py".to_string()];
        assert_eq!(relevant_tests(&plan, &extra), ["tests/test_a.py", "tests/test_b.py::test_x"]);
        assert!(relevant_tests(&Plan::default(), &[]).is_empty(), "no changed tests: the whole suite");
    }

    #[test]
    fn a_mutant_runs_the_tests_that_executed_its_line_fastest_first() {
        let selection = for_mutant(&map(), Path::new("a.py"), &mutant_on(4), &[], Duration::from_secs(9));
        let expected = Selection::Run {
            tests: vec!["t::fast".into(), "t::slow".into()],
            cost: Duration::from_millis(310),
        };
        assert_eq!(selection, expected);
    }

    #[test]
    fn a_line_no_test_executed_is_no_coverage() {
        assert_eq!(
            for_mutant(&map(), Path::new("a.py"), &mutant_on(5), &[], Duration::ZERO),
            Selection::NoCoverage
        );
        assert_eq!(
            for_mutant(&map(), Path::new("b.py"), &mutant_on(4), &[], Duration::ZERO),
            Selection::NoCoverage
        );
    }

    #[test]
    fn a_line_run_only_at_import_gets_every_relevant_test() {
        let relevant = vec!["tests/test_a.py".to_string()];
        let selection =
            for_mutant(&map(), Path::new("a.py"), &mutant_on(1), &relevant, Duration::from_secs(2));
        assert_eq!(selection, Selection::Run { tests: relevant, cost: Duration::from_secs(2) });
    }
}
