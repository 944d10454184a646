//! What to mutate: the added executable lines of each source file and their mutants, with a note for every file passed over.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};
use mutators::Mutant;

use crate::lines::AddedLines;

/// One source file to mutate.
#[derive(Debug, Clone)]
pub struct FilePlan {
    /// Relative to the repository root.
    pub path: PathBuf,
    pub source: String,
    /// The added lines that hold executable code.
    pub lines: Vec<usize>,
    pub mutants: Vec<Mutant>,
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
    /// Reads each changed file from the copy at `root` and makes the mutants of its added lines.
    pub fn make(added: &AddedLines, root: &Path) -> Result<Plan> {
        let mut plan = Plan::default();
        for path in &added.deleted {
            plan.notes.push(format!("{}: deleted by the change, nothing to mutate", path.display()));
        }
        for path in &added.binary {
            plan.notes.push(format!("{}: binary file, skipped", path.display()));
        }
        for (path, lines) in &added.files {
            if is_test_file(path) {
                if is_python(path) {
                    plan.changed_tests.push(path.clone());
                }
                continue;
            }
            if !is_python(path) {
                plan.notes.push(format!("{}: not a Python file, skipped", path.display()));
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
            let found = mutators::python::mutate(&source, &requested)
                .map_err(|err| anyhow!("{}: {err}; fix the file before checking it", path.display()))?;
            if found.executable_lines.is_empty() {
                continue;
            }
            plan.files.push(FilePlan {
                path: path.clone(),
                source,
                lines: found.executable_lines,
                mutants: found.mutants,
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

fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "py")
}

/// pytest's default discovery rules, plus `conftest.py` and anything under a `tests`/`test` folder.
pub fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    let in_test_dir = path
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .any(|part| matches!(part.as_os_str().to_str(), Some("tests" | "test")));
    name == "conftest.py" || name.starts_with("test_") || name.ends_with("_test.py") || in_test_dir
}

/// The distinct added lines that have a mutant, for the summary line.
pub fn lines_with_mutants<'a>(mutants: impl Iterator<Item = &'a PlannedMutant>) -> BTreeSet<(usize, usize)> {
    mutants.map(|planned| (planned.file, planned.mutant.line)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_follow_pytest_discovery_rules() {
        for test in ["tests/test_a.py", "test_a.py", "pkg/a_test.py", "conftest.py", "tests/helpers.py"] {
            assert!(is_test_file(Path::new(test)), "{test}");
        }
        for source in ["pkg/a.py", "testing.py", "src/contest.py", "latest/x.py"] {
            assert!(!is_test_file(Path::new(source)), "{source}");
        }
    }
}
