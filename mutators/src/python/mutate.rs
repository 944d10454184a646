//! The Python mutation rules: which tokens and statements of the wanted lines become which edits.

use std::collections::HashSet;
use std::ops::Range;

use super::fstring::{self, Part};
use super::structure::{Code, Role};
use super::tokenize::{self, Kind};
use super::{conditions, match_arms};
use crate::catalog::{self, Mutator, Rule, PYTHON};
use crate::text::{format_like, shorten};
use crate::Edit;

/// Statements that are never deleted: no-ops, control flow handled elsewhere, declarations.
const NEVER_DELETED: &[&str] =
    &["pass", "return", "import", "from", "global", "nonlocal", "assert", "break", "continue"];

/// Every edit starting on a line marked in `wanted` (indexed by line number).
pub(crate) fn edits(code: &Code, wanted: &[bool]) -> Vec<Edit> {
    let mut rules =
        Rules { code, nonlocals: nonlocal_names(code), in_field: false, out: match_arms::edits(code) };
    let is_wanted = |i: usize| wanted.get(code.line_of(i)).copied().unwrap_or(false);
    for line in &code.lines {
        // Statement rules may edit a part starting on a later line than the statement
        // (`return \` + newline + `x`): try any statement touching a wanted line, filter after.
        let touches_wanted_line = line.tokens.clone().any(is_wanted);
        if !touches_wanted_line {
            continue;
        }
        for i in line.tokens.clone().filter(|&i| is_wanted(i)) {
            rules.token(i, line.tokens.clone());
        }
        rules.out.extend(conditions::edits(code, line));
        for statement in &line.statements {
            rules.statement(statement.clone());
        }
    }
    rules.out.retain(|edit| wanted.get(code.index.line(edit.span.start)).copied().unwrap_or(false));
    rules.out
}

struct Rules<'c, 'a> {
    code: &'c Code<'a>,
    /// Names some `nonlocal` statement declares.
    nonlocals: HashSet<&'a str>,
    /// Whether `code` is the expression of an f-string's replacement field, whose strings
    /// are left alone (a new quote there may close the f-string before Python 3.12).
    in_field: bool,
    out: Vec<Edit>,
}

/// Every name declared `nonlocal` anywhere in the file.
fn nonlocal_names<'a>(code: &Code<'a>) -> HashSet<&'a str> {
    let statements = code.lines.iter().flat_map(|line| line.statements.iter());
    let declarations = statements.filter(|s| code.is(s.start, "nonlocal"));
    declarations
        .flat_map(|s| s.clone().skip(1).filter(|&i| code.kind(i) == Kind::Name).map(|i| code.text(i)))
        .collect()
}

impl Rules<'_, '_> {
    fn push(&mut self, span: Range<usize>, replacement: &str, rule: &'static Rule, description: String) {
        let replacement = replacement.to_string();
        self.out.push(Edit { span, replacement, rule, description });
    }

    /// One edit per catalog target of `from`; an empty target removes the token.
    fn swaps(&mut self, mutator: Mutator, from: &str, span: Range<usize>) {
        let Some(rule) = catalog::lookup(PYTHON, mutator, from) else { return };
        for to in rule.to {
            let (span, description) = if to.is_empty() {
                (self.with_trailing_blanks(span.clone()), removal(from))
            } else {
                (span.clone(), format!("replace {from} with {to}"))
            };
            self.push(span, to, rule, description);
        }
    }

    fn token(&mut self, i: usize, line: Range<usize>) {
        if matches!(self.code.roles[i], Role::Pattern | Role::BareString | Role::Annotation) {
            return;
        }
        match self.code.kind(i) {
            Kind::Op => self.operator(i, line),
            Kind::Name => self.keyword(i, line),
            Kind::Number => self.number(i),
            Kind::String => self.string(i),
            _ => {}
        }
    }

    fn operator(&mut self, i: usize, line: Range<usize>) {
        let code = self.code;
        let (text, span) = (code.text(i), code.tokens[i].span.clone());
        let binary = i > line.start && self.ends_operand(i - 1);
        let family = if binary { Mutator::ArithmeticOperator } else { Mutator::UnaryOperator };
        for mutator in
            [family, Mutator::BitwiseOperator, Mutator::ComparisonOperator, Mutator::AssignmentOperator]
        {
            self.swaps(mutator, text, span.clone());
        }
    }

    /// Whether token `i` can end an operand, making the operator after it binary.
    fn ends_operand(&self, i: usize) -> bool {
        let code = self.code;
        match code.kind(i) {
            Kind::Number | Kind::String => true,
            Kind::Name => !code.is_keyword(i),
            Kind::Op => matches!(code.text(i), ")" | "]" | "}" | "..."),
            _ => false,
        }
    }

    fn keyword(&mut self, i: usize, line: Range<usize>) {
        let code = self.code;
        let span = code.tokens[i].span.clone();
        let next_is = |text: &str| i + 1 < line.end && code.is(i + 1, text);
        let prev_is = |text: &str| i > line.start && code.is(i - 1, text);
        match code.text(i) {
            "and" | "or" => self.swaps(Mutator::BooleanOperator, code.text(i), span),
            "True" | "False" => self.swaps(Mutator::BooleanLiteral, code.text(i), span),
            "break" | "continue" => self.swaps(Mutator::LoopControl, code.text(i), span),
            "is" if next_is("not") => self.swaps(Mutator::IdentityOperator, "is not", code.span(i..i + 2)),
            "is" => self.swaps(Mutator::IdentityOperator, "is", span),
            "in" if code.roles[i] == Role::LoopIn || prev_is("not") => {}
            "in" => self.swaps(Mutator::MembershipOperator, "in", span),
            "not" if prev_is("is") => {}
            "not" if next_is("in") => self.swaps(Mutator::MembershipOperator, "not in", code.span(i..i + 2)),
            "not" => self.swaps(Mutator::UnaryOperator, "not", span),
            _ => {}
        }
    }

    fn number(&mut self, i: usize) {
        let (text, span) = (self.code.text(i), self.code.tokens[i].span.clone());
        let Some(value) = NumberValue::parse(text) else { return };
        let (from, computed) = match value {
            NumberValue::Int(0) => ("<integer 0>", None),
            NumberValue::Int(n) => ("<integer n>", n.checked_add(1).map(|m| format_like(text, m))),
            NumberValue::Float(0.0) => ("<float 0.0>", None),
            NumberValue::Float(_) => ("<float x>", None),
        };
        let Some(rule) = catalog::lookup(PYTHON, Mutator::NumberLiteral, from) else { return };
        for to in rule.to {
            let replacement = match (*to, &computed) {
                ("n + 1", Some(next)) => next.as_str(),
                ("n + 1", None) => continue,
                (literal, _) => literal,
            };
            let description = format!("replace {text} with {replacement}");
            self.push(span.clone(), replacement, rule, description);
        }
    }

    fn string(&mut self, i: usize) {
        let (text, span) = (self.code.text(i), self.code.tokens[i].span.clone());
        let quote_at = text.find(['"', '\'']).unwrap_or(0);
        let prefix = &text[..quote_at];
        if self.in_field {
            return;
        }
        if prefix.contains(['f', 'F']) {
            let Some(parts) = fstring::parts(text) else { return };
            if parts.iter().any(|part| matches!(part, Part::Expression(_))) {
                return self.fstring(span.start, text, &parts);
            }
        }
        let body = text[quote_at..].trim_matches(['"', '\'']);
        let from = if body.is_empty() { "<empty string>" } else { "<non-empty string>" };
        let Some(rule) = catalog::lookup(PYTHON, Mutator::StringLiteral, from) else { return };
        for to in rule.to {
            let replacement = format!("{prefix}{to}");
            let description = format!("replace {} with {replacement}", shorten(text));
            self.push(span.clone(), &replacement, rule, description);
        }
    }

    /// Each run of text of an f-string removed; each field's expression mutated as code.
    fn fstring(&mut self, start: usize, text: &str, parts: &[Part]) {
        let rule = catalog::lookup(PYTHON, Mutator::StringLiteral, "<text of an f-string>");
        for part in parts {
            match part {
                Part::Text(range) => {
                    let original = &text[range.clone()];
                    for (rule, to) in rule.iter().flat_map(|rule| rule.to.iter().map(move |to| (*rule, *to)))
                    {
                        let replacement = format!("{to}{}", line_breaks_in_string(original));
                        let description = format!("remove {}", shorten(&format!("{original:?}")));
                        self.push(start + range.start..start + range.end, &replacement, rule, description);
                    }
                }
                Part::Expression(range) => self.field(start + range.start, &text[range.clone()]),
            }
        }
    }

    /// The edits of a replacement field's expression (at `start`), read in brackets as
    /// Python reads it; none when it does not tokenize.
    fn field(&mut self, start: usize, expression: &str) {
        let bracketed = format!("({expression})");
        let Ok(tokens) = tokenize::tokenize(&bracketed) else { return };
        let code = Code::new(&bracketed, tokens);
        let mut inner = Rules { code: &code, nonlocals: HashSet::new(), in_field: true, out: Vec::new() };
        for line in &code.lines {
            for i in line.tokens.clone() {
                inner.token(i, line.tokens.clone());
            }
            inner.out.extend(conditions::edits(&code, line));
        }
        for edit in inner.out {
            let original = &bracketed[edit.span.clone()];
            // A field may span lines only in brackets or a triple-quoted string: line breaks
            // stay as they are, no backslash (which a field may not hold before Python 3.12).
            let replacement = format!("{}{}", edit.replacement, line_breaks_in_string(original));
            let span = start + edit.span.start - 1..start + edit.span.end - 1;
            self.out.push(Edit { span, replacement, ..edit });
        }
    }

    fn statement(&mut self, statement: Range<usize>) {
        let code = self.code;
        if code.roles[statement.start] == Role::BareString {
            return;
        }
        let shape = Assignment::of(code, statement.clone());
        if code.is(statement.start, "return") {
            self.value_to_none(Mutator::ReturnValue, "return <value>", statement.start + 1..statement.end);
        }
        if shape.single_targets {
            // A `type` alias's value is a type, which is never mutated.
            let alias = |&last_equals: &usize| code.roles.get(last_equals + 1) == Some(&Role::Annotation);
            if let Some(&last_equals) = shape.equals.last().filter(|e| !alias(e)) {
                self.value_to_none(Mutator::NoneValue, "<target> = <value>", last_equals + 1..statement.end);
            }
        }
        if is_deletable(code, statement.clone(), &shape) && !self.binds_nonlocal(statement.clone(), &shape) {
            let rule = catalog::lookup(PYTHON, Mutator::StatementDeletion, "<simple statement>");
            for (rule, to) in rule.iter().flat_map(|rule| rule.to.iter().map(move |to| (*rule, to))) {
                self.push(code.span(statement.clone()), to, rule, "delete statement".into());
            }
        }
    }

    /// `x = ...`, `x, y = ...`, `x += ...` where `x` is declared `nonlocal` somewhere: this
    /// may be the only binding the `nonlocal` refers to, and deleting it would not compile.
    fn binds_nonlocal(&self, statement: Range<usize>, shape: &Assignment) -> bool {
        let code = self.code;
        let augmented = statement.len() > 1
            && !catalog::targets(PYTHON, Mutator::AssignmentOperator, code.text(statement.start + 1))
                .is_empty();
        let targets_end = match shape.equals.last() {
            Some(&last_equals) => last_equals,
            None if augmented => statement.start + 1,
            None => return false,
        };
        (statement.start..targets_end).any(|i| {
            let attribute = i > statement.start && code.is(i - 1, ".");
            code.kind(i) == Kind::Name && !attribute && self.nonlocals.contains(code.text(i))
        })
    }

    /// Replaces a value with `None` unless it already is `None`; a returned `True` or
    /// `False` is left to the flip of the literal (`None` would act as `False`, or stand for it).
    fn value_to_none(&mut self, mutator: Mutator, from: &str, value: Range<usize>) {
        let code = self.code;
        if value.is_empty() || (value.len() == 1 && code.is(value.start, "None")) {
            return;
        }
        let boolean = value.len() == 1 && (code.is(value.start, "True") || code.is(value.start, "False"));
        if boolean && mutator == Mutator::ReturnValue {
            return;
        }
        let original = code.source_of(value.clone());
        let Some(rule) = catalog::lookup(PYTHON, mutator, from) else { return };
        for to in rule.to {
            let description = format!("replace `{}` with {to}", shorten(original));
            self.push(code.span(value.clone()), to, rule, description);
        }
    }

    /// The span widened over the blanks after it, so `not x` becomes `x`, not ` x`.
    fn with_trailing_blanks(&self, span: Range<usize>) -> Range<usize> {
        let rest = &self.code.src[span.end..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        span.start..span.end + blanks
    }
}

/// The line breaks of `text`, each after the backslash that escaped it, if any: what a
/// replacement inside a string or brackets adds to keep every line where it was.
fn line_breaks_in_string(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !matches!(c, '\n' | '\r') {
            continue;
        }
        if text[..at].ends_with('\\') {
            out.push('\\');
        }
        out.push(c);
        if c == '\r' && chars.peek().is_some_and(|&(_, next)| next == '\n') {
            chars.next();
            out.push('\n');
        }
    }
    out
}

fn removal(from: &str) -> String {
    if from == "not" {
        "remove not".to_string()
    } else {
        format!("remove unary {from}")
    }
}

/// The `=` signs of a simple statement, outside brackets and before any `lambda`.
struct Assignment {
    equals: Vec<usize>,
    /// `target: annotation` before any `=`.
    annotated: bool,
    /// Every target is one name, attribute or subscript (no `a, b = ...`, no `*a = ...`).
    single_targets: bool,
}

impl Assignment {
    fn of(code: &Code, statement: Range<usize>) -> Self {
        let mut shape = Assignment { equals: Vec::new(), annotated: false, single_targets: true };
        let mut depth = 0usize;
        let mut target_start = statement.start;
        let mut target_has_comma = false;
        for i in statement {
            if code.kind(i) != Kind::Op && code.kind(i) != Kind::Name {
                continue;
            }
            match code.text(i) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ if depth > 0 => {}
                "lambda" => break,
                "," => target_has_comma = true,
                ":" if shape.equals.is_empty() => shape.annotated = true,
                "=" => {
                    let named = code.kind(target_start) == Kind::Name && !code.is_keyword(target_start);
                    shape.single_targets &= named && !target_has_comma;
                    shape.equals.push(i);
                    target_start = i + 1;
                    target_has_comma = false;
                }
                _ => {}
            }
        }
        shape
    }
}

fn is_deletable(code: &Code, statement: Range<usize>, shape: &Assignment) -> bool {
    let first = code.text(statement.start);
    let keyword_kept = code.kind(statement.start) == Kind::Name && NEVER_DELETED.contains(&first);
    let ellipsis = statement.len() == 1 && first == "...";
    let annotation_only = shape.annotated && shape.equals.is_empty();
    !(keyword_kept || ellipsis || annotation_only)
}

enum NumberValue {
    Int(u128),
    Float(f64),
}

impl NumberValue {
    /// Integers and floats; imaginary numbers and integers beyond u128 give `None`.
    fn parse(text: &str) -> Option<Self> {
        let clean: String = text.chars().filter(|&c| c != '_').collect::<String>().to_ascii_lowercase();
        if clean.ends_with('j') {
            return None;
        }
        let radix = match clean.get(..2) {
            Some("0x") => 16,
            Some("0o") => 8,
            Some("0b") => 2,
            _ => 10,
        };
        if radix != 10 {
            return u128::from_str_radix(&clean[2..], radix).ok().map(NumberValue::Int);
        }
        if clean.contains(['.', 'e']) {
            return clean.parse().ok().map(NumberValue::Float);
        }
        clean.parse().ok().map(NumberValue::Int)
    }
}
