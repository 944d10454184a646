//! Focused checks of the tricky corners of the Rust mutant generator.

use mutators::rust::{executable_lines, mutate, UnsafeCode};
use mutators::{Mutant, MutateError, Position};

/// Mutants of every line, as for a new file.
fn all_mutants(source: &str) -> Vec<Mutant> {
    let lines: Vec<usize> = (1..=source.lines().count()).collect();
    mutate(source, &lines).unwrap().mutants
}

/// `line:original→replacement` for each mutant of `mutator`.
fn of(mutants: &[Mutant], mutator: &str) -> Vec<String> {
    mutants
        .iter()
        .filter(|m| m.mutator().name() == mutator)
        .map(|m| format!("{}:{}→{}", m.line, m.original, m.replacement))
        .collect()
}

fn lines_of(mutants: &[Mutant]) -> Vec<usize> {
    let mut lines: Vec<usize> = mutants.iter().map(|m| m.line).collect();
    lines.dedup();
    lines
}

const OLD_FUNCTION: &str = "\
fn total(items: &[u32]) -> u32 {
    let mut sum = 0;
    for item in items {
        sum += item;
    }
    sum
}
";

#[test]
fn one_added_line_in_an_old_function_does_not_replace_its_body() {
    let found = mutate(OLD_FUNCTION, &[4]).unwrap();
    assert!(of(&found.mutants, "FunctionBody").is_empty(), "{:?}", found.mutants);
    assert_eq!(of(&found.mutants, "AssignmentOperator"), ["4:+=→-="]);
    assert_eq!(found.executable_lines, [4]);

    // Every line but the closing brace: still not the whole body, but the value it ends in is new.
    let found = mutate(OLD_FUNCTION, &[1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(of(&found.mutants, "FunctionBody"), ["6:sum→0", "6:sum→1"]);
}

const OLD_SIZE_HINT: &str = "\
fn size_hint(&self) -> (usize, Option<usize>) {
    let total = self.total;
    (total.saturating_sub(self.yielded), None)
}
fn unit(&self) {
    self.reset()
}
fn state(&self) -> u8 {
    if self.done { 2 } else { 1 }
}
fn pick(&self) -> Option<u8> {
    if self.done {
        Some(self.value)
    } else {
        None
    }
}
";

#[test]
fn a_rewritten_value_an_old_function_ends_in_is_replaced_by_values_of_its_type() {
    let found = mutate(OLD_SIZE_HINT, &[3, 6, 9, 13, 15]).unwrap();
    let tails: Vec<&str> = found
        .mutants
        .iter()
        .filter(|m| m.mutator().name() == "FunctionBody")
        .map(|m| m.description.as_str())
        .collect();
    // Not for `-> ()`, nor for literals; a branch's value is one the function returns, and
    // `None` is not replaced by itself.
    assert_eq!(
        tails,
        [
            "replace the value `size_hint` returns with `Default::default()`",
            "replace the value `pick` returns with `None`"
        ]
    );
    let replaced = found.mutants.iter().find(|m| m.mutator().name() == "FunctionBody").unwrap();
    assert!(replaced.apply(OLD_SIZE_HINT).contains("    let total = self.total;\n    Default::default()\n}"));

    // The tail is old code when only the line before it is new.
    let found = mutate(OLD_SIZE_HINT, &[2]).unwrap();
    assert!(of(&found.mutants, "FunctionBody").is_empty(), "{:?}", found.mutants);
}

#[test]
fn a_whole_added_function_gets_its_body_replaced() {
    let found = mutate(OLD_FUNCTION, &[1, 2, 3, 4, 5, 6, 7]).unwrap();
    // The statements between the braces are replaced, so the mutant stands on the body's first
    // line (as cargo-mutants places it), not on the signature's.
    let body = OLD_FUNCTION[OLD_FUNCTION.find('{').unwrap() + 1..OLD_FUNCTION.rfind('}').unwrap()].trim();
    assert_eq!(of(&found.mutants, "FunctionBody"), [format!("2:{body}→0"), format!("2:{body}→1")]);
    assert_eq!(found.executable_lines, [2, 3, 4, 6]);
    let replaced = found.mutants.iter().find(|m| m.mutator().name() == "FunctionBody").unwrap();
    assert_eq!((replaced.start.line, replaced.start.column), (2, 5));
    assert_eq!(replaced.apply(OLD_FUNCTION), "fn total(items: &[u32]) -> u32 {\n    0\n}\n");
    assert_eq!(replaced.description, "replace body of `total` with `0`");
}

#[test]
fn test_modules_and_test_functions_are_left_alone() {
    let source = "\
fn live(a: u8) -> u8 {
    a + 1
}
#[cfg(test)]
mod tests {
    fn helper(a: u8) -> u8 {
        a + 1
    }
    #[test]
    fn works() {
        assert_eq!(super::live(1) + 0, 2);
    }
}
#[test]
fn loose_test() {
    let x = 1 + 1;
}
#[tokio::test]
async fn async_test() {
    let x = 1 + 1;
}
";
    let mutants = all_mutants(source);
    assert_eq!(lines_of(&mutants), [2], "{mutants:?}");
    assert_eq!(executable_lines(source).unwrap(), [2]);
    assert!(all_mutants(&format!("#![cfg(test)]\n{source}")).is_empty());
}

#[test]
fn const_and_static_items_are_left_alone() {
    let source = "\
const LIMIT: u32 = 10 * 2;
static NAME: &str = \"x\";
impl S {
    const MAX: u8 = 1 + 1;
    fn f(&self) -> u32 {
        const INNER: u32 = 3;
        LIMIT - INNER
    }
}
enum E {
    A = 1,
}
";
    let mutants = all_mutants(source);
    // f's body replacement starts on its first line, the inner const (which it replaces too).
    assert_eq!(lines_of(&mutants), [6, 7], "{mutants:?}");
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["7:-→+"]);
}

#[test]
fn constants_in_types_lengths_and_generic_arguments_are_left_alone() {
    let source = "\
fn f(v: Vec<u8>) -> usize {
    let a: [u8; 2] = [7u8; 2];
    let b = v.iter().f::<3>();
    let c = Foo::<4>::new();
    let d = const { 5 };
    a.len()
}
";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "NumberLiteral"), ["2:7u8→0u8", "2:7u8→1u8", "2:7u8→8u8"]);
}

#[test]
fn a_pragma_covers_its_line_or_the_item_below() {
    let source = "\
fn a(x: u8) -> u8 {
    x + 1 // mutdelta: skip hot path
}
// mutdelta: skip generated by build.rs
// (see there)
fn b(x: u8) -> u8 {
    if x > 1 {
        x - 1
    } else {
        x * 2
    }
}
fn c(x: u8) -> u8 {
    x / 3
}
";
    let mutants = all_mutants(source);
    let reasons = |line: usize| -> Vec<Option<&str>> {
        let mut reasons: Vec<Option<&str>> =
            mutants.iter().filter(|m| m.line == line).map(|m| m.ignored.as_deref()).collect();
        reasons.dedup();
        reasons
    };
    assert_eq!(reasons(1), [], "a signature holds no mutant");
    // a()'s body replacement starts on its first line, which the pragma after it covers.
    assert_eq!(reasons(2), [Some("hot path")]);
    assert!(mutants.iter().any(|m| m.line == 2 && m.mutator().name() == "FunctionBody"));
    for line in [7, 8, 10] {
        assert_eq!(reasons(line), [Some("generated by build.rs")], "line {line}");
    }
    assert!(mutants.iter().any(|m| m.line == 7 && m.mutator().name() == "FunctionBody"));
    assert_eq!(reasons(13), [], "a signature holds no mutant");
    assert_eq!(reasons(14), [None]);
    assert!(mutants.iter().any(|m| m.line == 14 && m.mutator().name() == "FunctionBody"));
}

#[test]
fn a_pragma_above_a_statement_covers_the_statement() {
    let source = "\
fn f(x: u8) {
    // mutdelta: skip best effort
    // (the cache may be gone)
    let _ = warm(x + 1); // warms the cache
    g(x - 1);
}
";
    let mutants = all_mutants(source);
    let ignored: Vec<(usize, Option<&str>)> = mutants
        .iter()
        .filter(|m| m.mutator().name() == "ArithmeticOperator")
        .map(|m| (m.line, m.ignored.as_deref()))
        .collect();
    assert_eq!(ignored, [(4, Some("best effort")), (5, None)]);
}

#[test]
fn a_pragma_needs_a_reason() {
    let source = "fn f() {\n    g(); // mutdelta: skip\n}\n";
    assert_eq!(mutate(source, &[1]), Err(MutateError::PragmaWithoutReason { line: 2 }));
    // In a string or a doc comment it is no pragma.
    // (Deleting the one statement and replacing the body with `()` are one program: one mutant.)
    let source = "/// mutdelta: skip\nfn f() {\n    g(\"// mutdelta: skip\");\n}\n";
    let mutants = all_mutants(source);
    assert_eq!(lines_of(&mutants), [3], "{mutants:?}");
    assert!(mutants.iter().all(|m| m.ignored.is_none()), "{mutants:?}");
}

const UNSAFE: &str = "\
fn f(p: *const u8, n: usize) -> u8 {
    let k = n + 1;
    unsafe { *p.add(n - 1) + 1 }
}
unsafe fn g(p: *const u8) -> u8 {
    *p + 1
}
fn h(buf: &mut [u8], p: *mut u8, i: usize) {
    unsafe {
        buf[i + 1] = *p.add(i * 2);
        buf[*p.add(i + 2) as usize] = 0;
    }
}
";

#[test]
fn unsafe_code_is_mutated_only_in_bounds_checked_indexes() {
    let found = mutate(UNSAFE, &(1..=14).collect::<Vec<_>>()).unwrap();
    let mutants = &found.mutants;
    // Line 10: `i + 1` in the checked `buf[..]` only, never `i * 2` in the pointer offset.
    let line_10: Vec<String> = mutants
        .iter()
        .filter(|m| m.line == 10)
        .map(|m| format!("{}→{}", m.original, m.replacement))
        .collect();
    assert_eq!(line_10, ["+→-", "1→0", "1→2"], "{mutants:?}");
    // Line 11's index holds a call: nothing of it. The bodies of `f` and `h` are still replaced
    // (from their first lines, 2 and 9).
    assert_eq!(lines_of(mutants), [2, 9, 10], "{mutants:?}");
    assert_eq!(of(mutants, "FunctionBody").iter().map(|m| &m[..2]).collect::<Vec<_>>(), ["2:", "2:", "9:"]);
    assert_eq!(executable_lines(UNSAFE).unwrap(), [2, 3, 6, 9, 10, 11]);
    // Lines left without a mutant for being unsafe: the unsafe block of `f`, `g`'s body and line 11.
    let passed_over: Vec<usize> = found.passed_over.iter().map(|&(line, _)| line).collect();
    assert_eq!(passed_over, [3, 6, 11]);
    assert!(found.passed_over.iter().all(|&(_, why)| why == &mutators::rust::UNSAFE));
}

#[test]
fn unsafe_code_is_mutated_like_any_other_when_asked() {
    let found =
        mutators::rust::mutate_with(UNSAFE, &(1..=14).collect::<Vec<_>>(), UnsafeCode::Mutated).unwrap();
    let lines = lines_of(&found.mutants);
    assert_eq!(lines, [2, 3, 6, 9, 10, 11], "{:?}", found.mutants);
    assert!(of(&found.mutants, "FunctionBody").iter().any(|m| m.starts_with("6:")), "g's body is replaced");
    assert!(found.passed_over.is_empty());
}

#[test]
fn if_let_and_while_let_are_not_forced() {
    let source = "\
fn f(o: Option<u8>, mut it: std::vec::IntoIter<u8>) {
    if let Some(x) = o {
        g(x);
    }
    while let Some(x) = it.next() {
        g(x);
    }
    if o.is_some() {
        g(0);
    }
}
";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "ConditionForcing"), ["8:o.is_some()→false", "8:o.is_some()→true"]);
}

#[test]
fn match_arms_are_deleted_only_beside_a_wildcard() {
    let source = "\
fn f(o: Option<u8>) -> u8 {
    let a = match o {
        Some(1) => 1,
        Some(x) if x > 5 => x,
        _ if o.is_none() => 0,
        _ => 2,
    };
    let b = match o {
        Some(x) => x,
        None => 0,
    };
    a + b
}
";
    let mutants = all_mutants(source);
    assert_eq!(
        of(&mutants, "MatchArmDeletion"),
        ["3:Some(1) => 1,→", "4:Some(x) if x > 5 => x,→", "5:_ if o.is_none() => 0,→"]
    );
    let arm = mutants.iter().find(|m| m.mutator().name() == "MatchArmDeletion").unwrap();
    assert_eq!(arm.description, "delete match arm `Some(1) =>`");
}

#[test]
fn unary_minus_is_told_from_binary_minus() {
    let source = "fn f(a: i32, b: i32) -> i32 {\n    -a - -b - (-1)\n}\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["2:-→+", "2:-→+"]);
    assert_eq!(of(&mutants, "UnaryOperator"), ["2:-→", "2:-→", "2:-→"]);
    let columns: Vec<usize> = mutants
        .iter()
        .filter(|m| m.mutator().name() == "ArithmeticOperator")
        .map(|m| m.start.column)
        .collect();
    assert_eq!(columns, [8, 13]);
    let removed = mutants.iter().find(|m| m.mutator().name() == "UnaryOperator").unwrap();
    assert_eq!(removed.apply(source), "fn f(a: i32, b: i32) -> i32 {\n    a - -b - (-1)\n}\n");
}

#[test]
fn literal_suffixes_and_bases_are_kept() {
    let source = "fn f() -> u64 {\n    g(5u8, 0xffu16, 127i8, 2.5f32, 1_u64, 0o17)\n}\n";
    let mutants = all_mutants(source);
    assert_eq!(
        of(&mutants, "NumberLiteral"),
        [
            "2:5u8→0u8",
            "2:5u8→1u8",
            "2:5u8→6u8",
            "2:0xffu16→0u16",
            "2:0xffu16→0x100u16",
            "2:0xffu16→1u16",
            "2:127i8→0i8",
            "2:127i8→1i8",
            "2:2.5f32→0.0f32",
            "2:1_u64→0u64",
            "2:1_u64→2u64",
            "2:0o17→0",
            "2:0o17→0o20",
            "2:0o17→1",
        ]
    );
}

#[test]
fn unparsable_macro_bodies_are_skipped_but_their_statements_deleted() {
    let source = "\
fn f(x: u8) -> u8 {
    weird!(@ x + 1 => ;; if {{ }});
    let y = vec![x + 1];
    x + 1
}
";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "StatementDeletion"), ["2:weird!(@ x + 1 => ;; if {{ }});→"]);
    assert_eq!(lines_of(&mutants), [2, 4]);
    assert_eq!(of(&mutants, "FunctionBody").len(), 2, "the body, from the macro's line, is replaced too");
}

#[test]
fn crlf_gives_the_same_mutants_as_lf() {
    let lf = "fn f(a: u8) -> u8 {\n    if a > 1 {\n        g(a + 1);\n    }\n    0\n}\n";
    let crlf = lf.replace('\n', "\r\n");
    let summary = |source: &str| -> Vec<(Position, Position, String, String)> {
        let mutants = all_mutants(source);
        mutants.into_iter().map(|m| (m.start, m.end, m.original.replace('\r', ""), m.replacement)).collect()
    };
    assert_eq!(executable_lines(&crlf).unwrap(), [2, 3, 5]);
    assert_eq!(summary(&crlf), summary(lf));
    let deletion =
        all_mutants(&crlf).into_iter().find(|m| m.mutator().name() == "StatementDeletion").unwrap();
    assert_eq!(
        deletion.apply(&crlf),
        "fn f(a: u8) -> u8 {\r\n    if a > 1 {\r\n        \r\n    }\r\n    0\r\n}\r\n"
    );
}

#[test]
fn columns_count_characters_and_spans_count_bytes() {
    let source = "fn f(a: u8) -> u8 {\n    let s = \"héllo→\"; a + 1\n}\n";
    let mutants = all_mutants(source);
    let plus = mutants.iter().find(|m| m.mutator().name() == "ArithmeticOperator").unwrap();
    assert_eq!(plus.start, Position { line: 2, column: 25 });
    assert_eq!(plus.end, Position { line: 2, column: 26 });
    assert_eq!(plus.span, source.find('+').unwrap()..source.find('+').unwrap() + 1);
    assert_eq!(plus.apply(source), source.replacen('+', "-", 1));
    let string = mutants.iter().find(|m| m.mutator().name() == "StringLiteral").unwrap();
    assert_eq!(string.original, "\"héllo→\"");
    assert_eq!((string.start.column, string.end.column), (13, 21));
}

#[test]
fn syntax_errors_give_their_line() {
    let result = mutate("fn f() {\n    let x = ;\n}\n", &[1]);
    assert!(matches!(result, Err(MutateError::Syntax { line: 2, .. })), "{result:?}");
    let result = executable_lines("fn f() {\n    \"unterminated\n}\n");
    assert!(matches!(result, Err(MutateError::Syntax { line: 2, .. })), "{result:?}");
    let result = mutate("fn f() {\n    g(\n}\n", &[1]);
    assert!(matches!(result, Err(MutateError::Syntax { .. })), "{result:?}");
}

#[test]
fn executable_lines_are_code_inside_function_bodies() {
    let source = "\
use std::fmt;

/// Doc.
pub fn f(a: u8) -> u8 {
    // a comment

    let b = g(
        a,
    );
    if b > 0 {
        b
    } else {
        0
    }
}
struct S {
    x: u8,
}
";
    assert_eq!(executable_lines(source).unwrap(), [7, 8, 10, 11, 12, 13]);
    let found = mutate(source, &[1, 4, 5, 6, 7, 9, 17]).unwrap();
    assert_eq!(found.executable_lines, [7]);
}

#[test]
fn replacements_never_fuse_with_their_neighbours() {
    let source = "fn f(a: u8, b: &u8) -> u8 {\n    if(a > 0) { g() }\n    a|&b\n}\n";
    let mutants = all_mutants(source);
    let applied: Vec<String> = mutants
        .iter()
        .filter(|m| m.mutator().name() == "ConditionForcing" || m.mutator().name() == "BitwiseOperator")
        .map(|m| m.apply(source).lines().nth(if m.line == 2 { 1 } else { 2 }).unwrap().trim().to_string())
        .collect();
    assert_eq!(applied, ["if false { g() }", "if true { g() }", "a& &b"]);
}

#[test]
fn nested_functions_closures_and_trait_defaults_are_code() {
    let source = "\
trait T {
    fn twice(&self, x: u8) -> u8 {
        let add = |y: u8| y + x;
        fn inner(z: u8) -> u8 {
            z * 2
        }
        inner(add(x))
    }
}
";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["3:+→-", "5:*→/"]);
    let bodies: Vec<&str> = mutants
        .iter()
        .filter(|m| m.mutator().name() == "FunctionBody")
        .map(|m| m.description.as_str())
        .collect();
    assert!(
        bodies.contains(&"replace body of `twice` with `0`")
            && bodies.contains(&"replace body of `inner` with `1`")
    );
}

#[test]
fn mutants_are_sorted_and_unique() {
    let source = "fn f(a: u8) -> bool {\n    while !(a < 1) && true {}\n    a >= 0\n}\n";
    let mutants = all_mutants(source);
    let keys: Vec<(usize, &str)> = mutants.iter().map(|m| (m.span.start, m.replacement.as_str())).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
    assert_eq!(of(&mutants, "NumberLiteral"), ["2:1→0", "2:1→2", "3:0→1"]);
}

#[test]
fn a_two_thousand_line_file_yields_thousands_of_mutants() {
    let chunk = "fn f(a: u32, b: u32) -> u32 {\n    if a > b && a % 2 == 0 {\n        g(a * 3 - 1);\n    }\n    a + b\n}\n\n";
    let source = chunk.repeat(2000 / chunk.lines().count());
    let lines: Vec<usize> = (1..=2000).collect();
    let found = mutate(&source, &lines).unwrap();
    // How long it takes is measured by `cargo bench -p mutators`, not asserted here.
    assert!(found.mutants.len() > 5_000);
}

#[test]
fn a_pointer_test_with_an_else_or_a_negation_is_no_fast_path() {
    let source = "fn f(a: &Rc<u8>, b: &Rc<u8>) -> bool {\n    if Rc::ptr_eq(a, b) {\n        return true;\n    } else {\n        g();\n    }\n    \
                  if !Rc::ptr_eq(a, b) {\n        return false;\n    }\n    if (Rc::ptr_eq(a, b)) {\n        return true;\n    }\n    **a == **b\n}\n";
    let marked: Vec<usize> =
        all_mutants(source).iter().filter(|m| m.likely_equivalent.is_some()).map(|m| m.line).collect();
    // Its condition forced to false, and its `return` deleted: the same program.
    assert_eq!(marked, [10, 11], "only the guard without else, negation or more");
}

#[test]
fn a_pragma_wins_over_an_arid_rule_and_a_tail_macro_is_no_statement_to_delete() {
    let source = "fn f(x: u8) {\n    println!(\"{x}\"); // mutdelta: skip shown to users\n    dbg!(x)\n}\n";
    let mutants = all_mutants(source);
    let deletions: Vec<(usize, Option<&str>, bool)> = mutants
        .iter()
        .filter(|m| m.mutator().name() == "StatementDeletion")
        .map(|m| (m.line, m.ignored.as_deref(), m.arid.is_some()))
        .collect();
    assert_eq!(deletions, [(2, Some("shown to users"), true)]);
}

#[test]
fn an_operator_swap_that_keeps_the_value_is_not_made() {
    let source = "\
fn f(x: u32, y: f64) -> (u32, u32, u32, f64) {
    let mut z = x << 0;
    z += 0;
    (x + 0, x * (1), x + 1, y + 0.0)
}
";
    let operators: Vec<String> = all_mutants(source)
        .iter()
        .filter(|m| m.mutator().name().ends_with("Operator"))
        .map(|m| format!("{}:{}→{}", m.line, m.original, m.replacement))
        .collect();
    // `x + 1` and `y + 0.0` (-0.0 - 0.0 is -0.0) keep their swap.
    assert_eq!(operators, ["4:+→-", "4:+→-"]);
}

#[test]
fn lines_compiled_only_with_features_name_them() {
    let source = "\
#[cfg(feature = \"rounding\")]
pub mod rounding {
    #[cfg(all(unix, feature = \"fast\"))]
    pub fn f(x: u8) -> u8 {
        x + 1
    }
    pub fn g(x: u8) -> u8 {
        x + 2
    }
}
#[cfg(any(feature = \"a\", feature = \"b\"))]
fn h(x: u8) -> u8 {
    x + 3
}
";
    let found = mutate(source, &(1..=15).collect::<Vec<_>>()).unwrap();
    let gated: Vec<(usize, Vec<&str>)> = found
        .feature_gated
        .iter()
        .map(|(line, features)| (*line, features.iter().map(String::as_str).collect()))
        .collect();
    // `any(..)` needs no one feature in particular: line 13 is not listed.
    // The body replacements start on the bodies' lines, not on the `fn` lines.
    let expected = [(5, vec!["fast", "rounding"]), (8, vec!["rounding"])];
    assert_eq!(gated, expected);
}

#[test]
fn literal_arithmetic_makes_no_mutant_that_folds_to_the_original_or_an_earlier_mutant() {
    let source = "fn timeout() -> Duration {\n    Duration::from_secs(60 * 60)\n}\nfn f(x: u64) -> u64 {\n    x * 1 + 60\n}\n";
    let found = mutators::rust::mutate(source, &[2, 5]).unwrap();
    assert_eq!(found.not_made, [("literal-fold", 3)], "counted");
    let mutants = found.mutants;
    let on_line = |line: usize| -> Vec<String> {
        let operators = mutants.iter().filter(|m| m.line == line && m.mutator().name() != "FunctionBody");
        operators.map(|m| m.description.clone()).collect()
    };

    // 0 * 60 is 0, 1 * 60 is 60, 61 * 60 is 3660, 60 / 60 is 1; then 60 * 0 folds as 0 * 60
    // does, 60 * 1 as 1 * 60, 60 * 61 as 61 * 60: not made.
    assert_eq!(
        on_line(2),
        ["replace 60 with 0", "replace 60 with 1", "replace 60 with 61", "replace * with /"],
        "{mutants:#?}"
    );
    let x_line = on_line(5);
    assert!(x_line.contains(&"replace 1 with 0".to_string()), "x is no literal: {x_line:?}");
    assert!(x_line.contains(&"replace 60 with 61".to_string()), "{x_line:?}");
}
