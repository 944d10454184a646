//! What mutdelta knows of Python without running it: its files, which are tests, its mutator front end, how its lines are tokenized and its tests filed.

use std::path::Path;

use crate::model::plan::{in_directory_named, Language, LanguageSpec, Lexing, Literal};

/// Python, as the layers below the languages see it.
pub static PYTHON: LanguageSpec = LanguageSpec {
    name: "python",
    display: "Python",
    extensions: &["py"],
    is_test_file,
    changed_tests_are_relevant: true,
    mutate: |source, lines, _| mutators::python::mutate(source, lines),
    passes_over: &[],
    scopes: mutators::python::scopes,
    lexing: Lexing {
        line_comment: "#",
        literal: string_literal,
        keywords: &[
            "and", "as", "assert", "async", "await", "del", "elif", "else", "except", "for", "from", "if",
            "import", "in", "is", "lambda", "not", "or", "raise", "return", "while", "with", "yield",
        ],
        generics: false,
    },
    // A code swap or a fork of a warm worker running the few tests that reach it.
    mutant_cost: 1,
    declared_encoding: |source| {
        let encoding = coding_comment(source)?;
        let utf8 = matches!(encoding.to_ascii_lowercase().replace('_', "-").as_str(), "utf-8" | "utf8");
        (!utf8).then(|| format!("{encoding}, as its PEP 263 coding comment declares"))
    },
    place_test,
    killers_named_alone: false,
    baseline_words: "running the unmutated tests",
    operators: mutators::catalog::PYTHON,
    arid_rules: mutators::catalog::PYTHON_ARID,
};

/// The encoding a PEP 263 coding comment names: a comment on the first line, or on the second
/// after a first that is blank or a comment, matching `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`
/// (`# -*- coding: latin-1 -*-`, `# vim: set fileencoding=cp1252 :`).
fn coding_comment(source: &[u8]) -> Option<String> {
    for line in source.split(|&byte| byte == b'\n').take(2) {
        let line = String::from_utf8_lossy(line);
        let text = line.trim_start_matches([' ', '\t', '\x0c']);
        if !text.starts_with('#') {
            if text.trim_end().is_empty() {
                continue;
            }
            return None;
        }
        for (at, _) in text.match_indices("coding") {
            let rest = &text[at + "coding".len()..];
            let Some(rest) = rest.strip_prefix([':', '=']) else { continue };
            let name: String = rest
                .trim_start_matches([' ', '\t'])
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .collect();
            if !name.is_empty() {
                return Some(name);
            }
        }
    }
    None
}

/// Python as a `Language`.
pub const LANGUAGE: Language = Language(&PYTHON);

/// Test code, which is not mutated: pytest's discovery rules, plus `conftest.py` and anything
/// under `tests`/`test`.
pub fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    name == "conftest.py"
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || in_directory_named(path, &["tests", "test"])
}

/// A module that defines tests (`test_*.py`, `*_test.py`): a change to it can change only the
/// verdicts of the mutants its tests ran. Not conftest files, helpers or data beside the tests.
pub fn is_test_module(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

/// `tests/test_x.py::Case::test_y` is `Case::test_y` of `tests/test_x.py`; a node id without
/// `::`, a whole file, is its own name.
fn place_test(test: &str) -> (&str, &str) {
    test.split_once("::").unwrap_or((test, test))
}
/// A Python string beginning at `start`, a token's start (its letter prefix included), as its
/// prefix and value: quote style (single, double, triple) does not count, nor `u`.
fn string_literal(chars: &[char], start: usize) -> Option<Literal> {
    let mut quote_at = start;
    while quote_at < chars.len() && chars[quote_at].is_ascii_alphabetic() {
        quote_at += 1;
    }
    let prefix: String = chars[start..quote_at].iter().collect();
    let quote = *chars.get(quote_at)?;
    let is_prefix = prefix.len() <= 2 && prefix.chars().all(|c| "rbfutRBFUT".contains(c));
    if !matches!(quote, '"' | '\'') || !is_prefix {
        return None;
    }
    Some(string_value(chars, quote_at, quote, &prefix.to_ascii_lowercase()))
}

/// The string whose opening `quote` is at `start`, as `str:` its prefix and value; a quote
/// escaped in a non-raw string is the quote.
fn string_value(chars: &[char], start: usize, quote: char, prefix: &str) -> (String, usize) {
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let width = if triple { 3 } else { 1 };
    let raw = prefix.contains('r');
    let mut body = String::new();
    let mut i = start + width;
    while i < chars.len() {
        if chars[i] == quote
            && (!triple || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)))
        {
            i += width;
            break;
        }
        if chars[i] == '\\' && i + 1 < chars.len() {
            let next = chars[i + 1];
            if !raw && (next == '\'' || next == '"') {
                body.push(next);
            } else {
                body.push('\\');
                body.push(next);
            }
            i += 2;
            continue;
        }
        body.push(chars[i]);
        i += 1;
    }
    (format!("str:{}:{body}", prefix.replace('u', "")), i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coding_comment_on_the_first_two_lines_names_the_encoding() {
        let declared = |source: &[u8]| coding_comment(source);
        assert_eq!(declared(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n").as_deref(), Some("latin-1"));
        assert_eq!(
            declared(b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n").as_deref(),
            Some("cp1252")
        );
        assert_eq!(
            declared(b"\n  \x0c# coding=iso_8859_15\n").as_deref(),
            Some("iso_8859_15"),
            "after a blank line"
        );
        assert_eq!(
            declared(b"# a decoding step, then coding: koi8-r\n").as_deref(),
            Some("koi8-r"),
            "the first `coding` followed by : or ="
        );
        assert_eq!(
            declared(b"x = 1\n# coding: latin-1\n"),
            None,
            "the second line only after a comment or a blank one"
        );
        assert_eq!(declared(b"# one\n# two\n# coding: latin-1\n"), None, "past the second line");
        assert_eq!(declared(b"s = '# coding: latin-1'\n"), None, "not a comment");
        assert_eq!(declared(b"# coding:\n"), None, "no name");
    }

    #[test]
    fn a_declared_encoding_other_than_utf8_is_said_with_its_declaration() {
        let declared = PYTHON.declared_encoding;
        assert_eq!(
            declared(b"# -*- coding: latin-1 -*-\n").as_deref(),
            Some("latin-1, as its PEP 263 coding comment declares")
        );
        assert_eq!(declared(b"# -*- coding: UTF_8 -*-\n"), None);
        assert_eq!(declared(b"# coding: utf8\n"), None);
        assert_eq!(declared(b"x = 1\n"), None);
    }

    /// The literal `string_literal` reads at `start` of `line`, and what follows it.
    fn read(line: &str, start: usize) -> Option<(String, String)> {
        let chars: Vec<char> = line.chars().collect();
        string_literal(&chars, start).map(|(token, end)| (token, chars[end..].iter().collect()))
    }

    #[test]
    fn a_python_string_is_read_as_its_prefix_and_value_whatever_its_quotes() {
        let string = |token: &str, rest: &str| Some((token.to_string(), rest.to_string()));
        assert_eq!(read("'a # b' + c", 0), string("str::a # b", " + c"), "a comment marker inside");
        assert_eq!(read("\"a # b\"", 0), read("'a # b'", 0), "either quote");
        assert_eq!(read("'''x'y'''", 0), string("str::x'y", ""), "triple quotes");
        assert_eq!(read("'it\\'s'", 0), string("str::it's", ""), "an escaped quote is the quote");
        assert_eq!(read("r'\\d'", 0), string("str:r:\\d", ""), "raw: the backslash kept");
        assert_eq!(read("U'x'", 0), string("str::x", ""), "u does not count");
        assert_eq!(read("Rb'x'", 0), string("str:rb:x", ""), "prefixes read in lower case");
        assert_eq!(read("bad'x'", 0), None, "not a prefix: a word");
        assert_eq!(read("x = 'y", 4), string("str::y", ""), "cut at the line's end");
        assert_eq!(read("f(x)", 0), None);
    }
}
