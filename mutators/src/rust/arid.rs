//! Rust arid code (`catalog::RUST_ARID`): statements that are `debug_assert!`, logging or output macros.

use syn::{Block, Expr, Stmt};

use crate::catalog::{Marker, RUST_ARID};
use crate::marks::named;

/// The arid rule of a function body made only of arid statements (the first one's): replacing
/// that body is deleting them.
pub(crate) fn body_rule(block: &Block) -> Option<&'static Marker> {
    let rules: Option<Vec<&'static Marker>> = block.stmts.iter().map(statement_rule).collect();
    rules?.first().copied()
}

/// The arid rule a statement falls under, if it is one of those macros.
pub(crate) fn statement_rule(stmt: &Stmt) -> Option<&'static Marker> {
    let mac = match stmt {
        Stmt::Macro(statement) => &statement.mac,
        Stmt::Expr(Expr::Macro(expr), _) => &expr.mac,
        _ => return None,
    };
    let name = mac.path.segments.last()?.ident.to_string();
    let rule = match name.as_str() {
        "debug_assert" | "debug_assert_eq" | "debug_assert_ne" => "debug-assert",
        "trace" | "debug" | "info" | "warn" | "error" => "log-macro",
        "println" | "eprintln" | "print" | "eprint" | "dbg" => "print-macro",
        _ => return None,
    };
    Some(named(RUST_ARID, rule))
}
