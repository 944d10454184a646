//! A Rust file parsed by syn, with every token's byte range in the original text and its comments.

use std::ops::Range;
use std::str::FromStr;

use proc_macro2::{LineColumn, Span, TokenStream, TokenTree};
use syn::spanned::Spanned;

use crate::text::LineIndex;
use crate::MutateError;

/// The source text and how to turn proc-macro2 spans into byte ranges of it.
pub(crate) struct Source<'a> {
    pub text: &'a str,
    pub index: LineIndex,
    /// Where the text syn parsed starts: after a byte order mark and a `#!` line, which
    /// `syn::parse_file` also leaves out.
    base: usize,
    /// Where each line of the parsed text starts as proc-macro2 counts lines (after `\n`
    /// only), and whether it is ASCII, so that a character column is a byte offset.
    lines: Vec<(usize, bool)>,
}

impl<'a> Source<'a> {
    fn new(text: &'a str) -> Self {
        let base = code_start(text);
        let mut lines = Vec::new();
        let mut start = 0;
        for line in text[base..].split_inclusive('\n') {
            lines.push((start, line.is_ascii()));
            start += line.len();
        }
        lines.push((start, true));
        Source { text, index: LineIndex::new(text), base, lines }
    }

    /// The text syn parses.
    fn code(&self) -> &'a str {
        &self.text[self.base..]
    }

    /// The byte range of a span of a token of this file. (proc-macro2's own `byte_range`
    /// goes through a cache in a B-tree and takes a quarter of the whole time.)
    pub(crate) fn range(&self, span: Span) -> Range<usize> {
        self.offset(span.start())..self.offset(span.end())
    }

    /// The byte offset of a proc-macro2 position: 1-based line, 0-based column in characters.
    fn offset(&self, at: LineColumn) -> usize {
        let (start, ascii) = self.lines[at.line - 1];
        let within = if ascii {
            at.column
        } else {
            let line = &self.code()[start..];
            line.char_indices().nth(at.column).map_or(line.len(), |(i, _)| i)
        };
        self.base + start + within
    }

    /// The byte range a syntax tree node covers, from its first token to its last.
    pub(crate) fn node(&self, node: &impl Spanned) -> Range<usize> {
        self.range(node.span())
    }

    /// The 1-based line holding the byte at `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.index.line(offset)
    }
}

/// Past the byte order mark and a shebang line (a `#!` not opening an inner attribute `#![`).
pub(crate) fn code_start(text: &str) -> usize {
    let base = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let rest = &text[base..];
    let is_shebang = rest.starts_with("#!") && !rest[2..].trim_start().starts_with('[');
    if is_shebang {
        base + rest.find('\n').unwrap_or(rest.len())
    } else {
        base
    }
}

/// What a token is, for telling code lines from comment lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A name, literal or operator.
    Code,
    /// `;`, `,` or a bracket: alone on a line they make no executable line.
    Delimiter,
    /// Part of a doc comment, which the lexer turns into `#[doc = "..."]` tokens.
    Doc,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub span: Range<usize>,
    pub kind: Kind,
}

/// A parsed file: its syntax tree and its tokens in source order.
pub(crate) struct Parsed<'a> {
    pub source: Source<'a>,
    pub file: syn::File,
    pub tokens: Vec<Token>,
}

/// Parses `text`; a file that does not lex or parse is a `MutateError::Syntax`.
pub(crate) fn parse(text: &str) -> Result<Parsed<'_>, MutateError> {
    let source = Source::new(text);
    let stream = TokenStream::from_str(source.code()).map_err(|err| {
        let message =
            "unbalanced bracket, unterminated literal or comment, or a character Rust does not allow";
        syntax_error(&source, err.span(), message.to_string())
    })?;
    let mut tokens = Vec::new();
    collect_tokens(&source, stream.clone(), &mut tokens);
    let file =
        syn::parse2::<syn::File>(stream).map_err(|err| syntax_error(&source, err.span(), err.to_string()))?;
    Ok(Parsed { source, file, tokens })
}

/// An error at `span`; syn reports the end of the input with no position, put on the last line.
fn syntax_error(source: &Source, span: Span, message: String) -> MutateError {
    let line = if span.source_text().is_some() {
        source.line(source.range(span).start)
    } else {
        source.line(source.text.trim_end().len())
    };
    MutateError::Syntax { line, message }
}

fn collect_tokens(source: &Source, stream: TokenStream, out: &mut Vec<Token>) {
    for tree in stream {
        match tree {
            TokenTree::Group(group) => {
                out.push(token(source, group.span_open(), Kind::Delimiter));
                collect_tokens(source, group.stream(), out);
                out.push(token(source, group.span_close(), Kind::Delimiter));
            }
            TokenTree::Punct(punct) if matches!(punct.as_char(), ';' | ',') => {
                out.push(token(source, punct.span(), Kind::Delimiter));
            }
            other => out.push(token(source, other.span(), Kind::Code)),
        }
    }
}

/// A token; every token made from a doc comment spans the comment's text.
fn token(source: &Source, span: Span, kind: Kind) -> Token {
    let span = source.range(span);
    let text = &source.text[span.clone()];
    let kind = if text.starts_with("//") || text.starts_with("/*") { Kind::Doc } else { kind };
    Token { span, kind }
}

impl Parsed<'_> {
    /// The byte ranges of the `//` comments (not doc comments), without their line break.
    /// They are found in the gaps between tokens, where nothing but blanks and comments is.
    pub(crate) fn line_comments(&self) -> Vec<Range<usize>> {
        let mut comments = Vec::new();
        let mut gap_start = self.source.base;
        for token in &self.tokens {
            if token.span.start > gap_start {
                line_comments_in(self.source.text, gap_start..token.span.start, &mut comments);
            }
            gap_start = gap_start.max(token.span.end);
        }
        line_comments_in(self.source.text, gap_start..self.source.text.len(), &mut comments);
        comments
    }

    /// Lines where a token starts (code or doc comment), indexed by line number.
    pub(crate) fn token_lines(&self) -> Vec<bool> {
        let mut mask = vec![false; self.source.index.len() + 1];
        for token in &self.tokens {
            mask[self.source.line(token.span.start)] = true;
        }
        mask
    }

    /// Lines where a code token inside one of `bodies` starts, indexed by line number.
    pub(crate) fn code_lines_within(&self, bodies: &[Range<usize>]) -> Vec<bool> {
        let mut mask = vec![false; self.source.index.len() + 1];
        for body in bodies {
            let first = self.tokens.partition_point(|t| t.span.start < body.start);
            let inside = self.tokens[first..].iter().take_while(|t| t.span.end <= body.end);
            for token in inside.filter(|t| t.kind == Kind::Code) {
                mask[self.source.line(token.span.start)] = true;
            }
        }
        mask
    }
}

/// Pushes the `//` comments in `gap`, a stretch of blanks and comments, skipping block comments.
fn line_comments_in(text: &str, gap: Range<usize>, out: &mut Vec<Range<usize>>) {
    let mut at = gap.start;
    while at < gap.end {
        let rest = &text[at..gap.end];
        if rest.starts_with("//") {
            let end = at + rest.find('\n').unwrap_or(rest.len());
            let end = if text[..end].ends_with('\r') { end - 1 } else { end };
            out.push(at..end);
            at = end;
        } else if rest.starts_with("/*") {
            at += block_comment_len(rest);
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
}

/// The length of the (possibly nested) block comment `text` starts with.
fn block_comment_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match &bytes[i..(i + 2).min(bytes.len())] {
            b"/*" => {
                depth += 1;
                i += 2;
            }
            b"*/" => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// proc-macro2 keeps the text of every file parsed on a thread, for span positions, until
/// told to forget: this forgets on the way out of a call, so memory stays flat over many files.
/// Spans made on this thread before then become invalid.
pub(crate) struct SpanScope;

impl Drop for SpanScope {
    fn drop(&mut self) {
        proc_macro2::extra::invalidate_current_thread_spans();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comments(text: &str) -> Vec<&str> {
        let parsed = parse(text).unwrap();
        parsed.line_comments().into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn line_comments_skip_strings_doc_comments_and_block_comments() {
        let text = "/// doc // not\nfn f() { // one\r\n  let s = \"// no\"; /* // nested /* */ no */ g(); // two\n}\n// three";
        assert_eq!(comments(text), ["// one", "// two", "// three"]);
    }

    #[test]
    fn bom_and_shebang_keep_byte_offsets() {
        let text = "\u{feff}#!/usr/bin/env run-cargo-script\nfn f() { x }\n";
        let parsed = parse(text).unwrap();
        let x = parsed.tokens.iter().find(|t| &text[t.span.clone()] == "x");
        assert_eq!(x.unwrap().span.start, text.find('x').unwrap());
        let inner_attribute = "#![allow(dead_code)]\nfn f() {}\n";
        assert_eq!(parse(inner_attribute).unwrap().file.attrs.len(), 1);
    }

    #[test]
    fn syntax_errors_have_lines() {
        let line = |text| match parse(text) {
            Err(MutateError::Syntax { line, .. }) => line,
            _ => panic!("no syntax error in {text:?}"),
        };
        assert_eq!(line("fn f() {\n    let x = ;\n}\n"), 2);
        assert_eq!(line("fn f() {\n    \"abc\n}\n"), 2);
        assert_eq!(line("fn f() {}\nfn\n\n"), 2);
        assert_eq!(line("fn f() {\n\n"), 1);
    }

    #[test]
    fn code_lines_leave_out_delimiters_and_doc_comments() {
        let text = "fn f() {\n    g(\n        1,\n    );\n    /// doc\n    h();\n}\n";
        let parsed = parse(text).unwrap();
        let body = text.find('{').unwrap()..text.rfind('}').unwrap() + 1;
        let mask = parsed.code_lines_within(&[body]);
        let lines: Vec<usize> = (1..mask.len()).filter(|&l| mask[l]).collect();
        assert_eq!(lines, [2, 3, 6]);
    }
}
