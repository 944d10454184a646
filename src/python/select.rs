//! Which tests are relevant: to the change as a whole, and to each mutant (the tests that executed its line).

use std::ops::RangeInclusive;
use std::path::Path;
use std::time::Duration;

use super::coverage::CoverageMap;
use crate::model::plan::Plan;

/// The test modules the change adds or edits, plus those named with `--test`; empty means the
/// whole suite. Other files beside the tests (conftest files, helpers, files a type checker
/// reads) are left out: named on pytest's command line, it would collect them as tests
/// although the project's configuration does not.
pub fn relevant_tests(plan: &Plan, extra: &[String]) -> Vec<String> {
    let mut tests: Vec<String> = plan
        .changed_tests
        .iter()
        .filter(|path| super::spec::is_test_module(path))
        .map(|path| path.display().to_string())
        .collect();
    for test in extra {
        if !tests.contains(test) {
            tests.push(test.clone());
        }
    }
    tests
}

/// The file a pytest selector names: a node id's path (before `::`), or the selector itself.
pub fn file_of(test: &str) -> &str {
    test.split("::").next().unwrap_or(test)
}

/// What to run against one mutant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These tests, fastest first, and the same in the order the suite runs them; `cost` is
    /// what they took unmutated. `at_import`: the statement ran outside any test (at import or
    /// collection) in a way only a fresh import redoes (a `def` line whose function was not
    /// called there does not count: its defaults reach only the tests' calls). `tried_first`:
    /// the tests that executed the statement, fastest first, when `tests` are more than them.
    Run {
        tests: Vec<String>,
        in_suite_order: Vec<String>,
        cost: Duration,
        at_import: bool,
        tried_first: Vec<String>,
    },
    /// No test executes the mutated line: nothing can catch it.
    NoCoverage,
}

/// The tests that executed the statement of the mutant's line. A statement that ran outside
/// the tests (module-level code, or a function called at import or collection) can affect any
/// of them through what it left behind, so `everything` runs: all the tests of the run, which
/// took `baseline`.
pub fn for_mutant(
    map: &CoverageMap,
    file: &Path,
    statement: &RangeInclusive<usize>,
    everything: &[String],
    baseline: Duration,
) -> Selection {
    let covering = map.tests_covering(file, statement);
    let ran_outside_tests = map.ran_at_collection(file, statement);
    // A `def` line runs at import; when the function itself was not called there, what the
    // line holds (its defaults) reaches the tests alone (any of them: one may call it, or look
    // at its signature), and the live function can take the change.
    let only_defined =
        ran_outside_tests && map.defined_but_not_called_outside_tests(file, *statement.start());
    let at_import = ran_outside_tests && !only_defined;
    if !covering.is_empty() && !at_import {
        let mut in_suite_order = covering.clone();
        in_suite_order.sort_by_key(|test| test.order);
        return Selection::Run {
            cost: covering.iter().map(|test| test.duration).sum(),
            tests: covering.into_iter().map(|test| test.id.clone()).collect(),
            in_suite_order: in_suite_order.into_iter().map(|test| test.id.clone()).collect(),
            at_import,
            tried_first: Vec::new(),
        };
    }
    if ran_outside_tests {
        // The tests that ran the statement are the likeliest to catch its mutants: a kill
        // among them spares the rest, which run only when they all pass.
        let tried_first = covering.into_iter().map(|test| test.id.clone()).collect();
        let tests = everything.to_vec();
        return Selection::Run {
            in_suite_order: tests.clone(),
            tests,
            cost: baseline,
            at_import,
            tried_first,
        };
    }
    Selection::NoCoverage
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::PathBuf;

    use super::*;
    use crate::python::coverage::TestCoverage;

    fn test(id: &str, millis: u64, order: usize, lines: &[usize]) -> TestCoverage {
        TestCoverage {
            id: id.into(),
            duration: Duration::from_millis(millis),
            order,
            lines: BTreeMap::from([(PathBuf::from("a.py"), lines.iter().copied().collect::<BTreeSet<_>>())]),
        }
    }

    fn map() -> CoverageMap {
        CoverageMap {
            tests: vec![
                test("t::slow", 300, 0, &[3, 4]),
                test("t::fast", 10, 1, &[4]),
                test("t::other", 1, 2, &[9]),
            ],
            collection: BTreeMap::from([(PathBuf::from("a.py"), BTreeSet::from([1]))]),
            ..CoverageMap::default()
        }
    }

    #[test]
    fn relevant_tests_are_the_changed_test_modules_then_the_named_ones_without_repeats() {
        let plan = Plan {
            changed_tests: [
                "tests/test_a.py",
                "tests/conftest.py",
                "tests/helpers.py",
                "tests/typing/typing_edit.py",
            ]
            .into_iter()
            .map(PathBuf::from)
            .collect(),
            ..Plan::default()
        };
        let extra = vec!["tests/test_b.py::test_x".to_string(), "tests/test_a.py".to_string()];
        assert_eq!(relevant_tests(&plan, &extra), ["tests/test_a.py", "tests/test_b.py::test_x"]);
        assert!(relevant_tests(&Plan::default(), &[]).is_empty(), "no changed tests: the whole suite");
    }

    #[test]
    fn a_mutant_runs_the_tests_that_executed_its_line_fastest_first_and_knows_the_suites_order() {
        let selection = for_mutant(&map(), Path::new("a.py"), &(4..=4), &[], Duration::from_secs(9));
        let expected = Selection::Run {
            tests: vec!["t::fast".into(), "t::slow".into()],
            in_suite_order: vec!["t::slow".into(), "t::fast".into()],
            cost: Duration::from_millis(310),
            at_import: false,
            tried_first: Vec::new(),
        };
        assert_eq!(selection, expected);
    }

    #[test]
    fn a_line_no_test_executed_is_no_coverage() {
        assert_eq!(
            for_mutant(&map(), Path::new("a.py"), &(5..=5), &[], Duration::ZERO),
            Selection::NoCoverage
        );
        assert_eq!(
            for_mutant(&map(), Path::new("b.py"), &(4..=4), &[], Duration::ZERO),
            Selection::NoCoverage
        );
    }

    #[test]
    fn a_statement_ran_when_any_of_its_lines_did() {
        let selection = for_mutant(&map(), Path::new("a.py"), &(5..=9), &[], Duration::ZERO);
        let expected = Selection::Run {
            tests: vec!["t::other".into()],
            in_suite_order: vec!["t::other".into()],
            cost: Duration::from_millis(1),
            at_import: false,
            tried_first: Vec::new(),
        };
        assert_eq!(selection, expected, "line 9 ran, so the statement of lines 5 to 9 did");
        assert_eq!(
            for_mutant(&map(), Path::new("a.py"), &(5..=8), &[], Duration::ZERO),
            Selection::NoCoverage
        );
    }

    #[test]
    fn a_def_line_whose_function_the_import_did_not_call_needs_no_fresh_import() {
        let relevant = vec!["tests/test_a.py".to_string()];
        let mut map = map();
        for (called, at_import) in [(false, false), (true, true)] {
            map.functions = BTreeMap::from([(PathBuf::from("a.py"), BTreeMap::from([(1, called)]))]);
            let selection = for_mutant(&map, Path::new("a.py"), &(1..=1), &relevant, Duration::from_secs(2));
            let expected = Selection::Run {
                in_suite_order: relevant.clone(),
                tests: relevant.clone(),
                cost: Duration::from_secs(2),
                at_import,
                tried_first: Vec::new(),
            };
            assert_eq!(selection, expected, "called at import: {called}");
        }
        // A file the probe could not watch tells nothing of its functions' calls.
        map.functions = BTreeMap::from([(PathBuf::from("a.py"), BTreeMap::from([(1, false)]))]);
        map.untraced = std::collections::BTreeSet::from([PathBuf::from("a.py")]);
        let untraced = for_mutant(&map, Path::new("a.py"), &(1..=1), &relevant, Duration::from_secs(2));
        assert!(matches!(untraced, Selection::Run { at_import: true, .. }), "{untraced:?}");
    }

    #[test]
    fn a_statement_run_at_import_and_by_tests_gets_every_relevant_test_those_that_ran_it_first() {
        // Line 4 ran under two tests, and at import too: what the import made of it reaches
        // every test, not only those that ran it again; those two, fastest first, are the
        // likeliest to catch it.
        let relevant = vec!["tests/test_a.py".to_string()];
        let mut map = map();
        map.collection = BTreeMap::from([(PathBuf::from("a.py"), BTreeSet::from([1, 4]))]);
        let selection = for_mutant(&map, Path::new("a.py"), &(4..=4), &relevant, Duration::from_secs(2));
        let expected = Selection::Run {
            in_suite_order: relevant.clone(),
            tests: relevant,
            cost: Duration::from_secs(2),
            at_import: true,
            tried_first: vec!["t::fast".into(), "t::slow".into()],
        };
        assert_eq!(selection, expected);
    }

    #[test]
    fn a_line_run_only_at_import_gets_every_relevant_test() {
        let relevant = vec!["tests/test_a.py".to_string()];
        let selection = for_mutant(&map(), Path::new("a.py"), &(1..=1), &relevant, Duration::from_secs(2));
        assert_eq!(
            selection,
            Selection::Run {
                in_suite_order: relevant.clone(),
                tests: relevant,
                cost: Duration::from_secs(2),
                at_import: true,
                tried_first: Vec::new(),
            }
        );
    }
}
