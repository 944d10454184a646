//! The Rust mutation rules for operators, literals, statements, conditions and match arms.

use std::ops::Range;

use syn::{
    BinOp, Expr, ExprBinary, ExprIf, ExprMatch, ExprUnary, ExprWhile, Lit, LitInt, PatGuard, Stmt, UnOp,
};

use super::walk::Walker;
use crate::catalog::{self, Mutator, RUST};
use crate::text::{format_like, shorten};

/// The families a binary operator may belong to; the catalog lists each operator under one.
const BINARY_FAMILIES: [Mutator; 5] = [
    Mutator::ArithmeticOperator,
    Mutator::BitwiseOperator,
    Mutator::ComparisonOperator,
    Mutator::BooleanOperator,
    Mutator::AssignmentOperator,
];

impl Walker<'_, '_> {
    /// One edit per catalog target of `from` under `mutator`, unless `keep` refuses it.
    fn swaps(&mut self, mutator: Mutator, from: &str, span: Range<usize>, keep: impl Fn(&str) -> bool) {
        let Some(rule) = catalog::lookup(RUST, mutator, from) else { return };
        for to in rule.to.iter().filter(|to| keep(to)) {
            let description = if to.is_empty() {
                format!("remove {}", if from == "-" { "unary -" } else { from })
            } else {
                format!("replace {from} with {to}")
            };
            self.push(span.clone(), to.to_string(), rule, description);
        }
    }

    pub(crate) fn binary(&mut self, expr: &ExprBinary) {
        if matches!(expr.op, BinOp::And(_)) && (has_let(&expr.left) || has_let(&expr.right)) {
            return; // a let chain: `||` may not join `let`s
        }
        let span = self.source.node(&expr.op);
        let text = self.source.text;
        // `x as u8 < y` reads as the start of `u8<...>`: no `<`, `<=`, `<<` after a cast.
        let after_cast = ends_with_cast(&expr.left);
        let from = &text[span.clone()];
        let right = integer_value(&expr.right);
        for mutator in BINARY_FAMILIES {
            let fuses_with_cast = |to: &str| after_cast && to.starts_with('<');
            self.swaps(mutator, from, span.clone(), |to| {
                !(fuses_with_cast(to) || keeps_the_value(from, to, right))
            });
        }
    }

    pub(crate) fn unary(&mut self, expr: &ExprUnary) {
        let from = match expr.op {
            UnOp::Neg(_) => "-",
            UnOp::Not(_) => "!",
            _ => return, // `*x` is no operation to drop: x has another type
        };
        let span = self.with_trailing_blanks(self.source.node(&expr.op));
        self.swaps(Mutator::UnaryOperator, from, span, |_| true);
    }

    pub(crate) fn literal(&mut self, lit: &Lit) {
        let span = self.source.range(lit.span());
        match lit {
            Lit::Int(int) => self.integer(int, span),
            Lit::Float(float) => {
                let Ok(value) = float.base10_digits().parse::<f64>() else { return };
                let from = if value == 0.0 { "<float 0.0>" } else { "<float x>" };
                self.number(from, span, |to| Some(format!("{to}{}", float.suffix())));
            }
            Lit::Bool(boolean) => {
                let from = if boolean.value { "true" } else { "false" };
                self.swaps(Mutator::BooleanLiteral, from, span, |_| true);
            }
            Lit::Str(string) if !string.value().is_empty() => {
                let original = shorten(&self.source.text[span.clone()]);
                for (rule, to) in catalog::entries(RUST, Mutator::StringLiteral, "<non-empty string>") {
                    let description = format!("replace {original} with {to}");
                    self.push(span.clone(), to.to_string(), rule, description);
                }
            }
            // Byte strings, C strings, bytes and chars: their type holds their length, or
            // there is no telling value to swap in.
            _ => {}
        }
    }

    fn integer(&mut self, int: &LitInt, span: Range<usize>) {
        let Ok(n) = int.base10_digits().parse::<u128>() else { return };
        let suffix = int.suffix();
        let text = &self.source.text[span.clone()];
        let digits = &text[..text.len() - suffix.len()];
        self.number("<integer n>", span, |to| {
            let value = match to {
                "n + 1" => n.checked_add(1).filter(|&next| fits(next, suffix))?,
                _ => to.parse().expect("the catalog's integer targets are numbers"),
            };
            let written = if to == "n + 1" { format_like(digits, value) } else { value.to_string() };
            (value != n).then(|| format!("{written}{suffix}"))
        });
    }

    /// One NumberLiteral edit per catalog target of `from` that `write` turns into text.
    fn number(&mut self, from: &str, span: Range<usize>, write: impl Fn(&str) -> Option<String>) {
        let original = self.source.text[span.clone()].to_string();
        for (rule, to) in catalog::entries(RUST, Mutator::NumberLiteral, from) {
            if let Some(replacement) = write(to) {
                let description = format!("replace {original} with {replacement}");
                self.push(span.clone(), replacement, rule, description);
            }
        }
    }

    /// Calls, assignments and macro statements ending in `;` are deleted, `;` included.
    pub(crate) fn delete_statement(&mut self, stmt: &Stmt) {
        let deletable = match stmt {
            Stmt::Expr(expr, Some(_)) => has_effect_only(expr),
            Stmt::Macro(statement) => statement.semi_token.is_some(),
            _ => false,
        };
        if deletable {
            let span = self.source.node(stmt);
            for (rule, to) in catalog::entries(RUST, Mutator::StatementDeletion, "<call or assignment>;") {
                self.push(span.clone(), to.to_string(), rule, "delete statement".into());
            }
        }
    }

    pub(crate) fn force_if(&mut self, expr: &ExprIf) {
        self.force(&expr.cond, "if <condition>");
    }

    pub(crate) fn force_while(&mut self, expr: &ExprWhile) {
        self.force(&expr.cond, "while <condition>");
    }

    pub(crate) fn force_guard(&mut self, guarded: &PatGuard) {
        self.force(&guarded.guard, "<pattern> if <guard> =>");
    }

    fn force(&mut self, condition: &Expr, from: &str) {
        let literal = matches!(condition, Expr::Lit(syn::ExprLit { lit: Lit::Bool(_), .. }));
        if literal || has_let(condition) {
            return; // BooleanLiteral covers literals; `if let` is a pattern match
        }
        let span = self.source.node(condition);
        for (rule, to) in catalog::entries(RUST, Mutator::ConditionForcing, from) {
            let description = format!("force condition to {to}");
            self.push(span.clone(), to.to_string(), rule, description);
        }
    }

    /// With a `_ =>` arm to catch what they matched, the other arms can go one at a time.
    pub(crate) fn delete_arms(&mut self, expr: &ExprMatch) {
        let is_wildcard = |arm: &&syn::Arm| matches!(arm.pat, syn::Pat::Wild(_));
        if !expr.arms.iter().any(|arm| is_wildcard(&arm)) {
            return;
        }
        for arm in expr.arms.iter().filter(|arm| !is_wildcard(arm)) {
            let span = self.source.node(arm);
            let pattern = shorten(&self.source.text[self.source.node(&arm.pat)]);
            for (rule, to) in catalog::entries(RUST, Mutator::MatchArmDeletion, "<pattern> => <value>,") {
                let description = format!("delete match arm `{pattern} =>`");
                self.push(span.clone(), to.to_string(), rule, description);
            }
        }
    }

    /// The span widened over the blanks after it, so `! x` becomes `x`, not ` x`.
    fn with_trailing_blanks(&self, span: Range<usize>) -> Range<usize> {
        let rest = &self.source.text[span.end..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        span.start..span.end + blanks
    }
}

/// An expression evaluated only for what it does: a call, an assignment, a macro.
fn has_effect_only(expr: &Expr) -> bool {
    match expr {
        Expr::Call(_) | Expr::MethodCall(_) | Expr::Assign(_) => true,
        Expr::Binary(binary) => is_assignment(&binary.op),
        Expr::Macro(_) => true,
        Expr::Try(tried) => has_effect_only(&tried.expr),
        Expr::Await(awaited) => has_effect_only(&awaited.base),
        _ => false,
    }
}

fn is_assignment(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// `let` in a condition, alone or in a `&&` chain.
/// Operators that leave their left operand as it is when the right one is 0, and when it is 1
/// (`identity-operand` in `catalog::EQUIVALENT`): swapping one for another of its set changes
/// nothing. Integer literals only: `-0.0` tells `x + 0.0` from `x - 0.0`.
const IDENTITY_WITH_0: &[&str] = &["+", "-", "<<", ">>", "+=", "-=", "<<=", ">>="];
const IDENTITY_WITH_1: &[&str] = &["*", "/", "*=", "/="];

fn keeps_the_value(from: &str, to: &str, right: Option<u128>) -> bool {
    let set = match right {
        Some(0) => IDENTITY_WITH_0,
        Some(1) => IDENTITY_WITH_1,
        _ => return false,
    };
    set.contains(&from) && set.contains(&to)
}

/// The value of an integer literal, also in parentheses.
fn integer_value(expr: &Expr) -> Option<u128> {
    match expr {
        Expr::Lit(syn::ExprLit { lit: Lit::Int(int), .. }) => int.base10_digits().parse().ok(),
        Expr::Paren(inner) => integer_value(&inner.expr),
        _ => None,
    }
}

fn has_let(expr: &Expr) -> bool {
    match expr {
        Expr::Let(_) => true,
        Expr::Binary(ExprBinary { op: BinOp::And(_), left, right, .. }) => has_let(left) || has_let(right),
        _ => false,
    }
}

/// Whether the last thing written in `expr` is an `as` cast's type.
fn ends_with_cast(expr: &Expr) -> bool {
    match expr {
        Expr::Cast(_) => true,
        Expr::Binary(binary) => ends_with_cast(&binary.right),
        Expr::Unary(unary) => ends_with_cast(&unary.expr),
        Expr::Reference(reference) => ends_with_cast(&reference.expr),
        Expr::Assign(assign) => ends_with_cast(&assign.right),
        Expr::Range(range) => range.end.as_deref().is_some_and(ends_with_cast),
        Expr::Return(ret) => ret.expr.as_deref().is_some_and(ends_with_cast),
        Expr::Break(brk) => brk.expr.as_deref().is_some_and(ends_with_cast),
        Expr::Closure(closure) => ends_with_cast(&closure.body),
        _ => false,
    }
}

/// Whether `value` fits the integer type a literal's `suffix` names (any value if none).
fn fits(value: u128, suffix: &str) -> bool {
    let max = match suffix {
        "u8" => u8::MAX as u128,
        "u16" => u16::MAX as u128,
        "u32" => u32::MAX as u128,
        // usize and isize as on 64-bit targets
        "u64" | "usize" => u64::MAX as u128,
        "i8" => i8::MAX as u128,
        "i16" => i16::MAX as u128,
        "i32" => i32::MAX as u128,
        "i64" | "isize" => i64::MAX as u128,
        "i128" => i128::MAX as u128,
        _ => u128::MAX,
    };
    value <= max
}
