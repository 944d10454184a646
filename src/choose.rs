//! Which mutants a check runs: files the configuration excludes passed over, disabled families dropped, those on arid lines kept with their rule (a survivor there is Ignored; unless `--no-arid`), and with `--one-per-line` at most one per line.

use std::collections::BTreeSet;
use std::path::Path;

use mutators::catalog::Mutator::{self, *};
use mutators::Mutant;

/// `--no-arid`, `--one-per-line`, `--include-reformatted`, `--mutate-unsafe` and the configuration's `exclude` and
/// `disable-mutators`, resolved.
#[derive(Debug, Clone)]
pub struct Choice {
    /// Mutants on arid lines keep their rule: they run, a kill counts, and a survivor (or one no
    /// test reaches) is Ignored with the rule's name (else they are verdicts like any other).
    pub arid: bool,
    /// At most one mutant per added line: the first of `PREFERENCE`.
    pub one_per_line: bool,
    /// Added lines that only reformat or move removed code are mutated too (else passed over).
    pub include_reformatted: bool,
    /// The lines a language's front end passes over on purpose (`LanguageSpec::passes_over`:
    /// Rust's `unsafe` code, under `--mutate-unsafe`) are mutated like other code.
    pub mutate_passed_over: bool,
    /// The most mutants a check tests (`budget::sample`); none: no bound.
    pub max_mutants: Option<usize>,
    /// Families whose mutants are not made at all.
    pub disabled: BTreeSet<Mutator>,
    /// Files whose added lines are not mutated.
    pub exclude: Exclude,
}

/// `--max-mutants` when none is given: a change with more is generated code or a vendored file
/// more often than code a person wrote, and testing them all would take hours.
pub const DEFAULT_MAX_MUTANTS: usize = 5000;

impl Default for Choice {
    fn default() -> Self {
        Choice {
            arid: true,
            one_per_line: false,
            include_reformatted: false,
            mutate_passed_over: false,
            max_mutants: Some(DEFAULT_MAX_MUTANTS),
            disabled: BTreeSet::new(),
            exclude: Exclude::default(),
        }
    }
}

/// Globs of repository-relative paths whose added lines are not mutated: `*` stays within one
/// directory, `**` crosses any number of them. Each keeps where it was given (`--exclude`, the
/// configuration), for the note that names why a file was passed over.
#[derive(Debug, Clone)]
pub struct Exclude {
    patterns: Vec<String>,
    origins: Vec<&'static str>,
    set: globset::GlobSet,
}

/// Where the configuration's `exclude` globs come from, as a note names it.
pub const CONFIGURED: &str = "`exclude` in the configuration";
/// Where `--exclude` globs come from.
pub const GIVEN: &str = "--exclude";

impl Default for Exclude {
    fn default() -> Self {
        Exclude { patterns: Vec::new(), origins: Vec::new(), set: globset::GlobSet::empty() }
    }
}

impl Exclude {
    /// The globs given at `origin`, compiled; else the first that is not a glob, and why.
    pub fn new(patterns: &[String], origin: &'static str) -> Result<Exclude, (String, String)> {
        Exclude::default().with(patterns, origin)
    }

    /// These globs and `patterns`, given at `origin`, compiled together.
    pub fn with(&self, patterns: &[String], origin: &'static str) -> Result<Exclude, (String, String)> {
        let mut all = self.patterns.clone();
        all.extend(patterns.iter().cloned());
        let mut origins = self.origins.clone();
        origins.extend(patterns.iter().map(|_| origin));
        let mut set = globset::GlobSetBuilder::new();
        for pattern in &all {
            let glob = globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|err| (pattern.clone(), err.kind().to_string()))?;
            set.add(glob);
        }
        let set = set.build().map_err(|err| (all.join(", "), err.to_string()))?;
        Ok(Exclude { patterns: all, origins, set })
    }

    /// Whether `path` (relative to the repository root) is excluded.
    pub fn matches(&self, path: &Path) -> bool {
        self.set.is_match(path)
    }

    /// Where the first glob that matches `path` was given.
    pub fn origin(&self, path: &Path) -> Option<&'static str> {
        self.set.matches(path).first().map(|&index| self.origins[index])
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// With `--one-per-line`, the families in the order a line's mutant is picked from. The
/// mutants that remove or short-circuit what the line does come first: they are seldom
/// equivalent, and when one survives nothing checks the line at all, which is the finding a
/// one-comment review wants. Operator swaps follow (a surviving boundary swap is a finding
/// about one case), literal changes come last (the most often equivalent or arbitrary).
pub const PREFERENCE: &[Mutator] = &[
    StatementDeletion,
    ConditionForcing,
    ReturnValue,
    FunctionBody,
    MatchArmDeletion,
    LoopControl,
    NoneValue,
    BooleanOperator,
    ComparisonOperator,
    IdentityOperator,
    MembershipOperator,
    ArithmeticOperator,
    BitwiseOperator,
    AssignmentOperator,
    UnaryOperator,
    BooleanLiteral,
    NumberLiteral,
    StringLiteral,
];

/// The mutants of one file (in source order) that a check with `choice` runs, in source order.
pub fn apply(mut mutants: Vec<Mutant>, choice: &Choice) -> Vec<Mutant> {
    mutants.retain(|mutant| !choice.disabled.contains(&mutant.mutator()));
    for mutant in &mut mutants {
        // A pragma's reason wins over an arid rule's.
        if !choice.arid || mutant.ignored.is_some() {
            mutant.arid = None;
        }
    }
    if choice.one_per_line {
        mutants = one_per_line(mutants);
    }
    mutants
}

/// How a mutant ranks among those of its line, best first: not ignored, likely equivalent nor
/// arid, then by family (`PREFERENCE`).
pub fn rank(m: &Mutant) -> (bool, bool, bool, usize) {
    let family = PREFERENCE.iter().position(|&f| f == m.mutator()).unwrap_or(PREFERENCE.len());
    (m.ignored.is_some(), m.likely_equivalent.is_some(), m.arid.is_some(), family)
}

/// Per line, the mutant to run: the best by `rank`, then the first in source order.
fn one_per_line(mutants: Vec<Mutant>) -> Vec<Mutant> {
    let mut best: Vec<(usize, usize)> = Vec::new(); // (line, index of its mutant)
    for (index, mutant) in mutants.iter().enumerate() {
        match best.iter_mut().find(|(line, _)| *line == mutant.line) {
            Some((_, kept)) if rank(mutant) < rank(&mutants[*kept]) => *kept = index,
            Some(_) => {}
            None => best.push((mutant.line, index)),
        }
    }
    let mut keep: Vec<usize> = best.into_iter().map(|(_, index)| index).collect();
    keep.sort_unstable();
    mutants
        .into_iter()
        .enumerate()
        .filter(|(index, _)| keep.binary_search(index).is_ok())
        .map(|(_, m)| m)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutants(source: &str) -> Vec<Mutant> {
        let lines = mutators::python::executable_lines(source).unwrap();
        mutators::python::mutate(source, &lines).unwrap().mutants
    }

    #[test]
    fn every_family_has_a_place_in_the_preference() {
        for rules in [mutators::catalog::PYTHON, mutators::catalog::RUST] {
            for rule in rules {
                assert!(PREFERENCE.contains(&rule.mutator), "{} is not ranked", rule.mutator);
            }
        }
    }

    #[test]
    fn arid_mutants_run_with_their_rule_unless_arid_lines_are_tested_and_a_pragma_wins() {
        let source =
            "print(a + 1)\nb = a + 1  # mutdelta: skip counted elsewhere\nprint(b)  # mutdelta: skip noise\n";
        let chosen = apply(mutants(source), &Choice::default());
        let marks: Vec<(usize, Option<&str>, Option<&str>)> =
            chosen.iter().map(|m| (m.line, m.arid.map(|rule| rule.name), m.ignored.as_deref())).collect();
        let first: Vec<_> = marks.iter().filter(|(line, ..)| *line == 1).collect();
        assert!(
            !first.is_empty()
                && first.iter().all(|(_, arid, ignored)| *arid == Some("print") && ignored.is_none()),
            "{marks:?}"
        );
        assert!(
            marks
                .iter()
                .filter(|(line, ..)| *line != 1)
                .all(|(_, arid, ignored)| arid.is_none() && ignored.is_some()),
            "{marks:?}"
        );

        let tested = apply(mutants(source), &Choice { arid: false, ..Choice::default() });
        assert!(tested.iter().filter(|m| m.line == 1).all(|m| m.ignored.is_none() && m.arid.is_none()));
        assert_eq!(tested.len(), chosen.len(), "--no-arid runs the same mutants");
    }

    #[test]
    fn disabled_families_make_no_mutants_and_one_per_line_picks_among_the_rest() {
        let source = "x = a + 1\n";
        let disabled = [StatementDeletion, NoneValue].into_iter().collect();
        let chosen = apply(mutants(source), &Choice { disabled, ..Choice::default() });
        let families: Vec<&str> = chosen.iter().map(|m| m.mutator().name()).collect();
        assert_eq!(families, ["ArithmeticOperator", "NumberLiteral", "NumberLiteral"]);
        let disabled = [StatementDeletion, NoneValue].into_iter().collect();
        let one = apply(mutants(source), &Choice { disabled, one_per_line: true, ..Choice::default() });
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].mutator(), ArithmeticOperator);
    }

    #[test]
    fn exclude_globs_match_repository_relative_paths_star_within_a_directory() {
        let patterns = ["docs/conf.py", "**/migrations/**", "*.pyi"].map(String::from);
        let exclude = Exclude::new(&patterns, CONFIGURED).unwrap();
        for path in ["docs/conf.py", "app/migrations/0001_initial.py", "migrations/x.py", "stubs.pyi"] {
            assert!(exclude.matches(Path::new(path)), "{path}");
        }
        for path in ["src/docs/conf.py", "docs/conf.pyc", "pkg/stubs.pyi", "app/migration.py"] {
            assert!(!exclude.matches(Path::new(path)), "{path}");
        }
        assert!(!Exclude::default().matches(Path::new("docs/conf.py")));
        let both = exclude.with(&["docs/**".to_string()], GIVEN).unwrap();
        assert_eq!(both.origin(Path::new("docs/conf.py")), Some(CONFIGURED), "the first glob that matches");
        assert_eq!(both.origin(Path::new("docs/index.py")), Some(GIVEN));
        assert_eq!(both.origin(Path::new("src/a.py")), None);
        let (pattern, why) = Exclude::new(&["src/[ab.py".to_string()], GIVEN).unwrap_err();
        assert_eq!(pattern, "src/[ab.py");
        assert!(why.contains("unclosed character class"), "{why}");
    }

    #[test]
    fn one_per_line_keeps_the_first_preferred_family_of_each_line() {
        let source = "x = a + 1\nif a > 1:\n    print(a)\nreturn a * 2\nif self is other:\n    return True\n";
        let chosen = apply(mutants(source), &Choice { one_per_line: true, ..Choice::default() });
        let picked: Vec<(usize, &str)> = chosen.iter().map(|m| (m.line, m.mutator().name())).collect();
        assert_eq!(
            picked,
            [
                (1, "StatementDeletion"),
                (2, "ConditionForcing"),
                (3, "StatementDeletion"),
                (4, "ReturnValue"),
                (5, "ConditionForcing"),
                (6, "BooleanLiteral"),
            ]
        );
        assert!(chosen[2].arid.is_some(), "a line with only arid mutants keeps one, with its rule");
        assert!(chosen[4].likely_equivalent.is_none(), "the forcing to True, not the fast-path one");
        assert_eq!(chosen[1].replacement, "False", "ties go to source order: False sorts first");
    }
}
