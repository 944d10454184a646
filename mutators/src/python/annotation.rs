//! Python type annotations: which tokens are types (parameter, return and variable annotations, type parameters, a `type` alias's value), never mutated.

use std::ops::Range;

use super::structure::{Code, LogicalLine, Role};
use super::tokenize::Kind;

impl Code<'_> {
    /// Marks the types of signatures, annotated assignments and `type` aliases.
    pub(super) fn mark_annotations(&mut self) {
        for line in 0..self.lines.len() {
            let LogicalLine { tokens, header, statements } = self.lines[line].clone();
            if let Some(header) = header.filter(|h| self.is(h.keyword, "def")) {
                self.mark_signature(header.keyword + 1..header.colon.unwrap_or(tokens.end));
            }
            for statement in statements {
                self.mark_variable_annotation(statement);
            }
        }
    }

    /// `name[type params](params) -> return`: type parameters, parameter annotations (between
    /// a parameter's `:` and its `=`, `,` or `)`) and the return annotation.
    fn mark_signature(&mut self, signature: Range<usize>) {
        let mut i = signature.start + 1;
        if i < signature.end && self.is(i, "[") {
            let close = self.closing(i).unwrap_or(signature.end - 1).min(signature.end - 1);
            self.roles[i..=close].fill(Role::Annotation);
            i = close + 1;
        }
        if i >= signature.end || !self.is(i, "(") {
            return;
        }
        let close = self.closing(i).unwrap_or(signature.end).min(signature.end);
        #[derive(PartialEq)]
        enum Part {
            Name,
            Annotation,
            Default,
        }
        let mut depth = 0usize;
        let mut part = Part::Name;
        for j in i + 1..close {
            match self.text(j) {
                _ if self.kind(j) != Kind::Op => {}
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                ":" if depth == 0 && part == Part::Name => {
                    part = Part::Annotation;
                    continue;
                }
                "=" if depth == 0 => part = Part::Default,
                "," if depth == 0 => part = Part::Name,
                _ => {}
            }
            if part == Part::Annotation {
                self.roles[j] = Role::Annotation;
            }
        }
        if close + 1 < signature.end && self.is(close + 1, "->") {
            self.roles[close + 2..signature.end].fill(Role::Annotation);
        }
    }

    /// `target: type [= value]` (outside brackets, before any `=` or `lambda`), and
    /// `type Alias[params] = type`.
    fn mark_variable_annotation(&mut self, statement: Range<usize>) {
        let first = statement.start;
        let starts_target =
            (self.kind(first) == Kind::Name && !self.is_keyword(first)) || self.is(first, "(");
        if !starts_target {
            return;
        }
        let is_alias = self.is(first, "type") && statement.len() > 2 && self.kind(first + 1) == Kind::Name;
        let mut depth = 0usize;
        let mut annotation: Option<usize> = None;
        for i in statement.clone() {
            match self.text(i) {
                _ if self.kind(i) == Kind::String || self.kind(i) == Kind::Number => {}
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ if depth > 0 => {}
                "lambda" => return,
                ":" if annotation.is_none() && !is_alias => annotation = Some(i + 1),
                "=" if is_alias => {
                    self.roles[first + 2..statement.end].fill(Role::Annotation);
                    return;
                }
                "=" => {
                    if let Some(start) = annotation {
                        self.roles[start..i].fill(Role::Annotation);
                    }
                    return;
                }
                _ => {}
            }
        }
        if let Some(start) = annotation {
            self.roles[start..statement.end].fill(Role::Annotation);
        }
    }
}
