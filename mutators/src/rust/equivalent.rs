//! Rust fast-path guards (`fast-path-guard` in `catalog::EQUIVALENT`): `if ptr::eq(a, b) { return ..; }`.

use syn::{Expr, ExprIf, Stmt};

/// `if <pointer-equality test> { return ...; }` with no `else`.
pub(crate) fn is_fast_path(expr: &ExprIf) -> bool {
    let only_returns = matches!(expr.then_branch.stmts.as_slice(), [Stmt::Expr(Expr::Return(_), _)]);
    expr.else_branch.is_none() && only_returns && is_pointer_equality(&expr.cond)
}

/// `ptr::eq(a, b)`, `std::ptr::addr_eq(a, b)`, `Rc::ptr_eq(&a, &b)`, `Arc::ptr_eq(..)`, `a.ptr_eq(&b)`.
fn is_pointer_equality(condition: &Expr) -> bool {
    match condition {
        Expr::Paren(inner) => is_pointer_equality(&inner.expr),
        Expr::MethodCall(call) => call.method == "ptr_eq",
        Expr::Call(call) => {
            let Expr::Path(path) = &*call.func else { return false };
            let names: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
            match names.as_slice() {
                [.., last] if last == "ptr_eq" => true,
                [.., module, last] => module == "ptr" && (last == "eq" || last == "addr_eq"),
                _ => false,
            }
        }
        _ => false,
    }
}
