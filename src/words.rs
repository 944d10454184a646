//! The words every report and progress line uses for counts and lists of tests.

/// `n mutant` or `n mutants`.
pub fn count_of(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Names as alternatives: `Python`, `Python or Rust`, `Python, Rust or Go`; nothing for none.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
    }
}

/// Line numbers (sorted) as runs: `3-5, 9, 12-13`.
pub fn line_runs(lines: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &line in lines {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == line => *end = line,
            _ => runs.push((line, line)),
        }
    }
    let runs: Vec<String> = runs
        .iter()
        .map(|&(start, end)| if start == end { start.to_string() } else { format!("{start}-{end}") })
        .collect();
    runs.join(", ")
}

/// `a, b, c and 4 more`: at most `keep` tests named.
pub fn some_tests(tests: &[&str], keep: usize) -> String {
    if tests.len() <= keep {
        return tests.join(", ");
    }
    format!("{} and {} more", tests[..keep].join(", "), tests.len() - keep)
}

/// Tests and test files in words: "the whole test suite" when there are none, the one by name,
/// else how many of each ("2 test files and 3 tests").
pub fn describe_tests(tests: &[String]) -> String {
    if tests.is_empty() {
        return "the whole test suite".to_string();
    }
    if let [one] = tests {
        return one.clone();
    }
    let node_ids = tests.iter().filter(|test| test.contains("::")).count();
    let files = tests.len() - node_ids;
    // Two or more: a count of one kind alone is never one.
    match (files, node_ids) {
        (_, 0) => format!("{files} test files"),
        (0, _) => format!("{node_ids} tests"),
        _ => format!(
            "{} and {}",
            count_of(files, "test file", "test files"),
            count_of(node_ids, "test", "tests")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_written_as_runs() {
        assert_eq!(line_runs(&[3, 4, 5, 9, 12, 13]), "3-5, 9, 12-13");
        assert_eq!(line_runs(&[7]), "7");
        assert_eq!(line_runs(&[]), "");
    }

    #[test]
    fn names_are_alternatives_the_last_after_or() {
        assert_eq!(one_of(&[]), "");
        assert_eq!(one_of(&["Python"]), "Python");
        assert_eq!(one_of(&["Python", "Rust"]), "Python or Rust");
        assert_eq!(one_of(&["Python", "Rust", "Go"]), "Python, Rust or Go");
    }

    #[test]
    fn one_is_counted_in_the_singular_and_every_other_count_in_the_plural() {
        assert_eq!(count_of(1, "file", "files"), "1 file");
        assert_eq!(count_of(0, "file", "files"), "0 files");
        assert_eq!(count_of(2, "file", "files"), "2 files");
    }

    #[test]
    fn a_few_tests_are_named_and_the_rest_counted() {
        assert_eq!(some_tests(&["a", "b"], 3), "a, b");
        assert_eq!(some_tests(&["a", "b", "c"], 3), "a, b, c", "as many as are kept: all named");
        assert_eq!(some_tests(&["a", "b", "c", "d", "e"], 3), "a, b, c and 2 more");
    }

    #[test]
    fn tests_are_described_by_name_when_one_else_counted_as_files_and_tests() {
        let owned = |tests: &[&str]| tests.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert_eq!(describe_tests(&[]), "the whole test suite");
        assert_eq!(describe_tests(&owned(&["t/test_a.py::test_x"])), "t/test_a.py::test_x");
        assert_eq!(describe_tests(&owned(&["t/test_a.py", "t/test_b.py"])), "2 test files");
        assert_eq!(describe_tests(&owned(&["t/a.py::x", "t/a.py::y"])), "2 tests");
        assert_eq!(describe_tests(&owned(&["t/b.py", "t/a.py::x", "t/a.py::y"])), "1 test file and 2 tests");
        assert_eq!(describe_tests(&owned(&["t/b.py", "t/c.py", "t/a.py::x"])), "2 test files and 1 test");
    }
}
