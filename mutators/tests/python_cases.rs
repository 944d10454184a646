//! Focused checks of the tricky corners of the Python mutant generator.

use mutators::python::{executable_lines, mutate};
use mutators::{Mutant, MutateError, Position};

fn all_mutants(source: &str) -> Vec<Mutant> {
    let lines = executable_lines(source).unwrap();
    mutate(source, &lines).unwrap().mutants
}

/// `line:original→replacement` for each mutant of `mutator`.
fn of(mutants: &[Mutant], mutator: &str) -> Vec<String> {
    mutants
        .iter()
        .filter(|m| m.mutator().name() == mutator)
        .map(|m| format!("{}:{}→{}", m.line, m.original, m.replacement))
        .collect()
}

fn mutators_of(mutants: &[Mutant]) -> Vec<&'static str> {
    let mut names: Vec<&str> = mutants.iter().map(|m| m.mutator().name()).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn strings_and_comments_hide_their_operators() {
    let source = "s = \"a + b # c - d\"  # e * f and g\n";
    let mutants = all_mutants(source);
    assert_eq!(mutators_of(&mutants), ["NoneValue", "StatementDeletion", "StringLiteral"]);
    assert_eq!(of(&mutants, "StringLiteral"), ["1:\"a + b # c - d\"→\"\""]);
}

#[test]
fn fstring_fields_are_code_but_their_strings_and_specs_are_not() {
    let source = "s = f\"{a + b} {d['k'] - 1:>{w}}\" + t\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["1:+→-", "1:-→+", "1:+→-"]);
    assert_eq!(of(&mutants, "StringLiteral"), ["1: →"]);
    assert_eq!(of(&mutants, "NumberLiteral"), ["1:1→0", "1:1→2"]);
}

#[test]
fn an_fstring_with_doubled_braces_and_a_spec_loses_only_its_text() {
    let source = "s = f\"{{total}}: {n:>{width}.2f}!r {x!r}\"\n";
    let texts: Vec<String> = all_mutants(source)
        .iter()
        .filter(|m| m.mutator().name() == "StringLiteral")
        .map(|m| m.apply(source))
        .collect();
    assert_eq!(texts, ["s = f\"{n:>{width}.2f}!r {x!r}\"\n", "s = f\"{{total}}: {n:>{width}.2f}{x!r}\"\n"]);
}

#[test]
fn an_fstring_without_fields_is_a_string_and_a_multi_line_one_keeps_its_lines() {
    let mutants = all_mutants("a = f'plain'\nb = f\"\"\"x {y}\nz {w}\"\"\"\n");
    assert_eq!(of(&mutants, "StringLiteral"), ["1:f'plain'→f\"\"", "2:x →", "2:\nz →\n"]);
}

#[test]
fn inner_lines_of_multi_line_strings_are_not_executable() {
    let source = "x = \"\"\"\na + b\n\"\"\"\ny = (1, '''\n2''')\n";
    // Line 5 ends the string but also holds the closing `)`, which is code.
    assert_eq!(executable_lines(source).unwrap(), [1, 4, 5]);
    let found = mutate(source, &[2, 3]).unwrap();
    assert!(found.executable_lines.is_empty());
    assert!(found.mutants.is_empty());
}

#[test]
fn docstrings_are_never_mutated_nor_executable() {
    let source = "\"\"\"Module.\n\nMore.\"\"\"\nclass A:\n    'Class doc.'\n    def f(self):\n        (\"Doc\"\n         \"string\")\n        return 'not a docstring'\n";
    assert_eq!(executable_lines(source).unwrap(), [4, 6, 9]);
    let found = mutate(source, &[1, 2, 3, 5, 7, 8]).unwrap();
    assert!(found.mutants.is_empty(), "{:?}", found.mutants);
    assert_eq!(of(&all_mutants(source), "StringLiteral"), ["9:'not a docstring'→\"\""]);
}

#[test]
fn bracketed_continuation_lines_are_their_own_lines() {
    let source = "x = foo(a +\n        b,\n        c - d)\n";
    assert_eq!(executable_lines(source).unwrap(), [1, 2, 3]);
    let found = mutate(source, &[3]).unwrap();
    assert_eq!(of(&found.mutants, "ArithmeticOperator"), ["3:-→+"]);
    assert_eq!(found.mutants.len(), 1, "{:?}", found.mutants);
    assert_eq!(found.mutants[0].start, Position { line: 3, column: 11 });
}

#[test]
fn loop_ins_are_no_membership_tests() {
    let source = "for x in y:\n    z = [a for a in b if a in c]\n    w = {k: v for k, v in d.items()}\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "MembershipOperator"), ["2:in→not in"]);
    assert_eq!(mutants.iter().find(|m| m.mutator().name() == "MembershipOperator").unwrap().start.column, 28);
}

#[test]
fn not_in_and_is_not_are_one_operator_each() {
    let mutants = all_mutants("p = a not in b\nq = a is not b\n");
    assert_eq!(of(&mutants, "MembershipOperator"), ["1:not in→in"]);
    assert_eq!(of(&mutants, "IdentityOperator"), ["2:is not→is"]);
    assert!(of(&mutants, "UnaryOperator").is_empty());
}

#[test]
fn unary_minus_is_told_from_binary_minus() {
    let source = "a = b - c\nd = f(-1) + x[-1] ** -2\ng = lambda: -1\nh = b if c else -1\nreturn_ = (-b)\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["1:-→+", "2:+→-", "2:**→*"]);
    let unary = of(&mutants, "UnaryOperator");
    assert_eq!(unary, ["2:-→", "2:-→", "2:-→", "3:-→", "4:-→", "5:-→"]);
}

#[test]
fn negative_literal_assignment() {
    let source = "a = -1\n";
    let applied: Vec<String> = all_mutants(source).iter().map(|m| m.apply(source)).collect();
    assert_eq!(applied, ["pass\n", "a = 1\n", "a = None\n", "a = -0\n", "a = -2\n"]);
}

#[test]
fn only_statement_level_assignments_get_none() {
    let source = "f(x=1)\ndef g(y=2, *, z=3): pass\nh = lambda w=4: w\nclass C(metaclass=M): pass\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "NoneValue"), ["3:lambda w=4: w→None"]);
}

#[test]
fn decorators_are_executable_but_not_deletable() {
    let source = "@decorate(1)\ndef f():\n    pass\n";
    assert_eq!(executable_lines(source).unwrap(), [1, 2, 3]);
    let mutants = all_mutants(source);
    assert_eq!(mutators_of(&mutants), ["NumberLiteral"]);
}

#[test]
fn lambda_star_parameters_are_not_arithmetic() {
    let mutants = all_mutants("f = lambda a, *b, **c: a * 2\n");
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["1:*→/"]);
}

#[test]
fn walrus_is_not_an_assignment_statement() {
    let source = "if (n := len(a)) > 10:\n    pass\n";
    let mutants = all_mutants(source);
    assert!(of(&mutants, "NoneValue").is_empty());
    assert!(of(&mutants, "StatementDeletion").is_empty());
    assert_eq!(
        of(&mutants, "ConditionForcing"),
        [
            "1:(n := len(a)) > 10→(((n := len(a)) > 10) and False)",
            "1:(n := len(a)) > 10→(((n := len(a)) > 10) or True)"
        ]
    );
}

#[test]
fn a_forced_condition_keeps_its_walrus_binding_wherever_it_is() {
    let source = "while chunk := read():\n    pass\n\
                  ys = [y for x in xs if (y := g(x))]\n\
                  v = a if (m := h()) else m\n";
    let mutants = all_mutants(source);
    assert_eq!(
        of(&mutants, "ConditionForcing"),
        [
            "1:chunk := read()→((chunk := read()) and False)",
            "3:(y := g(x))→((y := g(x)) and False)",
            "3:(y := g(x))→((y := g(x)) or True)",
            "4:(m := h())→((m := h()) and False)",
            "4:(m := h())→((m := h()) or True)",
            "4:(m := h())→not (m := h())",
        ]
    );
}

#[test]
fn walrus_values_are_mutated_like_any_value() {
    let mutants = all_mutants("if (n := count - 1) > 0:\n    pass\n");
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["1:-→+"]);
    assert_eq!(of(&mutants, "NumberLiteral"), ["1:1→0", "1:1→2", "1:0→1"]);
}

#[test]
fn nested_conditional_expressions_have_each_condition_forced_alone() {
    let source = "x = a if b else c if d else e\n";
    let applied: Vec<String> = all_mutants(source)
        .iter()
        .filter(|m| m.mutator().name() == "ConditionForcing")
        .map(|m| m.apply(source))
        .collect();
    assert_eq!(
        applied,
        [
            "x = a if False else c if d else e\n",
            "x = a if True else c if d else e\n",
            "x = a if not (b) else c if d else e\n",
            "x = a if b else c if False else e\n",
            "x = a if b else c if True else e\n",
            "x = a if b else c if not (d) else e\n",
        ]
    );
}

#[test]
fn conditional_expressions_in_defaults_and_lambdas_are_forced_but_not_in_annotations() {
    let source = "def f(x: int if A else str = 1 if B else 2, g=lambda y: y if C else -y):\n    pass\n";
    let conditions: Vec<String> = of(&all_mutants(source), "ConditionForcing");
    assert_eq!(conditions, ["1:B→False", "1:B→True", "1:B→not (B)", "1:C→False", "1:C→True", "1:C→not (C)"]);
}

#[test]
fn comprehension_conditions_are_forced_each_alone() {
    let source = "r = {k: v for k, v in d if k if v > (1 if w else 2)}\n";
    let conditions: Vec<String> = of(&all_mutants(source), "ConditionForcing");
    assert_eq!(
        conditions,
        [
            "1:k→False",
            "1:k→True",
            "1:v > (1 if w else 2)→False",
            "1:v > (1 if w else 2)→True",
            "1:w→False",
            "1:w→True",
            "1:w→not (w)",
        ]
    );
}

#[test]
fn a_match_without_a_catch_all_arm_gets_no_arm_mutant() {
    let source = "match p:\n    case 1:\n        pass\n    case Point(x=0):\n        pass\n";
    assert!(of(&all_mutants(source), "MatchArmDeletion").is_empty());
    let with_catch_all = format!("{source}    case other:\n        pass\n");
    assert_eq!(
        of(&all_mutants(&with_catch_all), "MatchArmDeletion"),
        ["2:1→1 if False", "4:Point(x=0)→Point(x=0) if False"]
    );
}

#[test]
fn a_guarded_arm_has_its_guard_forced_and_the_catch_all_arm_is_left_alone() {
    let source = "match p:\n    case [x, *_] if x:\n        pass\n    case _:\n        pass\n";
    let mutants = all_mutants(source);
    assert!(of(&mutants, "MatchArmDeletion").is_empty());
    assert_eq!(of(&mutants, "ConditionForcing"), ["2:x→False", "2:x→True"]);
}

#[test]
fn await_statements_are_deleted_and_their_expressions_mutated() {
    let source = "async def f():\n    await g(x + 1)\n    async with lock(a - 1) as l:\n        async for i in it(b * 2):\n            pass\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "StatementDeletion"), ["2:await g(x + 1)→pass"]);
    assert_eq!(of(&mutants, "ArithmeticOperator"), ["2:+→-", "3:-→+", "4:*→/"]);
}

#[test]
fn a_three_line_call_is_deleted_whole() {
    let source = "if x:\n    call(\n        1,\n        2)  # trailing\n";
    let mutants = all_mutants(source);
    let deletion = mutants.iter().find(|m| m.mutator().name() == "StatementDeletion").unwrap();
    assert_eq!(deletion.line, 2);
    assert_eq!(
        (deletion.start, deletion.end),
        (Position { line: 2, column: 5 }, Position { line: 4, column: 11 })
    );
    assert_eq!(deletion.apply(source), "if x:\n    pass  # trailing\n");
}

#[test]
fn statements_after_semicolons_and_colons_are_their_own() {
    let source = "if x: a(); b = 1\n";
    let mutants = all_mutants(source);
    assert_eq!(of(&mutants, "StatementDeletion"), ["1:a()→pass", "1:b = 1→pass"]);
}

#[test]
fn skip_pragma_ignores_the_line_and_needs_a_reason() {
    let source = "a = 1\nb = 2  # mutdelta: skip cache warm-up\n";
    let mutants = all_mutants(source);
    assert!(mutants.iter().filter(|m| m.line == 1).all(|m| m.ignored.is_none()));
    assert!(mutants.iter().filter(|m| m.line == 2).all(|m| m.ignored.as_deref() == Some("cache warm-up")));
    assert_eq!(mutants.iter().filter(|m| m.line == 2).count(), 4);

    let without_reason = "a = 1\n\nb = 2  # mutdelta: skip\n";
    assert_eq!(mutate(without_reason, &[1]), Err(MutateError::PragmaWithoutReason { line: 3 }));
}

#[test]
fn crlf_gives_the_same_mutants_as_lf() {
    let lf = "def f(a):\n    if a > 1:\n        return a + 1\n    return 0\n";
    let crlf = lf.replace('\n', "\r\n");
    let summary = |source: &str| -> Vec<(Position, Position, String, String)> {
        let mutants = all_mutants(source);
        mutants.into_iter().map(|m| (m.start, m.end, m.original, m.replacement)).collect()
    };
    assert_eq!(executable_lines(&crlf).unwrap(), [1, 2, 3, 4]);
    assert_eq!(summary(&crlf), summary(lf));
}

#[test]
fn tabs_count_as_one_column() {
    let source = "if x:\n\ty = 1\n";
    let mutants = all_mutants(source);
    let deletion = mutants.iter().find(|m| m.mutator().name() == "StatementDeletion").unwrap();
    assert_eq!(deletion.start, Position { line: 2, column: 2 });
    assert_eq!(deletion.apply(source), "if x:\n\tpass\n");
}

#[test]
fn unterminated_string_is_a_syntax_error_on_its_line() {
    let result = mutate("a = 1\nb = 'oops\nc = 2\n", &[1]);
    assert!(matches!(result, Err(MutateError::Syntax { line: 2, .. })), "{result:?}");
    let result = executable_lines("a = (1,\n2\n");
    assert!(matches!(result, Err(MutateError::Syntax { line: 1, .. })), "{result:?}");
}

#[test]
fn case_patterns_are_left_alone_but_guards_are_not() {
    let source = "match = 1\nmatch point:\n    case (0, -1) | [2, *_] if match > 3:\n        pass\n";
    let mutants = all_mutants(source);
    let on_case_line: Vec<String> =
        mutants.iter().filter(|m| m.line == 3).map(|m| format!("{}→{}", m.original, m.replacement)).collect();
    assert_eq!(on_case_line, ["match > 3→False", "match > 3→True", ">→<", ">→>=", "3→0", "3→4"]);
}

#[test]
fn mutants_are_sorted_and_unique() {
    let source = "while True:\n    x = not (a < b) and -c\n";
    let mutants = all_mutants(source);
    let keys: Vec<(usize, &str)> = mutants.iter().map(|m| (m.span.start, m.replacement.as_str())).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
    assert_eq!(of(&mutants, "BooleanLiteral"), ["1:True→False"]);
    assert!(of(&mutants, "ConditionForcing").is_empty());
}

#[test]
fn a_two_thousand_line_file_yields_thousands_of_mutants() {
    let chunk = "def f(a, b=1):\n    \"\"\"Doc.\"\"\"\n    if a > b and not a in (1, 2):\n        a += b * 2 - 1\n    return [x for x in range(a) if x % 2 == 0]\n\n";
    let source = chunk.repeat(2000 / chunk.lines().count());
    let lines: Vec<usize> = (1..=2000).collect();
    let found = mutate(&source, &lines).unwrap();
    // How long it takes is measured by `cargo bench -p mutators`, not asserted here.
    assert!(found.mutants.len() > 5_000);
}

#[test]
fn statement_mutants_belong_to_the_line_where_their_edit_starts() {
    let source = "def f(x):\n    while \\\n            x:\n        return \\\n            x\n";
    let on = |lines: &[usize]| -> Vec<String> {
        let found = mutate(source, lines).unwrap();
        found.mutants.iter().map(|m| format!("{}:{}:{}", m.line, m.mutator().name(), m.replacement)).collect()
    };
    assert!(on(&[2, 4]).is_empty(), "{:?}", on(&[2, 4]));
    assert_eq!(on(&[3, 5]), ["3:ConditionForcing:False", "5:ReturnValue:None"]);
}

#[test]
fn each_executable_line_belongs_to_its_whole_statement() {
    let source =
        "import re\n__all__ = [\n    \"a\",\n    \"b\",\n]\nx = 1; y = 2\nif (x and\n        y):\n    pass\n";
    let found = mutate(source, &[1, 3, 4, 6, 8, 9]).unwrap();
    assert_eq!(found.executable_lines, [1, 3, 4, 6, 8, 9]);
    assert_eq!(found.statements, [1..=1, 2..=5, 2..=5, 6..=6, 7..=8, 9..=9]);
}

#[test]
fn edits_that_leave_the_same_line_make_one_mutant() {
    // Removing either `not` leaves `x = not y`: one mutant, the first in source order.
    let mutants = all_mutants("x = not not y\n");
    assert_eq!(of(&mutants, "UnaryOperator"), ["1:not →"]);
    assert_eq!(mutants.iter().find(|m| m.mutator().name() == "UnaryOperator").unwrap().start.column, 5);
}

#[test]
fn an_identity_test_against_none_is_no_fast_path() {
    let mutants = all_mutants(
        "def f(a, b):\n    if a is None:\n        return b\n    if a is b:\n        return a\n    return b\n",
    );
    let marked: Vec<usize> =
        mutants.iter().filter(|m| m.likely_equivalent.is_some()).map(|m| m.line).collect();
    assert_eq!(marked, [4]);
}

#[test]
fn a_guard_that_does_more_than_return_is_no_fast_path() {
    let mutants =
        all_mutants("def f(a, b):\n    if a is b:\n        log(a)\n        return a\n    return b\n");
    assert!(mutants.iter().all(|m| m.likely_equivalent.is_none()));
}

#[test]
fn type_parameters_and_aliases_are_annotations() {
    let source = "type Pair[T: (int, str)] = tuple[T, T] | None\ndef f[T: int](x: T = 1) -> list[T | None]:\n    return [x, 2]\n";
    let mutants = all_mutants(source);
    let made: Vec<String> = mutants.iter().map(|m| format!("{}:{}", m.line, m.original)).collect();
    let alias_deleted = "1:type Pair[T: (int, str)] = tuple[T, T] | None";
    assert_eq!(
        made,
        [alias_deleted, "2:1", "2:1", "3:[x, 2]", "3:2", "3:2"],
        "the alias may go, its type stays"
    );
}
