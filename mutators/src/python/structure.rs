//! Python statement structure over tokens: logical lines, compound headers, simple statements.

use std::ops::Range;

use super::tokenize::{Kind, Token};
use crate::text::LineIndex;

/// Hard keywords; `True`, `False` and `None` are values and listed apart.
const KEYWORDS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
    "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not",
    "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// Keywords that open a compound statement header.
const COMPOUND: &[&str] =
    &["if", "elif", "else", "while", "for", "try", "except", "finally", "with", "def", "class"];

/// What a token takes part in, as far as mutation cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Code,
    /// Part of a statement made only of a string (a docstring): not executable, never mutated.
    BareString,
    /// Inside a `case` pattern: patterns are not expressions, nothing there is mutated.
    Pattern,
    /// The `in` of a `for` loop or comprehension, which is no membership test.
    LoopIn,
    /// `match` or `case` used as a keyword.
    SoftKeyword,
    /// A type: a parameter, return or variable annotation, type parameters, a `type` alias's
    /// value. Never mutated.
    Annotation,
}

/// A compound statement header: `keyword ... :`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// Index of the keyword token (`def` in `async def`).
    pub keyword: usize,
    /// Index of the header's colon, if it has one.
    pub colon: Option<usize>,
}

/// One logical line: an optional header, then simple statements separated by `;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogicalLine {
    pub tokens: Range<usize>,
    pub header: Option<Header>,
    /// Token ranges of the simple statements (after the header's colon, if any).
    pub statements: Vec<Range<usize>>,
}

/// A tokenized file and its statement structure. Token indices refer to `tokens`,
/// which holds names, numbers, strings and operators only.
pub(crate) struct Code<'a> {
    pub src: &'a str,
    pub index: LineIndex,
    pub tokens: Vec<Token>,
    pub comments: Vec<Token>,
    pub lines: Vec<LogicalLine>,
    pub roles: Vec<Role>,
}

impl<'a> Code<'a> {
    pub(crate) fn new(src: &'a str, all_tokens: Vec<Token>) -> Self {
        let mut code = Code {
            src,
            index: LineIndex::new(src),
            tokens: Vec::new(),
            comments: Vec::new(),
            lines: Vec::new(),
            roles: Vec::new(),
        };
        let line_ranges = code.split_logical_lines(all_tokens);
        code.roles = vec![Role::Code; code.tokens.len()];
        code.lines = code.shape_lines(line_ranges);
        code.mark_loop_ins();
        code.mark_bare_strings();
        code.mark_annotations();
        code
    }

    pub(crate) fn text(&self, i: usize) -> &'a str {
        &self.src[self.tokens[i].span.clone()]
    }

    pub(crate) fn kind(&self, i: usize) -> Kind {
        self.tokens[i].kind
    }

    /// Whether token `i` is the operator or name `text`.
    pub(crate) fn is(&self, i: usize, text: &str) -> bool {
        self.tokens[i].kind != Kind::String && self.text(i) == text
    }

    /// The 1-based line where token `i` starts.
    pub(crate) fn line_of(&self, i: usize) -> usize {
        self.index.line(self.tokens[i].span.start)
    }

    /// Byte span from the start of the first token to the end of the last one.
    pub(crate) fn span(&self, tokens: Range<usize>) -> Range<usize> {
        self.tokens[tokens.start].span.start..self.tokens[tokens.end - 1].span.end
    }

    pub(crate) fn source_of(&self, tokens: Range<usize>) -> &'a str {
        &self.src[self.span(tokens)]
    }

    /// A hard keyword (not `True`, `False`, `None`), or a soft keyword used as one.
    pub(crate) fn is_keyword(&self, i: usize) -> bool {
        self.kind(i) == Kind::Name && (KEYWORDS.contains(&self.text(i)) || self.roles[i] == Role::SoftKeyword)
    }

    /// The first and last line of each logical line, in order.
    pub(crate) fn logical_line_spans(&self) -> Vec<std::ops::RangeInclusive<usize>> {
        self.lines
            .iter()
            .filter(|line| !line.tokens.is_empty())
            .map(|line| self.line_of(line.tokens.start)..=self.line_of(line.tokens.end - 1))
            .collect()
    }

    /// Whether the executable lines are marked in a vector indexed by line number.
    pub(crate) fn executable_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.index.len() + 1];
        for (i, role) in self.roles.iter().enumerate() {
            if *role != Role::BareString {
                mask[self.line_of(i)] = true;
            }
        }
        mask
    }

    /// Keeps significant tokens and comments; returns each logical line's token range.
    fn split_logical_lines(&mut self, all_tokens: Vec<Token>) -> Vec<Range<usize>> {
        let mut ranges = Vec::new();
        let mut start = 0;
        for token in all_tokens {
            match token.kind {
                Kind::Comment => self.comments.push(token),
                Kind::Nl => {}
                Kind::Newline => {
                    if self.tokens.len() > start {
                        ranges.push(start..self.tokens.len());
                    }
                    start = self.tokens.len();
                }
                _ => self.tokens.push(token),
            }
        }
        ranges
    }

    fn shape_lines(&mut self, ranges: Vec<Range<usize>>) -> Vec<LogicalLine> {
        let mut matches = MatchBlocks::default();
        ranges
            .into_iter()
            .map(|tokens| {
                let indent = self.indent_of(tokens.start);
                let is_case = matches.is_case_clause(indent) && self.is(tokens.start, "case");
                let line = self.shape_line(tokens.clone(), is_case);
                if self.is_match_header(tokens) {
                    matches.open(indent);
                }
                line
            })
            .collect()
    }

    fn shape_line(&mut self, tokens: Range<usize>, is_case: bool) -> LogicalLine {
        let Some(keyword) = self.header_keyword(tokens.clone(), is_case) else {
            let statements =
                if self.is(tokens.start, "@") { Vec::new() } else { self.split_statements(tokens.clone()) };
            return LogicalLine { tokens, header: None, statements };
        };
        let colon = self.header_colon(keyword + 1..tokens.end);
        if is_case {
            self.mark_case_pattern(keyword, colon.unwrap_or(tokens.end));
        }
        let body = colon.map_or(tokens.end, |c| c + 1)..tokens.end;
        let statements = self.split_statements(body);
        LogicalLine { tokens, header: Some(Header { keyword, colon }), statements }
    }

    /// The keyword token of a compound header opening this line, if it is one.
    fn header_keyword(&mut self, tokens: Range<usize>, is_case: bool) -> Option<usize> {
        let first = tokens.start;
        let second_is = |code: &Self, words: &[&str]| {
            first + 1 < tokens.end && words.iter().any(|w| code.is(first + 1, w))
        };
        if self.is(first, "async") && second_is(self, &["def", "for", "with"]) {
            return Some(first + 1);
        }
        if is_case || self.is_match_header(tokens.clone()) {
            self.roles[first] = Role::SoftKeyword;
            return Some(first);
        }
        let opens_compound = self.kind(first) == Kind::Name && COMPOUND.contains(&self.text(first));
        opens_compound.then_some(first)
    }

    /// `match <subject>:` — a line starting with the name `match` and ending with a colon
    /// can be nothing else, since no simple statement ends with a colon.
    fn is_match_header(&self, tokens: Range<usize>) -> bool {
        tokens.len() >= 3 && self.is(tokens.start, "match") && self.is(tokens.end - 1, ":")
    }

    /// The colon ending a header: the first one outside brackets that no `lambda` claims.
    fn header_colon(&self, tokens: Range<usize>) -> Option<usize> {
        let mut depth = 0usize;
        let mut lambdas = 0usize;
        for i in tokens {
            match self.text(i) {
                _ if self.kind(i) != Kind::Op && self.kind(i) != Kind::Name => {}
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                "lambda" if depth == 0 => lambdas += 1,
                ":" if depth == 0 && lambdas > 0 => lambdas -= 1,
                ":" if depth == 0 => return Some(i),
                _ => {}
            }
        }
        None
    }

    /// `case <pattern> [if <guard>]:` — marks the pattern tokens.
    fn mark_case_pattern(&mut self, keyword: usize, colon: usize) {
        let mut depth = 0usize;
        for i in keyword + 1..colon {
            match self.text(i) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                "if" if depth == 0 && self.kind(i) == Kind::Name => return,
                _ => {}
            }
            self.roles[i] = Role::Pattern;
        }
    }

    /// Simple statements are separated by `;` (which never appears inside brackets).
    fn split_statements(&self, tokens: Range<usize>) -> Vec<Range<usize>> {
        let mut statements = Vec::new();
        let mut start = tokens.start;
        for i in tokens.clone() {
            if self.is(i, ";") {
                statements.push(start..i);
                start = i + 1;
            }
        }
        statements.push(start..tokens.end);
        statements.retain(|s| !s.is_empty());
        statements
    }

    /// Indentation width of the line holding token `i`, tabs to multiples of 8 as Python does.
    pub(crate) fn indent_of(&self, i: usize) -> usize {
        let start = self.tokens[i].span.start;
        let line_start = self.src[..start].rfind(['\n', '\r']).map_or(0, |p| p + 1);
        self.src[line_start..start]
            .chars()
            .fold(0, |width, c| if c == '\t' { (width / 8 + 1) * 8 } else { width + 1 })
    }

    /// The index of the bracket closing the one opened at token `open`, if any.
    pub(crate) fn closing(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for i in open..self.tokens.len() {
            match self.text(i) {
                _ if self.kind(i) != Kind::Op => {}
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The last logical line of the block a header on line `line` (an index into `lines`)
    /// opens: the lines after it that are indented deeper.
    pub(crate) fn block_end(&self, line: usize) -> usize {
        let indent = self.indent_of(self.lines[line].tokens.start);
        let deeper = self.lines[line + 1..].iter().take_while(|l| self.indent_of(l.tokens.start) > indent);
        line + deeper.count()
    }

    /// The first `in` after a `for` at the same bracket depth belongs to the loop.
    fn mark_loop_ins(&mut self) {
        for line in 0..self.lines.len() {
            let mut depth = 0usize;
            let mut pending_for_depths: Vec<usize> = Vec::new();
            for i in self.lines[line].tokens.clone() {
                match self.text(i) {
                    _ if self.kind(i) == Kind::String => {}
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    "for" => pending_for_depths.push(depth),
                    "in" if pending_for_depths.last() == Some(&depth) => {
                        pending_for_depths.pop();
                        self.roles[i] = Role::LoopIn;
                    }
                    _ => {}
                }
            }
        }
    }

    /// A statement made only of strings (and parentheses) is a docstring or a bare string.
    fn mark_bare_strings(&mut self) {
        for line in 0..self.lines.len() {
            for s in 0..self.lines[line].statements.len() {
                let statement = self.lines[line].statements[s].clone();
                let only_strings = statement
                    .clone()
                    .all(|i| self.kind(i) == Kind::String || self.is(i, "(") || self.is(i, ")"));
                let has_string = statement.clone().any(|i| self.kind(i) == Kind::String);
                if only_strings && has_string {
                    self.roles[statement].fill(Role::BareString);
                }
            }
        }
    }
}

/// Open `match` blocks, to know which lines are `case` clauses: the lines of a match
/// body at the indentation of its first line.
#[derive(Default)]
struct MatchBlocks {
    /// (indentation of the `match` line, indentation of its case clauses once seen)
    open: Vec<(usize, Option<usize>)>,
}

impl MatchBlocks {
    fn is_case_clause(&mut self, indent: usize) -> bool {
        while self.open.last().is_some_and(|&(match_indent, _)| indent <= match_indent) {
            self.open.pop();
        }
        match self.open.last_mut() {
            Some((_, case_indent)) => *case_indent.get_or_insert(indent) == indent,
            None => false,
        }
    }

    fn open(&mut self, indent: usize) {
        self.open.push((indent, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::tokenize::tokenize;

    fn code(src: &str) -> Code<'_> {
        Code::new(src, tokenize(src).unwrap())
    }

    fn statements(code: &Code) -> Vec<String> {
        let mut out = Vec::new();
        for line in &code.lines {
            for s in &line.statements {
                out.push(code.source_of(s.clone()).to_string());
            }
        }
        out
    }

    #[test]
    fn headers_bodies_and_semicolons() {
        let src = "if a: b(); c = 1\nelse:\n    d = lambda x: x\nf = {1: 2}; g(x=1)\n@deco\ndef h(x: int = 1) -> int: return x\n";
        let code = code(src);
        assert_eq!(
            statements(&code),
            ["b()", "c = 1", "d = lambda x: x", "f = {1: 2}", "g(x=1)", "return x"]
        );
        let headers: Vec<&str> =
            code.lines.iter().filter_map(|l| l.header).map(|h| code.text(h.keyword)).collect();
        assert_eq!(headers, ["if", "else", "def"]);
    }

    #[test]
    fn loop_ins_are_told_from_membership_tests() {
        let code = code("for x in y:\n    z = [a in b for a in c if a in d]\n");
        let ins: Vec<(usize, Role)> = (0..code.tokens.len())
            .filter(|&i| code.is(i, "in"))
            .map(|i| (code.line_of(i), code.roles[i]))
            .collect();
        assert_eq!(ins, [(1, Role::LoopIn), (2, Role::Code), (2, Role::LoopIn), (2, Role::Code)]);
    }

    #[test]
    fn case_patterns_and_soft_keywords() {
        let src =
            "match = 1\nmatch x:\n    case -1 | 2 if y > 0:\n        case = 3\n    case _:\n        pass\n";
        let code = code(src);
        let patterns: Vec<&str> = (0..code.tokens.len())
            .filter(|&i| code.roles[i] == Role::Pattern)
            .map(|i| code.text(i))
            .collect();
        assert_eq!(patterns, ["-", "1", "|", "2", "_"]);
        let soft: Vec<usize> = (0..code.tokens.len())
            .filter(|&i| code.roles[i] == Role::SoftKeyword)
            .map(|i| code.line_of(i))
            .collect();
        assert_eq!(soft, [2, 3, 5]);
    }

    #[test]
    fn docstrings_are_bare_strings() {
        let code = code("def f():\n    \"\"\"Doc\n    more\"\"\"\n    return ('a'\n      'b')\n");
        let mask = code.executable_mask();
        let executable: Vec<usize> = (1..mask.len()).filter(|&l| mask[l]).collect();
        assert_eq!(executable, [1, 4, 5]);
    }
}
