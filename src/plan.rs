//! What to mutate: the added executable lines of each source file and their mutants, with a note for every file passed over.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use mutators::Mutant;

use crate::choose::{self, Choice};
use crate::lines::AddedLines;

/// The languages mutdelta mutates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Python,
    Rust,
}

impl Language {
    /// By file extension.
    pub fn of(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "py" => Some(Language::Python),
            "rs" => Some(Language::Rust),
            _ => None,
        }
    }

    /// As the mutation-testing-elements report names it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
        }
    }

    fn mutate(self, source: &str, lines: &[usize]) -> Result<mutators::FileMutants, mutators::MutateError> {
        match self {
            Language::Python => mutators::python::mutate(source, lines),
            Language::Rust => mutators::rust::mutate(source, lines),
        }
    }

    /// Test code, which is not mutated (each language's own rule).
    pub fn is_test_file(self, path: &Path) -> bool {
        match self {
            Language::Python => crate::python::is_test_file(path),
            Language::Rust => crate::cargo::is_test_file(path),
        }
    }
}

/// Whether a directory above `path` has one of `names`.
pub fn in_directory_named(path: &Path, names: &[&str]) -> bool {
    path.parent()
        .into_iter()
        .flat_map(Path::components)
        .any(|part| part.as_os_str().to_str().is_some_and(|part| names.contains(&part)))
}

/// One source file to mutate.
#[derive(Debug, Clone)]
pub struct FilePlan {
    /// Relative to the repository root.
    pub path: PathBuf,
    pub language: Language,
    pub source: String,
    /// The added lines that hold executable code.
    pub lines: Vec<usize>,
    /// For each of `lines`, the lines of its statement: the line ran when any of them did.
    pub statements: Vec<std::ops::RangeInclusive<usize>>,
    pub mutants: Vec<Mutant>,
}

impl FilePlan {
    /// The lines of the statement that holds `line` (just `line` if it is not an added one).
    pub fn statement_of(&self, line: usize) -> std::ops::RangeInclusive<usize> {
        match self.lines.binary_search(&line) {
            Ok(index) => self.statements[index].clone(),
            Err(_) => line..=line,
        }
    }

    /// Every line of the added lines' statements: what the coverage probe watches.
    pub fn statement_lines(&self) -> Vec<usize> {
        let mut lines: Vec<usize> = self.statements.iter().flat_map(|range| range.clone()).collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }
}

/// A mutant together with the file it belongs to and its report id.
#[derive(Debug, Clone)]
pub struct PlannedMutant {
    pub id: usize,
    pub file: usize,
    pub mutant: Mutant,
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub files: Vec<FilePlan>,
    /// Test files the change adds or edits: they are the relevant tests.
    pub changed_tests: Vec<PathBuf>,
    /// One line for each file passed over, saying why.
    pub notes: Vec<String>,
}

impl Plan {
    /// Reads each changed file from the copy at `root` and makes the mutants of its added
    /// lines, those `choice` runs.
    pub fn make(added: &AddedLines, root: &Path, choice: Choice) -> Result<Plan> {
        let mut plan = Plan::default();
        for path in &added.deleted {
            plan.notes.push(format!("{}: deleted by the change, nothing to mutate", path.display()));
        }
        for path in &added.binary {
            plan.notes.push(format!("{}: binary file, skipped", path.display()));
        }
        for (path, lines) in &added.files {
            let Some(language) = Language::of(path) else {
                plan.notes.push(format!("{}: not a Python or Rust file, skipped", path.display()));
                continue;
            };
            if language.is_test_file(path) {
                if language == Language::Python {
                    plan.changed_tests.push(path.clone());
                }
                continue;
            }
            let bytes = match std::fs::read(root.join(path)) {
                Ok(bytes) => bytes,
                Err(_) => {
                    plan.notes.push(format!("{}: not in the state under test, skipped", path.display()));
                    continue;
                }
            };
            if bytes.contains(&0) {
                plan.notes.push(format!("{}: binary file, skipped", path.display()));
                continue;
            }
            let Ok(source) = String::from_utf8(bytes) else {
                plan.notes.push(format!("{}: not UTF-8 text, skipped", path.display()));
                continue;
            };
            let requested: Vec<usize> = lines.iter().copied().collect();
            let found = language
                .mutate(&source, &requested)
                .map_err(|err| anyhow!("{}: {err}; fix the file before checking it", path.display()))?;
            if found.executable_lines.is_empty() {
                continue;
            }
            plan.files.push(FilePlan {
                path: path.clone(),
                language,
                source,
                lines: found.executable_lines,
                statements: found.statements,
                mutants: choose::apply(found.mutants, choice),
            });
        }
        Ok(plan)
    }

    /// Every mutant, numbered from 1 in file and source order.
    pub fn mutants(&self) -> Vec<PlannedMutant> {
        self.files
            .iter()
            .enumerate()
            .flat_map(|(file, plan)| plan.mutants.iter().map(move |mutant| (file, mutant)))
            .enumerate()
            .map(|(index, (file, mutant))| PlannedMutant { id: index + 1, file, mutant: mutant.clone() })
            .collect()
    }

    pub fn line_count(&self) -> usize {
        self.files.iter().map(|file| file.lines.len()).sum()
    }
}
