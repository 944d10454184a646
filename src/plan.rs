//! What to mutate: the added executable lines of each source file and their mutants, with a note for every file passed over.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use mutators::PassOver;

use crate::choose::{self, Choice};
use crate::lines::AddedLines;
use crate::model::plan::{FilePlan, Language, PassedOver, Plan};
use crate::reformat;

impl Plan {
    /// Reads each changed file from the copy at `root` and makes the mutants of its added
    /// lines, those `choice` runs; lines that only reformat or move removed code are passed
    /// over unless `choice.include_reformatted`, and files `choice.exclude` matches always.
    pub fn make(added: &AddedLines, root: &Path, choice: &Choice, languages: &[Language]) -> Result<Plan> {
        let reasons = languages.iter().flat_map(|language| language.passes_over);
        let passed_over = reasons.map(|&reason| PassedOver { reason, lines: BTreeMap::new() }).collect();
        let mut plan = Plan { passed_over, ..Plan::default() };
        let sources = plan.sources(added, root, choice, languages)?;
        let old_code = if choice.include_reformatted {
            reformat::OldCode::default()
        } else {
            old_code(&sources, &added.removed, &added.removed_from, languages)
        };
        if let Some((path, line)) = &old_code.stopped_at {
            plan.notes.push(format!(
                "the change is too large to look for moved or reformatted code past {}:{line}: the added lines from there on are mutated as new code",
                path.display()
            ));
        }
        for source in sources {
            let passed = old_code.lines.get(source.0.as_path());
            plan.add_file(source, passed, choice)?;
        }
        if let Some(max) = choice.max_mutants {
            plan.sampled = crate::budget::sample(&mut plan, max);
        }
        plan.notes.extend(count_notes(&plan));
        Ok(plan)
    }

    /// The changed source files to mutate, read from the copy at `root`: a note for every other
    /// changed file (deleted, binary, a test, excluded, of no language, unreadable), and an error
    /// for a source file whose added lines cannot be read as text.
    fn sources<'a>(
        &mut self,
        added: &'a AddedLines,
        root: &Path,
        choice: &Choice,
        languages: &[Language],
    ) -> Result<Vec<Source<'a>>> {
        for path in &added.deleted {
            self.notes.push(format!("{}: deleted by the change, nothing to mutate", path.display()));
        }
        for path in &added.binary {
            let source = Language::of(path, languages).filter(|language| !(language.is_test_file)(path));
            if source.is_some() && !choice.exclude.matches(path) {
                bail!("{}", unreadable_source(path, "a binary file"));
            }
            self.notes.push(format!("{}: binary file, skipped", path.display()));
        }
        let mut sources = Vec::new();
        let mut other_files = Vec::new();
        let mut excluded = BTreeMap::new();
        for (path, lines) in &added.files {
            let language = Language::of(path, languages);
            if let Some(language) = language.filter(|language| (language.is_test_file)(path)) {
                if language.changed_tests_are_relevant {
                    self.changed_tests.push(path.clone());
                }
                continue;
            }
            if let Some(origin) = choice.exclude.origin(path) {
                excluded.entry(origin).or_insert_with(Vec::new).push(path.display().to_string());
                continue;
            }
            let Some(language) = language else {
                other_files.push(path.display().to_string());
                continue;
            };
            match read_source(root, path, language)? {
                Ok(source) => sources.push((path, language, source, lines)),
                Err(note) => self.notes.push(note),
            }
        }
        let names: Vec<&str> = languages.iter().map(|language| language.display).collect();
        let names = crate::words::one_of(&names);
        self.notes.extend(passed_over(
            &other_files,
            &format!("not a {names} file"),
            &format!("that are not {names}"),
        ));
        for (origin, files) in excluded {
            self.notes.extend(passed_over(
                &files,
                &format!("matches {origin}"),
                &format!("that match {origin}"),
            ));
        }
        Ok(sources)
    }

    /// Makes the mutants of one source file's added lines, but for those `passed` over as old
    /// code (kept as reformatted), and adds the file when it has executable lines.
    fn add_file(
        &mut self,
        source: Source<'_>,
        passed: Option<&BTreeSet<usize>>,
        choice: &Choice,
    ) -> Result<()> {
        let (path, language, source, lines) = source;
        let requested: Vec<usize> = lines
            .iter()
            .copied()
            .filter(|line| !passed.is_some_and(|passed| passed.contains(line)))
            .collect();
        let found = (language.mutate)(&source, &requested, choice.mutate_passed_over)
            .map_err(|err| anyhow!("{}: {err}; fix the file before checking it", path.display()))?;
        if let Some(passed) = passed {
            let passed: Vec<usize> = passed.iter().copied().collect();
            let executable = (language.mutate)(&source, &passed, choice.mutate_passed_over)
                .map(|found| found.executable_lines)
                .unwrap_or_default();
            if !executable.is_empty() {
                self.reformatted.insert(path.clone(), executable);
            }
        }
        if !found.feature_gated.is_empty() {
            self.feature_gated.insert(path.clone(), found.feature_gated.iter().cloned().collect());
        }
        for &(line, reason) in &found.passed_over {
            if let Some(group) = self.passed_over.iter_mut().find(|group| group.reason == reason) {
                group.lines.entry(path.clone()).or_default().push(line);
            }
        }
        for &(rule, count) in &found.not_made {
            *self.not_made.entry(rule).or_default() += count;
        }
        if !found.executable_lines.is_empty() {
            self.files.push(FilePlan {
                path: path.clone(),
                language,
                source,
                lines: found.executable_lines,
                statements: found.statements,
                mutants: choose::apply(found.mutants, choice),
            });
        }
        Ok(())
    }
}

/// A changed source file to mutate: its path, language, text and added lines.
type Source<'a> = (&'a PathBuf, Language, String, &'a BTreeSet<usize>);

/// The note on the changed `files` passed over: `one` says why of a single file, `many` of
/// several, which it names.
fn passed_over(files: &[String], one: &str, many: &str) -> Option<String> {
    match files {
        [] => None,
        [file] => Some(format!("{file}: {one}, skipped")),
        files => Some(format!("{} files {many} skipped: {}", files.len(), files.join(", "))),
    }
}

/// How many files the note on reformatted lines names before it counts the rest.
const REFORMATTED_FILES_NAMED: usize = 5;

/// The notes on the added lines a plan left without mutants: those a front end passed over
/// (each reason in its words), mutants an equivalence rule did not make, old code reformatted
/// or moved.
fn count_notes(plan: &Plan) -> Vec<String> {
    let mut notes = Vec::new();
    for group in &plan.passed_over {
        let count: usize = group.lines.values().map(Vec::len).sum();
        if count > 0 {
            let PassOver { place, why, flag, .. } = group.reason;
            notes.push(format!(
                "{count} added executable {} {place} got no mutant: {why} ({flag} mutates {} anyway)",
                if count == 1 { "line" } else { "lines" },
                if count == 1 { "it" } else { "them" },
            ));
        }
    }
    let not_made: usize = plan.not_made.values().sum();
    if not_made > 0 {
        let rules: Vec<String> =
            plan.not_made.iter().map(|(rule, count)| format!("{rule} {count}")).collect();
        notes.push(format!(
            "{not_made} {} not made: the same program as the original or another mutant ({}; `mutdelta mutators` says why)",
            if not_made == 1 { "mutant" } else { "mutants" },
            rules.join(", ")
        ));
    }
    if let Some(sampled) = &plan.sampled {
        notes.push(crate::budget::note(sampled, plan.mutant_count()));
    }
    let reformatted: usize = plan.reformatted.values().map(Vec::len).sum();
    if reformatted > 0 {
        let (lines, verb) = if reformatted == 1 {
            ("line only reformats or moves", "was")
        } else {
            ("lines only reformat or move", "were")
        };
        let mut places: Vec<String> = plan
            .reformatted
            .iter()
            .filter(|(_, lines)| !lines.is_empty())
            .map(|(path, lines)| format!("{}:{}", path.display(), crate::words::line_runs(lines)))
            .collect();
        if places.len() > REFORMATTED_FILES_NAMED {
            let more = places.len() - REFORMATTED_FILES_NAMED;
            places.truncate(REFORMATTED_FILES_NAMED);
            places.push(format!(
                "and {} (the report's `reformatted` lists them)",
                crate::words::count_of(more, "more file", "more files")
            ));
        }
        notes.push(format!(
            "{reformatted} added executable {lines} removed code and {verb} passed over (--include-reformatted keeps them): {}",
            places.join("; ")
        ));
    }
    notes
}

/// A changed source file's text in the copy, or the note saying why it is passed over (a
/// symbolic link, a file missing there, an encoding other than UTF-8 its `language` declares);
/// an error when it holds added lines that cannot be read as text, which a check must not pass
/// over in silence.
fn read_source(root: &Path, path: &Path, language: Language) -> Result<Result<String, String>> {
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
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok(Ok(text)),
        Err(err) => err.into_bytes(),
    };
    let Some(encoding) = (language.declared_encoding)(&bytes) else {
        bail!("{}", unreadable_source(path, "not UTF-8 text"));
    };
    // A gate over a project with one such file must still run: the rest of the change is checked.
    Ok(Err(format!(
        "{}: its source encoding is {encoding}, and mutdelta mutates UTF-8 source only: skipped, its added lines got no mutant (convert it to UTF-8 to mutate them)",
        path.display()
    )))
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
    languages: &[Language],
) -> reformat::OldCode {
    let files: Vec<reformat::AddedFile<'_>> = sources
        .iter()
        .map(|(path, language, source, lines)| {
            let text: Vec<&str> = source.lines().collect();
            reformat::AddedFile {
                path,
                language: *language,
                lines: lines.iter().filter_map(|&n| Some((n, *text.get(n.checked_sub(1)?)?))).collect(),
                scopes: language.scopes_of(source),
            }
        })
        .collect();
    let removed_scopes = removed_from
        .iter()
        .filter_map(|(path, text)| Some((path.clone(), Language::of(path, languages)?.scopes_of(text))))
        .collect();
    reformat::old_code(&files, removed, &removed_scopes, languages, reformat::MAX_STEPS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_passed_over_are_named_alone_or_counted_and_listed() {
        let files = |names: &[&str]| names.iter().map(|name| name.to_string()).collect::<Vec<_>>();
        assert_eq!(passed_over(&[], "excluded", "that are excluded"), None);
        assert_eq!(
            passed_over(&files(&["a.txt"]), "excluded", "that are excluded").as_deref(),
            Some("a.txt: excluded, skipped")
        );
        assert_eq!(
            passed_over(&files(&["a.txt", "b.md"]), "excluded", "that are excluded").as_deref(),
            Some("2 files that are excluded skipped: a.txt, b.md")
        );
    }

    #[test]
    fn reformatted_lines_are_counted_in_the_singular_or_plural_and_named_by_file() {
        let mut plan = Plan::default();
        plan.reformatted.insert(PathBuf::from("a.py"), vec![3]);
        assert_eq!(
            count_notes(&plan),
            ["1 added executable line only reformats or moves removed code and was passed over (--include-reformatted keeps them): a.py:3"]
        );
        plan.reformatted.insert(PathBuf::from("b.py"), vec![4, 5, 6, 9]);
        assert_eq!(
            count_notes(&plan),
            ["5 added executable lines only reformat or move removed code and were passed over (--include-reformatted keeps them): a.py:3; b.py:4-6, 9"]
        );
        for name in ["c", "d", "e", "f", "g"] {
            plan.reformatted.insert(PathBuf::from(format!("{name}.py")), vec![1]);
        }
        let note = count_notes(&plan).remove(0);
        assert!(
            note.ends_with(": a.py:3; b.py:4-6, 9; c.py:1; d.py:1; e.py:1; and 2 more files (the report's `reformatted` lists them)"),
            "{note}"
        );
    }
}
