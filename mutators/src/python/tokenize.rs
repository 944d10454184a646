//! Python 3 tokenizer: the whole file into tokens with byte spans, as Python's `tokenize` sees it.

use std::ops::Range;

use crate::text::LineIndex;
use crate::MutateError;

/// What a token is. Indentation is not tokenized: nothing here needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Identifiers and keywords alike.
    Name,
    Number,
    /// Any string literal with its prefix; an f-string is one opaque token, as in Python 3.11.
    String,
    Op,
    Comment,
    /// The end of a logical line.
    Newline,
    /// A line break that does not end a logical line (blank line, inside brackets).
    Nl,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    /// Byte range in the source.
    pub span: Range<usize>,
}

/// Operators, longest first so that the first match is the longest one.
const OPERATORS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", ":=", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<",
    ">", "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "=",
];

/// Tokenizes a whole Python source file.
pub(crate) fn tokenize(source: &str) -> Result<Vec<Token>, MutateError> {
    let mut lexer = Lexer {
        src: source,
        pos: source.strip_prefix('\u{feff}').map_or(0, |_| '\u{feff}'.len_utf8()),
        tokens: Vec::new(),
        brackets: Vec::new(),
        line_has_code: false,
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    /// Open brackets and their offsets: lines inside them continue the logical line.
    brackets: Vec<(char, usize)>,
    /// Whether the current logical line has a token other than comments.
    line_has_code: bool,
}

impl Lexer<'_> {
    fn run(&mut self) -> Result<(), MutateError> {
        while let Some(c) = self.peek() {
            let start = self.pos;
            match c {
                ' ' | '\t' | '\x0c' => self.pos += 1,
                '\n' | '\r' => self.line_break(start),
                '#' => self.comment(start),
                '\\' => self.continuation(start)?,
                '"' | '\'' => self.string(start)?,
                c if c.is_ascii_digit() => self.number(start),
                '.' if self.peek_at(1).is_some_and(|d| d.is_ascii_digit()) => self.number(start),
                c if is_name_start(c) => self.name_or_prefixed_string(start)?,
                _ => self.operator(start)?,
            }
        }
        self.finish()
    }

    fn finish(&mut self) -> Result<(), MutateError> {
        if let Some(&(open, offset)) = self.brackets.first() {
            return Err(self.error(offset, format!("'{open}' was never closed")));
        }
        if self.line_has_code {
            let end = self.src.len();
            self.push(Kind::Newline, end..end);
        }
        Ok(())
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_at(&self, chars: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(chars)
    }

    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn push(&mut self, kind: Kind, span: Range<usize>) {
        if !matches!(kind, Kind::Comment | Kind::Newline | Kind::Nl) {
            self.line_has_code = true;
        }
        self.tokens.push(Token { kind, span });
    }

    fn error(&self, offset: usize, message: String) -> MutateError {
        let line = LineIndex::new(self.src).line(offset);
        MutateError::Syntax { line, message }
    }

    /// Length in bytes of the line break at the cursor (0 when there is none).
    fn line_break_len(&self) -> usize {
        match self.rest().as_bytes() {
            [b'\r', b'\n', ..] => 2,
            [b'\r', ..] | [b'\n', ..] => 1,
            _ => 0,
        }
    }

    fn line_break(&mut self, start: usize) {
        self.pos += self.line_break_len();
        let ends_logical_line = self.brackets.is_empty() && self.line_has_code;
        if ends_logical_line {
            self.push(Kind::Newline, start..self.pos);
            self.line_has_code = false;
        } else {
            self.push(Kind::Nl, start..self.pos);
        }
    }

    fn comment(&mut self, start: usize) {
        let len = self.rest().find(['\r', '\n']).unwrap_or(self.rest().len());
        self.pos += len;
        self.push(Kind::Comment, start..self.pos);
    }

    /// A backslash joins the next physical line to this one.
    fn continuation(&mut self, start: usize) -> Result<(), MutateError> {
        self.pos += 1;
        match self.line_break_len() {
            0 if self.peek().is_none() => Err(self.error(start, "unexpected end of file after '\\'".into())),
            0 => Err(self.error(start, "unexpected character after line continuation character".into())),
            len => {
                self.pos += len;
                Ok(())
            }
        }
    }

    fn name_or_prefixed_string(&mut self, start: usize) -> Result<(), MutateError> {
        let len = self.rest().find(|c: char| !is_name_char(c)).unwrap_or(self.rest().len());
        let name = &self.src[start..start + len];
        let quote_follows = matches!(self.src[start + len..].chars().next(), Some('"' | '\''));
        if quote_follows && is_string_prefix(name) {
            self.string(start)
        } else {
            self.pos += len;
            self.push(Kind::Name, start..self.pos);
            Ok(())
        }
    }

    fn number(&mut self, start: usize) {
        self.pos = number_end(self.src, start);
        self.push(Kind::Number, start..self.pos);
    }

    fn string(&mut self, start: usize) -> Result<(), MutateError> {
        self.pos =
            string_end(self.src, start).map_err(|at| self.error(at, "unterminated string literal".into()))?;
        self.push(Kind::String, start..self.pos);
        Ok(())
    }

    fn operator(&mut self, start: usize) -> Result<(), MutateError> {
        let Some(op) = OPERATORS.iter().find(|op| self.rest().starts_with(**op)) else {
            let c = self.peek().unwrap_or_default();
            return Err(self.error(start, format!("invalid character '{c}'")));
        };
        self.pos += op.len();
        self.track_bracket(op, start)?;
        self.push(Kind::Op, start..self.pos);
        Ok(())
    }

    fn track_bracket(&mut self, op: &str, start: usize) -> Result<(), MutateError> {
        let c = op.chars().next().unwrap_or_default();
        match c {
            '(' | '[' | '{' => self.brackets.push((c, start)),
            ')' | ']' | '}' => {
                let expected = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match self.brackets.pop() {
                    Some((open, _)) if open == expected => {}
                    Some((open, _)) => {
                        let message =
                            format!("closing parenthesis '{c}' does not match opening parenthesis '{open}'");
                        return Err(self.error(start, message));
                    }
                    None => return Err(self.error(start, format!("unmatched '{c}'"))),
                }
            }
            _ => {}
        }
        Ok(())
    }
}

pub(super) fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic() || (!c.is_ascii() && !c.is_whitespace())
}

pub(super) fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit()
}

/// r, u, b, f and their combinations rb, br, fr, rf, in any case.
pub(super) fn is_string_prefix(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "r" | "u" | "b" | "f" | "br" | "rb" | "fr" | "rf")
}

/// Where the number starting at `start` ends: 1_000, 0x1F, 0o17, 0b1, 1.5, .5, 1e-3, 1j.
fn number_end(src: &str, start: usize) -> usize {
    let bytes = src.as_bytes();
    let digits_from = |mut i: usize, ok: fn(u8) -> bool| {
        while i < bytes.len() && (ok(bytes[i]) || bytes[i] == b'_') {
            i += 1;
        }
        i
    };
    let lower = |i: usize| bytes.get(i).map(|b| b.to_ascii_lowercase());
    if bytes[start] == b'0' && matches!(lower(start + 1), Some(b'x' | b'o' | b'b')) {
        return digits_from(start + 2, |b| b.is_ascii_hexdigit());
    }
    let mut i = digits_from(start, |b| b.is_ascii_digit());
    if bytes.get(i) == Some(&b'.') {
        i = digits_from(i + 1, |b| b.is_ascii_digit());
    }
    if lower(i) == Some(b'e') {
        let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
        if bytes.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
            i = digits_from(i + 1 + sign, |b| b.is_ascii_digit());
        }
    }
    if lower(i) == Some(b'j') {
        i += 1;
    }
    i
}

/// Where the string literal starting at `start` (at its prefix) ends, or the offset to
/// blame when it is never closed.
pub(super) fn string_end(src: &str, start: usize) -> Result<usize, usize> {
    let quote_at = start + src[start..].find(['"', '\'']).unwrap_or(0);
    let prefix = src[start..quote_at].to_ascii_lowercase();
    let mut scanner = StringScanner::open(src, quote_at);
    if prefix.contains('f') {
        scanner.fstring_body().map_err(|_| start)?;
    } else {
        scanner.plain_body().map_err(|_| start)?;
    }
    Ok(scanner.pos)
}

/// Scans a string body; `Err(())` means the string is not closed.
struct StringScanner<'a> {
    src: &'a str,
    pos: usize,
    quote: u8,
    triple: bool,
}

impl<'a> StringScanner<'a> {
    fn open(src: &'a str, quote_at: usize) -> Self {
        let bytes = src.as_bytes();
        let quote = bytes[quote_at];
        let triple = bytes.get(quote_at + 1) == Some(&quote) && bytes.get(quote_at + 2) == Some(&quote);
        let pos = quote_at + if triple { 3 } else { 1 };
        StringScanner { src, pos, quote, triple }
    }

    fn byte(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn next_byte(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos + 1).copied()
    }

    fn at_closing_quote(&self) -> bool {
        let bytes = &self.src.as_bytes()[self.pos..];
        let wanted = if self.triple { 3 } else { 1 };
        bytes.len() >= wanted && bytes[..wanted].iter().all(|&b| b == self.quote)
    }

    /// Steps over one character (a backslash takes the next character, even a line break, with it).
    fn step(&mut self) -> Result<(), ()> {
        match self.byte() {
            None => Err(()),
            Some(b'\n' | b'\r') if !self.triple => Err(()),
            Some(b'\\') => {
                self.pos += 1;
                if self.src.as_bytes()[self.pos..].starts_with(b"\r\n") {
                    self.pos += 2;
                    Ok(())
                } else {
                    self.advance_char()
                }
            }
            Some(_) => self.advance_char(),
        }
    }

    fn advance_char(&mut self) -> Result<(), ()> {
        let c = self.src[self.pos..].chars().next().ok_or(())?;
        self.pos += c.len_utf8();
        Ok(())
    }

    fn close(&mut self) {
        self.pos += if self.triple { 3 } else { 1 };
    }

    fn plain_body(&mut self) -> Result<(), ()> {
        while !self.at_closing_quote() {
            self.step()?;
        }
        self.close();
        Ok(())
    }

    /// An f-string, read as Python 3.12 does (replacement fields may hold any string),
    /// which agrees with Python 3.11 on every f-string 3.11 accepts.
    fn fstring_body(&mut self) -> Result<(), ()> {
        loop {
            if self.at_closing_quote() {
                self.close();
                return Ok(());
            }
            match self.byte() {
                Some(b'{') if self.next_byte() == Some(b'{') => self.pos += 2,
                // `\{x}` still holds a field: the backslash escapes nothing here.
                Some(b'\\') if self.next_byte() == Some(b'{') => self.pos += 1,
                Some(b'{') => {
                    self.pos += 1;
                    self.replacement_field()?;
                }
                _ => self.step()?,
            }
        }
    }

    /// The inside of `{...}` up to and including its closing brace.
    fn replacement_field(&mut self) -> Result<(), ()> {
        let mut depth = 0usize;
        loop {
            let byte = self.byte().ok_or(())?;
            match byte {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' => depth = depth.saturating_sub(1),
                b'}' if depth == 0 => {
                    self.pos += 1;
                    return Ok(());
                }
                b'}' => depth -= 1,
                b'"' | b'\'' => {
                    self.pos = string_end(self.src, self.pos).map_err(|_| ())?;
                    continue;
                }
                b':' if depth == 0 => {
                    self.pos += 1;
                    return self.format_spec();
                }
                b if is_name_start(char::from(b)) || b >= 0x80 => {
                    self.name_in_field()?;
                    continue;
                }
                _ => {}
            }
            self.advance_char()?;
        }
    }

    /// A name inside a replacement field, or a nested string when the name is its prefix.
    fn name_in_field(&mut self) -> Result<(), ()> {
        let rest = &self.src[self.pos..];
        let len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        let quote_follows = matches!(rest[len..].chars().next(), Some('"' | '\''));
        if quote_follows && is_string_prefix(&rest[..len]) {
            self.pos = string_end(self.src, self.pos).map_err(|_| ())?;
        } else {
            self.pos += len;
        }
        Ok(())
    }

    /// The format spec after `:`: literal text with nested fields, up to the closing brace.
    fn format_spec(&mut self) -> Result<(), ()> {
        loop {
            if self.at_closing_quote() {
                return Err(());
            }
            match self.byte() {
                Some(b'{') => {
                    self.pos += 1;
                    self.replacement_field()?;
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => self.step()?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Vec<(Kind, &str)> {
        tokenize(source).unwrap().into_iter().map(|t| (t.kind, &source[t.span])).collect()
    }

    fn kinds_of(source: &str, kind: Kind) -> Vec<&str> {
        texts(source).into_iter().filter(|(k, _)| *k == kind).map(|(_, t)| t).collect()
    }

    #[test]
    fn numbers_of_every_shape() {
        let source = "x = 1_000 + 0x1F + 0o17 + 0b1 + 1e-3 + 1j + .5 + 1. + 1.5E+3J\n";
        let numbers = kinds_of(source, Kind::Number);
        assert_eq!(numbers, ["1_000", "0x1F", "0o17", "0b1", "1e-3", "1j", ".5", "1.", "1.5E+3J"]);
    }

    #[test]
    fn longest_operators_win() {
        let source = "a **= b //= c -> d := e @ f >>= g != h ... i\n";
        let ops = kinds_of(source, Kind::Op);
        assert_eq!(ops, ["**=", "//=", "->", ":=", "@", ">>=", "!=", "..."]);
    }

    #[test]
    fn strings_with_prefixes_quotes_and_escapes() {
        let source = "s = rb'a\\'b' + Fr\"x\" + u'''a\n'b'\n''' + b\"\\\"\"\n";
        let strings = kinds_of(source, Kind::String);
        assert_eq!(strings, ["rb'a\\'b'", "Fr\"x\"", "u'''a\n'b'\n'''", "b\"\\\"\""]);
    }

    #[test]
    fn fstrings_are_one_token_even_with_nested_quotes_and_specs() {
        let source = "f'{x!r:>{w}} {d[\"k\"]} {{lit}} {y:\"^10}'\n";
        assert_eq!(kinds_of(source, Kind::String), [source.trim_end()]);
    }

    #[test]
    fn newline_ends_logical_lines_only_outside_brackets() {
        let source = "f(a,\n  b)  # c\n\nx = 1 + \\\n  2\n";
        let kinds: Vec<Kind> = texts(source).into_iter().map(|(k, _)| k).collect();
        use Kind::*;
        let expected =
            [Name, Op, Name, Op, Nl, Name, Op, Comment, Newline, Nl, Name, Op, Number, Op, Number, Newline];
        assert_eq!(kinds, expected);
    }

    #[test]
    fn errors_name_the_line() {
        let unterminated = tokenize("a = 1\nb = 'abc\n");
        assert!(matches!(unterminated, Err(MutateError::Syntax { line: 2, .. })), "{unterminated:?}");
        let triple = tokenize("a = 1\nb = '''abc\n\n");
        assert!(matches!(triple, Err(MutateError::Syntax { line: 2, .. })), "{triple:?}");
        let unclosed = tokenize("x = 1\ny = (1,\n2\n");
        assert!(matches!(unclosed, Err(MutateError::Syntax { line: 2, .. })), "{unclosed:?}");
        let mismatched = tokenize("x = (1]\n");
        assert!(matches!(mismatched, Err(MutateError::Syntax { line: 1, .. })), "{mismatched:?}");
        let stray = tokenize("x = 1\n\ny = $\n");
        assert!(matches!(stray, Err(MutateError::Syntax { line: 3, .. })), "{stray:?}");
    }
}
