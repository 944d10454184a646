//! Python match arms made never to match (`case P:` becomes `case P if False:`), in a match that has a catch-all arm.

use std::ops::Range;

use super::structure::{Code, Role};
use super::tokenize::Kind;
use crate::catalog::{self, Mutator, PYTHON};
use crate::text::shorten;
use crate::Edit;

/// One `case` clause: its pattern's tokens and whether a guard follows them.
struct Arm {
    pattern: Range<usize>,
    guarded: bool,
}

/// The edits of every unguarded arm of every match with a catch-all arm (`case _:`,
/// `case name:`), that arm left alone. A guarded arm's guard is forced instead (conditions).
pub(super) fn edits(code: &Code) -> Vec<Edit> {
    let Some(rule) = catalog::lookup(PYTHON, Mutator::MatchArmDeletion, "case <pattern>:") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (index, line) in code.lines.iter().enumerate() {
        let is_match = line
            .header
            .is_some_and(|h| code.is(h.keyword, "match") && code.roles[h.keyword] == Role::SoftKeyword);
        if !is_match {
            continue;
        }
        let arms = arms_of(code, index);
        if !arms.iter().any(|arm| is_catch_all(code, arm)) {
            continue;
        }
        for arm in arms.iter().filter(|arm| !arm.guarded && !is_catch_all(code, arm)) {
            let pattern = code.source_of(arm.pattern.clone());
            for to in rule.to {
                let description = format!("never match `case {}`", shorten(pattern));
                let replacement = to.replace("<pattern>", pattern);
                out.push(Edit { span: code.span(arm.pattern.clone()), replacement, rule, description });
            }
        }
    }
    out
}

/// The `case` clauses of the match whose header is line `index`.
fn arms_of(code: &Code, index: usize) -> Vec<Arm> {
    let end = code.block_end(index);
    let Some(first) = code.lines.get(index + 1).filter(|_| end > index) else { return Vec::new() };
    let arm_indent = code.indent_of(first.tokens.start);
    let mut arms = Vec::new();
    for line in &code.lines[index + 1..=end] {
        let Some(header) = line.header else { continue };
        let keyword = header.keyword;
        let is_arm = code.indent_of(line.tokens.start) == arm_indent
            && code.is(keyword, "case")
            && code.roles[keyword] == Role::SoftKeyword;
        let Some(colon) = header.colon.filter(|_| is_arm) else { continue };
        let pattern_end = (keyword + 1..colon).find(|&i| code.roles[i] != Role::Pattern).unwrap_or(colon);
        if pattern_end > keyword + 1 {
            arms.push(Arm { pattern: keyword + 1..pattern_end, guarded: pattern_end < colon });
        }
    }
    arms
}

/// `_` or a bare capture name: a pattern every subject matches.
fn is_catch_all(code: &Code, arm: &Arm) -> bool {
    let only = arm.pattern.start;
    let name = code.text(only);
    !arm.guarded
        && arm.pattern.len() == 1
        && code.kind(only) == Kind::Name
        && !code.is_keyword(only)
        && !matches!(name, "None" | "True" | "False")
}
