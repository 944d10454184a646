//! What mutdelta knows of Python without running it: its files, which are tests, its mutator front end, how its lines are tokenized and its tests filed.

use std::path::Path;

use crate::model::plan::{in_directory_named, Language, LanguageSpec, Lexing, Strings};

/// Python, as the layers below the languages see it.
pub static PYTHON: LanguageSpec = LanguageSpec {
    name: "python",
    display: "Python",
    extensions: &["py"],
    is_test_file,
    changed_tests_are_relevant: true,
    mutate: |source, lines, _| mutators::python::mutate(source, lines),
    scopes: mutators::python::scopes,
    lexing: Lexing {
        line_comment: "#",
        strings: Strings::Prefixed,
        keywords: &[
            "and", "as", "assert", "async", "await", "del", "elif", "else", "except", "for", "from", "if",
            "import", "in", "is", "lambda", "not", "or", "raise", "return", "while", "with", "yield",
        ],
        generics: false,
    },
    // A code swap or a fork of a warm worker running the few tests that reach it.
    mutant_cost: 1,
    place_test,
    killers_named_alone: false,
    baseline_words: "running the unmutated tests",
    operators: mutators::catalog::PYTHON,
    arid_rules: mutators::catalog::PYTHON_ARID,
};

/// Python as a `Language`.
pub const LANGUAGE: Language = Language(&PYTHON);

/// Test code, which is not mutated: pytest's discovery rules, plus `conftest.py` and anything
/// under `tests`/`test`.
pub fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    name == "conftest.py"
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || in_directory_named(path, &["tests", "test"])
}

/// A module that defines tests (`test_*.py`, `*_test.py`): a change to it can change only the
/// verdicts of the mutants its tests ran. Not conftest files, helpers or data beside the tests.
pub fn is_test_module(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// `tests/test_x.py::Case::test_y` is `Case::test_y` of `tests/test_x.py`; a node id without
/// `::`, a whole file, is its own name.
fn place_test(test: &str) -> (&str, &str) {
    test.split_once("::").unwrap_or((test, test))
}
