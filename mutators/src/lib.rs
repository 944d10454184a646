//! Pure mutant generation: source text and added line numbers in, mutants out (no processes, no files).

pub mod catalog;
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
        }
    }
}

/// Sorts mutants by (span start, replacement, span end) and drops repeated edits.
pub(crate) fn sort_and_dedup(mutants: &mut Vec<Mutant>) {
    mutants.sort_by(|a, b| {
        (a.span.start, &a.replacement, a.span.end).cmp(&(b.span.start, &b.replacement, b.span.end))
    });
    mutants.dedup_by(|a, b| a.span == b.span && a.replacement == b.replacement);
}
