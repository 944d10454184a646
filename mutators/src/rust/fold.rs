//! Arithmetic of integer literals alone (`60 * 60`), folded as the compiler folds it: a mutant there whose value is the original's, or an earlier mutant's, is the same program (`literal-fold` in `catalog::EQUIVALENT`) and is not made.

use std::collections::HashSet;
use std::ops::Range;

use syn::visit::Visit;
use syn::{BinOp, Expr, Lit, UnOp};

use super::source::Source;
use crate::Mutant;

/// The spans of the outermost expressions made only of integer literals, parentheses, unary
/// `-` and the arithmetic and bitwise operators.
pub(crate) fn literal_arithmetic(source: &Source, file: &syn::File) -> Vec<Range<usize>> {
    struct Finder<'s, 'a> {
        source: &'s Source<'a>,
        found: Vec<Range<usize>>,
    }
    impl<'ast> Visit<'ast> for Finder<'_, '_> {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            if matches!(expr, Expr::Binary(_)) && is_literal_arithmetic(expr) {
                self.found.push(self.source.node(expr));
            } else {
                syn::visit::visit_expr(self, expr);
            }
        }
    }
    let mut finder = Finder { source, found: Vec::new() };
    finder.visit_file(file);
    finder.found
}

/// Drops each mutant inside one of `roots` whose folded value is the root's own or that of an
/// earlier mutant of the root (the first in `mutants`' order is kept). A body replacement is
/// never folded: it stands for the whole function (whose body may be this one expression), and
/// the operators' own mutants say more of what a test missed.
pub(crate) fn drop_folded(text: &str, roots: &[Range<usize>], mutants: &mut Vec<Mutant>) {
    for root in roots {
        let Some(original) = fold(&text[root.clone()]) else { continue };
        let mut values = HashSet::from([original]);
        mutants.retain(|mutant| {
            if mutant.span.start < root.start
                || mutant.span.end > root.end
                || mutant.mutator() == crate::catalog::Mutator::FunctionBody
            {
                return true;
            }
            let relative = mutant.span.start - root.start..mutant.span.end - root.start;
            let mut mutated = text[root.clone()].to_string();
            mutated.replace_range(relative, &mutant.replacement);
            match fold(&mutated) {
                Some(value) => values.insert(value),
                None => true,
            }
        });
    }
}

/// The value of literal arithmetic, when every step stays within what any integer type from
/// i32 up holds without wrapping (0 to i32::MAX: an unsuffixed literal's type comes from its
/// context) and no literal has a suffix; else none, and nothing is dropped.
fn fold(text: &str) -> Option<i64> {
    let expr = syn::parse_str::<Expr>(text).ok()?;
    value(&expr)
}

fn value(expr: &Expr) -> Option<i64> {
    let result = match expr {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(int), .. }) if int.suffix().is_empty() => {
            int.base10_digits().parse::<i64>().ok()?
        }
        Expr::Paren(inner) => value(&inner.expr)?,
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => value(&unary.expr)?.checked_neg()?,
        Expr::Binary(binary) => {
            let (left, right) = (value(&binary.left)?, value(&binary.right)?);
            match binary.op {
                BinOp::Add(_) => left.checked_add(right)?,
                BinOp::Sub(_) => left.checked_sub(right)?,
                BinOp::Mul(_) => left.checked_mul(right)?,
                BinOp::Div(_) => left.checked_div(right)?,
                BinOp::Rem(_) => left.checked_rem(right)?,
                BinOp::BitAnd(_) => left & right,
                BinOp::BitOr(_) => left | right,
                BinOp::BitXor(_) => left ^ right,
                BinOp::Shl(_) if right < 31 => left.checked_shl(u32::try_from(right).ok()?)?,
                BinOp::Shr(_) if right < 31 => left >> right,
                _ => return None,
            }
        }
        _ => return None,
    };
    (0..=i64::from(i32::MAX)).contains(&result).then_some(result)
}

fn is_literal_arithmetic(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(_), .. }) => true,
        Expr::Paren(inner) => is_literal_arithmetic(&inner.expr),
        Expr::Unary(unary) => matches!(unary.op, UnOp::Neg(_)) && is_literal_arithmetic(&unary.expr),
        Expr::Binary(binary) => {
            matches!(
                binary.op,
                BinOp::Add(_)
                    | BinOp::Sub(_)
                    | BinOp::Mul(_)
                    | BinOp::Div(_)
                    | BinOp::Rem(_)
                    | BinOp::BitAnd(_)
                    | BinOp::BitOr(_)
                    | BinOp::BitXor(_)
                    | BinOp::Shl(_)
                    | BinOp::Shr(_)
            ) && is_literal_arithmetic(&binary.left)
                && is_literal_arithmetic(&binary.right)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_arithmetic_folds_within_the_range_every_integer_type_from_i32_holds() {
        assert_eq!(fold("60 * 60"), Some(3600));
        assert_eq!(fold("(1 << 4) | 0x0F"), Some(31));
        assert_eq!(fold("7 / 2 - 1"), Some(2), "integer division truncates");
        assert_eq!(fold("3 - -1"), None, "a negative step: left alone");
        assert_eq!(fold("1 << 31"), None, "past i32::MAX: an i32 would wrap");
        assert_eq!(fold("1 - 2"), None, "negative: an unsigned type would not compile");
        assert_eq!(fold("4 / 0"), None);
        assert_eq!(fold("2u8 * 3"), None, "a suffix: left alone");
        assert_eq!(fold("x * 3"), None);
    }

    #[test]
    fn each_operator_folds_as_rust_computes_it_and_long_shifts_are_left_alone() {
        assert_eq!(fold("2 + 3"), Some(5));
        assert_eq!(fold("7 % 4"), Some(3));
        assert_eq!(fold("6 & 3"), Some(2));
        assert_eq!(fold("6 | 3"), Some(7));
        assert_eq!(fold("6 ^ 3"), Some(5));
        assert_eq!(fold("256 >> 4"), Some(16));
        assert_eq!(fold("1 << 30"), Some(1 << 30));
        assert_eq!(fold("0 << 31"), None, "a shift by 31 or more: an i32 would not allow it");
        assert_eq!(fold("(1 << 30) >> 31"), None);
        assert_eq!(fold("-0 + 2"), Some(2), "a unary minus of a literal");
        assert_eq!(fold("!0"), None, "only minus");
    }

    fn roots(text: &str) -> Vec<&str> {
        let parsed = super::super::source::parse(text).unwrap();
        literal_arithmetic(&parsed.source, &parsed.file).into_iter().map(|range| &text[range]).collect()
    }

    #[test]
    fn the_outermost_expressions_of_literals_and_arithmetic_alone_are_the_roots() {
        let text = "fn f(x: u64) -> u64 { let a = (2) + -1 * 3; let b = x * 2; let c = 1 == 1; let d = !1 & 2; a + b + (4 * 4) }";
        assert_eq!(roots(text), ["(2) + -1 * 3", "4 * 4"]);
    }

    #[test]
    fn a_root_that_does_not_fold_leaves_the_next_one_to_fold_and_code_outside_untouched() {
        let source = "fn f(x: u64) -> u64 {\n    (1 << 40) + x * (60 * 60)\n}\n";
        let found = crate::rust::mutate(source, &[2]).unwrap();
        assert_eq!(found.not_made, [("literal-fold", 3)]);
        let descriptions: Vec<&str> = found.mutants.iter().map(|m| m.description.as_str()).collect();
        assert!(
            descriptions.contains(&"replace 40 with 41"),
            "the root past i32 keeps every mutant: {descriptions:?}"
        );
        assert!(
            descriptions.contains(&"replace * with /"),
            "x * ... is outside every root: {descriptions:?}"
        );
    }
}
