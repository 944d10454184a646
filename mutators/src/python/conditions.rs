//! Python conditions forced or negated: `if`/`elif`/`while` headers, match guards, conditional expressions and comprehension `if`s; one holding a walrus keeps its binding.

use std::ops::Range;

use super::structure::{Code, LogicalLine, Role};
use super::tokenize::Kind;
use crate::catalog::{self, Mutator, PYTHON};
use crate::text::shorten;
use crate::Edit;

/// The catalog row that forces a condition holding `:=` without dropping the binding.
const WALRUS_FORM: &str = "<condition holding :=>";

/// A condition and the form of the catalog row that says what it becomes.
struct Condition {
    tokens: Range<usize>,
    form: &'static str,
}

/// The edits of every condition of `line`.
pub(super) fn edits(code: &Code, line: &LogicalLine) -> Vec<Edit> {
    let mut out = Vec::new();
    for condition in conditions(code, line) {
        forced(code, &condition, &mut out);
    }
    out
}

fn conditions(code: &Code, line: &LogicalLine) -> Vec<Condition> {
    let mut found = Vec::new();
    let mut statement_ifs = Vec::new();
    if let Some(header) = line.header {
        if let Some(colon) = header.colon {
            let keyword = header.keyword;
            let form = match code.text(keyword) {
                "if" => Some("if <condition>:"),
                "elif" => Some("elif <condition>:"),
                "while" => Some("while <condition>:"),
                _ => None,
            };
            if let Some(form) = form {
                statement_ifs.push(keyword);
                found.push(Condition { tokens: keyword + 1..colon, form });
            }
            if let Some(guard) = case_guard(code, keyword, colon) {
                statement_ifs.push(guard);
                found.push(Condition { tokens: guard + 1..colon, form: "case <pattern> if <guard>:" });
            }
        }
    }
    found.extend(expression_conditions(code, line.tokens.clone(), &statement_ifs));
    found
}

/// The `if` of `case <pattern> if <guard>:`: the first token after the pattern.
fn case_guard(code: &Code, keyword: usize, colon: usize) -> Option<usize> {
    if !(code.is(keyword, "case") && code.roles[keyword] == Role::SoftKeyword) {
        return None;
    }
    let after_pattern = (keyword + 1..colon).find(|&i| code.roles[i] != Role::Pattern)?;
    code.is(after_pattern, "if").then_some(after_pattern)
}

/// Conditional expressions and comprehension `if`s among `tokens`. An `if` inside brackets
/// after a `for` of the same brackets filters a comprehension; any other `if` but the
/// statement's own is a conditional expression, whose condition (a disjunction, so holding
/// no unbracketed `if` or `else`) ends at the first `else` at its depth.
fn expression_conditions(code: &Code, tokens: Range<usize>, statement_ifs: &[usize]) -> Vec<Condition> {
    let mut found = Vec::new();
    // For each open bracket (and the line itself), whether a `for` was seen in it.
    let mut after_for = vec![false];
    for i in tokens.clone() {
        if !is_word_or_operator(code, i) {
            continue;
        }
        match code.text(i) {
            "(" | "[" | "{" => after_for.push(false),
            ")" | "]" | "}" if after_for.len() > 1 => {
                after_for.pop();
            }
            "for" if after_for.len() > 1 => {
                if let Some(seen) = after_for.last_mut() {
                    *seen = true;
                }
            }
            "if" if code.roles[i] != Role::Code || statement_ifs.contains(&i) => {}
            "if" if after_for.last() == Some(&true) => {
                let end = same_depth_stop(code, i + 1..tokens.end, &["for", "if", "async"]);
                found.push(Condition { tokens: i + 1..end, form: "<comprehension> if <condition>" });
            }
            "if" => {
                let end = same_depth_stop(code, i + 1..tokens.end, &["else"]);
                if end < tokens.end && code.is(end, "else") {
                    found.push(Condition { tokens: i + 1..end, form: "<a> if <condition> else <b>" });
                }
            }
            _ => {}
        }
    }
    found
}

/// The first of `tokens` at their starting depth that is one of `words` or closes a bracket
/// opened before them; the end of `tokens` when there is none.
fn same_depth_stop(code: &Code, tokens: Range<usize>, words: &[&str]) -> usize {
    let mut depth = 0usize;
    for i in tokens.clone() {
        if !is_word_or_operator(code, i) {
            continue;
        }
        match code.text(i) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth == 0 => return i,
            ")" | "]" | "}" => depth -= 1,
            word if depth == 0 && words.contains(&word) => return i,
            _ => {}
        }
    }
    tokens.end
}

fn is_word_or_operator(code: &Code, i: usize) -> bool {
    matches!(code.kind(i), Kind::Name | Kind::Op)
}

/// One edit per target of the condition's row; `True` and `False` through the walrus row
/// when the condition binds a name.
fn forced(code: &Code, condition: &Condition, out: &mut Vec<Edit>) {
    let tokens = condition.tokens.clone();
    if tokens.is_empty() {
        return;
    }
    let text = code.source_of(tokens.clone());
    if tokens.len() == 1 && matches!(text, "True" | "False") {
        return; // BooleanLiteral covers it
    }
    let Some(rule) = catalog::lookup(PYTHON, Mutator::ConditionForcing, condition.form) else { return };
    let binds = tokens.clone().any(|i| code.is(i, ":="));
    let walrus = catalog::lookup(PYTHON, Mutator::ConditionForcing, WALRUS_FORM);
    let inner = unbracketed(code, tokens.clone());
    let span = code.span(tokens);
    for to in rule.to {
        let (rule, replacement, description) = match (walrus, *to) {
            (Some(walrus), "True" | "False") if binds => {
                let Some(form) = walrus.to.iter().find(|form| form.ends_with(&format!("{to})"))) else {
                    continue;
                };
                (
                    walrus,
                    form.replace("<condition>", inner),
                    format!("force condition to {to}, keeping its :="),
                )
            }
            (_, "True" | "False") => (rule, to.to_string(), format!("force condition to {to}")),
            _ => (rule, to.replace("<condition>", inner), format!("negate `{}`", shorten(text))),
        };
        out.push(Edit { span: span.clone(), replacement, rule, description });
    }
}

/// The source of `tokens` without the one pair of brackets around all of them, if any:
/// `(n := f())` gives `n := f()`, so that `not (<condition>)` adds no second pair.
fn unbracketed<'a>(code: &Code<'a>, tokens: Range<usize>) -> &'a str {
    let (first, last) = (tokens.start, tokens.end - 1);
    let wrapped = last > first + 1 && code.is(first, "(") && code.closing(first) == Some(last);
    if wrapped {
        &code.src[code.tokens[first].span.end..code.tokens[last].span.start]
    } else {
        code.source_of(tokens)
    }
}
