//! What mutdelta knows of Rust without running it: its files, which are tests, its mutator front end, how its lines are tokenized and its tests filed.

use std::path::Path;

use mutators::rust::UnsafeCode;

use crate::model::plan::{in_directory_named, Language, LanguageSpec, Lexing, Literal};

/// Where the cargo tests whose names do not say their package are filed: a package tested
/// whole, a failed test libtest names alone.
pub const NO_PACKAGE: &str = "cargo test";

/// Rust, as the layers below the languages see it.
pub static RUST: LanguageSpec = LanguageSpec {
    name: "rust",
    display: "Rust",
    extensions: &["rs"],
    is_test_file,
    changed_tests_are_relevant: false,
    mutate: |source, lines, mutate_unsafe| {
        let unsafe_code = if mutate_unsafe { UnsafeCode::Mutated } else { UnsafeCode::Guarded };
        mutators::rust::mutate_with(source, lines, unsafe_code)
    },
    passes_over: &[&mutators::rust::UNSAFE],
    scopes: mutators::rust::scopes,
    lexing: Lexing {
        line_comment: "//",
        literal,
        keywords: &[
            "as", "break", "else", "for", "if", "in", "let", "match", "move", "mut", "ref", "return",
            "while", "yield",
        ],
        generics: true,
    },
    // A build of its package, then its tests: measured on the fixtures (debug build, two
    // workers), a Python mutant of `sharded` took 0.085 s (median), a Rust mutant of
    // `rust_parser` 1.7 s, about 20 times as long.
    mutant_cost: 20,
    declared_encoding: |_| None,
    place_test,
    killers_named_alone: true,
    baseline_words: "building the unmutated packages and running their tests",
    operators: mutators::catalog::RUST,
    arid_rules: mutators::catalog::RUST_ARID,
};

/// Rust as a `Language`.
pub const LANGUAGE: Language = Language(&RUST);

/// Test code, which is not mutated: integration tests, benches and examples. (Unit tests inside
/// `src/` are left alone by the mutator itself.)
pub fn is_test_file(path: &Path) -> bool {
    in_directory_named(path, &["tests", "benches", "examples"])
}

/// `calc: tests::ge` is `tests::ge` of the package `calc`; a name that says no package is filed
/// under `cargo test`.
fn place_test(test: &str) -> (&str, &str) {
    match test.split_once(": ") {
        Some((package, name)) if !package.contains("::") => (package, name),
        _ => (NO_PACKAGE, test),
    }
}
/// A Rust literal beginning at `start` as written: a string in double quotes, or a char; a
/// lifetime's quote is a mark of its own (the word after it another token).
fn literal(chars: &[char], start: usize) -> Option<Literal> {
    match chars[start] {
        '"' => Some(quoted(chars, start)),
        '\'' if chars.get(start + 2) == Some(&'\'') || chars.get(start + 1) == Some(&'\\') => {
            Some(quoted(chars, start))
        }
        '\'' => Some(("'".to_string(), start + 1)),
        _ => None,
    }
}

/// A quoted literal as written, from `start` to its closing quote (or the line's end).
fn quoted(chars: &[char], start: usize) -> (String, usize) {
    let quote = chars[start];
    let mut i = start + 1;
    while i < chars.len() && chars[i] != quote {
        i += if chars[i] == '\\' { 2 } else { 1 };
    }
    let end = (i + 1).min(chars.len());
    (chars[start..end].iter().collect(), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal `literal` reads at `start` of `line`, and what follows it.
    fn read(line: &str, start: usize) -> Option<(String, String)> {
        let chars: Vec<char> = line.chars().collect();
        literal(&chars, start).map(|(token, end)| (token, chars[end..].iter().collect()))
    }

    #[test]
    fn a_rust_literal_is_read_as_written_to_its_closing_quote() {
        let string = |token: &str, rest: &str| Some((token.to_string(), rest.to_string()));
        assert_eq!(read("\"a // b\" + c", 0), string("\"a // b\"", " + c"), "a comment marker inside");
        assert_eq!(read("\"a\\\"b\", c", 0), string("\"a\\\"b\"", ", c"), "an escaped quote");
        assert_eq!(read("\"open", 0), string("\"open", ""), "cut at the line's end");
        assert_eq!(read("\"\" + \"x\"", 0), string("\"\"", " + \"x\""), "an empty string");
        assert_eq!(read("x = 'y';", 4), string("'y'", ";"), "a char");
        assert_eq!(read("'\\n' ", 0), string("'\\n'", " "), "an escaped char");
        assert_eq!(read("'\\u{1F600}')", 0), string("'\\u{1F600}'", ")"), "a long escape");
        assert_eq!(read("&'a str", 1), string("'", "a str"), "a lifetime: its quote alone");
        assert_eq!(read("b\"x\"", 0), None, "a prefix is a word of its own");
        assert_eq!(read("x", 0), None);
    }
}
