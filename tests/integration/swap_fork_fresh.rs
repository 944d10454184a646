//! How a Python mutant reaches its tests: swapped into a process that collected them, forked from a
//! warm worker, or imported fresh in a new interpreter, each where it is sound, with the same
//! verdicts either way.

use std::path::Path;

use serde_json::{json, Value};

use crate::common::{
    check, fixture_repo, hermetic, leftovers, mutants_on_line, mutdelta, python,
    python_with_rewritten_plugin, read_valid_report, statuses, Run, FIXTURES,
};

#[test]
fn a_plugin_whose_asserts_pytest_rewrites_is_not_imported_before_a_forked_run() {
    // The tests import a helper of an installed pytest plugin, and warnings are errors: had the
    // warm worker imported it beforehand, every forked run would fail on pytest's "Module
    // already imported so cannot be rewritten" instead of testing its mutant.
    let python = python_with_rewritten_plugin();
    let repo = fixture_repo("rewritten_plugin");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = mutdelta(
        repo.path(),
        &[
            "check",
            "--python",
            python.to_str().unwrap(),
            "--commit",
            "HEAD",
            "--no-audit",
            "--json",
            json.to_str().unwrap(),
        ],
    );

    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    // `LIMIT = 10` runs at import: its mutants are imported fresh, in forked runs.
    let mutants = mutants_on_line(&report, "pkg/limits.py", 1);
    assert!(mutants.len() >= 3, "{report}");
    for mutant in mutants {
        assert_eq!(mutant["run"]["how"], "fork", "{mutant}");
        assert_eq!(mutant["status"], "Killed", "{mutant}");
        // Without `LIMIT`, the test module does not import.
        let killer = if mutant["description"] == "delete statement" {
            "tests/test_limits.py"
        } else {
            "tests/test_limits.py::test_clamp_to_the_default_limit"
        };
        assert_eq!(mutant["killedBy"], json!([killer]), "{mutant}");
    }
}

#[test]
fn a_mutant_that_breaks_what_a_conftest_imports_is_killed() {
    // The conftest builds a `pkg.Opts` at import and reads its `label`: without that line, or
    // with `+` on strings made `-`, the conftest does not import and no test can be collected
    // (pytest's usage error, exit 4, "ImportError while loading conftest"). The unmutated run
    // loaded it, so the mutant did that.
    let repo = fixture_repo("conftest_import");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--no-audit", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    let mutants = mutants_on_line(&report, "pkg/opts.py", 4);
    let broke_the_conftest: Vec<&Value> = mutants
        .into_iter()
        .filter(|m| m["description"] == "delete statement" || m["description"] == "replace + with -")
        .collect();
    assert_eq!(broke_the_conftest.len(), 2, "{report}");
    for mutant in broke_the_conftest {
        assert_eq!(
            (&mutant["status"], &mutant["run"]["how"]),
            (&json!("Killed"), &json!("fork")),
            "{mutant}"
        );
        let why = mutant["statusReason"].as_str().unwrap();
        assert!(why.starts_with("the tests could no longer be collected: E   "), "{mutant}");
    }
}

#[test]
fn a_project_a_shared_outside_module_imports_runs_its_fresh_mutants_in_new_interpreters() {
    shared_outside_module(&python());
}

#[test]
fn collectors_outlive_their_warm_worker_under_an_interpreter_a_wrapper_runs_without_exec() {
    // The warm workers are set aside, their collectors kept: those must watch mutdelta, not
    // the wrapper, which ends with its worker.
    let bin = tempfile::tempdir().unwrap();
    shared_outside_module(&wrapper_of(&python(), bin.path()));
}

/// A shell script in `dir` that runs `python` as its child, without `exec`.
fn wrapper_of(python: &Path, dir: &Path) -> std::path::PathBuf {
    let wrapper = dir.join("python-wrapper");
    let script = format!("#!/bin/sh\n'{}' \"$@\"\nexit $?\n", python.display());
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    wrapper
}

/// The check of the fixture whose tests import `helperlib`, from outside the project, which
/// imports `pkg.core`: a warm worker that preloads it has the project imported, and its forks
/// could not import a mutant of it afresh. The canary would say the tests do not import the copy.
fn shared_outside_module(python: &Path) {
    let repo = fixture_repo("imported_by_helper");
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let output = hermetic(repo.path(), tmp.path())
        .env("PYTHONPATH", Path::new(FIXTURES).join("imported_by_helper/outside"))
        .args(["check", "--python", python.to_str().unwrap(), "-j", "2", "--commit", "HEAD", "--no-audit"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let run = Run::of(&output);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(leftovers(tmp.path()).is_empty());
    let report = read_valid_report(&json);
    let step = report["mutdelta"]["steps"].as_array().unwrap().iter().find(|step| {
        step["step"].as_str().unwrap().starts_with("every mutant imported in a new interpreter")
    });
    assert!(step.is_some_and(|step| step["step"].as_str().unwrap().contains("pkg/core.py")), "{report}");
    // `FACTOR = 3` runs at import: its mutants are imported fresh, in new interpreters.
    let at_import = mutants_on_line(&report, "pkg/core.py", 1);
    assert!(at_import.len() >= 3, "{report}");
    for mutant in at_import {
        assert_eq!(
            (&mutant["run"]["how"], &mutant["status"]),
            (&json!("fresh"), &json!("Killed")),
            "{mutant}"
        );
        assert_eq!(mutant["killedBy"], json!(["tests/test_core.py::test_triple"]), "{mutant}");
    }
    // `triple`'s body runs only under the tests: its mutants are swapped into a collector forked
    // from a warm worker, which outlives that worker (set aside as it holds the project).
    let in_a_function = mutants_on_line(&report, "pkg/core.py", 9);
    assert!(!in_a_function.is_empty(), "{report}");
    for mutant in in_a_function {
        assert_eq!(
            (&mutant["run"]["how"], &mutant["status"]),
            (&json!("swap"), &json!("Killed")),
            "{mutant}"
        );
    }
}

#[test]
fn the_collectors_start_while_the_coverage_run_runs() {
    // They need nothing the coverage run learns. Under the coverage run, a test of the change
    // waits up to 5 s for a collector working in its copy, and writes down whether one came.
    let repo = fixture_repo("early_collector");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let home = tempfile::tempdir().unwrap();
    let python = python();
    let args = ["check", "--python", python.to_str().unwrap(), "-j", "2", "--commit", "HEAD", "--no-audit"];
    let run = crate::common::hermetic_with_home(repo.path(), &args, &json, home.path());

    assert_eq!(run.code, 0, "{run:?}");
    let seen = std::fs::read_to_string(home.path().join("collector-seen")).unwrap();
    assert_eq!(seen, "seen\n", "{run:?}");
    // Those collectors then swap the mutants in.
    let report = read_valid_report(&json);
    let mutants = mutants_on_line(&report, "pkg/calc.py", 8);
    assert!(!mutants.is_empty(), "{report}");
    assert!(mutants.iter().all(|m| m["status"] == "Killed" && m["run"]["how"] == "swap"), "{mutants:?}");
}

/// `check --commit HEAD -j 2 --no-audit` of `repo` with its temporary files in `tmp` (and
/// HOME elsewhere), under the interpreter `python`: how many mutants of `pkg/calc.py` were swapped in, what the fixture's
/// `test_scale` wrote in `$HOME/collector-lineage` (a line per swapped run: the collector,
/// what its parent runs, and whether the two work in the same copy), and the report.
fn collector_lineage(repo: &Path, tmp: &Path, python: &Path, env: &[(&str, &str)]) -> (usize, String, Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let home = tempfile::tempdir().unwrap();
    let output = hermetic(repo, tmp)
        .args(["check", "--python", python.to_str().unwrap(), "-j", "2", "--commit", "HEAD", "--no-audit"])
        .args(["--json", json.to_str().unwrap()])
        .env("HOME", home.path())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let run = Run::of(&output);
    assert_eq!(run.code, 0, "{run:?}");
    let report = read_valid_report(&json);
    let swapped = report["files"]["pkg/calc.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|mutant| mutant["run"]["how"] == "swap")
        .count();
    let lineage = std::fs::read_to_string(home.path().join("collector-lineage")).unwrap_or_default();
    (swapped, lineage, report)
}

#[test]
fn each_copys_collector_is_forked_from_its_warm_worker() {
    // No interpreter starts, nor imports pytest, for a collector: its copy's warm worker forks
    // it. First the change as the fixture makes it (its test file edited: the collectors start
    // beside the coverage run), then a change to `scale` alone (the whole suite runs first:
    // the workers start after it).
    let repo = fixture_repo("early_collector");
    for change in ["the fixture's change", "a change to scale alone"] {
        if change == "a change to scale alone" {
            let calc = repo.path().join("pkg/calc.py");
            let source = std::fs::read_to_string(&calc).unwrap();
            let edited = source
                .replace("    return value * factor", "    product = value * factor\n    return product");
            assert_ne!(source, edited);
            std::fs::write(&calc, edited).unwrap();
            crate::common::git(repo.path(), &["commit", "-q", "-am", "product"]);
        }
        let tmp = tempfile::tempdir().unwrap();
        let (swapped, lineage, report) = collector_lineage(repo.path(), tmp.path(), &python(), &[]);
        assert!(swapped >= 2, "{change}: {report}");
        assert!(!lineage.is_empty(), "{change}: no swapped run of test_scale\n{report}");
        for line in lineage.lines() {
            assert!(line.ends_with(" warm-worker same-copy=True"), "{change}: {line}\n{lineage}");
        }
        assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "{change}");
    }
}

#[test]
fn an_interpreter_a_wrapper_runs_without_exec_still_forks_each_collector_from_its_warm_worker() {
    // `--python` names a shell script that runs the real interpreter as its child: the warm
    // worker is then not the process mutdelta started, and its collectors are that process's
    // grandchildren. They are taken all the same (a refused one, waited for until the start
    // limit, would leave its copy's mutants to fresh interpreters).
    let repo = fixture_repo("early_collector");
    let tmp = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let wrapper = wrapper_of(&python(), bin.path());
    let (swapped, lineage, report) = collector_lineage(repo.path(), tmp.path(), &wrapper, &[]);
    assert!(swapped >= 2, "{report}");
    assert!(!lineage.is_empty(), "no swapped run of test_scale\n{report}");
    for line in lineage.lines() {
        assert!(line.ends_with(" warm-worker same-copy=True"), "{line}\n{lineage}");
    }
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_run_directory_too_long_for_a_socket_path_starts_each_collector_itself() {
    // A forked collector reaches mutdelta through a Unix socket in the run's directory, whose
    // path Linux caps at 107 bytes. Under a longer one, mutdelta starts the collectors itself,
    // and they swap the mutants in all the same.
    let repo = fixture_repo("early_collector");
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("a-temporary-directory-whose-path-is-too-long".repeat(3));
    std::fs::create_dir(&long).unwrap();
    let (swapped, lineage, report) = collector_lineage(repo.path(), &long, &python(), &[]);
    assert!(swapped >= 2, "{report}");
    assert!(!lineage.is_empty(), "no swapped run of test_scale\n{report}");
    for line in lineage.lines() {
        assert!(line.ends_with(" other same-copy=False"), "{line}\n{lineage}");
    }
    let statuses: Vec<&Value> = report["files"]["pkg/calc.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mutant| &mutant["status"])
        .collect();
    assert!(statuses.iter().all(|status| *status == "Killed"), "{statuses:?}");
    assert_eq!(leftovers(&long), Vec::<String>::new());
}

#[test]
fn a_collector_started_by_mutdelta_ignores_an_inherited_parent_variable() {
    // A forked collector learns mutdelta's process from the warm worker that forks it, in a
    // variable; one inherited from the user's environment (here naming a process that has
    // ended) must not make a collector mutdelta starts itself think mutdelta is gone.
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    let pid = ended.id().to_string();
    ended.wait().unwrap();
    let repo = fixture_repo("early_collector");
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("a-temporary-directory-whose-path-is-too-long".repeat(3));
    std::fs::create_dir(&long).unwrap();
    let (swapped, lineage, report) =
        collector_lineage(repo.path(), &long, &python(), &[("MUTDELTA_COLLECTOR_PARENT", pid.as_str())]);
    assert!(swapped >= 2, "{report}");
    for line in lineage.lines() {
        assert!(line.ends_with(" other same-copy=False"), "{line}\n{lineage}");
    }
    assert_eq!(leftovers(&long), Vec::<String>::new());
}

#[test]
fn a_project_that_makes_warnings_errors_and_warns_on_attribute_access_still_swaps() {
    // `filterwarnings = error`, and `pkg.old` warns on any attribute: looking through the live
    // objects for functions must not touch it.
    let repo = fixture_repo("warning_proxy");
    let out = tempfile::tempdir().unwrap();
    let mut statuses = Vec::new();
    for mode in ["swap", "fresh"] {
        let json = out.path().join(format!("{mode}.json"));
        let mut args = vec!["--commit", "HEAD", "--json", json.to_str().unwrap()];
        if mode == "fresh" {
            args.push("--no-swap");
        }
        let run = check(repo.path(), &args);
        assert_eq!(run.code, 1, "{mode}: {run:?}");
        let report = read_valid_report(&json);
        let mutants = mutants_on_line(&report, "pkg/calc.py", 6);
        assert!(mutants.len() >= 3, "{report}");
        if mode == "swap" {
            assert!(mutants.iter().all(|m| m["run"]["how"] == "swap"), "{mutants:?}");
        }
        let mut of_mode: Vec<(String, String)> = mutants
            .iter()
            .map(|m| {
                (m["description"].as_str().unwrap().to_string(), m["status"].as_str().unwrap().to_string())
            })
            .collect();
        of_mode.sort();
        statuses.push(of_mode);
    }
    assert_eq!(statuses[0], statuses[1]);
    // halve(6) == 3 holds for 6 / 2 too.
    let survivors: Vec<&str> = statuses[0]
        .iter()
        .filter(|(_, status)| status == "Survived")
        .map(|(what, _)| what.as_str())
        .collect();
    assert_eq!(survivors, ["replace // with /"], "{statuses:?}");
}

#[test]
fn forked_and_fresh_interpreters_give_the_same_verdicts() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let forked = out.path().join("forked.json");
    let fresh = out.path().join("fresh.json");

    let run_forked = check(repo.path(), &["--commit", "HEAD", "--json", forked.to_str().unwrap()]);
    let run_fresh = check(repo.path(), &["--commit", "HEAD", "--no-fork", "--json", fresh.to_str().unwrap()]);

    assert_eq!(run_forked.code, 1, "{run_forked:?}");
    assert_eq!(run_fresh.code, 1, "{run_fresh:?}");
    let forked = statuses(&read_valid_report(&forked), "model_client.py");
    let fresh = statuses(&read_valid_report(&fresh), "model_client.py");
    assert_eq!(forked, fresh);
    assert!(forked.iter().any(|(_, s)| s == "Killed") && forked.iter().any(|(_, s)| s == "Survived"));
}
