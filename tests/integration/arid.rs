//! Arid lines, likely-equivalent mutants, mutants equivalent by their compiled code and `--one-per-line`, on fixture repositories: the marks `list` shows and the verdicts `check` gives.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::common::{check, fixture_repo, mutdelta, read_valid_report};

/// `mutdelta list --json` of the fixture's last commit, with `extra` options.
fn listed(repo: &std::path::Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["list", "--commit", "HEAD", "--json"];
    args.extend_from_slice(extra);
    let run = mutdelta(repo, &args);
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str::<Value>(&run.stdout).unwrap()["mutants"].as_array().unwrap().clone()
}

fn line(mutant: &Value) -> u64 {
    mutant["line"].as_u64().unwrap()
}

/// (line, rule) of every mutant marked arid.
fn arid_marks(mutants: &[Value]) -> BTreeSet<(u64, String)> {
    mutants.iter().filter_map(|m| m["arid"].as_str().map(|rule| (line(m), rule.to_string()))).collect()
}

/// The mutator names of the mutants on `at`.
fn families_on(mutants: &[Value], at: u64) -> Vec<&str> {
    mutants.iter().filter(|m| line(m) == at).map(|m| m["mutatorName"].as_str().unwrap()).collect()
}

fn marks(pairs: &[(u64, &str)]) -> BTreeSet<(u64, String)> {
    pairs.iter().map(|&(line, rule)| (line, rule.to_string())).collect()
}

#[test]
fn list_marks_each_python_arid_rule_and_the_fast_path_guard() {
    let repo = fixture_repo("arid_lines");

    let mutants = listed(repo.path(), &[]);

    let expected = marks(&[
        (7, "logging"),
        (21, "repr"),
        (25, "logging"),
        (26, "print"),
        (27, "assert"),
        (36, "warnings-warn"),
        (37, "sleep"),
        (41, "argparse-text"),
        (42, "argparse-text"),
        (46, "main-guard"),
        (47, "main-guard"),
    ]);
    assert_eq!(arid_marks(&mutants), expected);
    for m in mutants.iter().filter(|m| !m["arid"].is_null()) {
        assert!(m["ignored"].is_null(), "an arid mutant runs; only its survivor is Ignored: {m}");
    }
    let on_argparse_line: Vec<(&str, &str)> = mutants
        .iter()
        .filter(|m| line(m) == 42)
        .map(|m| (m["original"].as_str().unwrap(), m["arid"].as_str().unwrap_or("-")))
        .collect();
    assert!(on_argparse_line.contains(&("\"the factor\"", "argparse-text")), "{on_argparse_line:?}");
    assert!(
        on_argparse_line.contains(&("\"-k\"", "-")),
        "the option's name is no help text: {on_argparse_line:?}"
    );
    assert!(on_argparse_line.contains(&("2", "-")), "nor is its default: {on_argparse_line:?}");

    let equivalent: Vec<(u64, &str, &str)> = mutants
        .iter()
        .filter_map(|m| {
            let rule = m["likelyEquivalent"].as_str()?;
            Some((line(m), m["replacement"].as_str().unwrap(), rule))
        })
        .collect();
    assert_eq!(equivalent, [(16, "False", "fast-path-guard")], "`if self is other:` forced to False");

    // Type annotations get no mutant: the signatures and `-> ...` lines have none, and line 24
    // only its default value's.
    for signature in [11, 15, 20, 31, 35, 40] {
        assert_eq!(families_on(&mutants, signature), Vec::<&str>::new(), "line {signature}");
    }
    let defaults: Vec<(&str, u64)> = mutants
        .iter()
        .filter(|m| line(m) == 24)
        .map(|m| (m["original"].as_str().unwrap(), m["column"].as_u64().unwrap()))
        .collect();
    assert_eq!(defaults, [("2", 31), ("2", 31)]);
    assert_eq!(families_on(&mutants, 17), ["BooleanLiteral"], "`return True` gets no `return None`");
    let negations: Vec<&str> =
        families_on(&mutants, 32).into_iter().filter(|f| *f == "UnaryOperator").collect();
    assert_eq!(negations, ["UnaryOperator"], "either `not` of `not not value` removed reads the same");
}

#[test]
fn no_arid_runs_the_arid_mutants_and_one_per_line_keeps_one_per_line() {
    let repo = fixture_repo("arid_lines");
    let default = listed(repo.path(), &[]);

    let tested = listed(repo.path(), &["--no-arid"]);
    let single = listed(repo.path(), &["--one-per-line"]);

    assert_eq!(tested.len(), default.len(), "the same mutants");
    assert!(tested.iter().all(|m| m["ignored"].is_null() && m["arid"].is_null()), "none ignored");
    let mut per_line: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for m in &single {
        per_line.entry(line(m)).or_default().push(m["mutatorName"].as_str().unwrap());
    }
    let lines_with_mutants: BTreeSet<u64> = default.iter().map(line).collect();
    assert_eq!(per_line.keys().copied().collect::<BTreeSet<u64>>(), lines_with_mutants);
    assert!(per_line.values().all(|picked| picked.len() == 1), "{per_line:?}");
    assert_eq!(per_line[&12], ["StatementDeletion"], "a deletion before `self.x = None`");
    assert_eq!(per_line[&16], ["ConditionForcing"]);
    assert!(single.iter().all(|m| m["likelyEquivalent"].is_null()), "not the fast-path forcing");
    assert_eq!(per_line[&18], ["ReturnValue"], "a return value before operator swaps");
    assert_eq!(per_line[&24], ["NumberLiteral"]);

    let text = mutdelta(repo.path(), &["list", "--commit", "HEAD"]);
    let print_deletion = text.stdout.lines().find(|l| l.contains("shapes.py:26:5: delete statement"));
    assert!(
        print_deletion.is_some_and(|l| l.ends_with(" [arid: print]")),
        "the text list names the rule, and ignores nothing: {text:?}"
    );
}

#[test]
fn list_marks_each_rust_arid_rule_and_the_pointer_equality_fast_path() {
    let repo = fixture_repo("rust_arid");

    let mutants = listed(repo.path(), &[]);

    let expected = marks(&[(12, "debug-assert"), (13, "log-macro"), (22, "print-macro")]);
    assert_eq!(arid_marks(&mutants), expected);
    // The body of `show` is only a println!: replacing it is deleting that statement, one
    // mutant, arid.
    let show: Vec<(&str, &str)> = mutants
        .iter()
        .filter(|m| line(m) == 22)
        .map(|m| (m["mutatorName"].as_str().unwrap(), m["arid"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(show, [("FunctionBody", "print-macro")]);
    let equivalent: Vec<(u64, &str)> = mutants
        .iter()
        .filter(|m| !m["likelyEquivalent"].is_null())
        .map(|m| (line(m), m["replacement"].as_str().unwrap()))
        .collect();
    assert_eq!(
        equivalent,
        [(42, "false"), (43, "")],
        "`if Rc::ptr_eq(..)` forced to false, its return deleted"
    );
    assert_eq!(families_on(&mutants, 18).iter().filter(|f| **f == "UnaryOperator").count(), 1, "`!!`");

    let tested = listed(repo.path(), &["--no-arid"]);
    assert!(tested.iter().all(|m| m["ignored"].is_null()), "--no-arid runs the macro deletions");
    assert_eq!(tested.len(), mutants.len());
}

#[test]
fn arid_mutants_run_their_kills_count_their_survivors_are_ignored_and_a_fast_path_guard_is_last() {
    let repo = fixture_repo("arid_lines");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "a likely-equivalent survivor still counts: {run:?}");
    let report = read_valid_report(&json);
    let mutants = report["files"]["shapes.py"]["mutants"].as_array().unwrap();
    let mut survived = Vec::new();
    let mut arid_killed = BTreeSet::new();
    for m in mutants {
        match m["status"].as_str().unwrap() {
            "Killed" => {
                assert!(m["likelyEquivalent"].is_null(), "{m}");
                if let Some(rule) = m["arid"].as_str() {
                    let at = m["location"]["start"]["line"].as_u64().unwrap();
                    arid_killed.insert((
                        at,
                        rule.to_string(),
                        m["replacement"].as_str().unwrap().to_string(),
                    ));
                }
            }
            "Ignored" => {
                let rule = m["arid"].as_str().unwrap_or_else(|| panic!("ignored without an arid rule: {m}"));
                let reason = m["statusReason"].as_str().unwrap();
                assert!(reason.starts_with(&format!("arid line: {rule}; ")), "{m}");
                assert!(
                    reason.ends_with("every test that runs this line passed")
                        || reason.ends_with("no test runs this line"),
                    "ignored after it ran, or because no test reaches it: {m}"
                );
            }
            "Survived" => survived.push(m),
            other => panic!("{other}: {m}"),
        }
    }
    let expected: BTreeSet<(u64, String, String)> =
        [(7, "logging", "None"), (26, "print", "pass"), (26, "print", "\"\""), (27, "assert", "<")]
            .into_iter()
            .map(|(line, rule, to)| (line, rule.to_string(), to.to_string()))
            .collect();
    assert_eq!(
        arid_killed, expected,
        "the logger set to None (its every call fails), the print a test reads with capsys, and the assert that fails on every scaling: killed"
    );
    assert_eq!(survived.len(), 1, "{survived:?}");
    let guard = survived[0];
    assert_eq!(
        (&guard["location"]["start"]["line"], &guard["replacement"], &guard["likelyEquivalent"]),
        (&Value::from(16), &Value::from("False"), &Value::from("fast-path-guard"))
    );
    let printed = mutants.iter().filter(|m| m["arid"] == "print").count();
    assert_eq!(
        printed, 2,
        "the print call of `scaled` (its deletion, its string); the `__main__` block's is main-guard"
    );
    let debug_call: Vec<&Value> =
        mutants.iter().filter(|m| m["location"]["start"]["line"] == 25 && m["arid"] == "logging").collect();
    assert!(
        !debug_call.is_empty() && debug_call.iter().all(|m| m["status"] == "Ignored"),
        "no test reads the log: {debug_call:?}"
    );

    let heading = run.stdout.find("Likely equivalent (counted as survived").expect("a section apart");
    let survivor =
        "[MUT-survived] shapes.py:16:12: force condition to False (likely equivalent: fast-path-guard)";
    assert!(run.stdout[heading..].contains(survivor), "{run:?}");
    assert_eq!(run.stdout.matches("[MUT-survived]").count(), 1, "{run:?}");
    let note = run.stdout.lines().find(|l| l.contains("on arid lines ignored (")).expect("the arid note");
    assert!(note.contains("logging") && !note.contains("print"), "{note}");
    let ignored = |reason: &str| {
        mutants
            .iter()
            .filter(|m| m["status"] == "Ignored" && m["statusReason"].as_str().unwrap().ends_with(reason))
            .count()
    };
    let (ran, unrun) = (ignored("every test that runs this line passed"), ignored("no test runs this line"));
    assert!(ran > 0 && unrun > 0, "{mutants:?}");
    let said = format!("{ran} survived the tests that ran them, {unrun} no test runs; --no-arid counts them");
    assert!(note.ends_with(&said), "{note}");
    let last = run.stdout.lines().last().unwrap();
    assert!(last.contains("1 line with survivors"), "{last}");
}

#[test]
fn mutators_lists_every_arid_and_equivalence_rule_with_its_example() {
    let dir = tempfile::tempdir().unwrap();

    let run = mutdelta(dir.path(), &["mutators"]);

    assert_eq!(run.code, 0, "{run:?}");
    use mutators::catalog::{EQUIVALENT, PYTHON_ARID, RUST_ARID};
    for marker in PYTHON_ARID.iter().chain(RUST_ARID).chain(EQUIVALENT) {
        let row = run.stdout.lines().find(|line| line.starts_with(&format!("{} ", marker.name)));
        let row = row.unwrap_or_else(|| panic!("no row for {}: {run:?}", marker.name));
        assert!(row.trim_end().ends_with(marker.example), "{row}");
    }
    let sections = ["Arid lines, Python", "Arid lines, Rust", "Likely-equivalent mutants"];
    let at: Vec<usize> = sections.iter().map(|s| run.stdout.find(s).expect(s)).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{run:?}");
}

/// The JSON report's mutants of `client.py` of the `equivalent_code` fixture, checked with
/// `python`, and the text report.
fn equivalent_code_checked(python: &std::path::Path) -> (Vec<Value>, String) {
    let repo = fixture_repo("equivalent_code");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let args =
        ["check", "--commit", "HEAD", "--python", python.to_str().unwrap(), "--json", json.to_str().unwrap()];
    let run = mutdelta(repo.path(), &args);
    assert_eq!(run.code, 1, "the loop's break is not checked: {run:?}");
    let report = read_valid_report(&json);
    (report["files"]["client.py"]["mutants"].as_array().unwrap().clone(), run.stdout)
}

fn mutant_described<'a>(mutants: &'a [Value], line: u64, description: &str) -> &'a Value {
    let found =
        mutants.iter().find(|m| m["location"]["start"]["line"] == line && m["description"] == description);
    found.unwrap_or_else(|| panic!("no mutant {description} on line {line}: {mutants:#?}"))
}

#[test]
fn a_mutant_that_compiles_to_the_code_of_a_tested_one_is_ignored_as_equivalent_and_not_run() {
    let (mutants, text) = equivalent_code_checked(&crate::common::python());

    // `2 + 1`: `2 - 1` folds to 1 as `0 + 1` does, `2 + 2` to 4 as `3 + 1` does.
    for (twin, kept) in [("replace + with -", "replace 2 with 0"), ("replace 1 with 2", "replace 2 with 3")] {
        let twin = mutant_described(&mutants, 3, twin);
        let kept = mutant_described(&mutants, 3, kept);
        assert_eq!(kept["status"], "Killed", "{kept}");
        assert_eq!(twin["status"], "Ignored", "{twin}");
        let reason = format!(
            "equivalent: compiles to the code mutant {} compiles to (only source positions differ), which is tested",
            kept["id"].as_str().unwrap()
        );
        assert_eq!(twin["statusReason"], reason.as_str());
        assert!(twin["run"].is_null() && twin["coveredBy"].is_null(), "not run: {twin}");
    }
    assert_eq!(mutant_described(&mutants, 3, "replace 1 with 0")["status"], "Killed", "2 + 0 is 2, no twin");
    // Python 3.11 keeps the unreachable raise's string among the constants: its mutants run.
    assert_eq!(mutant_described(&mutants, 13, "delete statement")["status"], "NoCoverage");
    assert!(
        text.contains(
            "note: 2 mutants not run: they compile to the code the original (0) or another mutant (2) compiles to"
        ),
        "{text}"
    );
    assert!(text.ends_with("(2 ignored not counted)\n"), "{text}");
}

#[test]
fn on_python_3_12_unreachable_code_compiles_away_and_its_mutants_are_equivalent_to_the_original() {
    let (mutants, text) = equivalent_code_checked(&crate::common::python_at("3.12"));

    for description in ["delete statement", "replace \"the reply was cut off at the limit\" with \"\""] {
        let dead = mutant_described(&mutants, 13, description);
        assert_eq!(dead["status"], "Ignored", "{dead}");
        assert_eq!(
            dead["statusReason"],
            "equivalent: compiles to the code the original compiles to (only source positions differ)"
        );
    }
    assert!(
        text.contains(
            "note: 4 mutants not run: they compile to the code the original (2) or another mutant (2) compiles to"
        ),
        "{text}"
    );
    assert!(!text.contains("[MUT-nocoverage]"), "the unreachable line holds no mutant of its own: {text}");
}

#[test]
fn an_arid_survivor_remembered_as_ignored_is_a_survivor_again_under_no_arid() {
    let repo = fixture_repo("arid_lines");
    let out = tempfile::tempdir().unwrap();
    let statuses_on_the_debug_call = |extra: &[&str], name: &str| -> Vec<String> {
        let json = out.path().join(name);
        let mut args = vec!["--commit", "HEAD", "--json", json.to_str().unwrap()];
        args.extend_from_slice(extra);
        let run = check(repo.path(), &args);
        assert_eq!(run.code, 1, "{run:?}");
        let report = read_valid_report(&json);
        let mutants = report["files"]["shapes.py"]["mutants"].as_array().unwrap().clone();
        let on_line = mutants.iter().filter(|m| m["location"]["start"]["line"] == 25);
        on_line.map(|m| m["status"].as_str().unwrap().to_string()).collect()
    };

    let arid = statuses_on_the_debug_call(&[], "arid.json");
    let again = statuses_on_the_debug_call(&[], "again.json");
    let counted = statuses_on_the_debug_call(&["--no-arid"], "counted.json");

    assert!(!arid.is_empty() && arid.iter().all(|s| s == "Ignored"), "{arid:?}");
    assert_eq!(again, arid, "recalled as it was");
    assert!(counted.iter().all(|s| s == "Survived"), "--no-arid counts them, recalled or not: {counted:?}");
}

#[test]
fn rust_mutants_that_fold_to_the_originals_value_or_another_mutants_are_not_made_and_counted() {
    let dir = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    let repo = dir.path();
    let write = |path: &str, text: &str| {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    crate::common::git(repo, &["init", "-q"]);
    write("Cargo.toml", "[package]\nname = \"hours\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write("src/lib.rs", "pub fn minute() -> u64 {\n    60\n}\n");
    crate::common::git(repo, &["add", "-A"]);
    crate::common::git(repo, &["commit", "-q", "-m", "before"]);
    write("src/lib.rs", "pub fn minute() -> u64 {\n    60\n}\n\npub fn hour() -> u64 {\n    60 * 60\n}\n");
    crate::common::git(repo, &["commit", "-q", "-am", "an hour"]);

    let json = mutdelta(repo, &["list", "--commit", "HEAD", "--json"]);
    let text = mutdelta(repo, &["list", "--commit", "HEAD"]);

    assert_eq!(json.code, 0, "{json:?}");
    let plan: Value = serde_json::from_str(&json.stdout).unwrap();
    let on_the_product: Vec<&str> = plan["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["line"] == 6)
        .map(|m| m["description"].as_str().unwrap())
        .collect();
    // The body replacements (on the body's line) are not folded: they stand for the function.
    assert_eq!(
        on_the_product,
        [
            "replace 60 with 0",
            "replace body of `hour` with `0`",
            "replace 60 with 1",
            "replace body of `hour` with `1`",
            "replace 60 with 61",
            "replace * with /"
        ],
        "60 * 0, 60 * 1 and 60 * 61 fold as the first operand's mutants do"
    );
    assert_eq!(plan["notMade"], serde_json::json!({ "literal-fold": 3 }));
    assert!(
        text.stderr.contains("note: 3 mutants not made: the same program as the original or another mutant (literal-fold 3; `mutdelta mutators` says why)"),
        "{text:?}"
    );
}

/// Mutants of an arid line no test runs are Ignored like those that survive, but the note says
/// which is which: "no test failed with them" would claim tests that never ran.
#[test]
fn the_arid_note_tells_mutants_no_test_runs_from_those_no_test_failed_with() {
    let test = "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n";
    let calc = "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef double(x):\n    return x * 2\n";
    let added = format!(
        "{}    log.debug('doubled %s', x)\n    return x * 2\n\n\ndef halve(x):\n    log.debug('halving %s', x)\n    return x / 2\n",
        calc.trim_end_matches("    return x * 2\n")
    );
    let repo =
        crate::common::repo_of(&[("calc.py", calc), ("tests/test_calc.py", test)], &[("calc.py", &added)]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    let report = crate::common::read_valid_report(&json);
    let mutants = report["files"]["calc.py"]["mutants"].as_array().unwrap();
    let arid_on = |line: u64| -> Vec<&Value> {
        mutants.iter().filter(|m| m["location"]["start"]["line"] == line && m["arid"] == "logging").collect()
    };
    let (ran, unrun) = (arid_on(7), arid_on(12));
    assert!(!ran.is_empty() && ran.iter().all(|m| m["status"] == "Ignored"), "{ran:?}");
    assert!(!unrun.is_empty() && unrun.iter().all(|m| m["status"] == "Ignored"), "{unrun:?}");
    for m in &unrun {
        assert_eq!(m["statusReason"], "arid line: logging; no test runs this line", "{m}");
    }
    let note = run.stdout.lines().find(|l| l.contains("on arid lines ignored (")).expect("the arid note");
    assert_eq!(
        note,
        format!(
            "note: {} mutants on arid lines ignored (logging {}): {} survived the tests that ran them, {} no test runs; --no-arid counts them",
            ran.len() + unrun.len(),
            ran.len() + unrun.len(),
            ran.len(),
            unrun.len()
        ),
        "{run:?}"
    );
}
