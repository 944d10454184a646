//! The report's `testFiles`: every test a mutant names, filed under its file (pytest) or package (cargo) with its full name as its id; the section checked when a report is read back.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::model::plan::Language;

/// The longest test id a report read back may hold, in bytes.
pub const LONGEST_ID: usize = 64 * 1024;

/// The file or package a test is filed under and its name there (its language's rule).
pub fn place(language: Language, test: &str) -> (&str, &str) {
    (language.place_test)(test)
}

/// The id of a test that killed a mutant: where the test tool names a failed test without its
/// package (libtest), the killer is the one covering test (`package: name`) of that name when
/// there is one.
pub fn killer<'a>(language: Language, killer: &'a str, covered: &'a [String]) -> &'a str {
    if !language.killers_named_alone || covered.iter().any(|test| test == killer) {
        return killer;
    }
    let mut named =
        covered.iter().filter(|test| test.split_once(": ").is_some_and(|(_, name)| name == killer));
    match (named.next(), named.next()) {
        (Some(one), None) => one,
        _ => killer,
    }
}

/// The `testFiles` section being written: each test once, by id.
#[derive(Default)]
pub struct Section {
    files: BTreeMap<String, BTreeMap<String, String>>,
}

impl Section {
    pub fn add(&mut self, language: Language, test: &str) {
        let (file, name) = place(language, test);
        let tests = self.files.entry(file.to_string()).or_default();
        tests.entry(test.to_string()).or_insert_with(|| name.to_string());
    }

    /// Every test by its file, files by path and tests by id.
    pub fn files(&self) -> BTreeMap<String, TestFile> {
        let entry = |(id, name): (&String, &String)| TestEntry { id: id.clone(), name: name.clone() };
        let file = |tests: &BTreeMap<String, String>| TestFile { tests: tests.iter().map(entry).collect() };
        self.files.iter().map(|(path, tests)| (path.clone(), file(tests))).collect()
    }

    /// `{file: {tests: [{id, name}]}}`, files by path and tests by id.
    pub fn render(&self) -> Value {
        let files: serde_json::Map<String, Value> = self
            .files
            .iter()
            .map(|(file, tests)| {
                let tests: Vec<Value> =
                    tests.iter().map(|(id, name)| json!({ "id": id, "name": name })).collect();
                (file.clone(), json!({ "tests": tests }))
            })
            .collect();
        Value::Object(files)
    }
}

/// A `testFiles` entry as read back.
#[derive(Debug, Serialize, Deserialize, Default, Clone)]
pub struct TestFile {
    #[serde(default)]
    pub tests: Vec<TestEntry>,
}

#[derive(Debug, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct TestEntry {
    pub id: String,
    pub name: String,
}

/// The tests a report read back defines: each id once, none too long to be a test's name.
#[derive(Debug, Default)]
pub struct Defined<'a> {
    /// The file and the test of each id.
    pub by_id: BTreeMap<&'a str, (&'a str, &'a TestEntry)>,
}

impl<'a> Defined<'a> {
    pub fn read(files: &'a BTreeMap<String, TestFile>) -> Result<Defined<'a>> {
        let mut by_id = BTreeMap::new();
        for (path, file) in files {
            for test in &file.tests {
                if test.id.len() > LONGEST_ID || test.name.len() > LONGEST_ID {
                    bail!(
                        "the report's testFiles has a test of more than {LONGEST_ID} bytes in {}: the report is damaged or hostile, so nothing of it is used",
                        shown(path)
                    );
                }
                if let Some((other, _)) = by_id.insert(test.id.as_str(), (path.as_str(), test)) {
                    bail!(
                        "the report's testFiles defines test {} twice (in {} and {}): the report is damaged or hostile, so nothing of it is used",
                        shown(&test.id),
                        shown(other),
                        shown(path)
                    );
                }
            }
        }
        Ok(Defined { by_id })
    }

    /// Refuses a test id mutant `id` of `path` names that the section does not define.
    pub fn check<'t>(&self, path: &str, id: &str, tests: impl IntoIterator<Item = &'t String>) -> Result<()> {
        match tests.into_iter().find(|test| !self.by_id.contains_key(test.as_str())) {
            Some(test) => bail!(
                "mutant {} of {} names test {}, which the report's testFiles does not define: the report is damaged or hostile, so nothing of it is used",
                shown(id),
                shown(path),
                shown(test)
            ),
            None => Ok(()),
        }
    }
}

/// A name from the report as an error shows it: quoted, control characters escaped, at most
/// 80 characters.
pub fn shown(text: &str) -> String {
    let mut short: String = text.chars().take(80).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    format!("{short:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_is_filed_under_its_pytest_file_or_its_cargo_package() {
        assert_eq!(
            place(crate::python::spec::LANGUAGE, "tests/test_x.py::Case::test_y[a::b]"),
            ("tests/test_x.py", "Case::test_y[a::b]")
        );
        assert_eq!(
            place(crate::python::spec::LANGUAGE, "tests/test_x.py"),
            ("tests/test_x.py", "tests/test_x.py")
        );
        assert_eq!(place(crate::cargo::spec::LANGUAGE, "calc: tests::ge"), ("calc", "tests::ge"));
        assert_eq!(
            place(crate::cargo::spec::LANGUAGE, "tests::ge"),
            (crate::cargo::spec::NO_PACKAGE, "tests::ge")
        );
        assert_eq!(
            place(crate::cargo::spec::LANGUAGE, "tests::fmt: x"),
            (crate::cargo::spec::NO_PACKAGE, "tests::fmt: x")
        );
    }

    #[test]
    fn a_rust_killer_named_without_its_package_is_the_covering_test_of_that_name() {
        let covered = ["calc: tests::ge".to_string(), "calc: tests::gt".to_string(), "io: tests::gt".into()];
        assert_eq!(killer(crate::cargo::spec::LANGUAGE, "tests::ge", &covered), "calc: tests::ge");
        assert_eq!(
            killer(crate::cargo::spec::LANGUAGE, "tests::gt", &covered),
            "tests::gt",
            "two packages have one"
        );
        assert_eq!(killer(crate::cargo::spec::LANGUAGE, "tests::lt", &covered), "tests::lt");
        assert_eq!(killer(crate::python::spec::LANGUAGE, "tests::ge", &covered), "tests::ge");
    }

    #[test]
    fn a_section_read_back_refuses_duplicate_and_huge_ids_and_undefined_references() {
        let read = |value: Value| -> BTreeMap<String, TestFile> { serde_json::from_value(value).unwrap() };
        let files = read(json!({ "a.py": { "tests": [{ "id": "t1", "name": "x" }] } }));
        let defined = Defined::read(&files).unwrap();
        assert!(defined.check("a.py", "1", &["t1".to_string()]).is_ok());
        let err = defined.check("a.py", "1", &["t1".to_string(), "t\n2".to_string()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "mutant \"1\" of \"a.py\" names test \"t\\n2\", which the report's testFiles does not define: the report is damaged or hostile, so nothing of it is used"
        );
        let twice = read(json!({
            "a.py": { "tests": [{ "id": "t1", "name": "x" }] },
            "b.py": { "tests": [{ "id": "t1", "name": "y" }] },
        }));
        assert!(Defined::read(&twice)
            .unwrap_err()
            .to_string()
            .contains("defines test \"t1\" twice (in \"a.py\" and \"b.py\")"));
        let huge = read(json!({ "a.py": { "tests": [{ "id": "x".repeat(LONGEST_ID + 1), "name": "x" }] } }));
        assert!(Defined::read(&huge)
            .unwrap_err()
            .to_string()
            .starts_with("the report's testFiles has a test of more than 65536 bytes in \"a.py\""));
    }
}
