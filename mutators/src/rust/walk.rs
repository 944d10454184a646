//! The walk over a syn tree: what is code to mutate, what is test code, const context or unsafe.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};
use syn::{Attribute, Block, ImplItem, Item, Pat, Signature, Stmt, TraitItem};

use super::source::Source;
use crate::catalog::Rule;
use crate::marks::Marks;
use crate::Edit;

/// Walks a file, collecting the edits of the wanted lines, the function bodies and the
/// stretches a pragma covers.
pub(crate) struct Walker<'p, 'a> {
    pub source: &'p Source<'a>,
    /// Requested lines, indexed by line number.
    wanted: &'p [bool],
    /// Lines a `mutdelta: skip` comment on the lines above points at, with its reason, until
    /// the item, statement or match arm starting there claims it.
    pub pragma_targets: HashMap<usize, String>,
    pub edits: Vec<Edit>,
    /// Byte ranges of the bodies of the functions outside test code, braces included.
    pub bodies: Vec<Range<usize>>,
    /// Items, statements and match arms a pragma above them covers, with its reason.
    pub covered: Vec<(Range<usize>, String)>,
    /// Arid statements and fast-path guards.
    pub marks: Marks,
    /// The loops and labelled blocks around the node visited, innermost last, up to the
    /// nearest function, closure or async block.
    pub(crate) targets: Vec<Target>,
    /// Where the blocks whose value is `()` and discarded start: loop bodies, the block of
    /// an `if` without `else`.
    unit_blocks: HashSet<usize>,
    /// Whether code inside `unsafe` blocks and `unsafe fn`s is mutated like any other.
    mutate_unsafe: bool,
    /// Inside an `unsafe` block or `unsafe fn` (and `mutate_unsafe` is off).
    in_unsafe: bool,
    /// Inside the index of a bounds-checked `a[i]` made of plain arithmetic, within unsafe code:
    /// a mutant there cannot step outside the slice by itself.
    in_checked_index: bool,
    /// Wanted lines where a mutant was not made because it lay in unsafe code.
    pub refused_as_unsafe: HashSet<usize>,
    /// Items compiled only with cargo features (`#[cfg(feature = "x")]`), with those features.
    pub gated: Vec<(Range<usize>, Vec<String>)>,
}

/// What a `break` or `continue` may leave: an enclosing loop or labelled block, innermost last
/// in `Walker::targets`; a function, closure or async block starts an empty list.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub label: Option<String>,
    pub kind: TargetKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetKind {
    /// `for` and `while`: always of type `()`, so a `break` may end them anywhere.
    ForOrWhile,
    /// `loop`: its value's type is set by its `break`s (or `!` without one).
    Loop,
    /// `'a: { .. }`: `break 'a` may leave it, `continue 'a` may not.
    Block,
}

impl Target {
    pub(crate) fn new(label: Option<&syn::Label>, kind: TargetKind) -> Self {
        Target { label: label.map(|label| label.name.ident.to_string()), kind }
    }
}

impl<'p, 'a> Walker<'p, 'a> {
    pub(crate) fn new(
        source: &'p Source<'a>,
        wanted: &'p [bool],
        pragma_targets: HashMap<usize, String>,
        mutate_unsafe: bool,
    ) -> Self {
        Walker {
            source,
            wanted,
            pragma_targets,
            edits: Vec::new(),
            bodies: Vec::new(),
            covered: Vec::new(),
            marks: Marks::default(),
            targets: Vec::new(),
            unit_blocks: HashSet::new(),
            mutate_unsafe,
            in_unsafe: false,
            in_checked_index: false,
            refused_as_unsafe: HashSet::new(),
            gated: Vec::new(),
        }
    }

    pub(crate) fn walk(&mut self, file: &syn::File) {
        if !is_test_code(&file.attrs) {
            self.visit_file(file);
        }
    }

    /// Whether the 1-based `line` was requested.
    pub(crate) fn is_wanted(&self, line: usize) -> bool {
        self.wanted.get(line).copied().unwrap_or(false)
    }

    /// Records an edit if it starts on a wanted line, unless it lies in unsafe code outside a
    /// checked index.
    pub(crate) fn push(
        &mut self,
        span: Range<usize>,
        replacement: String,
        rule: &'static Rule,
        description: String,
    ) {
        let line = self.source.line(span.start);
        if !self.is_wanted(line) {
            return;
        }
        if self.in_unsafe && !self.in_checked_index {
            self.refused_as_unsafe.insert(line);
            return;
        }
        self.edits.push(Edit { span, replacement, rule, description });
    }

    /// Notes the features an item's `#[cfg(..)]` needs, if any.
    fn note_gate(&mut self, attrs: &[Attribute], node: &impl syn::spanned::Spanned) {
        let features: Vec<String> = attrs
            .iter()
            .filter_map(|attr| match &attr.meta {
                syn::Meta::List(list) if attr.path().is_ident("cfg") => {
                    Some(required_features(list.tokens.clone()))
                }
                _ => None,
            })
            .flatten()
            .collect();
        if !features.is_empty() {
            self.gated.push((self.source.node(node), features));
        }
    }

    /// A node starting on a line a pragma points at is covered by it, whole.
    fn claim_pragma(&mut self, node: &impl syn::spanned::Spanned) {
        if self.pragma_targets.is_empty() {
            return;
        }
        let range = self.source.node(node);
        if let Some(reason) = self.pragma_targets.remove(&self.source.line(range.start)) {
            self.covered.push((range, reason));
        }
    }

    /// A `fn` with a body: free function, method or trait default method.
    fn function(&mut self, attrs: &[Attribute], sig: &Signature, block: &Block) {
        if is_test_code(attrs) {
            return;
        }
        let braces = self.source.range(block.brace_token.span.open()).start
            ..self.source.range(block.brace_token.span.close()).end;
        self.bodies.push(braces.clone());
        // A nested `fn` is safe code of its own, whatever surrounds it.
        let outside = (self.in_unsafe, self.in_checked_index);
        self.in_unsafe = matches!(sig.safety, syn::Safety::Unsafe(_)) && !self.mutate_unsafe;
        self.in_checked_index = false;
        if let Some(rule) = super::arid::body_rule(block) {
            self.marks.arid(braces.clone(), rule);
        }
        self.replace_body(sig, block, braces.clone());
        self.replace_tail(sig, block, braces);
        self.apart(|walker| walker.visit_block(block));
        (self.in_unsafe, self.in_checked_index) = outside;
    }

    /// Visits a function, closure or async block body: no `break` in it leaves a loop outside.
    fn apart(&mut self, visit: impl FnOnce(&mut Self)) {
        let outside = std::mem::take(&mut self.targets);
        visit(self);
        self.targets = outside;
    }

    /// Visits a loop or labelled block, with `body`'s value `()` and discarded when `unit`.
    fn within(&mut self, target: Target, body: &Block, unit: bool, visit: impl FnOnce(&mut Self)) {
        if unit {
            self.unit_blocks.insert(self.block_start(body));
        }
        self.targets.push(target);
        visit(self);
        self.targets.pop();
    }

    fn block_start(&self, block: &Block) -> usize {
        self.source.range(block.brace_token.span.open()).start
    }
}

impl<'ast> Visit<'ast> for Walker<'_, '_> {
    fn visit_item(&mut self, item: &'ast Item) {
        self.claim_pragma(item);
        match item {
            Item::Fn(syn::ItemFn { attrs, .. })
            | Item::Impl(syn::ItemImpl { attrs, .. })
            | Item::Trait(syn::ItemTrait { attrs, .. })
            | Item::Mod(syn::ItemMod { attrs, .. }) => self.note_gate(attrs, item),
            _ => {}
        }
        match item {
            Item::Fn(f) => self.function(&f.attrs, &f.sig, &f.block),
            Item::Impl(i) if !is_test_code(&i.attrs) => visit::visit_item_impl(self, i),
            Item::Trait(t) if !is_test_code(&t.attrs) => visit::visit_item_trait(self, t),
            Item::Mod(m) if !is_test_code(&m.attrs) => visit::visit_item_mod(self, m),
            // const and static initialisers, enum discriminants, macros, declarations: no code to mutate
            _ => {}
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        self.claim_pragma(item);
        if let ImplItem::Fn(f) = item {
            self.note_gate(&f.attrs, item);
            self.function(&f.attrs, &f.sig, &f.block);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast TraitItem) {
        self.claim_pragma(item);
        if let TraitItem::Fn(f) = item {
            if let Some(block) = &f.default {
                self.function(&f.attrs, &f.sig, block);
            }
        }
    }

    fn visit_stmt(&mut self, stmt: &'ast Stmt) {
        if let Stmt::Item(item) = stmt {
            return self.visit_item(item);
        }
        self.claim_pragma(stmt);
        if let Some(rule) = super::arid::statement_rule(stmt) {
            self.marks.arid(self.source.node(stmt), rule);
        }
        self.delete_statement(stmt);
        visit::visit_stmt(self, stmt);
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.claim_pragma(arm);
        visit::visit_arm(self, arm);
    }

    fn visit_expr_binary(&mut self, expr: &'ast syn::ExprBinary) {
        self.binary(expr);
        visit::visit_expr_binary(self, expr);
    }

    fn visit_expr_unary(&mut self, expr: &'ast syn::ExprUnary) {
        self.unary(expr);
        visit::visit_expr_unary(self, expr);
    }

    fn visit_expr_lit(&mut self, expr: &'ast syn::ExprLit) {
        self.literal(&expr.lit);
    }

    fn visit_block(&mut self, block: &'ast Block) {
        let unit = self.unit_blocks.contains(&self.block_start(block));
        self.delete_exits(block, unit);
        visit::visit_block(self, block);
    }

    fn visit_expr_if(&mut self, expr: &'ast syn::ExprIf) {
        if super::equivalent::is_fast_path(expr) {
            self.marks.fast_paths.push(self.source.node(&expr.cond));
            self.marks
                .fast_path_returns
                .extend(expr.then_branch.stmts.first().map(|stmt| self.source.node(stmt)));
        }
        if expr.else_branch.is_none() {
            self.unit_blocks.insert(self.block_start(&expr.then_branch));
        }
        self.force_if(expr);
        visit::visit_expr_if(self, expr);
    }

    fn visit_expr_while(&mut self, expr: &'ast syn::ExprWhile) {
        self.force_while(expr);
        let target = Target::new(expr.label.as_ref(), TargetKind::ForOrWhile);
        self.within(target, &expr.body, true, |walker| visit::visit_expr_while(walker, expr));
    }

    fn visit_expr_for_loop(&mut self, expr: &'ast syn::ExprForLoop) {
        // The iterated expression is evaluated once, outside the loop.
        self.visit_expr(&expr.expr);
        let target = Target::new(expr.label.as_ref(), TargetKind::ForOrWhile);
        self.within(target, &expr.body, true, |walker| walker.visit_block(&expr.body));
    }

    fn visit_expr_loop(&mut self, expr: &'ast syn::ExprLoop) {
        let target = Target::new(expr.label.as_ref(), TargetKind::Loop);
        self.within(target, &expr.body, true, |walker| walker.visit_block(&expr.body));
    }

    fn visit_expr_block(&mut self, expr: &'ast syn::ExprBlock) {
        match &expr.label {
            Some(label) => {
                let target = Target::new(Some(label), TargetKind::Block);
                self.within(target, &expr.block, false, |walker| walker.visit_block(&expr.block));
            }
            None => visit::visit_expr_block(self, expr),
        }
    }

    fn visit_expr_closure(&mut self, expr: &'ast syn::ExprClosure) {
        self.apart(|walker| visit::visit_expr_closure(walker, expr));
    }

    fn visit_expr_async(&mut self, expr: &'ast syn::ExprAsync) {
        self.apart(|walker| visit::visit_expr_async(walker, expr));
    }

    fn visit_expr_break(&mut self, expr: &'ast syn::ExprBreak) {
        self.swap_break(expr);
        visit::visit_expr_break(self, expr);
    }

    fn visit_expr_continue(&mut self, expr: &'ast syn::ExprContinue) {
        self.swap_continue(expr);
    }

    fn visit_expr_match(&mut self, expr: &'ast syn::ExprMatch) {
        self.delete_arms(expr);
        visit::visit_expr_match(self, expr);
    }

    /// Patterns are not expressions (`1..=9` there is no range to mutate); only a match
    /// arm's guard is.
    fn visit_pat(&mut self, pat: &'ast Pat) {
        if let Pat::Guard(guarded) = pat {
            self.force_guard(guarded);
            self.visit_expr(&guarded.guard);
        }
    }

    /// `[x; N]`: the length is a constant, only the element is code.
    fn visit_expr_repeat(&mut self, expr: &'ast syn::ExprRepeat) {
        self.visit_expr(&expr.expr);
    }

    /// Unsafe code is mutated only where a mutant cannot make undefined behaviour by itself
    /// (`a[i]`'s bounds-checked index), unless `mutate_unsafe`.
    fn visit_expr_unsafe(&mut self, expr: &'ast syn::ExprUnsafe) {
        let outside = std::mem::replace(&mut self.in_unsafe, !self.mutate_unsafe);
        visit::visit_expr_unsafe(self, expr);
        self.in_unsafe = outside;
    }

    fn visit_expr_index(&mut self, expr: &'ast syn::ExprIndex) {
        self.visit_expr(&expr.expr);
        let checked = self.in_checked_index || (self.in_unsafe && is_plain_arithmetic(&expr.index));
        let outside = std::mem::replace(&mut self.in_checked_index, checked);
        self.visit_expr(&expr.index);
        self.in_checked_index = outside;
    }

    fn visit_expr_const(&mut self, _: &'ast syn::ExprConst) {}
    fn visit_attribute(&mut self, _: &'ast Attribute) {}
    /// Macro bodies are tokens, not syntax: never mutated (a whole macro statement may be deleted).
    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
    /// Types, generics and paths hold no code, but constants: `[u8; 4]`, `f::<3>()`.
    fn visit_type(&mut self, _: &'ast syn::Type) {}
    fn visit_generics(&mut self, _: &'ast syn::Generics) {}
    fn visit_path(&mut self, _: &'ast syn::Path) {}
    fn visit_angle_bracketed_generic_arguments(&mut self, _: &'ast syn::AngleBracketedGenericArguments) {}
}

/// Arithmetic on names, fields, literals and bounds-checked indexing alone: no call, method,
/// dereference or macro, any of which could be an unchecked operation.
fn is_plain_arithmetic(expr: &syn::Expr) -> bool {
    use syn::{Expr, UnOp};
    match expr {
        Expr::Lit(_) | Expr::Path(_) => true,
        Expr::Field(field) => is_plain_arithmetic(&field.base),
        Expr::Paren(inner) => is_plain_arithmetic(&inner.expr),
        Expr::Group(inner) => is_plain_arithmetic(&inner.expr),
        Expr::Cast(cast) => is_plain_arithmetic(&cast.expr),
        Expr::Binary(binary) => is_plain_arithmetic(&binary.left) && is_plain_arithmetic(&binary.right),
        Expr::Unary(unary) => {
            matches!(unary.op, UnOp::Neg(_) | UnOp::Not(_)) && is_plain_arithmetic(&unary.expr)
        }
        Expr::Index(index) => is_plain_arithmetic(&index.expr) && is_plain_arithmetic(&index.index),
        _ => false,
    }
}

/// `#[test]`, `#[tokio::test]`-like, `#[bench]`, `#[rstest]`, `#[test_case(..)]`, or a `#[cfg(..)]`
/// that holds only under `cfg(test)`.
pub(crate) fn is_test_code(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        let last = path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let test_attribute = matches!(last.as_str(), "test" | "bench" | "rstest" | "test_case");
        let cfg_test = match &attr.meta {
            syn::Meta::List(list) if path.is_ident("cfg") => implies_test(list.tokens.clone()),
            _ => false,
        };
        test_attribute || cfg_test
    })
}

/// The features a cfg predicate needs: `feature = "x"`, or those of the parts of an `all(..)`;
/// none for what cannot be told apart so simply (`any`, `not`).
fn required_features(predicate: TokenStream) -> Vec<String> {
    let trees: Vec<TokenTree> = predicate.into_iter().collect();
    match trees.as_slice() {
        [TokenTree::Ident(key), TokenTree::Punct(eq), TokenTree::Literal(value)]
            if key == "feature" && eq.as_char() == '=' =>
        {
            match syn::parse_str::<syn::LitStr>(&value.to_string()) {
                Ok(name) => vec![name.value()],
                Err(_) => Vec::new(),
            }
        }
        [TokenTree::Ident(all), TokenTree::Group(group)] if all == "all" => {
            split_on_commas(group.stream()).into_iter().flat_map(required_features).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether a cfg predicate can only hold in test builds: `test`, or `all(..)` with such a part.
fn implies_test(predicate: TokenStream) -> bool {
    let trees: Vec<TokenTree> = predicate.into_iter().collect();
    match trees.as_slice() {
        [TokenTree::Ident(ident)] => ident == "test",
        [TokenTree::Ident(all), TokenTree::Group(group)] if all == "all" => {
            split_on_commas(group.stream()).into_iter().any(implies_test)
        }
        _ => false,
    }
}

fn split_on_commas(stream: TokenStream) -> Vec<TokenStream> {
    let mut parts = vec![TokenStream::new()];
    for tree in stream {
        match &tree {
            TokenTree::Punct(p) if p.as_char() == ',' => parts.push(TokenStream::new()),
            _ => parts.last_mut().expect("never empty").extend([tree]),
        }
    }
    parts.retain(|part| !part.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(text: &str) -> Vec<Attribute> {
        syn::parse_str::<syn::ItemFn>(&format!("{text} fn f() {{}}")).unwrap().attrs
    }

    #[test]
    fn test_attributes_and_cfgs() {
        for yes in [
            "#[test]",
            "#[tokio::test(flavor = \"multi_thread\")]",
            "#[cfg(test)]",
            "#[cfg(all(unix, test))]",
        ] {
            assert!(is_test_code(&attrs(yes)), "{yes}");
        }
        for no in ["#[inline]", "#[cfg(not(test))]", "#[cfg(any(test, feature = \"x\"))]", "#[cfg(unix)]"] {
            assert!(!is_test_code(&attrs(no)), "{no}");
        }
    }

    #[test]
    fn the_features_a_cfg_needs() {
        let features = |text: &str| match &attrs(text)[0].meta {
            syn::Meta::List(list) => required_features(list.tokens.clone()),
            _ => unreachable!(),
        };
        assert_eq!(features("#[cfg(feature = \"std\")]"), ["std"]);
        assert_eq!(features("#[cfg(all(unix, feature = \"a\", feature = \"b-c\"))]"), ["a", "b-c"]);
        assert!(features("#[cfg(any(feature = \"a\", feature = \"b\"))]").is_empty());
        assert!(features("#[cfg(not(feature = \"a\"))]").is_empty());
    }
}
