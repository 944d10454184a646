//! Pure mutant generation: source text and added line numbers in, mutants out (no processes, no files).

pub mod catalog;
mod marks;
mod pragma;
pub mod python;
pub mod rust;
mod text;

use std::ops::Range;

/// A 1-based line and 1-based column (counted in characters), as the
/// mutation-testing-elements report wants them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// One small edit of one added line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The added line this mutant belongs to (1-based): the line where the edit starts.
    pub line: usize,
    /// Byte range of the replaced text in the original source.
    pub span: Range<usize>,
    /// Where the replaced text starts, and where it ends (exclusive).
    pub start: Position,
    pub end: Position,
    /// The text that was there.
    pub original: String,
    /// The text put in its place.
    pub replacement: String,
    /// The catalog row that made it.
    pub rule: &'static catalog::Rule,
    /// What changed, in words: "replace + with -".
    pub description: String,
    /// Set when a `mutdelta: skip <reason>` pragma covers the line.
    pub ignored: Option<String>,
    /// The arid-line rule (`catalog::PYTHON_ARID`, `catalog::RUST_ARID`) whose code holds
    /// the whole edit: a mutant nobody would act on.
    pub arid: Option<&'static catalog::Marker>,
    /// The likely-equivalence rule (`catalog::EQUIVALENT`) this mutant fits: if it survives,
    /// it is probably the same program.
    pub likely_equivalent: Option<&'static catalog::Marker>,
}

impl Mutant {
    /// The mutator family of its catalog row.
    pub fn mutator(&self) -> catalog::Mutator {
        self.rule.mutator
    }

    /// The whole source with this mutant applied.
    pub fn apply(&self, source: &str) -> String {
        let mut out = String::with_capacity(source.len() + self.replacement.len());
        out.push_str(&source[..self.span.start]);
        out.push_str(&self.replacement);
        out.push_str(&source[self.span.end..]);
        out
    }
}

/// What a language front end finds in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMutants {
    /// Of the requested lines, those that hold executable code.
    pub executable_lines: Vec<usize>,
    /// For each executable line (same order), the lines of the statement it belongs to: a
    /// line counts as run when any line of its statement ran.
    pub statements: Vec<std::ops::RangeInclusive<usize>>,
    /// Every mutant on those lines, in source order.
    pub mutants: Vec<Mutant>,
    /// Executable lines left without a mutant on purpose, each with why (Rust's `unsafe` code).
    pub passed_over: Vec<(usize, &'static PassOver)>,
    /// Executable lines and lines with mutants compiled only with cargo features, with those
    /// features (Rust).
    pub feature_gated: Vec<(usize, Vec<String>)>,
    /// How many mutants an equivalence rule of `catalog::EQUIVALENT` left unmade, by rule
    /// name, where they are counted (Rust's `literal-fold`).
    pub not_made: Vec<(&'static str, usize)>,
}

/// Why a front end makes no mutant of some executable lines, as the check's notes and reports
/// say it: "N added executable lines {place} got no mutant: {why} ({flag} mutates them anyway)".
#[derive(Debug, PartialEq, Eq)]
pub struct PassOver {
    /// Their key in reports, before `Lines`: `unsafe` → `unsafeLines`.
    pub key: &'static str,
    /// Where they lie: "in `unsafe` code".
    pub place: &'static str,
    /// Why a mutant there is not made.
    pub why: &'static str,
    /// The option that mutates them anyway.
    pub flag: &'static str,
}

/// A function or a type's block (Rust `impl`, `trait`; Python `class`): what code runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// `fn eq`, `impl PartialEq for Identifier`, `def parse`, `class Version`.
    pub name: String,
    /// The line of its keyword (`fn`, `impl`, `def`, `class`).
    pub header: usize,
    /// Its last line.
    pub end: usize,
}

/// The names of the scopes a line lies in after their header line, outermost first.
pub fn context_of(scopes: &[Scope], line: usize) -> Vec<&str> {
    scopes
        .iter()
        .filter(|scope| scope.header < line && line <= scope.end)
        .map(|scope| scope.name.as_str())
        .collect()
}

/// Why a file could not be mutated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MutateError {
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error("line {line}: `mutdelta: skip` needs a reason, e.g. `mutdelta: skip logging only`")]
    PragmaWithoutReason { line: usize },
}

/// An edit before it gets its positions and pragma: what to replace, by what, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    pub span: Range<usize>,
    pub replacement: String,
    pub rule: &'static catalog::Rule,
    pub description: String,
}

impl Edit {
    /// The mutant this edit of `source` makes, with its positions looked up in `index`.
    pub(crate) fn into_mutant(
        self,
        source: &str,
        index: &text::LineIndex,
        ignored: Option<String>,
    ) -> Mutant {
        let start = index.position(source, self.span.start);
        let end = index.position(source, self.span.end);
        Mutant {
            line: start.line,
            original: source[self.span.clone()].to_string(),
            span: self.span,
            start,
            end,
            replacement: self.replacement,
            rule: self.rule,
            description: self.description,
            ignored,
            arid: None,
            likely_equivalent: None,
        }
    }
}

/// Sorts mutants by (span start, replacement, span end) and drops those that change nothing
/// or whose lines read as an earlier mutant's do (two rules, one edit): what the
/// `duplicate` rule of `catalog::EQUIVALENT` says.
pub(crate) fn sort_and_dedup(source: &str, mutants: &mut Vec<Mutant>) {
    mutants.sort_by(|a, b| {
        (a.span.start, &a.replacement, a.span.end).cmp(&(b.span.start, &b.replacement, b.span.end))
    });
    let mut seen = std::collections::HashSet::new();
    mutants.retain(|m| {
        let line_start = source[..m.span.start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[m.span.end..].find('\n').map_or(source.len(), |i| m.span.end + i);
        let before = &source[line_start..line_end];
        let after =
            [&source[line_start..m.span.start], &m.replacement, &source[m.span.end..line_end]].concat();
        after != before && seen.insert((line_start, line_end, after))
    });
}
