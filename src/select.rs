//! Which tests are relevant to the change's mutants.

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
