//! One snapshot per Rust mutator family, arid rule and equivalence rule, and proof that every mutant shown still parses.

mod support;

use mutators::catalog::{Rule, EQUIVALENT, RUST, RUST_ARID};
use mutators::rust::{executable_lines, mutate};
use mutators::Mutant;

struct Row {
    /// The family, arid rule or equivalence rule the row is about (its first word); it must
    /// show up among the row's mutants.
    family: &'static str,
    source: &'static str,
    /// Request every line (as for a new file), not only the executable ones: body
    /// replacement needs every line of a body, braces included.
    all_lines: bool,
}

const fn row(family: &'static str, source: &'static str) -> Row {
    Row { family, source, all_lines: false }
}

const ROWS: &[Row] = &[
    row(
        "ArithmeticOperator",
        "fn f(a: i32, b: i32) -> i32 {\n    let c = a + b - a * b / b % a;\n    let d = *&c * -c;\n    c + d\n}\n",
    ),
    row(
        "UnaryOperator",
        "fn f(x: bool, y: i32) -> bool {\n    let z = - y;\n    !x && !!x || -z < y\n}\n",
    ),
    row(
        "BitwiseOperator",
        "fn f(a: u64, b: u64, x: u8) -> u64 {\n    let m = a & b | a ^ b << 1 >> 2;\n    let r = &a;\n    x as u64 >> 3\n}\n",
    ),
    row(
        "ComparisonOperator",
        "fn f(a: u8, b: u8) -> bool {\n    let p = a == b || a != b;\n    let q = a < b && a <= b && a > b && a >= b;\n    (a as u16) < 9 && a as u16 > 9\n}\n",
    ),
    row(
        "BooleanOperator",
        "fn f(a: bool, b: bool, c: Option<u8>) -> bool {\n    if let Some(x) = c && x > 0 {\n        return true;\n    }\n    a && b || !a\n}\n",
    ),
    row(
        "AssignmentOperator",
        "fn f(mut x: u32) -> u32 {\n    x += 1;\n    x -= 1;\n    x *= 2;\n    x /= 2;\n    x %= 2;\n    x &= 1;\n    x |= 1;\n    x ^= 1;\n    x <<= 1;\n    x >>= 1;\n    x\n}\n",
    ),
    row(
        "NumberLiteral",
        "const N: usize = 4;\nfn f() -> f32 {\n    let a = (0, 1, 7, 0x1F, 0b11, 255u8, 254u8, 1_000i64);\n    let b: [u8; 4] = [0u8; 4];\n    \
         let c = g::<3>();\n    match a.0 {\n        1..=9 => 2.5,\n        _ => 0.0 + 1e-3f32,\n    }\n}\n",
    ),
    row(
        "BooleanLiteral",
        "fn f() -> bool {\n    let t = true;\n    g(false);\n    if true {\n        return t;\n    }\n    t\n}\n",
    ),
    row(
        "StringLiteral",
        "#[doc = \"attribute\"]\nfn f() -> usize {\n    let s = (\"abc\", \"\", r\"\\d\", r#\"x\"#, b\"x\", 'c', c\"x\");\n    \
         let t = format!(\"{}\", \"macro\");\n    \"tail\".len()\n}\nextern \"C\" fn g() {}\n",
    ),
    row(
        "StatementDeletion",
        "fn f(v: &mut Vec<i32>, x: i32) -> Result<(), E> {\n    let y = g(x);\n    v.push(y);\n    *v = vec![];\n    v[0] += 1;\n    \
         h(x)?;\n    println!(\"{x}\");\n    log::info!(\"x\");\n    cleanup!(v);\n    x;\n    write!(out, \"x\")?;\n    Ok(())\n}\n",
    ),
    row(
        "StatementDeletion of early exits",
        "fn find(xs: &[u8], k: u8) -> Option<usize> {\n    for (i, x) in xs.iter().enumerate() {\n        if *x == 0 {\n            continue;\n        }\n        \
         if *x == k {\n            return Some(i);\n        } else {\n            return None;\n        }\n    }\n    let Some(&first) = xs.first() else {\n        \
         return None;\n    };\n    return Some(first as usize);\n}\n",
    ),
    row(
        "LoopControl",
        "fn f(rows: &[Vec<u8>]) -> u8 {\n    'rows: for row in rows {\n        for x in row {\n            if *x == 0 {\n                continue 'rows;\n            }\n            \
         if *x == 9 {\n                break;\n            }\n        }\n    }\n    'found: {\n        if g() {\n            break 'found;\n        }\n    }\n    \
         loop {\n        if g() {\n            continue;\n        }\n        break 7;\n    }\n}\n",
    ),
    row(
        "ConditionForcing",
        "fn f(mut a: u32, o: Option<u32>) {\n    if a > 0 {\n        a = 1;\n    } else if a == 0 {\n        a = 2;\n    }\n    \
         while a < 3 {\n        a += 1;\n    }\n    while let Some(x) = o {\n        break;\n    }\n    if let Some(x) = o {}\n    \
         if true {}\n    match o {\n        Some(x) if x > a => {}\n        _ => {}\n    }\n}\n",
    ),
    row(
        "MatchArmDeletion",
        "fn f(o: Option<u32>, b: bool) -> u32 {\n    let x = match o {\n        Some(0) => 1,\n        Some(x) if x > 9 => { 2 }\n        \
         _ => 3,\n    };\n    match b {\n        true => 4,\n        false => 5,\n    }\n}\n",
    ),
    Row {
        family: "FunctionBody",
        source: "fn unit() {\n    go();\n}\nfn empty() {}\nfn flag() -> bool {\n    g()\n}\nfn count() -> u32 {\n    g()\n}\nfn seven() -> u32 {\n    7\n}\n\
                 fn name() -> String {\n    g()\n}\nfn label() -> &'static str {\n    g()\n}\n\
                 fn list() -> Vec<u8> {\n    g()\n}\nfn maybe() -> Option<u8> {\n    g()\n}\n\
                 fn ratio() -> f64 {\n    g()\n}\nfn bytes() -> &'static [u8] {\n    g()\n}\n\
                 fn shared() -> Rc<u8> {\n    g()\n}\nfn sync() -> std::sync::Arc<bool> {\n    g()\n}\n\
                 fn parse(s: &str) -> Result<u8, E> {\n    s.parse()\n}\nfn boxed() -> Box<bool> {\n    g()\n}\n\
                 fn items() -> impl Iterator<Item = u8> {\n    g()\n}\nfn never() -> ! {\n    loop {}\n}\n\
                 const fn constant() -> u8 {\n    1\n}\nunsafe fn danger() -> u8 {\n    1\n}\n\
                 impl S {\n    fn new() -> Self {\n        g()\n    }\n    async fn fetch(&self) -> u8 {\n        g().await\n    }\n}\n\
                 impl<T> From<T> for Wrap<T> {\n    fn from(value: T) -> Self {\n        let items = vec![value];\n        Wrap { items, count: 1 }\n    }\n}\n\
                 trait T {\n    fn ok(&self) -> fmt::Result {\n        g()\n    }\n}\n",
        all_lines: true,
    },
    row(
        "ignored by pragma",
        "fn f(a: i32) -> i32 {\n    let b = a + 1; // mutdelta: skip logging only\n    // mutdelta: skip cache warm-up\n    \
         if a > b {\n        g(a - 1);\n    }\n    a * b\n}\n",
    ),
    row(
        "debug-assert is arid",
        "fn f(a: u32) {\n    debug_assert!(a > 0);\n    debug_assert_eq!(a, 1);\n    core::debug_assert_ne!(a, 2);\n    assert!(a > 0);\n}\n",
    ),
    row(
        "log-macro is arid",
        "fn f(x: u32) {\n    log::debug!(\"x = {}\", x);\n    info!(\"i\");\n    tracing::warn!(x, \"w\");\n    trace!(\"t\");\n    \
         error!(\"e\");\n    g(x);\n}\n",
    ),
    Row {
        family: "print-macro is arid",
        source: "fn f(x: u32) {\n    println!(\"{x}\");\n    eprintln!(\"e\");\n    print!(\"p\");\n    eprint!(\"q\");\n    dbg!(x);\n    \
         write!(out, \"x\").unwrap();\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\nfn show(x: u32) {\n    println!(\"{x}\");\n}\n",
        all_lines: true,
    },
    row(
        "fast-path-guard is likely equivalent",
        "impl Ord for S {\n    fn cmp(&self, other: &Self) -> Ordering {\n        if self.id.ptr_eq(&other.id) {\n            \
         return Ordering::Equal;\n        }\n        if std::ptr::eq(self, other) {\n            return Ordering::Equal;\n        }\n        \
         if Rc::ptr_eq(&self.a, &other.a) { return Ordering::Less; }\n        if self.x == other.x {\n            return Ordering::Equal;\n        }\n        \
         if ptr::eq(self, other) {\n            g();\n            return Ordering::Equal;\n        }\n        self.x.cmp(&other.x)\n    }\n}\n",
    ),
];

fn mutants_of(row: &Row) -> Vec<Mutant> {
    let lines: Vec<usize> = if row.all_lines {
        (1..=row.source.lines().count()).collect()
    } else {
        executable_lines(row.source).unwrap()
    };
    mutate(row.source, &lines).unwrap().mutants
}

#[test]
fn operator_families() {
    let rows: Vec<(&Row, Vec<Mutant>)> = ROWS.iter().map(|row| (row, mutants_of(row))).collect();
    assert_every_mutant_parses(&rows);
    for (row, mutants) in &rows {
        assert!(support::shows_family(row.family, mutants), "row {} has no mutant of its family", row.family);
        insta::assert_snapshot!(row.family.replace(' ', "_"), support::render_mutants(row.source, mutants));
    }
}

/// Every mutated source must still be a Rust file syn parses.
fn assert_every_mutant_parses(rows: &[(&Row, Vec<Mutant>)]) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (row, mutants) in rows {
        syn::parse_file(row.source).unwrap_or_else(|e| panic!("row {} does not parse: {e}", row.family));
        for m in mutants {
            checked += 1;
            if let Err(e) = syn::parse_file(&m.apply(row.source)) {
                failures.push(format!(
                    "{}: line {} {:?} → {:?}: {e}",
                    row.family, m.line, m.original, m.replacement
                ));
            }
        }
    }
    assert!(failures.is_empty(), "mutants that do not parse:\n{}", failures.join("\n"));
    assert!(checked > 100, "only {checked} mutants checked");
}

#[test]
fn every_catalog_row_makes_a_mutant_of_some_table_row() {
    let made: Vec<&Rule> = ROWS.iter().flat_map(mutants_of).map(|m| m.rule).collect();
    let unmade: Vec<String> = RUST
        .iter()
        .filter(|rule| !made.contains(rule))
        .map(|rule| format!("{} {}", rule.mutator, rule.from))
        .collect();
    assert!(unmade.is_empty(), "catalog rows that no table row exercises: {unmade:?}");
}

#[test]
fn every_arid_and_equivalence_mark_is_put_on_a_mutant_of_some_table_row() {
    let mutants: Vec<Mutant> = ROWS.iter().flat_map(mutants_of).collect();
    assert_eq!(support::unused_markers(RUST_ARID, &mutants), Vec::<&str>::new());
    // Of the equivalence rules only the fast-path guard marks; the others make no mutant.
    assert_eq!(
        support::unused_markers(EQUIVALENT, &mutants),
        ["duplicate", "bool-return-none", "identity-operand", "literal-fold"]
    );
}
