//! Parity is the test: every Python fixture gets the same verdict per mutant whether its code is swapped into a process that collected the tests or imported fresh, on Python 3.11, 3.12 and 3.13; on 3.10 nothing is swapped and the verdicts are the same.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{fixture_repo, mutants_on_line, mutdelta, python, python_at, read_report};

const FIXTURES: &[&str] = &[
    "swap_pitfalls",
    "suite_wide",
    "model_client",
    "strong_tests",
    "skipped_test",
    "hazards",
    "order_dependent",
    "tested_elsewhere",
];

/// (file, id) → (status, how it ran, why the swap was not taken) of every mutant of a report.
fn verdicts(path: &Path) -> BTreeMap<(String, String), (String, String, String)> {
    let report = read_report(path);
    let mut out = BTreeMap::new();
    for (file, entry) in report["files"].as_object().unwrap() {
        for m in entry["mutants"].as_array().unwrap() {
            let run = &m["run"];
            out.insert(
                (file.clone(), m["id"].as_str().unwrap().to_string()),
                (
                    m["status"].as_str().unwrap().to_string(),
                    run["how"].as_str().unwrap_or("").to_string(),
                    run["fallback"].as_str().unwrap_or("").to_string(),
                ),
            );
        }
    }
    out
}

fn check_both_ways(python: &Path) {
    // Before 3.11 code objects have no qualified name to match: every mutant imports fresh.
    let before_3_11 = python.to_str().unwrap().contains("python-env-3.10");
    let python = python.to_str().unwrap();
    for fixture in FIXTURES {
        let repo = fixture_repo(fixture);
        let out = tempfile::tempdir().unwrap();
        let mut reports = Vec::new();
        for mode in ["swap", "fresh"] {
            let json = out.path().join(format!("{mode}.json"));
            let mut args = vec!["check", "--commit", "HEAD", "--python", python, "-j", "2", "--timeout", "3"];
            args.extend(["--json", json.to_str().unwrap()]);
            if mode == "fresh" {
                args.push("--no-swap");
            }
            let run = mutdelta(repo.path(), &args);
            assert!(run.code == 0 || run.code == 1, "{fixture} ({mode}): {run:?}");
            reports.push(verdicts(&json));
        }
        let (swapped, fresh) = (&reports[0], &reports[1]);
        assert_eq!(swapped.keys().collect::<Vec<_>>(), fresh.keys().collect::<Vec<_>>(), "{fixture}");
        for (id, (status, how, why)) in swapped {
            assert_eq!(status, &fresh[id].0, "{fixture} mutant {id:?} ({how}, {why}) with {python}");
            assert_ne!(fresh[id].1, "swap", "--no-swap swaps nothing");
            assert!(!(before_3_11 && how == "swap"), "{fixture} mutant {id:?} swapped on {python}");
        }
        if *fixture == "swap_pitfalls" && before_3_11 {
            let whys: Vec<&str> = swapped.values().map(|(_, _, why)| why.as_str()).collect();
            assert!(whys.iter().any(|why| why.contains("Python before 3.11 has no co_qualname")), "{whys:?}");
        }
        if *fixture == "swap_pitfalls" && !before_3_11 {
            assert_swap_and_fallbacks(swapped);
            assert_last_lines_swap(&out.path().join("swap.json"));
            assert_defaults_swap_unless_used_at_import(&out.path().join("swap.json"));
        }
    }
}

/// The pitfalls fixture takes both paths, each for its reasons.
fn assert_swap_and_fallbacks(verdicts: &BTreeMap<(String, String), (String, String, String)>) {
    let hows: Vec<&str> = verdicts.values().map(|(_, how, _)| how.as_str()).collect();
    let swapped = hows.iter().filter(|how| **how == "swap").count();
    assert!(swapped >= 15, "methods, closures, wrapped functions, coroutines and lambdas swap: {verdicts:?}");
    let reasons: Vec<&str> = verdicts.values().map(|(_, _, why)| why.as_str()).collect();
    for reason in [
        "its code ran when the project was imported or collected",
        "a live generator or coroutine holds the old code",
        "the mutant changes module or class body code (run at import)",
    ] {
        assert!(reasons.contains(&reason), "some mutant falls back because {reason}: {verdicts:?}");
    }
}

/// A `def`'s positions end on its last line, so a mutant there moves them in the module's (or
/// class's) code; that code runs the same, and the mutant is swapped like any other.
fn assert_last_lines_swap(report: &Path) {
    // `scale`'s and `Shape.area`'s last lines: `return x * factor`, `return self.size * self.size`.
    for line in [71, 90] {
        let runs = runs_on_line(report, line, "ReturnValue");
        assert_eq!(runs.len(), 1, "line {line}: {runs:?}");
        assert_eq!(runs[0].0, "swap", "line {line}: {runs:?}");
    }
}

/// The mutants of `pkg/pitfalls.py`'s `line` made by `mutator`: how each ran, and its status.
fn runs_on_line(report: &Path, line: u64, mutator: &str) -> Vec<(String, String)> {
    let report = read_report(report);
    mutants_on_line(&report, "pkg/pitfalls.py", line)
        .into_iter()
        .filter(|m| m["mutatorName"] == mutator)
        .map(|m| (m["run"]["how"].as_str().unwrap().to_string(), m["status"].as_str().unwrap().to_string()))
        .collect()
}

/// A literal default of a function the import did not call is swapped into the live function
/// (positional: `scale`'s `factor=3`; keyword-only: `clamp`'s `low=0`; a method's: `Greeter.hello`'s
/// `name="world"`); one the import used (`offset(1)`, `Counter().start()` at module level) is
/// imported fresh, and its mutants are caught there.
fn assert_defaults_swap_unless_used_at_import(report: &Path) {
    for (line, mutator) in [(89, "NumberLiteral"), (108, "NumberLiteral"), (113, "StringLiteral")] {
        let runs = runs_on_line(report, line, mutator);
        assert!(!runs.is_empty(), "line {line}");
        assert!(
            runs.iter().all(|(how, status)| how == "swap" && status == "Killed"),
            "line {line}: {runs:?}"
        );
    }
    for line in [101, 118] {
        let at_import = runs_on_line(report, line, "NumberLiteral");
        assert!(!at_import.is_empty(), "line {line}");
        assert!(at_import.iter().all(|(how, status)| how == "fork" && status == "Killed"), "{at_import:?}");
    }
}

#[test]
fn before_3_11_nothing_is_swapped_and_the_verdicts_are_those_of_fresh_imports() {
    check_both_ways(&python_at("3.10"));
}

#[test]
fn swapped_and_fresh_mutants_get_the_same_verdicts_on_python_3_11() {
    check_both_ways(&python());
}

#[test]
fn swapped_and_fresh_mutants_get_the_same_verdicts_on_python_3_12() {
    check_both_ways(&python_at("3.12"));
}

#[test]
fn swapped_and_fresh_mutants_get_the_same_verdicts_on_python_3_13() {
    check_both_ways(&python_at("3.13"));
}
