//! What test a survivor asks for, in one line, derived from the mutant alone: its family, the text it replaced and what replaced it. Deterministic; none where no rule applies.

use mutators::catalog::Mutator;
use mutators::Mutant;

/// The longest piece of code a hint quotes before shortening it with `...`.
const QUOTED: usize = 40;

/// The test a surviving `mutant` shows to be missing, if its family and edit say.
pub fn hint(mutant: &Mutant) -> Option<String> {
    let from = quoted(&mutant.original);
    let to = quoted(&mutant.replacement);
    let hint = match mutant.mutator() {
        Mutator::ComparisonOperator => comparison(mutant.original.trim(), mutant.replacement.trim())?,
        Mutator::ConditionForcing => forced(&mutant.replacement, &from)?,
        Mutator::StatementDeletion if first_word(&mutant.original) == Some("raise") => {
            format!("no test expects the error {from} raises: add one that asserts it is raised")
        }
        Mutator::StatementDeletion if is_exit(&mutant.original) => {
            format!("no test takes the early exit {from} and checks what would have followed it")
        }
        Mutator::StatementDeletion => {
            format!(
                "no test observes what {from} does: check its effect (a value, a state, a call, an error)"
            )
        }
        Mutator::ReturnValue => {
            format!("no test checks the value of {from}: assert on what the function returns")
        }
        Mutator::FunctionBody if mutant.replacement.trim().is_empty() => {
            "no test tells this function's work from doing nothing: assert on its effect".to_string()
        }
        Mutator::FunctionBody => {
            format!("no test tells this function's work from {to}: assert on its result or its effect")
        }
        Mutator::NumberLiteral => {
            format!("no test pins the constant {from}: add one whose outcome changes when it does")
        }
        Mutator::StringLiteral => {
            format!("no test checks the text {from}: assert on the output or value holding it")
        }
        Mutator::BooleanLiteral => {
            format!("no test depends on this {from}: add one where {to} would give another outcome")
        }
        Mutator::BooleanOperator => {
            format!("no test has one side of {from} true and the other false")
        }
        Mutator::ArithmeticOperator | Mutator::BitwiseOperator => {
            format!("no test uses operands for which {from} and {to} give different results")
        }
        Mutator::AssignmentOperator => format!("no test checks the value this {from} update leaves"),
        Mutator::UnaryOperator => {
            format!("no test depends on the {from}: add one where the value with and without it differ")
        }
        Mutator::IdentityOperator | Mutator::MembershipOperator => {
            format!(
                "no test checks both outcomes of {from}: add one where it holds and one where it does not"
            )
        }
        Mutator::NoneValue => "no test uses the value assigned here: check what is done with it".to_string(),
        Mutator::LoopControl => {
            format!("no test has a later iteration whose outcome depends on {from} (as against {to})")
        }
        Mutator::MatchArmDeletion => "no test reaches this arm and checks its outcome".to_string(),
    };
    Some(hint)
}

/// A comparison's boundary (`<` and `<=`), sense (`==` and `!=`) or direction (`<` and `>`).
fn comparison(from: &str, to: &str) -> Option<String> {
    let boundary = |a: &str, b: &str| matches!((a, b), ("<", "<=") | ("<=", "<") | (">", ">=") | (">=", ">"));
    let hint = if boundary(from, to) {
        format!("no test compares equal values here: add one at the boundary, where both sides of `{from}` are equal")
    } else if matches!((from, to), ("==", "!=") | ("!=", "==")) {
        format!("no test checks both outcomes of `{from}`: add one where the sides are equal and one where they differ")
    } else if ["<", "<=", ">", ">="].contains(&from) && ["<", "<=", ">", ">="].contains(&to) {
        format!("no test checks the direction of `{from}`: add one where the left side is smaller and one where it is larger")
    } else {
        return None;
    };
    Some(hint)
}

/// A condition forced to true or false (also `((n := f()) or True)`, which keeps a binding): a
/// test where it goes the other way is missing; negated: one for each way.
fn forced(replacement: &str, condition: &str) -> Option<String> {
    let forced = replacement.trim().trim_end_matches(')');
    if forced.starts_with("not ") {
        Some(format!(
            "no test checks both outcomes of {condition}: add one where it holds and one where it does not"
        ))
    } else if forced.ends_with("True") || forced.ends_with("true") {
        Some(format!("no test where {condition} is false checks the outcome: add one"))
    } else if forced.ends_with("False") || forced.ends_with("false") {
        Some(format!("no test where {condition} is true checks the outcome: add one"))
    } else {
        None
    }
}

fn is_exit(statement: &str) -> bool {
    matches!(first_word(statement), Some("return" | "break" | "continue"))
}

fn first_word(statement: &str) -> Option<&str> {
    statement.trim_start().split(|c: char| !c.is_alphanumeric() && c != '_').next()
}

/// `code` in backticks on one line, shortened past `QUOTED` characters.
fn quoted(code: &str) -> String {
    let flat = code.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = if flat.chars().count() > QUOTED {
        format!("{}...", flat.chars().take(QUOTED - 3).collect::<String>())
    } else {
        flat
    };
    format!("`{flat}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hints of every Python mutant of `source`'s line 2, by description.
    fn hints(source: &str) -> Vec<(String, Option<String>)> {
        let mutants = mutators::python::mutate(source, &[2]).unwrap().mutants;
        mutants.iter().map(|m| (m.description.clone(), hint(m))).collect()
    }

    fn hint_of<'a>(hints: &'a [(String, Option<String>)], description: &str) -> &'a str {
        let found = hints.iter().find(|(d, _)| d == description);
        found.and_then(|(_, hint)| hint.as_deref()).unwrap_or_else(|| panic!("{description}: {hints:#?}"))
    }

    #[test]
    fn a_boundary_swap_asks_for_a_test_at_the_boundary_and_a_reversal_for_both_directions() {
        let hints = hints("def f(a, b):\n    if a < b:\n        return 1\n");

        assert_eq!(
            hint_of(&hints, "replace < with <="),
            "no test compares equal values here: add one at the boundary, where both sides of `<` are equal"
        );
        assert!(hint_of(&hints, "replace < with >").starts_with("no test checks the direction of `<`"));
        assert_eq!(
            hint_of(&hints, "force condition to True"),
            "no test where `a < b` is false checks the outcome: add one"
        );
        assert_eq!(
            hint_of(&hints, "force condition to False"),
            "no test where `a < b` is true checks the outcome: add one"
        );
    }

    #[test]
    fn a_deleted_call_asks_for_its_effect_and_a_constant_is_named() {
        let hints = hints("def f(items):\n    items.append(30)\n");

        let deleted =
            hints.iter().find(|(d, _)| d.starts_with("delete")).and_then(|(_, h)| h.clone()).unwrap();
        assert_eq!(
            deleted,
            "no test observes what `items.append(30)` does: check its effect (a value, a state, a call, an error)"
        );
        assert_eq!(
            hint_of(&hints, "replace 30 with 31"),
            "no test pins the constant `30`: add one whose outcome changes when it does"
        );
    }

    #[test]
    fn a_deleted_raise_asks_for_a_test_that_expects_the_error() {
        let hints = hints("def f(reply):\n    raise RuntimeError('cut off')\n");

        let deleted =
            hints.iter().find(|(d, _)| d.starts_with("delete")).and_then(|(_, h)| h.clone()).unwrap();
        assert_eq!(
            deleted,
            "no test expects the error `raise RuntimeError('cut off')` raises: add one that asserts it is raised"
        );
    }

    #[test]
    fn a_long_statement_is_quoted_on_one_line_shortened() {
        let long = "a_rather_long_function_name(with_an_argument,\n    and_another_one_that_goes_on)";
        assert_eq!(quoted(long), "`a_rather_long_function_name(with_an_a...`");
        assert_eq!(quoted(long).chars().count(), QUOTED + 2);
    }

    #[test]
    fn a_replaced_rust_body_names_the_value_or_doing_nothing() {
        let source =
            "fn total(a: u8) -> u8 {\n    a + 1\n}\nfn log(a: u8) {\n    record(a);\n    flush();\n}\n";
        let mutants = mutators::rust::mutate(source, &[1, 2, 3, 4, 5, 6, 7]).unwrap().mutants;
        let hints: Vec<(usize, String)> = mutants
            .iter()
            .filter(|m| m.mutator() == Mutator::FunctionBody)
            .map(|m| (m.line, hint(m).unwrap()))
            .collect();
        assert_eq!(
            hints,
            [
                (
                    2,
                    "no test tells this function's work from `0`: assert on its result or its effect"
                        .to_string()
                ),
                (
                    2,
                    "no test tells this function's work from `1`: assert on its result or its effect"
                        .to_string()
                ),
                (
                    5,
                    "no test tells this function's work from doing nothing: assert on its effect".to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_comparison_the_rules_do_not_know_has_no_hint() {
        assert_eq!(comparison("==", "<"), None);
        assert_eq!(forced("x", "`x`"), None);
        assert!(forced("not (x)", "`x`").unwrap().starts_with("no test checks both outcomes of `x`"));
        assert!(forced("((n := f()) or True)", "`(n := f())`").unwrap().contains("is false"));
        assert!(is_exit("return x") && is_exit("break 'outer;") && !is_exit("returned = 1"));
    }
}
