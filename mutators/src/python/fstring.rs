//! The parts of an f-string token: runs of literal text and the expressions of its replacement fields.

use std::ops::Range;

use super::tokenize::{is_name_char, is_name_start, is_string_prefix, string_end};

/// A piece of an f-string, as a byte range into the token's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// Literal text between fields (`{{` and `}}` included): what the string says.
    Text(Range<usize>),
    /// The expression of a replacement field, without its `=`, `!conversion` or `:spec`.
    Expression(Range<usize>),
}

/// The parts of `token`, an f-string with its prefix and quotes, in order; `None` when it
/// does not read as one (the tokenizer and this reader disagree).
pub(super) fn parts(token: &str) -> Option<Vec<Part>> {
    let quote_at = token.find(['"', '\''])?;
    let raw = token[..quote_at].contains(['r', 'R']);
    let quote = &token[quote_at..=quote_at];
    let quotes = if token[quote_at..].starts_with(&quote.repeat(3)) { 3 } else { 1 };
    let body_end = token.len().checked_sub(quotes).filter(|&end| end >= quote_at + quotes)?;
    let mut reader = Reader { src: &token[..body_end], pos: quote_at + quotes, raw, parts: Vec::new() };
    reader.body()?;
    Some(reader.parts)
}

struct Reader<'a> {
    /// The token up to its closing quotes.
    src: &'a str,
    pos: usize,
    raw: bool,
    parts: Vec<Part>,
}

impl Reader<'_> {
    fn byte_at(&self, pos: usize) -> Option<u8> {
        self.src.as_bytes().get(pos).copied()
    }

    fn body(&mut self) -> Option<()> {
        let mut text_start = self.pos;
        while let Some(byte) = self.byte_at(self.pos) {
            match (byte, self.byte_at(self.pos + 1)) {
                (b'{', Some(b'{')) | (b'}', Some(b'}')) => self.pos += 2,
                // `\{x}` holds a field: the backslash escapes nothing there.
                (b'\\', Some(b'{')) => self.pos += 1,
                (b'\\', Some(b'N')) if !self.raw && self.byte_at(self.pos + 2) == Some(b'{') => {
                    self.pos += self.src[self.pos..].find('}')? + 1;
                }
                (b'\\', Some(_)) => self.pos += 1 + self.char_len(self.pos + 1),
                (b'{', _) => {
                    if text_start < self.pos {
                        self.parts.push(Part::Text(text_start..self.pos));
                    }
                    self.pos += 1;
                    self.field()?;
                    text_start = self.pos;
                }
                _ => self.pos += self.char_len(self.pos),
            }
        }
        if text_start < self.pos {
            self.parts.push(Part::Text(text_start..self.pos));
        }
        Some(())
    }

    fn char_len(&self, pos: usize) -> usize {
        self.src[pos..].chars().next().map_or(1, char::len_utf8)
    }

    /// After a field's `{`: its expression, then any `=`, conversion and spec, up to and past its `}`.
    fn field(&mut self) -> Option<()> {
        let start = self.pos;
        let end = self.expression_end()?;
        if !self.src[start..end].trim().is_empty() {
            self.parts.push(Part::Expression(start..end));
        }
        self.skip_field_rest()
    }

    /// Where the expression stops: at `}`, `!` (not `!=`), `:` or a lone `=` outside brackets.
    fn expression_end(&mut self) -> Option<usize> {
        let mut depth = 0usize;
        loop {
            let byte = self.byte_at(self.pos)?;
            let next = self.byte_at(self.pos + 1);
            match byte {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth > 0 => depth -= 1,
                b'}' => return Some(self.pos),
                b':' if depth == 0 => return Some(self.pos),
                b'!' | b'=' if depth == 0 && next != Some(b'=') => return Some(self.pos),
                b'=' | b'!' | b'<' | b'>' if next == Some(b'=') => self.pos += 1,
                b'"' | b'\'' => {
                    self.pos = string_end(self.src, self.pos).ok()?;
                    continue;
                }
                b'#' => {
                    self.pos += self.src[self.pos..].find(['\n', '\r'])?;
                    continue;
                }
                b if is_name_start(char::from(b)) || b >= 0x80 => {
                    self.name()?;
                    continue;
                }
                _ => {}
            }
            self.pos += self.char_len(self.pos);
        }
    }

    /// A name, or a nested string when the name is its prefix.
    fn name(&mut self) -> Option<()> {
        let rest = &self.src[self.pos..];
        let len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        let quote_follows = matches!(rest[len..].chars().next(), Some('"' | '\''));
        if quote_follows && is_string_prefix(&rest[..len]) {
            self.pos = string_end(self.src, self.pos).ok()?;
        } else {
            self.pos += len;
        }
        Some(())
    }

    /// `=`, `!r` and `:spec` (with its nested fields, which are not read for mutation) up to
    /// and past the field's closing brace.
    fn skip_field_rest(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.byte_at(self.pos)? {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    self.pos += 1;
                    return Some(());
                }
                b'}' => depth -= 1,
                b'"' | b'\'' if depth > 0 => {
                    self.pos = string_end(self.src, self.pos).ok()?;
                    continue;
                }
                _ => {}
            }
            self.pos += self.char_len(self.pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each part as `text:…` or `expr:…`.
    fn read(token: &str) -> Vec<String> {
        let parts = parts(token).unwrap();
        parts
            .into_iter()
            .map(|part| match part {
                Part::Text(r) => format!("text:{}", &token[r]),
                Part::Expression(r) => format!("expr:{}", &token[r]),
            })
            .collect()
    }

    #[test]
    fn text_and_fields_in_order() {
        assert_eq!(read("f\"total: {n}\""), ["text:total: ", "expr:n"]);
        assert_eq!(read("f'{a}{b} and {c}'"), ["expr:a", "expr:b", "text: and ", "expr:c"]);
        assert_eq!(read("F'''x\n{y}\n'''"), ["text:x\n", "expr:y", "text:\n"]);
    }

    #[test]
    fn doubled_braces_and_named_escapes_are_text() {
        assert_eq!(read("f'{{a}} {b}}}'"), ["text:{{a}} ", "expr:b", "text:}}"]);
        assert_eq!(read("f'\\N{EM DASH}{x}'"), ["text:\\N{EM DASH}", "expr:x"]);
        assert_eq!(read("rf'\\N{x}'"), ["text:\\N", "expr:x"]);
        assert_eq!(read("f'\\{x}'"), ["text:\\", "expr:x"]);
    }

    #[test]
    fn specs_conversions_and_self_documenting_equals_end_the_expression() {
        assert_eq!(
            read("f'{x!r:>{w}} {a != b} {c=} {d == e = !s}'"),
            ["expr:x", "text: ", "expr:a != b", "text: ", "expr:c", "text: ", "expr:d == e ",]
        );
        assert_eq!(
            read("f'{f(k=1)} {d[1:2]} {(y := 3)} {x:=^10}'"),
            ["expr:f(k=1)", "text: ", "expr:d[1:2]", "text: ", "expr:(y := 3)", "text: ", "expr:x",]
        );
    }

    #[test]
    fn nested_strings_may_hold_braces_and_the_outer_quote() {
        assert_eq!(read("f'{d[\"}\"]} {\"a\" + \"b\"}'"), ["expr:d[\"}\"]", "text: ", "expr:\"a\" + \"b\""]);
        assert_eq!(read("f\"{x[\"k\"]:>{w}}!\""), ["expr:x[\"k\"]", "text:!"]);
        assert_eq!(read("f\"{f\"{a}\" + b}\""), ["expr:f\"{a}\" + b"]);
    }

    #[test]
    fn an_empty_fstring_has_no_part() {
        assert_eq!(read("f''"), Vec::<String>::new());
        assert_eq!(read("f''''''"), Vec::<String>::new());
    }
}
