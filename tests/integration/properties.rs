//! Property tests (bounded, in-process): the Python rewriter and the line-list parser take any input without panicking, and what they return is consistent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use mutdelta::lines::parse_line_list;
use proptest::prelude::*;

/// 1-based (line, column in chars) of byte `offset`, counted independently of the mutator.
fn position(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn check_mutants(source: &str) -> Result<(), TestCaseError> {
    let lines: Vec<usize> = (1..=source.lines().count() + 1).collect();
    let Ok(found) = mutators::python::mutate(source, &lines) else { return Ok(()) };
    for mutant in &found.mutants {
        prop_assert!(mutant.span.start <= mutant.span.end && mutant.span.end <= source.len());
        prop_assert!(source.is_char_boundary(mutant.span.start) && source.is_char_boundary(mutant.span.end));
        prop_assert_eq!(&source[mutant.span.clone()], mutant.original.as_str());
        prop_assert_ne!(&mutant.original, &mutant.replacement);
        let (line, column) = position(source, mutant.span.start);
        prop_assert_eq!((mutant.start.line, mutant.start.column), (line, column));
        let (line, column) = position(source, mutant.span.end);
        prop_assert_eq!((mutant.end.line, mutant.end.column), (line, column));
        let mutated = mutant.apply(source);
        prop_assert_eq!(mutated.len() + mutant.original.len(), source.len() + mutant.replacement.len());
    }
    Ok(())
}

const FRAGMENTS: &[&str] = &[
    "x = a + b * 2\n",
    "if x < 3 and not y:\n    z -= 1\n",
    "while n > 0:\n    n //= 2\n",
    "s = 'a#b' + \"c\\\"d\"\n",
    "t = f'{x + 1}' if x is not None else None\n",
    "doc = \"\"\"one\n  two # not a comment\n\"\"\"\n",
    "call(1,\n     2.5,\n     key=-3)\n",
    "y = [i for i in range(10) if i not in seen]\n",
    "total = 1 + \\\n    2\n",
    "# mutdelta: skip logging only\n",
    "def f(a, /, *args, **kw):\n    return a ** 2\n",
    "straße = 'ü' * 3  # ünïcödé\n",
    "\tpass\n",
    "x = (\n",
    "'unterminated\n",
    "\r\n",
];

/// Python-like text built from fragments that stress the tokenizer: strings, comments, brackets,
/// continuations, operators, indentation and non-ASCII names.
fn python_like() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![prop::sample::select(FRAGMENTS).prop_map(String::from), "[ -~]{0,20}\n",];
    prop::collection::vec(fragment, 0..12).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn the_python_rewriter_takes_any_text(source in any::<String>()) {
        check_mutants(&source)?;
    }

    #[test]
    fn the_python_rewriter_is_consistent_on_python_like_text(source in python_like()) {
        check_mutants(&source)?;
    }

    #[test]
    fn the_line_list_parser_takes_any_text(text in any::<String>()) {
        let _ = parse_line_list(&text);
    }

    #[test]
    fn well_formed_line_lists_are_read_back_exactly(
        entries in prop::collection::vec(("[a-z]{1,8}(/[a-z_]{1,8}){0,2}\\.py", 1usize..500, 0usize..4), 0..20)
    ) {
        let mut expected: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
        let mut text = String::new();
        for (path, start, extra) in &entries {
            let end = start + extra;
            expected.entry(PathBuf::from(path)).or_default().extend(*start..=end);
            if extra == &0 {
                text.push_str(&format!("{path}:{start}\n"));
            } else {
                text.push_str(&format!("{path}:{start}-{end}\n"));
            }
        }
        prop_assert_eq!(parse_line_list(&text).unwrap(), expected);
    }
}
