//! Mutant schemata: every mutant of a file compiled into one program, each behind a switch read at run time.
//!
//! Each mutant is placed at a *site*: the smallest expression, statement or function body that
//! holds its edit. A site becomes a `match` on the switch macro, whose first arm is the original
//! code (with the sites inside it switched in turn) and whose other arms are the mutated copies,
//! written on one line so that every line keeps its number. The macro, defined once at the top
//! of the file, answers the active mutant's id when it is one of the site's, else 0; it reads
//! `MUTDELTA_MUTANT` once per site, records which test reached the site when `MUTDELTA_RECORD`
//! names a file, and panics on the canary id, which proves the switch is live.

use std::collections::BTreeMap;
use std::ops::Range;
use std::str::FromStr;

use syn::visit::{self, Visit};
use syn::{Expr, Pat, Stmt};

use super::source::{self, Source};
use crate::{Mutant, MutateError};

/// The environment variable naming the active mutant's id (none, or 0: the original program).
pub const MUTANT_VAR: &str = "MUTDELTA_MUTANT";
/// The environment variable naming the file where each site reached appends a line: its ids,
/// a space, and the name of the thread that reached it (libtest names it after the test).
pub const RECORD_VAR: &str = "MUTDELTA_RECORD";
/// The id that makes every site reached panic: a run with it fails only if the switch is live.
pub const CANARY: u32 = u32::MAX;

const SWITCH: &str = "__mutdelta_switch";

/// The file with its mutants switched in.
#[derive(Debug, Clone)]
pub struct Schema {
    pub text: String,
    /// The ids of the mutants switched in.
    pub switched: Vec<u32>,
    /// The ids of those with no site (they need a build of their own).
    pub unswitched: Vec<u32>,
    /// Each site's ids and where its code lies in `text` (once for each copy).
    sites: Vec<(Vec<u32>, Range<usize>)>,
    /// Function bodies in `text`, with the ids of the sites inside each.
    regions: Vec<(Range<usize>, Vec<u32>)>,
    /// Each mutant's own code in `text`: the value of its arm.
    arms: Vec<(u32, Range<usize>)>,
}

impl Schema {
    /// The ids to leave out of the schema for a compiler error at byte `offset` of `text`:
    /// the innermost site holding it, else every site of the innermost function body holding
    /// it, else every site of the file.
    pub fn blame(&self, offset: usize) -> Vec<u32> {
        let region = || {
            let holding =
                self.regions.iter().filter(|(range, ids)| !ids.is_empty() && range.contains(&offset));
            holding.min_by_key(|(range, _)| range.len()).map(|(_, ids)| ids.clone())
        };
        self.site_at(offset).or_else(region).unwrap_or_else(|| self.switched.clone())
    }

    /// The mutant whose own code (its arm's value, not the original code beside it) holds
    /// byte `offset` of `text`.
    pub fn own_code_at(&self, offset: usize) -> Option<u32> {
        self.arms.iter().find(|(_, range)| range.contains(&offset)).map(|(id, _)| *id)
    }

    /// The ids of the innermost site holding byte `offset` of `text`, if a site does.
    pub fn site_at(&self, offset: usize) -> Option<Vec<u32>> {
        let holding = self.sites.iter().filter(|(_, range)| range.contains(&offset));
        holding.min_by_key(|(_, range)| range.len()).map(|(ids, _)| ids.clone())
    }
}

/// How a site's `match` is written where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// An expression inside another: `(match S!(..) { 0 => e, 7 => e2, .. })`.
    Paren,
    /// A whole statement or match arm: `match S!(..) { 0 => { s }, 7 => { s2 }, .. }`.
    Block,
    /// A function body: `{ match S!(..) { 0 => { .. }, 7 => { .. }, .. } }`.
    Body,
}

/// Where sites may stand: every expression outside constants, patterns, types and macro
/// tokens; statements; function bodies.
struct Candidates<'p, 'a> {
    source: &'p Source<'a>,
    found: BTreeMap<(usize, usize), Form>,
    bodies: Vec<Range<usize>>,
    /// Literal operands of arithmetic and indexing: rustc refuses `x / 0`, `3 - 4u32` or
    /// `[a, b][2]` at compile time, which it could no longer see if the literal came out of a
    /// switch. Their mutants' site is the operation, so the refusal stays in the schema's build.
    operands: Vec<(usize, usize)>,
}

impl Candidates<'_, '_> {
    fn add(&mut self, range: Range<usize>, form: Form) {
        let slot = self.found.entry((range.start, range.end)).or_insert(form);
        if form != Form::Paren {
            *slot = form;
        }
    }

    fn body(&mut self, block: &syn::Block) {
        let range = self.source.node(block);
        self.bodies.push(range.clone());
        self.add(range, Form::Body);
        self.visit_block(block);
    }
}

impl<'ast> Visit<'ast> for Candidates<'_, '_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        match item {
            syn::Item::Fn(f) => self.body(&f.block),
            syn::Item::Impl(_) | syn::Item::Trait(_) | syn::Item::Mod(_) => visit::visit_item(self, item),
            _ => {} // constants, statics, enum discriminants: evaluated at compile time
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.body(&f.block);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.body(block);
        }
    }

    fn visit_stmt(&mut self, stmt: &'ast Stmt) {
        match stmt {
            Stmt::Expr(expr, semi) => {
                if semi.is_some() {
                    self.add(self.source.node(stmt), Form::Block);
                }
                if !has_let(expr) {
                    self.add(self.source.node(expr), Form::Block);
                }
            }
            Stmt::Macro(mac) if mac.semi_token.is_some() => self.add(self.source.node(stmt), Form::Block),
            _ => {}
        }
        visit::visit_stmt(self, stmt);
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.add(self.source.node(&*arm.body), Form::Block);
        visit::visit_arm(self, arm);
    }

    fn visit_expr(&mut self, expr: &'ast Expr) {
        if !has_let(expr) {
            self.add(self.source.node(expr), Form::Paren);
        }
        visit::visit_expr(self, expr);
    }

    fn visit_expr_binary(&mut self, expr: &'ast syn::ExprBinary) {
        for operand in [&*expr.left, &*expr.right] {
            if is_literal(operand) {
                let range = self.source.node(operand);
                self.operands.push((range.start, range.end));
            }
        }
        visit::visit_expr_binary(self, expr);
    }

    fn visit_expr_index(&mut self, expr: &'ast syn::ExprIndex) {
        if is_literal(&expr.index) {
            let range = self.source.node(&*expr.index);
            self.operands.push((range.start, range.end));
        }
        visit::visit_expr_index(self, expr);
    }

    fn visit_pat(&mut self, pat: &'ast Pat) {
        if let Pat::Guard(guarded) = pat {
            self.visit_expr(&guarded.guard);
        }
    }

    fn visit_expr_repeat(&mut self, expr: &'ast syn::ExprRepeat) {
        self.visit_expr(&expr.expr);
    }

    fn visit_expr_const(&mut self, _: &'ast syn::ExprConst) {}
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
    fn visit_macro(&mut self, _: &'ast syn::Macro) {}
    fn visit_type(&mut self, _: &'ast syn::Type) {}
    fn visit_generics(&mut self, _: &'ast syn::Generics) {}
    fn visit_path(&mut self, _: &'ast syn::Path) {}
}

/// A literal, maybe negated or in parentheses: a constant rustc evaluates where it is used.
fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Paren(inner) => is_literal(&inner.expr),
        Expr::Unary(unary) => matches!(unary.op, syn::UnOp::Neg(_)) && is_literal(&unary.expr),
        _ => false,
    }
}

/// `let` in a condition, alone or in a `&&` chain: no expression of its own.
fn has_let(expr: &Expr) -> bool {
    match expr {
        Expr::Let(_) => true,
        Expr::Binary(binary) if matches!(binary.op, syn::BinOp::And(_)) => {
            has_let(&binary.left) || has_let(&binary.right)
        }
        _ => false,
    }
}

/// One site: where it stands, how it is written, its mutants.
struct Site<'m> {
    range: Range<usize>,
    form: Form,
    mutants: Vec<(u32, &'m Mutant)>,
}

/// `source` with `mutants` (each with its id, never 0 nor `CANARY`) switched in.
pub fn render(source: &str, mutants: &[(u32, &Mutant)]) -> Result<Schema, MutateError> {
    let _spans = super::source::SpanScope;
    let parsed = source::parse(source)?;
    let mut candidates = Candidates {
        source: &parsed.source,
        found: BTreeMap::new(),
        bodies: Vec::new(),
        operands: Vec::new(),
    };
    candidates.visit_file(&parsed.file);
    let Candidates { mut found, bodies, operands, .. } = candidates;
    found.retain(|range, _| !operands.contains(range));

    let mut sites: BTreeMap<(usize, usize), Site> = BTreeMap::new();
    let mut unswitched = Vec::new();
    for &(id, mutant) in mutants {
        let smallest = found
            .iter()
            .filter(|((start, end), _)| *start <= mutant.span.start && mutant.span.end <= *end)
            .min_by_key(|((start, end), _)| end - start);
        match smallest {
            Some((&(start, end), &form)) => sites
                .entry((start, end))
                .or_insert_with(|| Site { range: start..end, form, mutants: Vec::new() })
                .mutants
                .push((id, mutant)),
            None => unswitched.push(id),
        }
    }
    // Outermost first: by start, then the longer first.
    let mut ordered: Vec<Site> = sites.into_values().collect();
    ordered.sort_by_key(|site| (site.range.start, std::cmp::Reverse(site.range.end)));

    let prelude_at = parsed
        .file
        .attrs
        .iter()
        .filter(|attr| matches!(attr.style, syn::AttrStyle::Inner(_)))
        .map(|attr| parsed.source.node(attr).end)
        .max()
        .unwrap_or(0)
        .max(source::code_start(source));
    // At the start of the next line: a `//!` comment or a shebang runs to the end of its line,
    // and the prelude, written without a line break, keeps every line's number.
    let prelude_at = if prelude_at == 0 || source[..prelude_at].ends_with('\n') {
        prelude_at
    } else {
        source[prelude_at..].find('\n').map_or(source.len(), |at| prelude_at + at + 1)
    };

    let mut renderer = Renderer {
        source,
        sites: &ordered,
        out: String::new(),
        placed: Vec::new(),
        arms: Vec::new(),
        anchors: Vec::new(),
    };
    renderer.verbatim(0..prelude_at);
    renderer.out.push_str(&prelude());
    renderer.range(prelude_at..source.len());
    let Renderer { out, placed, arms, anchors, .. } = renderer;
    let regions = body_regions(&bodies, &ordered, &anchors);
    let switched = ordered.iter().flat_map(|site| site.mutants.iter().map(|(id, _)| *id)).collect();
    Ok(Schema { text: out, switched, unswitched, sites: placed, arms, regions })
}

/// The switch macro and the lints its code would raise, on one line.
fn prelude() -> String {
    // `std` is named through a block's own `extern crate`, so that a `no_std` crate (whose
    // tests run with std anyway) can hold the switch too.
    format!(
        concat!(
            "#![allow(unused_parens, unused_braces, unreachable_code, unreachable_patterns, unused_variables,",
            " unused_mut, unused_assignments, dead_code, clippy::all)]",
            " macro_rules! {switch} {{ ($($id:literal),+) => {{{{ extern crate std as s;",
            " static ACTIVE: s::sync::OnceLock<(u32, bool)> = s::sync::OnceLock::new();",
            " s::thread_local!(static SEEN: s::cell::Cell<bool> = const {{ s::cell::Cell::new(false) }});",
            " let ids: &[u32] = &[$($id),+];",
            " let &(active, record) = ACTIVE.get_or_init(|| (",
            "s::env::var(\"{mutant}\").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0),",
            " s::env::var_os(\"{record}\").is_some()));",
            " if record && !SEEN.with(|seen| seen.replace(true)) {{",
            " if let Some(path) = s::env::var_os(\"{record}\") {{",
            " let mut line = s::string::String::new();",
            " for id in ids {{ line.push_str(&s::string::ToString::to_string(id)); line.push(','); }}",
            " line.push(' '); line.push_str(s::thread::current().name().unwrap_or(\"\")); line.push('\\n');",
            " if let Ok(mut file) = s::fs::OpenOptions::new().append(true).create(true).open(path) {{",
            " let _ = s::io::Write::write_all(&mut file, line.as_bytes()); }} }} }}",
            " if active == {canary} {{ s::panic!(\"mutdelta: the mutant switch is live\"); }}",
            " if ids.contains(&active) {{ active }} else {{ 0 }} }}}} }} "
        ),
        switch = SWITCH,
        mutant = MUTANT_VAR,
        record = RECORD_VAR,
        canary = CANARY,
    )
}

struct Renderer<'s, 'm> {
    source: &'s str,
    /// Outermost first.
    sites: &'s [Site<'m>],
    out: String,
    /// Each site's ids and where it was written.
    placed: Vec<(Vec<u32>, Range<usize>)>,
    /// Each mutant's own code: its arm's value.
    arms: Vec<(u32, Range<usize>)>,
    /// The source copied as it is: (where in the source, where in `out`, length).
    anchors: Vec<(usize, usize, usize)>,
}

impl Renderer<'_, '_> {
    fn verbatim(&mut self, range: Range<usize>) {
        self.anchors.push((range.start, self.out.len(), range.len()));
        self.out.push_str(&self.source[range]);
    }

    /// Writes `range` of the source with the sites inside it switched.
    fn range(&mut self, range: Range<usize>) {
        let mut at = range.start;
        for (index, site) in self.sites.iter().enumerate() {
            let inside = range.start <= site.range.start && site.range.end <= range.end;
            if !inside || site.range.start < at || site.range == range {
                continue; // outside, or inside a site already written
            }
            self.verbatim(at..site.range.start);
            self.site(index);
            at = site.range.end;
        }
        self.verbatim(at..range.end);
    }

    fn site(&mut self, index: usize) {
        let site = &self.sites[index];
        let start = self.out.len();
        let ids: Vec<u32> = site.mutants.iter().map(|(id, _)| *id).collect();
        let list = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let (open, close) = match site.form {
            Form::Paren => ("(", ")"),
            Form::Block => ("", ""),
            Form::Body => ("{ ", " }"),
        };
        let (arm_open, arm_close) = if site.form == Form::Block { ("{ ", " }") } else { ("", "") };
        self.out.push_str(&format!("{open}match {SWITCH}!({list}) {{ 0 => {arm_open}"));
        self.range(site.range.clone());
        self.out.push_str(arm_close);
        let last = site.mutants.len() - 1;
        for (n, (id, mutant)) in site.mutants.iter().enumerate() {
            let mutated = [
                &self.source[site.range.start..mutant.span.start],
                mutant.replacement.as_str(),
                &self.source[mutant.span.end..site.range.end],
            ]
            .concat();
            let pattern = if n == last { "_".to_string() } else { id.to_string() };
            self.out.push_str(&format!(", {pattern} => {arm_open}"));
            let arm_start = self.out.len();
            self.out.push_str(&one_line(&mutated));
            self.arms.push((*id, arm_start..self.out.len()));
            self.out.push_str(arm_close);
        }
        self.out.push_str(&format!(" }}{close}"));
        self.placed.push((ids, start..self.out.len()));
    }
}

/// Code on one line, comments dropped, so the lines after it keep their numbers.
fn one_line(code: &str) -> String {
    if !code.contains('\n') {
        return code.to_string();
    }
    proc_macro2::TokenStream::from_str(code).map_or_else(|_| code.to_string(), |tokens| tokens.to_string())
}

/// Each function body's place in the rendered text, with the ids of the sites inside it.
fn body_regions(
    bodies: &[Range<usize>],
    sites: &[Site],
    anchors: &[(usize, usize, usize)],
) -> Vec<(Range<usize>, Vec<u32>)> {
    let place = |offset: usize| {
        anchors
            .iter()
            .find(|(start, _, len)| *start <= offset && offset <= start + len)
            .map(|(start, out, _)| out + (offset - start))
    };
    bodies
        .iter()
        .filter_map(|body| {
            let ids = sites
                .iter()
                .filter(|site| body.start <= site.range.start && site.range.end <= body.end)
                .flat_map(|site| site.mutants.iter().map(|(id, _)| *id))
                .collect();
            Some((place(body.start)?..place(body.end)?, ids))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    const PROGRAM: &str = r#"//! A program whose output shows every mutant.
#![deny(warnings)]

fn classify(n: i64) -> &'static str {
    match n % 3 {
        0 => "fizz",
        1 => "one",
        _ => "other",
    }
}

fn total(values: &[i64], log: &mut Vec<i64>) -> i64 {
    let mut sum = 0;
    for v in values {
        if *v > 2 && *v != 7 {
            sum += v * 2;
        }
        log.push(*v);
    }
    sum - 1
}

fn flag(x: bool) -> bool {
    !x
}

fn main() {
    let mut log = Vec::new();
    let t = total(&[1, 3, 7, 9], &mut log);
    println!("{} {:?} {} {}", t, log, classify(t), flag(t > 20));
}
"#;

    fn compile(dir: &Path, name: &str, source: &str) -> std::path::PathBuf {
        let file = dir.join(format!("{name}.rs"));
        std::fs::write(&file, source).unwrap();
        let binary = dir.join(name);
        let out = Command::new("rustc")
            .args(["--edition", "2021", "--cap-lints", "warn", "-o"])
            .arg(&binary)
            .arg(&file)
            .output()
            .expect("rustc runs");
        assert!(out.status.success(), "{name} does not compile:\n{}", String::from_utf8_lossy(&out.stderr));
        binary
    }

    fn run(binary: &Path, env: &[(&str, &str)]) -> (bool, String) {
        let out = Command::new(binary).envs(env.iter().copied()).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn all_mutants() -> Vec<Mutant> {
        let lines: Vec<usize> = (1..=PROGRAM.lines().count()).collect();
        let mutants = crate::rust::mutate(PROGRAM, &lines).unwrap().mutants;
        // main and its println! hold no mutants worth running; the rest do.
        mutants.into_iter().filter(|m| m.line < 27).collect()
    }

    #[test]
    fn each_mutant_switched_on_behaves_as_its_own_build() {
        let dir = tempfile::tempdir().unwrap();
        let mutants = all_mutants();
        assert!(mutants.len() > 15, "a mutant of every kind: {}", mutants.len());
        let numbered: Vec<(u32, &Mutant)> = mutants.iter().zip(1..).map(|(m, id)| (id, m)).collect();
        let schema = render(PROGRAM, &numbered).unwrap();
        assert_eq!(schema.unswitched, Vec::<u32>::new());
        assert_eq!(schema.text.lines().count(), PROGRAM.lines().count(), "every line keeps its number");
        let switched = compile(dir.path(), "schema", &schema.text);
        let original = compile(dir.path(), "original", PROGRAM);
        assert_eq!(run(&switched, &[]), run(&original, &[]), "switch off: the original program");
        let mut kinds = std::collections::BTreeSet::new();
        for (id, mutant) in &numbered {
            let alone = compile(dir.path(), &format!("m{id}"), &mutant.apply(PROGRAM));
            let value = id.to_string();
            assert_eq!(
                run(&switched, &[(MUTANT_VAR, &value)]),
                run(&alone, &[]),
                "mutant {id} ({}, line {})",
                mutant.description,
                mutant.line
            );
            kinds.insert(mutant.mutator());
        }
        assert!(kinds.len() >= 7, "operators, literals, conditions, statements, arms, bodies: {kinds:?}");
    }

    #[test]
    fn a_recording_run_names_the_thread_that_reached_each_site_and_the_canary_panics() {
        let dir = tempfile::tempdir().unwrap();
        let program = PROGRAM.replace(
            "    let mut log = Vec::new();",
            "    std::thread::Builder::new().name(\"tests::flag\".into()).spawn(|| flag(true)).unwrap().join().unwrap();\n    let mut log = Vec::new();",
        );
        let source = program.replacen("fn main() {\n", "fn main() {", 1);
        let lines: Vec<usize> = (1..=source.lines().count()).collect();
        let mutants = crate::rust::mutate(&source, &lines).unwrap().mutants;
        let flag_line = source.lines().position(|l| l.trim() == "!x").unwrap() + 1;
        let numbered: Vec<(u32, &Mutant)> = mutants.iter().zip(1..).map(|(m, id)| (id, m)).collect();
        let flag_ids: Vec<u32> =
            numbered.iter().filter(|(_, m)| m.line == flag_line).map(|(id, _)| *id).collect();
        assert!(!flag_ids.is_empty());
        let schema = render(&source, &numbered).unwrap();
        let binary = compile(dir.path(), "recorded", &schema.text);
        let record = dir.path().join("record");
        let (passed, _) = run(&binary, &[(RECORD_VAR, record.to_str().unwrap())]);
        assert!(passed);
        let lines = std::fs::read_to_string(&record).unwrap();
        let ids: String = flag_ids.iter().map(|id| format!("{id},")).collect();
        assert!(lines.lines().any(|line| line == format!("{ids} tests::flag")), "{lines}");
        assert!(lines.lines().any(|line| line == format!("{ids} main")), "main calls flag too: {lines}");
        let reached_by_flag = lines.lines().filter(|line| *line == format!("{ids} tests::flag")).count();
        assert_eq!(reached_by_flag, 1, "once for each test and site: {lines}");

        let (passed, _) = run(&binary, &[(MUTANT_VAR, &CANARY.to_string())]);
        assert!(!passed, "the canary makes the first site reached panic");
    }

    #[test]
    fn a_no_std_library_holds_the_switch() {
        let source = "//! No std here.\n#![no_std]\n\npub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
        let mutants = crate::rust::mutate(source, &[5]).unwrap().mutants;
        let numbered: Vec<(u32, &Mutant)> = mutants.iter().zip(1..).map(|(m, id)| (id, m)).collect();
        let schema = render(source, &numbered).unwrap();
        assert!(!schema.switched.is_empty());
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lib.rs"), &schema.text).unwrap();
        let out = Command::new("rustc")
            .args(["--edition", "2021", "--crate-type", "lib", "--emit", "metadata", "lib.rs"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}\n{}", schema.text, String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn an_error_is_blamed_on_the_innermost_site_else_its_function_else_the_file() {
        let mutants = all_mutants();
        let numbered: Vec<(u32, &Mutant)> = mutants.iter().zip(1..).map(|(m, id)| (id, m)).collect();
        let schema = render(PROGRAM, &numbered).unwrap();
        let text = &schema.text;
        // Inside the mutated arm that turns `*v > 2` into `*v >= 2`.
        let arm = text.find("*v >= 2").unwrap();
        let blamed = schema.blame(arm);
        let owner = numbered.iter().find(|(_, m)| m.replacement == ">=" && m.original == ">").unwrap().0;
        assert!(blamed.contains(&owner), "{blamed:?}");
        assert_eq!(schema.own_code_at(arm), Some(owner), "its own code");
        assert_eq!(schema.own_code_at(text.find("fn total").unwrap()), None, "no mutant's code");
        assert!(blamed.len() < 6, "only that site's mutants: {blamed:?}");
        // With the bodies' own mutants left out, `let mut sum = 0;` is in `total` but in no site.
        let unbodied: Vec<(u32, &Mutant)> = numbered
            .iter()
            .copied()
            .filter(|(_, m)| m.mutator() != crate::catalog::Mutator::FunctionBody)
            .collect();
        let schema = render(PROGRAM, &unbodied).unwrap();
        let total_ids = schema.blame(schema.text.find("let mut sum").unwrap());
        assert!(total_ids.contains(&owner) && total_ids.len() > blamed.len(), "{total_ids:?}");
        let lines_of =
            |ids: &[u32]| ids.iter().map(|id| numbered[*id as usize - 1].1.line).collect::<Vec<_>>();
        assert!(lines_of(&total_ids).iter().all(|line| (12..=21).contains(line)), "total's alone");
        assert_eq!(schema.blame(2), schema.switched, "outside every function: the whole file");
        let in_main = schema.text.find("let mut log").unwrap();
        assert_eq!(schema.blame(in_main), schema.switched, "a function without sites: the whole file");
    }
}
