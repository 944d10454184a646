//! The mutation-testing-elements document as typed data: what `report::json` fills from a check, what a report file is read into, and what every rendering reads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::test_files::TestFile;
use crate::model::outcome::Status;
use crate::words::some_tests;

/// The mutation-testing-elements document (schemaVersion 2) with mutdelta's section: the one
/// type `report::json::document` fills from a check and `report::json::text` writes, a report
/// file is read into (`report::input`), and every reader takes (the reports rendered from it,
/// the summary counts, `show` and `apply`, `merge`). Fields a reader may find missing (in a
/// report of an earlier version, or a merge of shards) are optional or default.
#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    #[serde(default)]
    pub schema_version: String,
    #[serde(default)]
    pub thresholds: Thresholds,
    pub files: BTreeMap<String, FileEntry>,
    /// The tests the mutants name, by file; absent from reports of earlier versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_files: Option<BTreeMap<String, TestFile>>,
    #[serde(default)]
    pub framework: Framework,
    #[serde(default)]
    pub config: Config,
    #[serde(default)]
    pub mutdelta: Section,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub performance: Option<Performance>,
}

/// The mutation score's thresholds, in percent.
#[derive(Debug, Serialize, Deserialize, Default)]
pub struct Thresholds {
    pub high: u32,
    pub low: u32,
}

/// The tool that wrote the report.
#[derive(Debug, Serialize, Deserialize, Default)]
pub struct Framework {
    pub name: String,
    pub version: String,
}

/// The settings the report says: the relevant tests.
#[derive(Debug, Serialize, Deserialize, Default)]
pub struct Config {
    #[serde(default)]
    pub tests: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct FileEntry {
    #[serde(default)]
    pub language: String,
    #[serde(default)]
    pub source: String,
    pub mutants: Vec<MutantEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutantEntry {
    pub id: String,
    pub mutator_name: String,
    pub replacement: Option<String>,
    pub description: Option<String>,
    pub location: Location,
    pub status: Status,
    pub status_reason: Option<String>,
    /// The arid rule of its line (also on a kill: the suite checks what the rule would have
    /// passed over).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub likely_equivalent: Option<String>,
    /// The test a survivor asks for (`report::hint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covered_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub killed_by: Vec<String>,
    /// Milliseconds.
    pub duration: Option<f64>,
    /// How its tests ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunEntry>,
    /// An earlier run reached this verdict on the same content; `run` is that run's.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reused: bool,
    /// The flaky tests whose failures under it were run again to decide it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// How a mutant (or a step) ran: the commands in order.
#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct RunEntry {
    pub how: String,
    pub commands: Vec<CommandEntry>,
    /// Why the swap path was not taken, when it was tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// On the swap path: the milliseconds the swap and the tests took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
}

#[derive(Debug, Serialize, Deserialize, Clone, Copy)]
pub struct Split {
    pub swap: f64,
    pub tests: f64,
}

/// One command a verdict rests on.
#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct CommandEntry {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// The variables mutdelta set whose values differ from its own environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How it ended, in words.
    pub exit: String,
    /// Its exit code, when it exited (none: a signal, a timeout, ...).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Milliseconds.
    pub duration: f64,
}

/// A run before any mutant (a baseline, a canary), with its step's name; in a merged report,
/// the shard that ran it.
#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct StepEntry {
    pub step: String,
    #[serde(flatten)]
    pub run: RunEntry,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
}

#[derive(Debug, Serialize, Deserialize, Clone, Copy)]
pub struct Location {
    pub start: Position,
    pub end: Position,
}

/// 1-based line and character column.
#[derive(Debug, Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// The document's `mutdelta` section: the added lines, the wall time, the runs before any
/// mutant, the audit, where the check ran, its plan and shard, and what it passed over.
#[derive(Debug, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Section {
    #[serde(default)]
    pub version: String,
    /// The added executable lines of each mutated file.
    #[serde(default)]
    pub added_lines: BTreeMap<String, Vec<usize>>,
    /// The whole check, in milliseconds.
    pub duration: Option<f64>,
    #[serde(default)]
    pub steps: Vec<StepEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<AuditSection>,
    /// The repository, the state under test and the run's temporary directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scratch: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanEntry>,
    /// In a shard's report: which shard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardPlace>,
    /// In a merged report: each shard's own scratch directory and times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardEntry>,
    /// Set when the check was cut short: its mutants without a verdict are missing from `files`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// Added lines passed over as reformatted or moved code, per file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reformatted: BTreeMap<String, Vec<usize>>,
    /// Mutants an equivalence rule left unmade, by rule: the same program, never run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_made: BTreeMap<String, usize>,
    /// Added executable lines a front end passed over, under their reason's key
    /// (`unsafeLines`), per file; only reasons with lines.
    #[serde(flatten)]
    pub passed_over: PassedOverLines,
    /// Set when the change had more mutants than `--max-mutants`: what it kept and left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<SampledEntry>,
    /// The flaky tests the check met, each with what is known of it, in words.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub flaky: BTreeMap<String, String>,
    /// Why the test-impact map could not rule out the tests it kept: per reason, how many and
    /// their recorded time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floor: Vec<FloorEntry>,
}

/// What `--max-mutants` kept of a change with more mutants.
#[derive(Debug, Serialize, Deserialize, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SampledEntry {
    pub max_mutants: usize,
    /// The mutants and lines with mutants the change had.
    pub planned: usize,
    pub lines: usize,
    /// The added executable lines left without a mutant, per file.
    pub left_out: BTreeMap<String, Vec<usize>>,
}

/// Tests the test-impact map kept for one reason.
#[derive(Debug, Serialize, Deserialize, Clone, PartialEq)]
pub struct FloorEntry {
    pub reason: String,
    pub tests: usize,
    /// Their recorded time, in seconds.
    pub seconds: f64,
}

/// What a check planned: every shard's mutants, and the digest that proves shards planned alike.
#[derive(Debug, Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct PlanEntry {
    pub mutants: usize,
    pub digest: String,
}

#[derive(Debug, Serialize, Deserialize, Clone, Copy)]
pub struct ShardPlace {
    pub index: usize,
    pub count: usize,
}

/// A shard of a merged report: its temporary directory and times.
#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct ShardEntry {
    #[serde(default)]
    pub index: usize,
    pub scratch: Option<PathBuf>,
    #[serde(default)]
    pub performance: Option<Performance>,
    #[serde(default)]
    pub duration: Option<f64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Incomplete {
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub not_run: usize,
    #[serde(default)]
    pub planned: usize,
    #[serde(default)]
    pub undecided: usize,
    #[serde(default)]
    pub audit_cut_off: bool,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditSection {
    #[serde(default)]
    pub edited_tests: Vec<String>,
    #[serde(default)]
    pub mutants: usize,
    #[serde(default)]
    pub killed_before: usize,
    #[serde(default)]
    pub lost_kills: Vec<LostEntry>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub dropped: usize,
    #[serde(default)]
    pub unconfirmed: usize,
    #[serde(default)]
    pub steps: Vec<StepEntry>,
    /// The whole audit plan, once made.
    #[serde(default)]
    pub plan: Option<PlanEntry>,
    /// Mutants the audit's budget left untried.
    #[serde(default)]
    pub unaudited: usize,
    /// Seconds the audit took.
    #[serde(default)]
    pub duration: f64,
}

/// A kill the change's test edits lose.
#[derive(Debug, Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct LostEntry {
    pub file: String,
    #[serde(default)]
    pub mutator_name: String,
    #[serde(default)]
    pub replacement: Option<String>,
    pub description: Option<String>,
    pub location: Location,
    #[serde(default)]
    pub killed_before: Vec<String>,
    pub status_after: Status,
    #[serde(default)]
    pub covered_after: Vec<String>,
    #[serde(default)]
    pub diff: String,
}

/// Phases in milliseconds.
#[derive(Debug, Serialize, Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct Performance {
    #[serde(default)]
    pub setup: f64,
    #[serde(default)]
    pub initial_run: f64,
    #[serde(default)]
    pub mutation: f64,
}

/// The mutants of one line that no test caught, or the line no test runs.
#[derive(Debug)]
pub struct MissedLine<'a> {
    pub path: &'a str,
    pub line: usize,
    /// Survived mutants, in id order.
    pub survived: Vec<&'a MutantEntry>,
    /// NoCoverage mutants, in id order.
    pub not_run: Vec<&'a MutantEntry>,
}

impl MissedLine<'_> {
    /// The mutants the line is reported for: its survivors, or when it has none, its mutants
    /// no test runs.
    pub fn reported(&self) -> &[&MutantEntry] {
        if self.survived.is_empty() {
            &self.not_run
        } else {
            &self.survived
        }
    }

    /// The column of its first reported mutant.
    pub fn column(&self) -> usize {
        self.reported().iter().map(|m| m.location.start.column).min().unwrap_or(1)
    }

    /// Every test that ran one of its survivors, sorted (the order tests ran in varies).
    pub fn covered_by(&self) -> Vec<&str> {
        let tests: std::collections::BTreeSet<&str> =
            self.survived.iter().flat_map(|m| &m.covered_by).map(String::as_str).collect();
        tests.into_iter().collect()
    }
}

impl Document {
    /// Every mutant with its file's path, files in path order.
    pub fn mutants(&self) -> impl Iterator<Item = (&str, &MutantEntry)> {
        self.files.iter().flat_map(|(path, file)| file.mutants.iter().map(move |m| (path.as_str(), m)))
    }

    pub fn count(&self, status: Status) -> usize {
        self.mutants().filter(|(_, m)| m.status == status).count()
    }

    /// (caught, scored): the mutation score's numerator and denominator.
    pub fn score(&self) -> (usize, usize) {
        let caught = self.mutants().filter(|(_, m)| m.status.is_caught()).count();
        let missed = self.mutants().filter(|(_, m)| m.status.is_missed()).count();
        (caught, caught + missed)
    }

    /// `interrupted: 3 of 10 mutants did not run; …` when the check was cut short.
    pub fn incomplete_note(&self) -> Option<String> {
        self.mutdelta.incomplete.as_ref().map(|incomplete| {
            let undecided = match incomplete.undecided {
                0 => String::new(),
                count => format!(" ({count} of them ran and survived the tests run so far, but had not yet faced the rest of the suite)"),
            };
            format!(
                "interrupted: {} of {} mutants did not run{undecided}; the verdicts shown are those reached",
                incomplete.not_run, incomplete.planned
            )
        })
    }

    /// The whole check in milliseconds: as measured, else the sum of its phases.
    pub fn duration(&self) -> f64 {
        self.mutdelta.duration.unwrap_or_else(|| {
            self.performance.as_ref().map(|p| p.setup + p.initial_run + p.mutation).unwrap_or_default()
        })
    }

    /// The lines with a Survived or NoCoverage mutant, by file path then line.
    pub fn missed_lines(&self) -> Vec<MissedLine<'_>> {
        self.files.keys().flat_map(|path| self.missed_lines_of(path)).collect()
    }

    /// The lines with a Survived or NoCoverage mutant, worst first: lines whose survivors are
    /// all likely equivalent last; before them, more families of survivors first (each family
    /// that survives is another kind of test missing), then more survivors, then more mutants
    /// no test runs; else by file path and line.
    pub fn worst_lines(&self) -> Vec<MissedLine<'_>> {
        let mut lines = self.missed_lines();
        lines.sort_by_key(|line| {
            let equivalent =
                !line.survived.is_empty() && line.survived.iter().all(|m| m.likely_equivalent.is_some());
            let families: std::collections::BTreeSet<&str> =
                line.survived.iter().map(|m| m.mutator_name.as_str()).collect();
            (
                equivalent,
                std::cmp::Reverse(families.len()),
                std::cmp::Reverse(line.survived.len()),
                std::cmp::Reverse(line.not_run.len()),
            )
        });
        lines
    }

    /// The lines of one file with a Survived or NoCoverage mutant, in line order.
    pub fn missed_lines_of(&self, path: &str) -> Vec<MissedLine<'_>> {
        let Some((path, file)) = self.files.get_key_value(path) else {
            return Vec::new();
        };
        let mut lines: BTreeMap<usize, MissedLine<'_>> = BTreeMap::new();
        for mutant in file.mutants.iter().filter(|m| m.status.is_missed()) {
            let line = mutant.location.start.line;
            let entry = lines.entry(line).or_insert_with(|| MissedLine {
                path,
                line,
                survived: Vec::new(),
                not_run: Vec::new(),
            });
            match mutant.status {
                Status::Survived => entry.survived.push(mutant),
                _ => entry.not_run.push(mutant),
            }
        }
        lines.into_values().collect()
    }
}

impl FileEntry {
    /// The file's language and source, without its mutants.
    pub fn clone_empty(&self) -> FileEntry {
        FileEntry { language: self.language.clone(), source: self.source.clone(), mutants: Vec::new() }
    }

    /// The file's source with `mutant` applied, or None when its location lies outside the source.
    pub fn mutated(&self, mutant: &MutantEntry) -> Option<String> {
        let start = byte_offset(&self.source, mutant.location.start)?;
        let end = byte_offset(&self.source, mutant.location.end)?;
        let replacement = mutant.replacement.as_deref().unwrap_or("");
        (start <= end).then(|| format!("{}{replacement}{}", &self.source[..start], &self.source[end..]))
    }

    /// The mutant as a unified diff of `path`, one line of context (empty if it cannot be applied).
    pub fn diff(&self, path: &str, mutant: &MutantEntry) -> String {
        self.mutated(mutant)
            .map(|mutated| super::diff::unified_diff(path, &self.source, &mutated))
            .unwrap_or_default()
    }
}

impl LostEntry {
    /// `replace + with -: killed by t before the change's test edits; it survives after the change`.
    pub fn summary(&self) -> String {
        let after = match self.status_after {
            Status::NoCoverage => "no test runs it after the change",
            _ => "it survives after the change",
        };
        let killers: Vec<&str> = self.killed_before.iter().map(String::as_str).collect();
        format!(
            "{}: killed by {} before the change's test edits; {after}",
            self.description.as_deref().unwrap_or("mutant"),
            some_tests(&killers, 3)
        )
    }
}

impl MutantEntry {
    pub fn description(&self) -> &str {
        self.description.as_deref().unwrap_or(&self.mutator_name)
    }

    pub fn line(&self) -> usize {
        self.location.start.line
    }
}

/// The byte offset of a 1-based line and 1-based character column; the column may sit one past
/// the line's last character.
pub fn byte_offset(source: &str, at: Position) -> Option<usize> {
    let mut line_start = 0;
    for (index, line) in source.split_inclusive('\n').enumerate() {
        if index + 1 == at.line {
            let within = match line.char_indices().nth(at.column.checked_sub(1)?) {
                Some((offset, _)) => offset,
                None if at.column == line.chars().count() + 1 => line.len(),
                None => return None,
            };
            return Some(line_start + within);
        }
        line_start += line.len();
    }
    (at.line == source.split_inclusive('\n').count() + 1 && at.column == 1).then_some(source.len())
}

/// The `…Lines` keys of mutdelta's section: the lines a front end passed over, by reason, per
/// file. Read back, the section's other keys a reader does not know are left out, as serde
/// leaves them out of any other part of the document; a `…Lines` key that is not lines per
/// file is an error.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(transparent)]
pub struct PassedOverLines(pub BTreeMap<String, BTreeMap<String, Vec<usize>>>);

impl<'de> Deserialize<'de> for PassedOverLines {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let unknown = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut lines = BTreeMap::new();
        for (key, value) in unknown.into_iter().filter(|(key, _)| key.ends_with("Lines")) {
            let by_file = serde_json::from_value(value)
                .map_err(|err| serde::de::Error::custom(format!("mutdelta.{key}: {err}")))?;
            lines.insert(key, by_file);
        }
        Ok(PassedOverLines(lines))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_characters_and_may_sit_one_past_the_end_of_a_line() {
        let source = "ab\nçd = 1\n";
        let at = |line, column| byte_offset(source, Position { line, column });
        assert_eq!(at(1, 1), Some(0));
        assert_eq!(at(2, 2), Some(5), "ç is two bytes");
        assert_eq!(at(2, 7), Some(10), "the end of `çd = 1`");
        assert_eq!(at(2, 8), Some(11));
        assert_eq!(at(2, 9), None);
        assert_eq!(byte_offset("x = 1", Position { line: 1, column: 6 }), Some(5), "no newline at the end");
        assert_eq!(at(3, 1), Some(11));
        assert_eq!(at(4, 1), None);
    }

    /// A section holding lines passed over beside a key of its own, as mutdelta's does.
    #[derive(Deserialize)]
    struct Section {
        #[allow(dead_code)]
        known: u32,
        #[serde(flatten)]
        passed_over: PassedOverLines,
    }

    #[test]
    fn lines_passed_over_are_read_back_by_key_and_other_unknown_keys_are_left_out() {
        let text = r#"{"known": 1, "unsafeLines": {"src/a.rs": [3, 5]}, "aLaterKey": "x", "count": 2}"#;
        let section: Section = serde_json::from_str(text).unwrap();
        let expected = BTreeMap::from([(
            "unsafeLines".to_string(),
            BTreeMap::from([("src/a.rs".to_string(), vec![3, 5])]),
        )]);
        assert_eq!(section.passed_over, PassedOverLines(expected));
        let err = serde_json::from_str::<Section>(r#"{"known": 1, "unsafeLines": ["src/a.rs"]}"#)
            .err()
            .expect("lines passed over that are not lines per file");
        assert!(err.to_string().contains("mutdelta.unsafeLines"), "{err}");
    }
}
