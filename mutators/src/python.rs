//! Python mutants: a line rewriter over a real tokenization of the whole file.

mod annotation;
mod arid;
mod conditions;
mod equivalent;
mod fstring;
mod match_arms;
mod mutate;
mod structure;
mod tokenize;

use std::collections::HashMap;
use std::ops::Range;

use crate::marks::Marks;
use crate::pragma::{self, Pragma};
use crate::{Edit, FileMutants, Mutant, MutateError};
use structure::Code;

/// Every mutant starting on one of `lines` (1-based), sorted by (span start, replacement),
/// and which of those lines are executable. Mutants starting on a line with a
/// `# mutdelta: skip <reason>` comment are marked ignored; those in arid code carry its rule,
/// those that force a fast-path guard to false their likely-equivalence rule.
pub fn mutate(source: &str, lines: &[usize]) -> Result<FileMutants, MutateError> {
    let code = parse(source)?;
    let skipped = skip_pragmas(&code)?;
    let executable = code.executable_mask();
    let mut wanted = vec![false; executable.len()];
    for &line in lines {
        if let Some(slot) = wanted.get_mut(line) {
            *slot = true;
        }
    }
    let executable_lines: Vec<usize> = (1..wanted.len()).filter(|&l| wanted[l] && executable[l]).collect();
    // In token order, so their starts and ends both ascend: the first span that does not end
    // before a line is the first that holds it, if any does.
    let spans = code.logical_line_spans();
    let statements = executable_lines
        .iter()
        .map(|&line| {
            let first = spans.partition_point(|span| *span.end() < line);
            spans.get(first).filter(|span| span.contains(&line)).cloned().unwrap_or(line..=line)
        })
        .collect();
    let mut mutants: Vec<Mutant> =
        mutate::edits(&code, &wanted).into_iter().map(|edit| finish(&code, edit, &skipped)).collect();
    crate::sort_and_dedup(source, &mut mutants);
    let mut marks = Marks::default();
    arid::find(&code, &mut marks);
    equivalent::find(&code, &mut marks);
    marks.apply(&mut mutants);
    Ok(FileMutants {
        executable_lines,
        statements,
        mutants,
        passed_over: Vec::new(),
        feature_gated: Vec::new(),
        not_made: Vec::new(),
    })
}

/// Every `def` and `class` of the file, in source order (so an enclosing one comes first).
pub fn scopes(source: &str) -> Result<Vec<crate::Scope>, MutateError> {
    let code = parse(source)?;
    let mut scopes = Vec::new();
    for (index, line) in code.lines.iter().enumerate() {
        let Some(header) = line.header else { continue };
        let keyword = code.text(header.keyword);
        if keyword != "def" && keyword != "class" {
            continue;
        }
        let name = if header.keyword + 1 < code.tokens.len() { code.text(header.keyword + 1) } else { "" };
        let last = &code.lines[code.block_end(index)];
        scopes.push(crate::Scope {
            name: format!("{keyword} {name}"),
            header: code.line_of(header.keyword),
            end: code.line_of(last.tokens.end.saturating_sub(1).max(last.tokens.start)),
        });
    }
    Ok(scopes)
}

/// All executable lines of the file, sorted: lines where code starts, outside docstrings
/// and bare string statements and not merely inside a multi-line string.
pub fn executable_lines(source: &str) -> Result<Vec<usize>, MutateError> {
    let mask = parse(source)?.executable_mask();
    Ok((1..mask.len()).filter(|&l| mask[l]).collect())
}

fn parse(source: &str) -> Result<Code<'_>, MutateError> {
    let tokens = tokenize::tokenize(source)?;
    Ok(Code::new(source, tokens))
}

/// Reasons by line, from `# mutdelta: skip <reason>` comments anywhere in the file.
fn skip_pragmas(code: &Code) -> Result<HashMap<usize, String>, MutateError> {
    let mut skipped = HashMap::new();
    for comment in &code.comments {
        let line = code.index.line(comment.span.start);
        match pragma::parse(&code.src[comment.span.clone()]) {
            Some(Pragma::Skip(reason)) => {
                skipped.insert(line, reason);
            }
            Some(Pragma::SkipWithoutReason) => return Err(MutateError::PragmaWithoutReason { line }),
            None => {}
        }
    }
    Ok(skipped)
}

fn finish(code: &Code, edit: Edit, skipped: &HashMap<usize, String>) -> Mutant {
    let replacement = separated(code.src, &edit.span, &edit.replacement);
    let ignored = skipped.get(&code.index.line(edit.span.start)).cloned();
    Edit { replacement, ..edit }.into_mutant(code.src, &code.index, ignored)
}

/// The replacement, with a space added where it would otherwise fuse with its neighbours
/// (`return(x)` → `return None`, `"a""b"` → `"" "b"`, `if-x` → `if x`).
fn separated(src: &str, span: &Range<usize>, replacement: &str) -> String {
    let before = src[..span.start].chars().next_back();
    let after = src[span.end..].chars().next();
    let mut out = replacement.to_string();
    match (replacement.chars().next(), replacement.chars().next_back()) {
        (Some(first), Some(last)) => {
            if fuses(before, first) {
                out.insert(0, ' ');
            }
            if fuses(Some(last), after.unwrap_or(' ')) {
                out.push(' ');
            }
        }
        _ if before.is_some_and(|b| fuses(Some(b), after.unwrap_or(' '))) => out.push(' '),
        _ => {}
    }
    out
}

fn fuses(left: Option<char>, right: char) -> bool {
    let word = |c: char| c == '_' || c.is_alphanumeric();
    let quote = |c: char| c == '"' || c == '\'';
    left.is_some_and(|left| (word(left) && word(right)) || (quote(left) && quote(right)))
}
