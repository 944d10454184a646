//! The operator tables, readable as a spec: what each mutator turns into what.

/// One line of the spec.
///
/// A language front end looks its replacements up here and never spells them out itself,
/// so these tables are the whole story of what gets mutated into what. `from` is either the
/// token itself (`+`, `and`, `is not`) or, for rules that are not token swaps, a pattern
/// whose `<part>` in angle brackets is what `to` replaces (`return <value>` → `None`).
/// An empty `to` entry means the token is removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The mutator family.
    pub mutator: Mutator,
    /// The token, or a pattern with the replaced `<part>` in angle brackets.
    pub from: &'static str,
    /// What it becomes: one mutant per entry.
    pub to: &'static [&'static str],
    /// When the rule applies, or does not.
    pub note: &'static str,
}

/// A mutator family, named as in mutation-testing-elements reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mutator {
    ArithmeticOperator,
    UnaryOperator,
    BitwiseOperator,
    ComparisonOperator,
    IdentityOperator,
    MembershipOperator,
    BooleanOperator,
    AssignmentOperator,
    NumberLiteral,
    BooleanLiteral,
    NoneValue,
    StringLiteral,
    StatementDeletion,
    ReturnValue,
    LoopControl,
    ConditionForcing,
    MatchArmDeletion,
    FunctionBody,
}

impl Mutator {
    /// Every family, in the order of the enum.
    pub const ALL: [Mutator; 18] = [
        Mutator::ArithmeticOperator,
        Mutator::UnaryOperator,
        Mutator::BitwiseOperator,
        Mutator::ComparisonOperator,
        Mutator::IdentityOperator,
        Mutator::MembershipOperator,
        Mutator::BooleanOperator,
        Mutator::AssignmentOperator,
        Mutator::NumberLiteral,
        Mutator::BooleanLiteral,
        Mutator::NoneValue,
        Mutator::StringLiteral,
        Mutator::StatementDeletion,
        Mutator::ReturnValue,
        Mutator::LoopControl,
        Mutator::ConditionForcing,
        Mutator::MatchArmDeletion,
        Mutator::FunctionBody,
    ];

    /// The family `name` names, as `name()` spells it.
    pub fn from_name(name: &str) -> Option<Mutator> {
        Mutator::ALL.into_iter().find(|mutator| mutator.name() == name)
    }

    /// The family's name in reports: "ArithmeticOperator".
    pub fn name(self) -> &'static str {
        match self {
            Mutator::ArithmeticOperator => "ArithmeticOperator",
            Mutator::UnaryOperator => "UnaryOperator",
            Mutator::BitwiseOperator => "BitwiseOperator",
            Mutator::ComparisonOperator => "ComparisonOperator",
            Mutator::IdentityOperator => "IdentityOperator",
            Mutator::MembershipOperator => "MembershipOperator",
            Mutator::BooleanOperator => "BooleanOperator",
            Mutator::AssignmentOperator => "AssignmentOperator",
            Mutator::NumberLiteral => "NumberLiteral",
            Mutator::BooleanLiteral => "BooleanLiteral",
            Mutator::NoneValue => "NoneValue",
            Mutator::StringLiteral => "StringLiteral",
            Mutator::StatementDeletion => "StatementDeletion",
            Mutator::ReturnValue => "ReturnValue",
            Mutator::LoopControl => "LoopControl",
            Mutator::ConditionForcing => "ConditionForcing",
            Mutator::MatchArmDeletion => "MatchArmDeletion",
            Mutator::FunctionBody => "FunctionBody",
        }
    }
}

impl std::fmt::Display for Mutator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

use Mutator::*;

const fn rule(mutator: Mutator, from: &'static str, to: &'static [&'static str], note: &'static str) -> Rule {
    Rule { mutator, from, to, note }
}

/// Python. Nothing is mutated inside docstrings, bare string statements, comments, `case`
/// patterns, type annotations (of parameters, returns and variables), nor an f-string's
/// format specs, conversions and the strings inside its replacement fields.
#[rustfmt::skip]
pub const PYTHON: &[Rule] = &[
    rule(ArithmeticOperator, "+", &["-"], "binary only"),
    rule(ArithmeticOperator, "-", &["+"], "binary only"),
    rule(ArithmeticOperator, "*", &["/"], "binary only, not *args"),
    rule(ArithmeticOperator, "/", &["*"], "binary only, not the / of def f(a, /)"),
    rule(ArithmeticOperator, "//", &["/"], ""),
    rule(ArithmeticOperator, "%", &["*"], ""),
    rule(ArithmeticOperator, "**", &["*"], "binary only, not **kwargs"),

    rule(UnaryOperator, "-", &[""], "-x becomes x"),
    rule(UnaryOperator, "~", &[""], "~x becomes x"),
    rule(UnaryOperator, "not", &[""], "not x becomes x; not the not of `not in`, `is not`"),

    rule(BitwiseOperator, "&", &["|"], ""),
    rule(BitwiseOperator, "|", &["&"], ""),
    rule(BitwiseOperator, "^", &["&"], ""),
    rule(BitwiseOperator, "<<", &[">>"], ""),
    rule(BitwiseOperator, ">>", &["<<"], ""),

    rule(ComparisonOperator, "==", &["!="], ""),
    rule(ComparisonOperator, "!=", &["=="], ""),
    rule(ComparisonOperator, "<", &["<=", ">"], ""),
    rule(ComparisonOperator, "<=", &["<", ">"], ""),
    rule(ComparisonOperator, ">", &[">=", "<"], ""),
    rule(ComparisonOperator, ">=", &[">", "<"], ""),

    rule(IdentityOperator, "is", &["is not"], ""),
    rule(IdentityOperator, "is not", &["is"], ""),

    rule(MembershipOperator, "in", &["not in"], "not the in of a for loop or comprehension"),
    rule(MembershipOperator, "not in", &["in"], ""),

    rule(BooleanOperator, "and", &["or"], ""),
    rule(BooleanOperator, "or", &["and"], ""),

    rule(AssignmentOperator, "+=", &["-=", "="], ""),
    rule(AssignmentOperator, "-=", &["+=", "="], ""),
    rule(AssignmentOperator, "*=", &["/=", "="], ""),
    rule(AssignmentOperator, "/=", &["*=", "="], ""),
    rule(AssignmentOperator, "//=", &["/=", "="], ""),
    rule(AssignmentOperator, "%=", &["*=", "="], ""),
    rule(AssignmentOperator, "**=", &["*=", "="], ""),
    rule(AssignmentOperator, "@=", &["="], ""),
    rule(AssignmentOperator, "&=", &["|=", "="], ""),
    rule(AssignmentOperator, "|=", &["&=", "="], ""),
    rule(AssignmentOperator, "^=", &["&=", "="], ""),
    rule(AssignmentOperator, "<<=", &[">>=", "="], ""),
    rule(AssignmentOperator, ">>=", &["<<=", "="], ""),

    rule(NumberLiteral, "<integer n>", &["n + 1", "0"], "n + 1 is written in n's base: 0x1F becomes 0x20"),
    rule(NumberLiteral, "<integer 0>", &["1"], ""),
    rule(NumberLiteral, "<float x>", &["0.0"], "imaginary numbers (1j) are left alone"),
    rule(NumberLiteral, "<float 0.0>", &["1.0"], ""),

    rule(BooleanLiteral, "True", &["False"], ""),
    rule(BooleanLiteral, "False", &["True"], ""),

    rule(NoneValue, "<target> = <value>", &["None"], "statement level, single targets (not a, b = ...), not when <value> is None"),

    rule(StringLiteral, "<non-empty string>", &["\"\""], "prefix kept (b'x' becomes b\"\"); an f-string only when it has no replacement field"),
    rule(StringLiteral, "<empty string>", &["\"mutdelta\""], "prefix kept"),
    rule(StringLiteral, "<text of an f-string>", &[""], "each run of text between replacement fields is removed: f\"total: {n}\" becomes f\"{n}\"; {{ and }} are text; the fields' expressions get the rows above and below as any code does"),

    rule(StatementDeletion, "<simple statement>", &["pass"], "not pass, return, import, global, nonlocal, assert, break, continue, `...`, docstrings, nor assignments to a name some nonlocal declares"),

    rule(ReturnValue, "return <value>", &["None"], "not when <value> is None, True or False (the flip of the literal stands for it)"),

    rule(LoopControl, "break", &["continue"], ""),
    rule(LoopControl, "continue", &["break"], ""),

    rule(ConditionForcing, "if <condition>:", &["True", "False"], "not when <condition> is a True/False literal"),
    rule(ConditionForcing, "elif <condition>:", &["True", "False"], "not when <condition> is a True/False literal"),
    rule(ConditionForcing, "while <condition>:", &["False"], "never True: the loop would hang"),
    rule(ConditionForcing, "case <pattern> if <guard>:", &["True", "False"], "match guards, in any match; not when <guard> is a True/False literal"),
    rule(ConditionForcing, "<a> if <condition> else <b>", &["True", "False", "not (<condition>)"], "conditional expressions, in f-string fields and lambdas too, not in annotations; not when <condition> is a True/False literal"),
    rule(ConditionForcing, "<comprehension> if <condition>", &["True", "False"], "each if of a list, set or dict comprehension or generator expression"),
    rule(ConditionForcing, "<condition holding :=>", &["((<condition>) or True)", "((<condition>) and False)"], "any condition above that holds a walrus keeps its binding: `if (n := f()):` becomes `if ((n := f()) or True):`, where True and False would leave n unbound; a while gets only the `and False`"),

    rule(MatchArmDeletion, "case <pattern>:", &["<pattern> if False"], "the arm never matches, its lines kept: `case 1:` becomes `case 1 if False:`; only in a match with a `case _:` (or `case <name>:`) arm, which is never touched; a guarded arm gets its guard forced to False (above) instead"),
];

/// Rust. Nothing is mutated in test code (`#[cfg(test)]` items, `#[test]` functions), `const`
/// and `static` items, attributes, types, patterns and macro bodies; a whole macro statement
/// may be deleted. In `unsafe` blocks and functions only the index of a bounds-checked `a[i]`
/// made of plain arithmetic is, unless `--mutate-unsafe`.
#[rustfmt::skip]
pub const RUST: &[Rule] = &[
    rule(ArithmeticOperator, "+", &["-"], "binary only"),
    rule(ArithmeticOperator, "-", &["+"], "binary only"),
    rule(ArithmeticOperator, "*", &["/"], "binary only, not *x"),
    rule(ArithmeticOperator, "/", &["*"], ""),
    rule(ArithmeticOperator, "%", &["/"], ""),

    rule(UnaryOperator, "-", &[""], "-x becomes x"),
    rule(UnaryOperator, "!", &[""], "!x becomes x"),

    rule(BitwiseOperator, "&", &["|"], "binary only, not &x"),
    rule(BitwiseOperator, "|", &["&"], ""),
    rule(BitwiseOperator, "^", &["&"], ""),
    rule(BitwiseOperator, "<<", &[">>"], ""),
    rule(BitwiseOperator, ">>", &["<<"], "not right after an `as` cast: `x as u8 << 1` does not parse"),

    rule(ComparisonOperator, "==", &["!="], ""),
    rule(ComparisonOperator, "!=", &["=="], ""),
    rule(ComparisonOperator, "<", &["<=", ">"], ""),
    rule(ComparisonOperator, "<=", &["<", ">"], ""),
    rule(ComparisonOperator, ">", &[">=", "<"], "no < right after an `as` cast: `x as u8 < y` does not parse"),
    rule(ComparisonOperator, ">=", &[">", "<"], "no < right after an `as` cast"),

    rule(BooleanOperator, "&&", &["||"], "not in a let chain (`if let .. && ..`)"),
    rule(BooleanOperator, "||", &["&&"], ""),

    rule(AssignmentOperator, "+=", &["-="], ""),
    rule(AssignmentOperator, "-=", &["+="], ""),
    rule(AssignmentOperator, "*=", &["/="], ""),
    rule(AssignmentOperator, "/=", &["*="], ""),
    rule(AssignmentOperator, "%=", &["/="], ""),
    rule(AssignmentOperator, "&=", &["|="], ""),
    rule(AssignmentOperator, "|=", &["&="], ""),
    rule(AssignmentOperator, "^=", &["&="], ""),
    rule(AssignmentOperator, "<<=", &[">>="], ""),
    rule(AssignmentOperator, ">>=", &["<<="], ""),

    rule(NumberLiteral, "<integer n>", &["0", "1", "n + 1"], "suffix and base kept: 0x1Fu8 becomes 0x20u8; a target equal to n is left out (0 becomes 1, 1 becomes 0 and 2); n + 1 only if it fits the suffix"),
    rule(NumberLiteral, "<float x>", &["0.0"], "suffix kept: 2.5f32 becomes 0.0f32"),
    rule(NumberLiteral, "<float 0.0>", &["1.0"], "suffix kept"),

    rule(BooleanLiteral, "true", &["false"], ""),
    rule(BooleanLiteral, "false", &["true"], ""),

    rule(StringLiteral, "<non-empty string>", &["\"\""], "raw strings too; byte and C strings are left alone: their length is part of their type"),

    rule(StatementDeletion, "<call or assignment>;", &[""], "calls and method calls (also with ? or .await), assignments, macro statements; not let (output, logging and debug_assert! statements are arid lines)"),
    rule(StatementDeletion, "<return, break or continue>;", &[""], "statements ending in `;` (an exit that is a block's tail stays), only where the block's value stays: anywhere in a loop's body or in the block of an `if` without `else` (`if done { break; }` becomes `if done { }`), else only when a tail value or a last return/break/continue statement follows in its block; never the last statement of a function, closure, `else` block or match arm"),

    rule(LoopControl, "break", &["continue"], "not a break with a value, nor one that leaves a labelled block; the label is kept: `break 'rows;` becomes `continue 'rows;`"),
    rule(LoopControl, "continue", &["break"], "only when the loop it continues is a `for` or `while` (a `loop`'s value could change type): `if skip { continue; }` becomes `if skip { break; }`; the label is kept"),

    rule(ConditionForcing, "if <condition>", &["true", "false"], "not if let, nor a true/false literal"),
    rule(ConditionForcing, "while <condition>", &["false"], "never true: the loop would hang; not while let"),
    rule(ConditionForcing, "<pattern> if <guard> =>", &["true", "false"], "match guards"),

    rule(MatchArmDeletion, "<pattern> => <value>,", &[""], "only in a match with a `_ =>` arm, which is never deleted"),

    rule(FunctionBody, "fn f() { <body> }", &["()"], "every FunctionBody rule: only when every line from `{` to `}` is requested; not for unsafe fn (unless --mutate-unsafe), const fn, nor a body that is one literal; the statements between the braces give way to the value (here to nothing, also for -> ()), so the mutant starts on the body's first line"),
    rule(FunctionBody, "fn f() -> bool { <body> }", &["true", "false"], ""),
    rule(FunctionBody, "fn f() -> <integer> { <body> }", &["0", "1"], "u8 ... u128, usize, i8 ... i128, isize"),
    rule(FunctionBody, "fn f() -> <float> { <body> }", &["0.0", "1.0"], "f32, f64"),
    rule(FunctionBody, "fn f() -> String { <body> }", &["String::new()", "\"xyzzy\".into()"], ""),
    rule(FunctionBody, "fn f() -> &str { <body> }", &["\"\"", "\"xyzzy\""], ""),
    rule(FunctionBody, "fn f() -> &[T] { <body> }", &["&[]"], ""),
    rule(FunctionBody, "fn f() -> Vec<T> { <body> }", &["vec![]"], ""),
    rule(FunctionBody, "fn f() -> Option<T> { <body> }", &["None"], ""),
    rule(FunctionBody, "fn f() -> Result<T, E> { <body> }", &["Ok(<T>)"], "one per value of T; T is <other type> when Result has no arguments (fmt::Result)"),
    rule(FunctionBody, "fn f() -> Box<T> { <body> }", &["Box::new(<T>)"], "one per value of T; none for Box<dyn Trait>"),
    rule(FunctionBody, "fn f() -> Rc<T> { <body> }", &["Rc::new(<T>)"], "one per value of T"),
    rule(FunctionBody, "fn f() -> Arc<T> { <body> }", &["Arc::new(<T>)"], "one per value of T"),
    rule(FunctionBody, "fn f() -> impl Iterator { <body> }", &["std::iter::empty()"], "also impl IntoIterator, DoubleEndedIterator, ExactSizeIterator"),
    rule(FunctionBody, "fn f() -> <other type> { <body> }", &["Default::default()"], "also Self and type parameters; nothing for !, other impl Trait, references but &str and &[T], pointers"),
    rule(FunctionBody, "fn f() -> T { ..; <tail> }", &["<a value of T above>"], "a function the change does not add whole, whose final expression (or a branch's final expression, through a final if or match) the change rewrote, every line of it: that expression becomes each value the rows above give for T (not for -> (), nor a literal, a loop or a panicking macro)"),
    rule(FunctionBody, "fn f() -> Self { ..; S { a: x, b: y } }", &["S { a: Default::default(), b: Default::default() }"], "also -> S; a body ending in a struct literal without `..base`: built from default fields, which compiles where Self is not Default (a `Vec<T>` field, a T that is not Default)"),
];

/// A rule that marks mutants rather than making them: an arid line (mutants nobody acts on,
/// reported Ignored with the rule's name) or a likely-equivalent mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// The rule's name, as reports print it.
    pub name: &'static str,
    /// What it covers, and what happens to the mutants there.
    pub covers: &'static str,
    /// A line it applies to.
    pub example: &'static str,
}

const fn marker(name: &'static str, covers: &'static str, example: &'static str) -> Marker {
    Marker { name, covers, example }
}

/// Python arid lines: a mutant whose whole span lies inside one of these is Ignored (unless
/// `--no-arid`); a call that is a whole statement covers that statement, so its deletion too.
#[rustfmt::skip]
pub const PYTHON_ARID: &[Marker] = &[
    marker("logging", "a call on `logging.`, or of `.debug/.info/.warning/.warn/.error/.exception/.critical/.log` on a name `log`, `logger`, `*_log`, `*_logger` (any case, leading _ dropped)", "logger.info(\"retrying %s\", url)"),
    marker("print", "a call of the builtin `print`, unless its `file=` is a stream other than `sys.stdout`/`sys.stderr` (writing to it is the function's job)", "print(\"done\", file=sys.stderr)"),
    marker("warnings-warn", "a call of `warnings.warn` or `warnings.warn_explicit`", "warnings.warn(\"deprecated\", DeprecationWarning)"),
    marker("sleep", "a call of `time.sleep` or `asyncio.sleep` (with its `await`)", "time.sleep(0.5)"),
    marker("assert", "an `assert` statement in a source file", "assert n >= 0, \"n must not be negative\""),
    marker("main-guard", "`if __name__ == \"__main__\":` and its block", "if __name__ == \"__main__\": main()"),
    marker("repr", "a `__repr__` method, its `def` line and body", "def __repr__(self): return f\"P({self.x})\""),
    marker("argparse-text", "the value of a `help=`, `usage=`, `description=`, `epilog=`, `title=` or `metavar=` argument of `add_argument`, `ArgumentParser`, `add_parser`, `add_subparsers`, `add_argument_group`, `add_mutually_exclusive_group`", "p.add_argument(\"-n\", help=\"how many\")"),
];

/// Rust arid lines. Macro arguments are never mutated, so what these cover is the deletion
/// of the macro statement, and the replacement of a body made only of such statements
/// (Ignored unless `--no-arid`).
#[rustfmt::skip]
pub const RUST_ARID: &[Marker] = &[
    marker("debug-assert", "`debug_assert!`, `debug_assert_eq!`, `debug_assert_ne!`", "debug_assert!(len <= cap);"),
    marker("log-macro", "`trace!`, `debug!`, `info!`, `warn!`, `error!`, with or without a path (`log::`, `tracing::`)", "log::debug!(\"miss: {key}\");"),
    marker("print-macro", "`println!`, `eprintln!`, `print!`, `eprint!`, `dbg!`; a build script's `println!(\"cargo:...\")` too (build configuration: a test run seldom tells)", "eprintln!(\"warning: {msg}\");"),
];

/// Likely-equivalent mutants, in both languages: either not made, or reported as
/// `Survived (likely equivalent: <name>)`, still counted, when they survive.
#[rustfmt::skip]
pub const EQUIVALENT: &[Marker] = &[
    marker("duplicate", "not made: a mutant whose lines read, after the edit, as another mutant's do (the first in source order is kept) or as they did before", "not not x: removing either not gives one mutant"),
    marker("bool-return-none", "not made (Python): `return True`/`return False` to `return None`, beside the flip of the literal", "return False → only return True"),
    marker("identity-operand", "not made (Rust): an operator swap that keeps the value, its right operand an integer literal: `x + 0` and `x - 0`, `x << 0` and `x >> 0`, `x * 1` and `x / 1` (and their assignments)", "buf[OFFSET + 0] → buf[OFFSET - 0]"),
    marker("literal-fold", "not made (Rust): inside arithmetic of unsuffixed integer literals alone (`60 * 60`), a mutant whose value, folded as the compiler folds it, is the original's or an earlier mutant's (only where every step stays within 0 to i32::MAX)", "60 * 60 → 1 * 60 made, 60 * 1 not"),
    marker("fast-path-guard", "labelled when it survives: a guard whose body only returns, after an identity test of two names (Python `a is b`, neither a `__class__` nor a capitalised name: a type or a constant makes it a dispatch) or a pointer-equality test (Rust `ptr::eq`, `Rc::ptr_eq`, `Arc::ptr_eq`, `.ptr_eq(..)`), forced to false (in Rust, also its `return` deleted): the rest of the function usually gives the same answer", "if self is other: return True"),
];

/// The markers as an aligned, human-readable table.
pub fn render_markers(markers: &[Marker]) -> String {
    let rows: Vec<[String; 3]> =
        markers.iter().map(|m| [m.name.to_string(), m.covers.to_string(), m.example.to_string()]).collect();
    aligned(["NAME", "COVERS", "EXAMPLE"], &rows)
}

/// The row of `rules` that says what `from` becomes under `mutator`, if any.
pub fn lookup(rules: &'static [Rule], mutator: Mutator, from: &str) -> Option<&'static Rule> {
    rules.iter().find(|rule| rule.from == from && rule.mutator == mutator)
}

/// Each target of the row of `rules` for `from` under `mutator`, with the row.
pub fn entries(
    rules: &'static [Rule],
    mutator: Mutator,
    from: &str,
) -> impl Iterator<Item = (&'static Rule, &'static str)> {
    lookup(rules, mutator, from).into_iter().flat_map(|rule| rule.to.iter().map(move |to| (rule, *to)))
}

/// What `from` becomes under `mutator` in `rules`; empty when no rule says.
pub fn targets(rules: &'static [Rule], mutator: Mutator, from: &str) -> &'static [&'static str] {
    lookup(rules, mutator, from).map_or(&[], |rule| rule.to)
}

/// The rules as an aligned, human-readable table.
pub fn render(rules: &[Rule]) -> String {
    let rows: Vec<[String; 4]> = rules
        .iter()
        .map(|rule| {
            let to: Vec<&str> = rule.to.iter().map(|t| if t.is_empty() { "(removed)" } else { t }).collect();
            [rule.mutator.name().to_string(), rule.from.to_string(), to.join(", "), rule.note.to_string()]
        })
        .collect();
    aligned(["MUTATOR", "FROM", "TO", "NOTE"], &rows)
}

fn aligned<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let header = header.map(String::from);
    let mut widths = [0; N];
    for row in std::iter::once(&header).chain(rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(widths) {
            line.push_str(&format!("{cell:<width$}  "));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_unique_and_says_something() {
        for rules in [PYTHON, RUST] {
            for (i, rule) in rules.iter().enumerate() {
                assert!(!rule.to.is_empty(), "{rule:?}");
                let twin = rules[..i].iter().find(|r| r.mutator == rule.mutator && r.from == rule.from);
                assert!(twin.is_none(), "duplicate rule {rule:?}");
            }
        }
    }

    #[test]
    fn every_family_of_a_rule_is_listed_and_found_by_its_name() {
        for rule in PYTHON.iter().chain(RUST) {
            assert!(Mutator::ALL.contains(&rule.mutator), "{} is not in Mutator::ALL", rule.mutator);
        }
        for mutator in Mutator::ALL {
            assert_eq!(Mutator::from_name(mutator.name()), Some(mutator));
        }
        assert_eq!(Mutator::from_name("arithmeticoperator"), None);
    }

    #[test]
    fn targets_finds_by_family_and_token() {
        assert_eq!(targets(PYTHON, ArithmeticOperator, "-"), ["+"]);
        assert_eq!(targets(PYTHON, UnaryOperator, "-"), [""]);
        assert!(targets(PYTHON, UnaryOperator, "+").is_empty());
        assert_eq!(targets(RUST, UnaryOperator, "!"), [""]);
        assert_eq!(targets(RUST, ComparisonOperator, ">="), [">", "<"]);
    }

    #[test]
    fn the_rust_early_exit_and_loop_control_rows_are_rendered_with_an_example() {
        let table = render(RUST);
        for (family, from) in [
            ("StatementDeletion", "<return, break or continue>;"),
            ("LoopControl", "break"),
            ("LoopControl", "continue"),
        ] {
            let row = table.lines().find(|line| {
                line.strip_prefix(family)
                    .is_some_and(|rest| rest.trim_start().starts_with(&format!("{from} ")))
            });
            let row = row.unwrap_or_else(|| panic!("no row {family} {from}:\n{table}"));
            assert!(row.contains("becomes"), "{row}");
        }
    }

    #[test]
    fn render_aligns_columns() {
        let table = render(PYTHON);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), PYTHON.len() + 1);
        let from_column = lines[0].find("FROM").unwrap();
        assert_eq!(&lines[1][from_column..from_column + 2], "+ ");
        assert!(lines.iter().any(|l| l.contains("UnaryOperator") && l.contains("(removed)")));
    }
}
