//! Early exits: `return`, `break` and `continue` deleted where the block's value stays, and `break` and `continue` swapped.

use syn::{Block, Expr, Lifetime, Stmt};

use super::walk::{TargetKind, Walker};
use crate::catalog::{self, Mutator, RUST};

impl Walker<'_, '_> {
    /// Each exit statement of `block` (with its `;`) whose deletion leaves the block's value as
    /// it was: any in a block whose value is `()` and discarded (`unit`: a loop's body, the block of an
    /// `if` without `else`), else one followed by a tail value or a last exit statement.
    pub(crate) fn delete_exits(&mut self, block: &Block, unit: bool) {
        let ends_in_value = match block.stmts.last() {
            Some(Stmt::Expr(_, None)) => true,
            Some(Stmt::Macro(mac)) => mac.semi_token.is_none(),
            Some(Stmt::Expr(last, Some(_))) => exit_keyword(last).is_some(),
            _ => false,
        };
        let count = block.stmts.len();
        for (index, stmt) in block.stmts.iter().enumerate() {
            // Only a statement, `;` included: an exit that is the block's tail stays.
            let Stmt::Expr(expr, Some(_)) = stmt else { continue };
            let Some(keyword) = exit_keyword(expr) else { continue };
            if !(unit || (index + 1 < count && ends_in_value)) {
                continue;
            }
            let span = self.source.node(stmt);
            for (rule, to) in
                catalog::entries(RUST, Mutator::StatementDeletion, "<return, break or continue>;")
            {
                self.push(span.clone(), to.to_string(), rule, format!("delete {keyword} statement"));
            }
        }
    }

    /// `break` → `continue` when it carries no value and leaves a loop.
    pub(crate) fn swap_break(&mut self, expr: &syn::ExprBreak) {
        if expr.expr.is_some() {
            return;
        }
        if self.target(expr.label.as_ref()).is_some_and(|kind| kind != TargetKind::Block) {
            self.loop_control("break", self.source.node(&expr.break_token));
        }
    }

    /// `continue` → `break` when the loop it continues is a `for` or `while`.
    pub(crate) fn swap_continue(&mut self, expr: &syn::ExprContinue) {
        if self.target(expr.label.as_ref()) == Some(TargetKind::ForOrWhile) {
            self.loop_control("continue", self.source.node(&expr.continue_token));
        }
    }

    fn loop_control(&mut self, from: &str, span: std::ops::Range<usize>) {
        for (rule, to) in catalog::entries(RUST, Mutator::LoopControl, from) {
            self.push(span.clone(), to.to_string(), rule, format!("replace {from} with {to}"));
        }
    }

    /// What a `break` or `continue` with `label` leaves: the innermost loop without a label,
    /// else the innermost target of that name.
    fn target(&self, label: Option<&Lifetime>) -> Option<TargetKind> {
        let found = match label {
            None => self.targets.iter().rev().find(|target| target.kind != TargetKind::Block),
            Some(label) => {
                let name = label.ident.to_string();
                self.targets.iter().rev().find(|target| target.label.as_deref() == Some(name.as_str()))
            }
        };
        found.map(|target| target.kind)
    }
}

/// `return`, `break` or `continue`, when `expr` is one.
fn exit_keyword(expr: &Expr) -> Option<&'static str> {
    match expr {
        Expr::Return(_) => Some("return"),
        Expr::Break(_) => Some("break"),
        Expr::Continue(_) => Some("continue"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::rust::mutate;

    /// `line:original→replacement` of every mutant of `family` made on any line of `source`.
    fn made(source: &str, family: &str) -> Vec<String> {
        let lines: Vec<usize> = (1..=source.lines().count()).collect();
        let found = mutate(source, &lines).unwrap();
        found
            .mutants
            .iter()
            .filter(|m| m.mutator().name() == family)
            .map(|m| format!("{}:{}→{}", m.line, m.original, m.replacement))
            .collect()
    }

    fn deletions(source: &str) -> Vec<String> {
        made(source, "StatementDeletion")
    }

    fn swaps(source: &str) -> Vec<String> {
        made(source, "LoopControl")
    }

    #[test]
    fn an_early_return_in_an_if_let_on_an_unsafe_value_is_deleted() {
        let source = "fn get(&self) -> &T {\n    if let Some(existing) = unsafe { self.lookup() } {\n        return existing;\n    }\n    self.insert()\n}\n";
        assert_eq!(deletions(source), ["3:return existing;→"]);
    }

    #[test]
    fn exits_in_a_loop_body_are_deleted_wherever_they_stand() {
        let source = "fn f(xs: &[u8]) {\n    for x in xs {\n        g(x);\n        continue;\n    }\n    while h() {\n        break;\n    }\n    loop {\n        break\n    }\n}\n";
        // `break` without `;` is the loop body's tail, not a statement: it stays.
        assert_eq!(deletions(source), ["3:g(x);→", "4:continue;→", "7:break;→"]);
    }

    #[test]
    fn an_exit_statement_in_the_block_of_an_if_without_else_is_deleted() {
        let source = "fn f(a: bool, b: bool) {\n    if a {\n        return\n    }\n    if a {\n        g();\n    } else if b {\n        return;\n    }\n}\n";
        // Line 3's `return` without `;` is its block's tail: not a statement to delete.
        assert_eq!(deletions(source), ["6:g();→", "8:return;→"]);
    }

    #[test]
    fn the_last_exit_of_a_function_else_block_match_arm_let_else_or_closure_stays() {
        let source = "fn f(a: bool, o: Option<u8>) -> u8 {\n    let Some(x) = o else { return 0; };\n    let c = |y: u8| { return y; };\n    \
                      let v = if a { 1 } else { return 2; };\n    match o {\n        Some(_) => { return 3; }\n        None => {}\n    }\n    return v;\n}\n";
        assert_eq!(deletions(source), Vec::<String>::new());
    }

    #[test]
    fn an_exit_followed_by_a_tail_value_or_a_last_exit_is_deleted() {
        let source = "fn f(a: bool) -> u8 {\n    return 1;\n    g()\n}\nfn h(a: bool) -> u8 {\n    return 1;\n    return 2;\n}\n";
        assert_eq!(deletions(source), ["2:return 1;→", "6:return 1;→"]);
    }

    #[test]
    fn an_exit_followed_only_by_statements_stays_when_the_block_has_a_value() {
        let source = "fn f(a: bool) -> u8 {\n    return 1;\n    let x = 2;\n}\n";
        assert_eq!(deletions(source), Vec::<String>::new());
    }

    #[test]
    fn break_and_continue_swap_in_for_and_while_loops_with_their_labels() {
        let source = "fn f(xs: &[u8]) {\n    'rows: for x in xs {\n        while g() {\n            if h() {\n                continue 'rows;\n            }\n            \
                      if *x == 0 {\n                break;\n            }\n            continue;\n        }\n    }\n}\n";
        assert_eq!(swaps(source), ["5:continue→break", "8:break→continue", "10:continue→break"],);
        let lines: Vec<usize> = (1..=source.lines().count()).collect();
        let found = mutate(source, &lines).unwrap();
        let labelled =
            found.mutants.iter().find(|m| m.line == 5 && m.rule.mutator.name() == "LoopControl").unwrap();
        assert!(labelled.apply(source).contains("break 'rows;"), "{}", labelled.apply(source));
    }

    #[test]
    fn continue_of_a_loop_stays_but_its_break_becomes_continue() {
        let source = "fn f() -> u8 {\n    'outer: for _ in 0..3 {\n        loop {\n            if g() {\n                continue;\n            }\n            \
                      if h() {\n                continue 'outer;\n            }\n            break;\n        }\n    }\n    loop {\n        if g() {\n            continue;\n        }\n        return 1;\n    }\n}\n";
        assert_eq!(swaps(source), ["8:continue→break", "10:break→continue"]);
    }

    #[test]
    fn a_break_with_a_value_a_labelled_blocks_break_and_one_in_a_closure_are_not_swapped() {
        let source = "fn f(xs: &[u8]) -> u8 {\n    'found: {\n        if g() {\n            break 'found;\n        }\n    }\n    for x in xs {\n        \
                      let c = || {\n            break;\n        };\n    }\n    loop {\n        if g() {\n            break 7;\n        }\n    }\n}\n";
        assert_eq!(swaps(source), Vec::<String>::new());
        // Their deletion still type-checks: each is the block of an `if` without `else`.
        assert_eq!(deletions(source), ["4:break 'found;→", "14:break 7;→"]);
    }
}
