//! Parity is the test: every Python fixture whose mutants are swapped into a process that collected the tests gets the same verdict per mutant as when each is imported fresh, on Python 3.11, 3.12 and 3.13; the fixtures none of whose mutants swap are checked to swap none (they take the fresh path either way); on 3.10 nothing is swapped.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{fixture_repo, mutants_on_line, mutdelta, python, python_at, read_report};

/// The fixtures some of whose mutants are swapped in (from 3.11).
const SWAPPING: &[&str] =
    &["swap_pitfalls", "model_client", "strong_tests", "hazards", "order_dependent", "tested_elsewhere"];

/// The fixtures none of whose mutants is swapped in: each falls back to a fresh import (its
/// tests run suite-wide), or none runs (its test is skipped). A run of theirs with `--no-swap`
/// takes the same path, so each runs once, and swaps nothing; one that starts to swap belongs
/// in `SWAPPING`.
const NOT_SWAPPING: &[&str] = &["suite_wide", "skipped_test"];

/// (file, id) → (status, how it ran, why the swap was not taken).
type Verdicts = BTreeMap<(String, String), (String, String, String)>;

/// The verdicts of every mutant of a report.
fn verdicts(path: &Path) -> Verdicts {
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

/// The verdicts of `fixture`'s check with `python`, swapping unless `fresh`, and the report's
/// path, in `out`.
fn checked(fixture: &str, python: &str, fresh: bool, out: &Path) -> (Verdicts, std::path::PathBuf) {
    let repo = fixture_repo(fixture);
    let json = out.join(if fresh { "fresh.json" } else { "swap.json" });
    let mut args = vec!["check", "--commit", "HEAD", "--python", python, "-j", "2", "--timeout", "3"];
    args.extend(["--json", json.to_str().unwrap()]);
    if fresh {
        args.push("--no-swap");
    }
    let run = mutdelta(repo.path(), &args);
    assert!(run.code == 0 || run.code == 1, "{fixture} (fresh: {fresh}): {run:?}");
    (verdicts(&json), json)
}

fn check_both_ways(python: &Path) {
    let python = python.to_str().unwrap();
    for fixture in SWAPPING {
        let out = tempfile::tempdir().unwrap();
        let (swapped, report) = checked(fixture, python, false, out.path());
        let (fresh, _) = checked(fixture, python, true, out.path());
        assert_eq!(swapped.keys().collect::<Vec<_>>(), fresh.keys().collect::<Vec<_>>(), "{fixture}");
        for (id, (status, how, why)) in &swapped {
            assert_eq!(status, &fresh[id].0, "{fixture} mutant {id:?} ({how}, {why}) with {python}");
            assert_ne!(fresh[id].1, "swap", "--no-swap swaps nothing");
        }
        assert!(
            swapped.values().any(|(_, how, _)| how == "swap"),
            "{fixture} swaps some mutant: {swapped:?}"
        );
        if *fixture == "swap_pitfalls" {
            assert_swap_and_fallbacks(&swapped);
            assert_last_lines_swap(&report);
            assert_defaults_swap_unless_used_at_import(&report);
        }
    }
    for fixture in NOT_SWAPPING {
        let out = tempfile::tempdir().unwrap();
        let (verdicts, _) = checked(fixture, python, false, out.path());
        assert!(!verdicts.is_empty(), "{fixture} has mutants");
        assert!(
            verdicts.values().all(|(_, how, _)| how != "swap"),
            "{fixture} swaps a mutant now: {verdicts:?}"
        );
    }
}

/// The pitfalls fixture takes both paths, each for its reasons.
fn assert_swap_and_fallbacks(verdicts: &Verdicts) {
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

/// Before 3.11 code objects have no qualified name to match: the mutants that swap from 3.11
/// are all imported fresh, and the report says why.
#[test]
fn before_3_11_nothing_is_swapped_and_each_mutant_is_imported_fresh() {
    let python = python_at("3.10");
    let python = python.to_str().unwrap();
    for fixture in ["swap_pitfalls", "model_client", "tested_elsewhere"] {
        let out = tempfile::tempdir().unwrap();
        let (verdicts, _) = checked(fixture, python, false, out.path());
        assert!(!verdicts.is_empty(), "{fixture} has mutants");
        for (id, (_, how, _)) in &verdicts {
            assert_ne!(how, "swap", "{fixture} mutant {id:?} swapped on {python}");
        }
        if fixture == "swap_pitfalls" {
            let whys: Vec<&str> = verdicts.values().map(|(_, _, why)| why.as_str()).collect();
            assert!(whys.iter().any(|why| why.contains("Python before 3.11 has no co_qualname")), "{whys:?}");
        }
    }
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
