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
    /// The mutator family, named as in mutation-testing-elements reports.
    pub mutator: &'static str,
    /// The token, or a pattern with the replaced `<part>` in angle brackets.
    pub from: &'static str,
    /// What it becomes: one mutant per entry.
    pub to: &'static [&'static str],
    /// When the rule applies, or does not.
    pub note: &'static str,
}

pub const ARITHMETIC_OPERATOR: &str = "ArithmeticOperator";
pub const UNARY_OPERATOR: &str = "UnaryOperator";
pub const BITWISE_OPERATOR: &str = "BitwiseOperator";
pub const COMPARISON_OPERATOR: &str = "ComparisonOperator";
pub const IDENTITY_OPERATOR: &str = "IdentityOperator";
pub const MEMBERSHIP_OPERATOR: &str = "MembershipOperator";
pub const BOOLEAN_OPERATOR: &str = "BooleanOperator";
pub const ASSIGNMENT_OPERATOR: &str = "AssignmentOperator";
pub const NUMBER_LITERAL: &str = "NumberLiteral";
pub const BOOLEAN_LITERAL: &str = "BooleanLiteral";
pub const NONE_VALUE: &str = "NoneValue";
pub const STRING_LITERAL: &str = "StringLiteral";
pub const STATEMENT_DELETION: &str = "StatementDeletion";
pub const RETURN_VALUE: &str = "ReturnValue";
pub const LOOP_CONTROL: &str = "LoopControl";
pub const CONDITION_FORCING: &str = "ConditionForcing";
pub const MATCH_ARM_DELETION: &str = "MatchArmDeletion";
pub const FUNCTION_BODY: &str = "FunctionBody";

const fn rule(
    mutator: &'static str,
    from: &'static str,
    to: &'static [&'static str],
    note: &'static str,
) -> Rule {
    Rule { mutator, from, to, note }
}

/// Python. Nothing is mutated inside f-strings, docstrings, bare string statements,
/// comments or `case` patterns; type annotations are code like any other.
#[rustfmt::skip]
pub const PYTHON: &[Rule] = &[
    rule(ARITHMETIC_OPERATOR, "+", &["-"], "binary only"),
    rule(ARITHMETIC_OPERATOR, "-", &["+"], "binary only"),
    rule(ARITHMETIC_OPERATOR, "*", &["/"], "binary only, not *args"),
    rule(ARITHMETIC_OPERATOR, "/", &["*"], "binary only, not the / of def f(a, /)"),
    rule(ARITHMETIC_OPERATOR, "//", &["/"], ""),
    rule(ARITHMETIC_OPERATOR, "%", &["*"], ""),
    rule(ARITHMETIC_OPERATOR, "**", &["*"], "binary only, not **kwargs"),

    rule(UNARY_OPERATOR, "-", &[""], "-x becomes x"),
    rule(UNARY_OPERATOR, "~", &[""], "~x becomes x"),
    rule(UNARY_OPERATOR, "not", &[""], "not x becomes x; not the not of `not in`, `is not`"),

    rule(BITWISE_OPERATOR, "&", &["|"], ""),
    rule(BITWISE_OPERATOR, "|", &["&"], ""),
    rule(BITWISE_OPERATOR, "^", &["&"], ""),
    rule(BITWISE_OPERATOR, "<<", &[">>"], ""),
    rule(BITWISE_OPERATOR, ">>", &["<<"], ""),

    rule(COMPARISON_OPERATOR, "==", &["!="], ""),
    rule(COMPARISON_OPERATOR, "!=", &["=="], ""),
    rule(COMPARISON_OPERATOR, "<", &["<=", ">"], ""),
    rule(COMPARISON_OPERATOR, "<=", &["<", ">"], ""),
    rule(COMPARISON_OPERATOR, ">", &[">=", "<"], ""),
    rule(COMPARISON_OPERATOR, ">=", &[">", "<"], ""),

    rule(IDENTITY_OPERATOR, "is", &["is not"], ""),
    rule(IDENTITY_OPERATOR, "is not", &["is"], ""),

    rule(MEMBERSHIP_OPERATOR, "in", &["not in"], "not the in of a for loop or comprehension"),
    rule(MEMBERSHIP_OPERATOR, "not in", &["in"], ""),

    rule(BOOLEAN_OPERATOR, "and", &["or"], ""),
    rule(BOOLEAN_OPERATOR, "or", &["and"], ""),

    rule(ASSIGNMENT_OPERATOR, "+=", &["-=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "-=", &["+=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "*=", &["/=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "/=", &["*=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "//=", &["/=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "%=", &["*=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "**=", &["*=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "@=", &["="], ""),
    rule(ASSIGNMENT_OPERATOR, "&=", &["|=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "|=", &["&=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "^=", &["&=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, "<<=", &[">>=", "="], ""),
    rule(ASSIGNMENT_OPERATOR, ">>=", &["<<=", "="], ""),

    rule(NUMBER_LITERAL, "<integer n>", &["n + 1", "0"], "n + 1 is written in n's base: 0x1F becomes 0x20"),
    rule(NUMBER_LITERAL, "<integer 0>", &["1"], ""),
    rule(NUMBER_LITERAL, "<float x>", &["0.0"], "imaginary numbers (1j) are left alone"),
    rule(NUMBER_LITERAL, "<float 0.0>", &["1.0"], ""),

    rule(BOOLEAN_LITERAL, "True", &["False"], ""),
    rule(BOOLEAN_LITERAL, "False", &["True"], ""),

    rule(NONE_VALUE, "<target> = <value>", &["None"], "statement level, single targets (not a, b = ...), not when <value> is None"),

    rule(STRING_LITERAL, "<non-empty string>", &["\"\""], "prefix kept (b'x' becomes b\"\"); f-strings are left alone"),
    rule(STRING_LITERAL, "<empty string>", &["\"mutdelta\""], "prefix kept"),

    rule(STATEMENT_DELETION, "<simple statement>", &["pass"], "not pass, return, import, global, nonlocal, assert, break, continue, `...`, docstrings, nor assignments to a name some nonlocal declares"),

    rule(RETURN_VALUE, "return <value>", &["None"], "not when <value> is None"),

    rule(LOOP_CONTROL, "break", &["continue"], ""),
    rule(LOOP_CONTROL, "continue", &["break"], ""),

    rule(CONDITION_FORCING, "if <condition>:", &["True", "False"], "not when <condition> is a True/False literal"),
    rule(CONDITION_FORCING, "elif <condition>:", &["True", "False"], "not when <condition> is a True/False literal"),
    rule(CONDITION_FORCING, "while <condition>:", &["False"], "never True: the loop would hang"),
];

/// Rust. Nothing is mutated in test code (`#[cfg(test)]` items, `#[test]` functions), `unsafe`
/// blocks and functions, `const` and `static` items, attributes, types, patterns and macro
/// bodies; a whole macro statement may be deleted.
#[rustfmt::skip]
pub const RUST: &[Rule] = &[
    rule(ARITHMETIC_OPERATOR, "+", &["-"], "binary only"),
    rule(ARITHMETIC_OPERATOR, "-", &["+"], "binary only"),
    rule(ARITHMETIC_OPERATOR, "*", &["/"], "binary only, not *x"),
    rule(ARITHMETIC_OPERATOR, "/", &["*"], ""),
    rule(ARITHMETIC_OPERATOR, "%", &["/"], ""),

    rule(UNARY_OPERATOR, "-", &[""], "-x becomes x"),
    rule(UNARY_OPERATOR, "!", &[""], "!x becomes x"),

    rule(BITWISE_OPERATOR, "&", &["|"], "binary only, not &x"),
    rule(BITWISE_OPERATOR, "|", &["&"], ""),
    rule(BITWISE_OPERATOR, "^", &["&"], ""),
    rule(BITWISE_OPERATOR, "<<", &[">>"], ""),
    rule(BITWISE_OPERATOR, ">>", &["<<"], "not right after an `as` cast: `x as u8 << 1` does not parse"),

    rule(COMPARISON_OPERATOR, "==", &["!="], ""),
    rule(COMPARISON_OPERATOR, "!=", &["=="], ""),
    rule(COMPARISON_OPERATOR, "<", &["<=", ">"], ""),
    rule(COMPARISON_OPERATOR, "<=", &["<", ">"], ""),
    rule(COMPARISON_OPERATOR, ">", &[">=", "<"], "no < right after an `as` cast: `x as u8 < y` does not parse"),
    rule(COMPARISON_OPERATOR, ">=", &[">", "<"], "no < right after an `as` cast"),

    rule(BOOLEAN_OPERATOR, "&&", &["||"], "not in a let chain (`if let .. && ..`)"),
    rule(BOOLEAN_OPERATOR, "||", &["&&"], ""),

    rule(ASSIGNMENT_OPERATOR, "+=", &["-="], ""),
    rule(ASSIGNMENT_OPERATOR, "-=", &["+="], ""),
    rule(ASSIGNMENT_OPERATOR, "*=", &["/="], ""),
    rule(ASSIGNMENT_OPERATOR, "/=", &["*="], ""),
    rule(ASSIGNMENT_OPERATOR, "%=", &["/="], ""),
    rule(ASSIGNMENT_OPERATOR, "&=", &["|="], ""),
    rule(ASSIGNMENT_OPERATOR, "|=", &["&="], ""),
    rule(ASSIGNMENT_OPERATOR, "^=", &["&="], ""),
    rule(ASSIGNMENT_OPERATOR, "<<=", &[">>="], ""),
    rule(ASSIGNMENT_OPERATOR, ">>=", &["<<="], ""),

    rule(NUMBER_LITERAL, "<integer n>", &["0", "1", "n + 1"], "suffix and base kept: 0x1Fu8 becomes 0x20u8; a target equal to n is left out (0 becomes 1, 1 becomes 0 and 2); n + 1 only if it fits the suffix"),
    rule(NUMBER_LITERAL, "<float x>", &["0.0"], "suffix kept: 2.5f32 becomes 0.0f32"),
    rule(NUMBER_LITERAL, "<float 0.0>", &["1.0"], "suffix kept"),

    rule(BOOLEAN_LITERAL, "true", &["false"], ""),
    rule(BOOLEAN_LITERAL, "false", &["true"], ""),

    rule(STRING_LITERAL, "<non-empty string>", &["\"\""], "raw strings too; byte and C strings are left alone: their length is part of their type"),

    rule(STATEMENT_DELETION, "<call or assignment>;", &[""], "calls and method calls (also with ? or .await), assignments, macro statements; not let, nor println!, eprintln!, print!, eprint!, dbg!, trace!, debug!, info!, warn!, error!"),

    rule(CONDITION_FORCING, "if <condition>", &["true", "false"], "not if let, nor a true/false literal"),
    rule(CONDITION_FORCING, "while <condition>", &["false"], "never true: the loop would hang; not while let"),
    rule(CONDITION_FORCING, "<pattern> if <guard> =>", &["true", "false"], "match guards"),

    rule(MATCH_ARM_DELETION, "<pattern> => <value>,", &[""], "only in a match with a `_ =>` arm, which is never deleted"),

    rule(FUNCTION_BODY, "fn f() { <body> }", &["()"], "every FunctionBody rule: only when every line from `{` to `}` is requested; not for unsafe fn, const fn, nor a body that is one literal; here the body becomes {}, also for -> ()"),
    rule(FUNCTION_BODY, "fn f() -> bool { <body> }", &["true", "false"], ""),
    rule(FUNCTION_BODY, "fn f() -> <integer> { <body> }", &["0", "1"], "u8 ... u128, usize, i8 ... i128, isize"),
    rule(FUNCTION_BODY, "fn f() -> <float> { <body> }", &["0.0", "1.0"], "f32, f64"),
    rule(FUNCTION_BODY, "fn f() -> String { <body> }", &["String::new()", "\"xyzzy\".into()"], ""),
    rule(FUNCTION_BODY, "fn f() -> &str { <body> }", &["\"\"", "\"xyzzy\""], ""),
    rule(FUNCTION_BODY, "fn f() -> &[T] { <body> }", &["&[]"], ""),
    rule(FUNCTION_BODY, "fn f() -> Vec<T> { <body> }", &["vec![]"], ""),
    rule(FUNCTION_BODY, "fn f() -> Option<T> { <body> }", &["None"], ""),
    rule(FUNCTION_BODY, "fn f() -> Result<T, E> { <body> }", &["Ok(<T>)"], "one per value of T; T is <other type> when Result has no arguments (fmt::Result)"),
    rule(FUNCTION_BODY, "fn f() -> Box<T> { <body> }", &["Box::new(<T>)"], "one per value of T; none for Box<dyn Trait>"),
    rule(FUNCTION_BODY, "fn f() -> Rc<T> { <body> }", &["Rc::new(<T>)"], "one per value of T"),
    rule(FUNCTION_BODY, "fn f() -> Arc<T> { <body> }", &["Arc::new(<T>)"], "one per value of T"),
    rule(FUNCTION_BODY, "fn f() -> impl Iterator { <body> }", &["std::iter::empty()"], "also impl IntoIterator, DoubleEndedIterator, ExactSizeIterator"),
    rule(FUNCTION_BODY, "fn f() -> <other type> { <body> }", &["Default::default()"], "also Self and type parameters; nothing for !, other impl Trait, references but &str and &[T], pointers"),
];

/// What `from` becomes under `mutator` in `rules`; empty when no rule says.
pub fn targets(rules: &[Rule], mutator: &str, from: &str) -> &'static [&'static str] {
    rules.iter().find(|rule| rule.from == from && rule.mutator == mutator).map_or(&[], |rule| rule.to)
}

/// The rules as an aligned, human-readable table.
pub fn render(rules: &[Rule]) -> String {
    let header = ["MUTATOR", "FROM", "TO", "NOTE"].map(String::from);
    let rows: Vec<[String; 4]> = rules
        .iter()
        .map(|rule| {
            let to: Vec<&str> = rule.to.iter().map(|t| if t.is_empty() { "(removed)" } else { t }).collect();
            [rule.mutator.to_string(), rule.from.to_string(), to.join(", "), rule.note.to_string()]
        })
        .collect();
    let mut widths = [0; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
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
    fn targets_finds_by_family_and_token() {
        assert_eq!(targets(PYTHON, ARITHMETIC_OPERATOR, "-"), ["+"]);
        assert_eq!(targets(PYTHON, UNARY_OPERATOR, "-"), [""]);
        assert!(targets(PYTHON, UNARY_OPERATOR, "+").is_empty());
        assert_eq!(targets(RUST, UNARY_OPERATOR, "!"), [""]);
        assert_eq!(targets(RUST, COMPARISON_OPERATOR, ">="), [">", "<"]);
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
