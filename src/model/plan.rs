//! What a check works on: the state under test, the languages, and the plan of mutants (its files, their added lines and mutants, a shard's share).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use git2::Oid;
use mutators::{FileMutants, Mutant, MutateError, PassOver, Scope};

/// Which state of the repository is materialised and tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A commit's tree.
    Commit(Oid),
    /// The index (staged content).
    Index,
    /// The working tree, untracked non-ignored files included.
    WorkTree,
}

impl State {
    /// As reports write it: `commit <id>`, `index` or `worktree`.
    pub fn to_text(self) -> String {
        match self {
            State::Commit(oid) => format!("commit {oid}"),
            State::Index => "index".to_string(),
            State::WorkTree => "worktree".to_string(),
        }
    }

    /// Reads what `to_text` wrote.
    pub fn from_text(text: &str) -> Option<State> {
        match text {
            "index" => Some(State::Index),
            "worktree" => Some(State::WorkTree),
            _ => Oid::from_str(text.strip_prefix("commit ")?).ok().map(State::Commit),
        }
    }
}

/// What mutdelta knows of a language without running anything: made once in the language's
/// folder, listed once where the commands begin (`app`), and handed down as a `Language`. Code
/// below the languages asks it, never a language's folder.
pub struct LanguageSpec {
    /// As the mutation-testing-elements report names it: `python`.
    pub name: &'static str,
    /// As a person reads it: `Python`.
    pub display: &'static str,
    /// The extensions of its source files, without the dot.
    pub extensions: &'static [&'static str],
    /// Test code, which is not mutated.
    pub is_test_file: fn(&Path) -> bool,
    /// Whether the test files a change adds or edits are the change's relevant tests.
    pub changed_tests_are_relevant: bool,
    /// The mutants of `lines` of `source`; `mutate_passed_over`: also of the lines it would pass
    /// over (`passes_over`).
    pub mutate:
        fn(source: &str, lines: &[usize], mutate_passed_over: bool) -> Result<FileMutants, MutateError>,
    /// Why its front end may make no mutant of an executable line (`FileMutants::passed_over`).
    pub passes_over: &'static [&'static PassOver],
    /// The functions and types of `source`.
    pub scopes: fn(&str) -> Result<Vec<Scope>, MutateError>,
    /// How its lines are read as tokens, to find old code reformatted or moved.
    pub lexing: Lexing,
    /// The encoding other than UTF-8 a source file declares in the language's own way, with
    /// how it declares it (`latin-1, as its PEP 263 coding comment declares`): such a file is
    /// passed over with a note, not refused as one that is not text.
    pub declared_encoding: fn(&[u8]) -> Option<String>,
    /// What one of its mutants is expected to cost, in units of a Python mutant's run (how
    /// `--shard` balances its shards).
    pub mutant_cost: u64,
    /// The file or package a test id is filed under in the report, and its name there.
    pub place_test: fn(&str) -> (&str, &str),
    /// Its test tool names a failed test without the package its covering tests name.
    pub killers_named_alone: bool,
    /// What its baseline does, in the progress line that says it starts.
    pub baseline_words: &'static str,
    /// Its operator table and arid-line rules, as `mutdelta mutators` prints them.
    pub operators: &'static [mutators::catalog::Rule],
    pub arid_rules: &'static [mutators::catalog::Marker],
}

/// How a language's lines are read as tokens.
pub struct Lexing {
    /// What begins a comment that runs to the end of the line.
    pub line_comment: &'static str,
    /// Reads the string or character literal that begins at `start` of a line's characters (its
    /// letter prefix included), or a mark its quote makes (a Rust lifetime's): the token it
    /// counts as, so that a literal written another way compares equal where the language
    /// says it is, and where it ends. None where no literal begins.
    pub literal: fn(chars: &[char], start: usize) -> Option<Literal>,
    /// The keywords a bracket may follow without being a call.
    pub keywords: &'static [&'static str],
    /// A call's or definition's parenthesis may follow a generic type's closing `>`.
    pub generics: bool,
}

/// A literal as a line's tokens hold it, and the index of the character after it.
pub type Literal = (String, usize);

/// What the bound left out of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampled {
    /// The bound.
    pub max: usize,
    /// The mutants the change had before it.
    pub planned: usize,
    /// The added executable lines that had a mutant before it.
    pub lines: usize,
    /// The lines it left without a mutant, per file.
    pub left_out: BTreeMap<PathBuf, Vec<usize>>,
}

/// The added executable lines passed over for one reason, per file.
#[derive(Debug, Clone)]
pub struct PassedOver {
    pub reason: &'static PassOver,
    pub lines: BTreeMap<PathBuf, Vec<usize>>,
}

impl PassedOver {
    /// Its key in reports: `unsafeLines`.
    pub fn key(&self) -> String {
        format!("{}Lines", self.reason.key)
    }
}

/// A language, by its descriptor: compared by name.
#[derive(Clone, Copy)]
pub struct Language(pub &'static LanguageSpec);

impl Language {
    /// The language of `path` among `languages`, by its extension.
    pub fn of(path: &Path, languages: &[Language]) -> Option<Language> {
        let extension = path.extension()?.to_str()?;
        languages.iter().copied().find(|language| language.extensions.contains(&extension))
    }

    /// The functions and types of `source`; none when it does not parse (then every line lies
    /// outside all of them, on both sides of a change alike).
    pub fn scopes_of(self, source: &str) -> Vec<Scope> {
        (self.scopes)(source).unwrap_or_default()
    }
}

impl std::ops::Deref for Language {
    type Target = LanguageSpec;

    fn deref(&self) -> &LanguageSpec {
        self.0
    }
}

impl PartialEq for Language {
    fn eq(&self, other: &Language) -> bool {
        self.name == other.name
    }
}

impl Eq for Language {}

impl std::hash::Hash for Language {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl std::fmt::Debug for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.display)
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
    /// Added executable lines a front end made no mutant of on purpose: for each reason the
    /// check's languages may give (`LanguageSpec::passes_over`), in their order, per file.
    pub passed_over: Vec<PassedOver>,
    /// Added executable lines compiled only with cargo features, with those features, per file.
    pub feature_gated: BTreeMap<PathBuf, BTreeMap<usize, Vec<String>>>,
    /// Mutants an equivalence rule left unmade, by rule name (`mutators::FileMutants::not_made`).
    pub not_made: BTreeMap<&'static str, usize>,
    /// What `--max-mutants` left out, when the change had more (`budget::sample`).
    pub sampled: Option<Sampled>,
    /// With `--shard`, the mutants this run tests (`shard::restrict`); else all of them.
    pub share: Option<crate::model::plan::Share>,
    /// The ids of the kills the kill-loss audit carried after the change and tests with the
    /// check's own mutants (`with_carried`): none in a plan of the change alone.
    pub carried: BTreeSet<usize>,
}

impl Plan {
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

    /// This plan with `carried`'s lines added, and `mutants` (of `carried`, on the same state)
    /// numbered after this plan's own: the kills the kill-loss audit carries after the change,
    /// tested with the change's mutants in the same copies, against the same coverage run.
    /// A file of both gets `carried`'s lines, so that the probe watches them; the carried
    /// mutants stay out of `FilePlan::mutants`, so `all_mutants` still numbers the plan's own
    /// alone. Returns the joined plan and the carried mutants as it numbers them, each id
    /// being this plan's mutant count plus its id in `carried`.
    pub fn with_carried(&self, carried: &Plan, mutants: &[PlannedMutant]) -> (Plan, Vec<PlannedMutant>) {
        let mut joined = self.clone();
        let offset = self.mutant_count();
        let mut file_of = BTreeMap::new();
        for (index, file) in carried.files.iter().enumerate() {
            let at = match joined.files.iter().position(|own| own.path == file.path) {
                Some(at) => {
                    let own = &mut joined.files[at];
                    let mut lines: BTreeMap<usize, std::ops::RangeInclusive<usize>> =
                        own.lines.iter().copied().zip(own.statements.iter().cloned()).collect();
                    for (&line, statement) in file.lines.iter().zip(&file.statements) {
                        lines.entry(line).or_insert_with(|| statement.clone());
                    }
                    (own.lines, own.statements) = lines.into_iter().unzip();
                    at
                }
                None => {
                    joined.files.push(FilePlan { mutants: Vec::new(), ..file.clone() });
                    joined.files.len() - 1
                }
            };
            file_of.insert(index, at);
        }
        let mutants: Vec<PlannedMutant> = mutants
            .iter()
            .map(|planned| PlannedMutant {
                id: offset + planned.id,
                file: file_of[&planned.file],
                mutant: planned.mutant.clone(),
            })
            .collect();
        joined.carried = mutants.iter().map(|planned| planned.id).collect();
        if let Some(share) = &mut joined.share {
            share.ids.extend(joined.carried.iter().copied());
        }
        (joined, mutants)
    }
}

/// One job's place in the matrix: shard `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl std::fmt::Display for Shard {
    /// As the option writes it: `1/4`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Reads `K/N` (0-based K below N).
    pub fn parse(text: &str) -> Result<Shard> {
        let hint = "give K/N with 0 <= K < N, e.g. --shard 0/4 to --shard 3/4";
        let Some((index, count)) = text.split_once('/') else {
            bail!("--shard {text} is not of the form K/N: {hint}");
        };
        let (Ok(index), Ok(count)) = (index.trim().parse::<usize>(), count.trim().parse::<usize>()) else {
            bail!("--shard {text} is not two whole numbers K/N: {hint}");
        };
        if count == 0 {
            bail!("--shard {text} splits into zero shards: {hint}");
        }
        if index >= count {
            bail!("--shard {text} names no shard: shards are numbered from 0, so the last of {count} is {}/{count}", count - 1);
        }
        Ok(Shard { index, count })
    }
}

/// The part of a plan one shard tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    pub shard: Shard,
    /// The ids of its mutants.
    pub ids: BTreeSet<usize>,
    /// How many mutants the whole plan has.
    pub planned: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, source: &str, lines: &[usize]) -> FilePlan {
        let found = mutators::python::mutate(source, lines).expect("mutants");
        FilePlan {
            path: path.into(),
            language: crate::python::spec::LANGUAGE,
            source: source.to_string(),
            lines: found.executable_lines,
            statements: found.statements,
            mutants: found.mutants,
        }
    }

    #[test]
    fn carried_kills_join_the_plan_numbered_after_its_own_mutants_and_watched_in_their_files() {
        let calc = "def f(a):\n    x = a + 1\n    return x * 2\n";
        let own = Plan { files: vec![file("calc.py", calc, &[2])], ..Plan::default() };
        let carried = Plan {
            files: vec![file("other.py", "def g(b):\n    return b - 1\n", &[2]), file("calc.py", calc, &[3])],
            ..Plan::default()
        };
        let carried_mutants = carried.all_mutants();
        let own_count = own.mutant_count();

        let (joined, mutants) = own.with_carried(&carried, &carried_mutants);

        // The plan's own mutants keep their numbers and files; the carried ones come after.
        let own_ids: Vec<usize> = joined.all_mutants().iter().map(|planned| planned.id).collect();
        assert_eq!(own_ids, (1..=own_count).collect::<Vec<_>>());
        assert_eq!(mutants.len(), carried_mutants.len());
        for (joined_mutant, original) in mutants.iter().zip(&carried_mutants) {
            assert_eq!(joined_mutant.id, own_count + original.id);
            assert_eq!(joined.files[joined_mutant.file].path, carried.files[original.file].path);
            assert_eq!(joined_mutant.mutant.replacement, original.mutant.replacement);
        }
        assert_eq!(joined.carried, mutants.iter().map(|planned| planned.id).collect());
        // A file of both holds one entry, watching both lines; a new file is added.
        let paths: Vec<&str> = joined.files.iter().map(|file| file.path.to_str().unwrap()).collect();
        assert_eq!(paths, ["calc.py", "other.py"]);
        assert_eq!(joined.files[0].lines, [2, 3]);
        assert_eq!(joined.files[0].statement_of(3), 3..=3);
        assert_eq!(joined.files[0].mutants.len(), own.files[0].mutants.len(), "carried mutants stay out");
        assert!(joined.files[1].mutants.is_empty());
        assert!(own.carried.is_empty());
    }

    #[test]
    fn a_shards_share_takes_the_carried_kills_too() {
        let own = Plan {
            files: vec![file("calc.py", "x = 1 + 2\n", &[1])],
            share: Some(Share { shard: Shard { index: 0, count: 2 }, ids: [1].into(), planned: 2 }),
            ..Plan::default()
        };
        let carried = Plan { files: vec![file("other.py", "y = 3 - 4\n", &[1])], ..Plan::default() };

        let (joined, mutants) = own.with_carried(&carried, &carried.all_mutants());

        let share = joined.share.expect("the shard's share");
        assert!(mutants.iter().all(|planned| share.ids.contains(&planned.id)));
        assert!(share.ids.contains(&1));
    }
}
