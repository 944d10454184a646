//! What to mutate: the added executable lines of each source file and their mutants, with a note for every file passed over.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use mutators::rust::UnsafeCode;
use mutators::Mutant;

use crate::choose::{self, Choice};
use crate::lines::AddedLines;
use crate::reformat;

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

    fn mutate(
        self,
        source: &str,
        lines: &[usize],
        choice: &Choice,
    ) -> Result<mutators::FileMutants, mutators::MutateError> {
        match self {
            Language::Python => mutators::python::mutate(source, lines),
            Language::Rust => {
                let unsafe_code =
                    if choice.mutate_unsafe { UnsafeCode::Mutated } else { UnsafeCode::Guarded };
                mutators::rust::mutate_with(source, lines, unsafe_code)
            }
        }
    }

    /// The functions and types of `source`; none when it does not parse (then every line lies
    /// outside all of them, on both sides of a change alike).
    pub fn scopes(self, source: &str) -> Vec<mutators::Scope> {
        match self {
            Language::Python => mutators::python::scopes(source),
            Language::Rust => mutators::rust::scopes(source),
        }
        .unwrap_or_default()
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
    /// Added executable lines passed over as old code, reformatted or moved (`reformat`), per file.
    pub reformatted: BTreeMap<PathBuf, Vec<usize>>,
    /// Added executable lines left without a mutant for lying in Rust `unsafe` code, per file.
    pub unsafe_lines: BTreeMap<PathBuf, Vec<usize>>,
    /// Added executable lines compiled only with cargo features, with those features, per file.
    pub feature_gated: BTreeMap<PathBuf, BTreeMap<usize, Vec<String>>>,
    /// Mutants an equivalence rule left unmade, by rule name (`mutators::FileMutants::not_made`).
    pub not_made: BTreeMap<&'static str, usize>,
    /// With `--shard`, the mutants this run tests (`shard::restrict`); else all of them.
    pub share: Option<crate::shard::Share>,
}

impl Plan {
    /// Reads each changed file from the copy at `root` and makes the mutants of its added
    /// lines, those `choice` runs; lines that only reformat or move removed code are passed
    /// over unless `choice.include_reformatted`, and files `choice.exclude` matches always.
    pub fn make(added: &AddedLines, root: &Path, choice: &Choice) -> Result<Plan> {
        let mut plan = Plan::default();
        for path in &added.deleted {
            plan.notes.push(format!("{}: deleted by the change, nothing to mutate", path.display()));
        }
        for path in &added.binary {
            let source = Language::of(path).filter(|language| !language.is_test_file(path));
            if source.is_some() && !choice.exclude.matches(path) {
                bail!("{}", unreadable_source(path, "a binary file"));
            }
            plan.notes.push(format!("{}: binary file, skipped", path.display()));
        }
        let mut sources = Vec::new();
        let mut other_files = Vec::new();
        let mut excluded = Vec::new();
        for (path, lines) in &added.files {
            let language = Language::of(path);
            if let Some(language) = language.filter(|language| language.is_test_file(path)) {
                if language == Language::Python {
                    plan.changed_tests.push(path.clone());
                }
                continue;
            }
            if choice.exclude.matches(path) {
                excluded.push(path.display().to_string());
                continue;
            }
            let Some(language) = language else {
                other_files.push(path.display().to_string());
                continue;
            };
            match read_source(root, path)? {
                Ok(source) => sources.push((path, language, source, lines)),
                Err(note) => plan.notes.push(note),
            }
        }
        match other_files.as_slice() {
            [] => {}
            [one] => plan.notes.push(format!("{one}: not a Python or Rust file, skipped")),
            many => plan.notes.push(format!(
                "{} files that are not Python or Rust skipped: {}",
                many.len(),
                many.join(", ")
            )),
        }
        match excluded.as_slice() {
            [] => {}
            [one] => plan.notes.push(format!("{one}: matches `exclude` in the configuration, skipped")),
            many => plan.notes.push(format!(
                "{} files that match `exclude` in the configuration skipped: {}",
                many.len(),
                many.join(", ")
            )),
        }
        let old_code = if choice.include_reformatted {
            BTreeMap::new()
        } else {
            old_code(&sources, &added.removed, &added.removed_from)
        };
        for (path, language, source, lines) in sources {
            let passed = old_code.get(path.as_path());
            let requested: Vec<usize> = lines
                .iter()
                .copied()
                .filter(|line| !passed.is_some_and(|passed| passed.contains(line)))
                .collect();
            let found = language
                .mutate(&source, &requested, choice)
                .map_err(|err| anyhow!("{}: {err}; fix the file before checking it", path.display()))?;
            if let Some(passed) = passed {
                let passed: Vec<usize> = passed.iter().copied().collect();
                let executable = language
                    .mutate(&source, &passed, choice)
                    .map(|found| found.executable_lines)
                    .unwrap_or_default();
                if !executable.is_empty() {
                    plan.reformatted.insert(path.clone(), executable);
                }
            }
            if !found.feature_gated.is_empty() {
                plan.feature_gated.insert(path.clone(), found.feature_gated.iter().cloned().collect());
            }
            if !found.unsafe_lines.is_empty() {
                plan.unsafe_lines.insert(path.clone(), found.unsafe_lines.clone());
            }
            for &(rule, count) in &found.not_made {
                *plan.not_made.entry(rule).or_default() += count;
            }
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
        let unsafe_lines: usize = plan.unsafe_lines.values().map(Vec::len).sum();
        if unsafe_lines > 0 {
            plan.notes.push(format!(
                "{unsafe_lines} added executable {} in `unsafe` code got no mutant: a mutant there could cause undefined behaviour rather than a failing test (--mutate-unsafe mutates {} anyway)",
                if unsafe_lines == 1 { "line" } else { "lines" },
                if unsafe_lines == 1 { "it" } else { "them" },
            ));
        }
        let not_made: usize = plan.not_made.values().sum();
        if not_made > 0 {
            let rules: Vec<String> =
                plan.not_made.iter().map(|(rule, count)| format!("{rule} {count}")).collect();
            plan.notes.push(format!(
                "{not_made} {} not made: the same program as the original or another mutant ({}; `mutdelta mutators` says why)",
                if not_made == 1 { "mutant" } else { "mutants" },
                rules.join(", ")
            ));
        }
        let reformatted: usize = plan.reformatted.values().map(Vec::len).sum();
        if reformatted > 0 {
            plan.notes.push(format!(
                "{reformatted} added executable lines only reformat or move removed code and were passed over (--include-reformatted keeps them)"
            ));
        }
        Ok(plan)
    }

    /// The mutants this run tests: those of its shard with `--shard`, else every one.
    pub fn mutants(&self) -> Vec<PlannedMutant> {
        let mut mutants = self.all_mutants();
        if let Some(share) = &self.share {
            mutants.retain(|planned| share.ids.contains(&planned.id));
        }
        mutants
    }

    /// Every mutant of the plan, numbered from 1 in file and source order (the same numbers in
    /// every shard).
    pub fn all_mutants(&self) -> Vec<PlannedMutant> {
        self.files
            .iter()
            .enumerate()
            .flat_map(|(file, plan)| plan.mutants.iter().map(move |mutant| (file, mutant)))
            .enumerate()
            .map(|(index, (file, mutant))| PlannedMutant { id: index + 1, file, mutant: mutant.clone() })
            .collect()
    }

    /// How many mutants the whole plan has (every shard's).
    pub fn mutant_count(&self) -> usize {
        self.files.iter().map(|file| file.mutants.len()).sum()
    }

    /// The added executable lines of each mutated file, by path: what `list --json` and the
    /// check's report (`addedLines`) both show.
    pub fn added_lines(&self) -> BTreeMap<String, &[usize]> {
        self.files.iter().map(|file| (file.path.display().to_string(), &file.lines[..])).collect()
    }

    pub fn line_count(&self) -> usize {
        self.files.iter().map(|file| file.lines.len()).sum()
    }
}

/// A changed source file's text in the copy, or the note saying why it is passed over; an
/// error when it holds added lines that cannot be read as text, which a check must not pass
/// over in silence.
fn read_source(root: &Path, path: &Path) -> Result<Result<String, String>> {
    if std::fs::symlink_metadata(root.join(path)).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
        // Its target is outside the copy or another file of it, mutated under its own name.
        return Ok(Err(format!("{}: a symbolic link, skipped", path.display())));
    }
    let Ok(bytes) = std::fs::read(root.join(path)) else {
        return Ok(Err(format!("{}: not in the state under test, skipped", path.display())));
    };
    if bytes.contains(&0) {
        bail!("{}", unreadable_source(path, "a binary file"));
    }
    String::from_utf8(bytes).map(Ok).map_err(|_| anyhow!("{}", unreadable_source(path, "not UTF-8 text")))
}

/// Why a changed source file's added lines cannot be mutated, and what to do.
fn unreadable_source(path: &Path, what: &str) -> String {
    format!(
        "{} is {what}, so its added lines cannot be mutated (mutdelta reads UTF-8 source only): convert it to UTF-8, or leave it out with `exclude` in the configuration",
        path.display()
    )
}

/// The added lines of `sources` that are old code, reformatted or moved.
fn old_code(
    sources: &[(&PathBuf, Language, String, &BTreeSet<usize>)],
    removed: &BTreeMap<PathBuf, BTreeMap<usize, String>>,
    removed_from: &BTreeMap<PathBuf, String>,
) -> BTreeMap<PathBuf, BTreeSet<usize>> {
    let files: Vec<reformat::AddedFile<'_>> = sources
        .iter()
        .map(|(path, language, source, lines)| {
            let text: Vec<&str> = source.lines().collect();
            reformat::AddedFile {
                path,
                language: *language,
                lines: lines.iter().filter_map(|&n| Some((n, *text.get(n.checked_sub(1)?)?))).collect(),
                scopes: language.scopes(source),
            }
        })
        .collect();
    let removed_scopes = removed_from
        .iter()
        .filter_map(|(path, text)| Some((path.clone(), Language::of(path)?.scopes(text))))
        .collect();
    reformat::old_code(&files, removed, &removed_scopes)
}
