//! Which tests a change edits or deletes: pytest selectors of the state before it, read from the test files' syntax trees (`touched.py`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use serde_json::json;

use super::interpreter;

const SCRIPT: &str = include_str!("touched.py");

/// One test file the change touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchedFile {
    /// Its path before the change, when it existed then (relative to the repository root).
    pub old: Option<PathBuf>,
    /// Its path after the change, when it still exists.
    pub new: Option<PathBuf>,
    /// The lines the change removes from it (numbered as before the change).
    pub removed: BTreeSet<usize>,
    /// The lines the change adds to it (numbered as after the change).
    pub added: BTreeSet<usize>,
}

/// The tests that existed before the change and whose code it edits or deletes, as pytest
/// selectors (`tests/test_a.py::TestX::test_y`, or a whole file) in the copy at `old_root`.
/// A test file new with the change selects nothing: no kill of its tests can be lost.
pub fn edited_tests(
    python: &Path,
    old_root: &Path,
    new_root: &Path,
    files: &[TouchedFile],
) -> Result<Vec<String>> {
    let request: Vec<_> = files
        .iter()
        .map(|file| {
            json!({
                "old": file.old.as_ref().map(|path| old_root.join(path)),
                "new": file.new.as_ref().map(|path| new_root.join(path)),
                "removed": file.removed,
                "added": file.added,
            })
        })
        .collect();
    let output =
        interpreter::run_script(python, SCRIPT, "reading the edited tests", &serde_json::to_vec(&request)?)?;
    let answers: Vec<Vec<String>> = serde_json::from_slice(&output)
        .map_err(|err| anyhow!("reading the edited tests answered something unexpected: {err}"))?;
    if answers.len() != files.len() {
        bail!("reading the edited tests answered for {} of {} files", answers.len(), files.len());
    }
    let mut selectors = Vec::new();
    for (file, answer) in files.iter().zip(answers) {
        let Some(old) = &file.old else { continue };
        for selector in answer {
            selectors.push(node_id(old, &selector));
        }
    }
    Ok(selectors)
}

/// `path::selector`, or the path alone for the whole file (pytest's node ids use `/`).
fn node_id(path: &Path, selector: &str) -> String {
    let path = path.to_string_lossy().replace('\\', "/");
    if selector.is_empty() {
        path
    } else {
        format!("{path}::{selector}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python() -> PathBuf {
        PathBuf::from("python3")
    }

    /// Writes `before` and `after` as `tests/test_x.py` in two roots and asks which tests the
    /// change between them edits.
    fn edited(before: &str, after: &str, removed: &[usize], added: &[usize]) -> Vec<String> {
        let old = tempfile::tempdir().unwrap();
        let new = tempfile::tempdir().unwrap();
        let path = PathBuf::from("tests/test_x.py");
        for (root, text) in [(&old, before), (&new, after)] {
            std::fs::create_dir_all(root.path().join("tests")).unwrap();
            std::fs::write(root.path().join(&path), text).unwrap();
        }
        let file = TouchedFile {
            old: Some(path.clone()),
            new: Some(path),
            removed: removed.iter().copied().collect(),
            added: added.iter().copied().collect(),
        };
        edited_tests(&python(), old.path(), new.path(), &[file]).unwrap()
    }

    const BEFORE: &str = "\
import pytest
from pkg import total


def helper():
    return 2


def test_total():
    assert total(2) == 4


class TestRates:
    rate = 3

    def test_rate(self):
        assert self.rate == 3

    def test_other(self):
        assert True
";

    #[test]
    fn a_loosened_assertion_selects_its_test_alone() {
        let after = BEFORE.replace("assert total(2) == 4", "assert total(2) >= 0");
        assert_eq!(edited(BEFORE, &after, &[10], &[10]), ["tests/test_x.py::test_total"]);
    }

    #[test]
    fn an_added_skip_selects_the_test_it_decorates_and_an_added_import_selects_nothing() {
        let after = BEFORE
            .replace("    def test_rate", "    @pytest.mark.skip\n    def test_rate")
            .replace("import pytest\n", "import pytest\nimport os\n");
        // Lines of `after`: 2 `import os`, 17 the decorator.
        assert_eq!(edited(BEFORE, &after, &[], &[2, 17]), ["tests/test_x.py::TestRates::test_rate"]);
    }

    #[test]
    fn a_class_attribute_selects_the_class_and_a_module_helper_the_whole_file() {
        let class_edit = BEFORE.replace("rate = 3", "rate = 4");
        assert_eq!(edited(BEFORE, &class_edit, &[14], &[14]), ["tests/test_x.py::TestRates"]);
        let helper_edit = BEFORE.replace("return 2", "return 3");
        assert_eq!(edited(BEFORE, &helper_edit, &[6], &[6]), ["tests/test_x.py"]);
    }

    #[test]
    fn a_deleted_test_is_selected_and_a_new_one_is_not() {
        let after = BEFORE.replace("    def test_other(self):\n        assert True\n", "")
            + "\n\ndef test_new():\n    assert total(1) == 2\n";
        let removed = [19, 20];
        let added: Vec<usize> = (19..=22).collect();
        assert_eq!(edited(BEFORE, &after, &removed, &added), ["tests/test_x.py::TestRates::test_other"]);
    }

    #[test]
    fn a_test_method_added_to_a_class_selects_nothing_though_blank_lines_around_it_are_added() {
        let after = BEFORE.replace(
            "    def test_rate(self):",
            "    def test_new(self):\n        assert total(1) == 1\n\n    # the rate\n    def test_rate(self):",
        );
        // Lines of `after`: 16-17 the new test, 18 blank (inside the class), 19 a comment.
        assert_eq!(edited(BEFORE, &after, &[], &[16, 17, 18, 19]), Vec::<String>::new());
    }

    #[test]
    fn a_whole_class_selected_leaves_out_its_tests_own_selectors() {
        let after = BEFORE.replace("rate = 3", "rate = 4").replace("assert True", "assert 1");
        assert_eq!(edited(BEFORE, &after, &[14, 20], &[14, 20]), ["tests/test_x.py::TestRates"]);
    }
}
