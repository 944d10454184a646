//! The Rust schema path against `--no-schema`: the same verdict for every mutant of every Rust fixture and of the end-to-end benchmark's commit.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{check, fixture_repo, read_report, run_ok, snapshot};

/// (file, line, column, description) → (status, how it ran, the tests it ran).
type Verdicts = BTreeMap<(String, u64, u64, String), (String, String, Vec<String>)>;

fn verdicts(report: &Value) -> Verdicts {
    let mut found = BTreeMap::new();
    for (path, file) in report["files"].as_object().unwrap() {
        for mutant in file["mutants"].as_array().unwrap() {
            let start = &mutant["location"]["start"];
            let key = (
                path.clone(),
                start["line"].as_u64().unwrap(),
                start["column"].as_u64().unwrap(),
                mutant["description"].as_str().unwrap().to_string(),
            );
            let tests = mutant["coveredBy"]
                .as_array()
                .map(|tests| tests.iter().map(|test| test.as_str().unwrap().to_string()).collect());
            let how = mutant["run"]["how"].as_str().unwrap_or("none").to_string();
            found.insert(
                key,
                (mutant["status"].as_str().unwrap().to_string(), how, tests.unwrap_or_default()),
            );
        }
    }
    found
}

/// The verdicts of `repo`'s last commit through the schema and with `--no-schema`, each run
/// leaving the repository as it was.
fn both_ways(repo: &Path) -> (Verdicts, Verdicts) {
    let out = tempfile::tempdir().unwrap();
    let before = snapshot(repo);
    let mut reports = Vec::new();
    for (name, extra) in [("schema", None), ("alone", Some("--no-schema"))] {
        let json = out.path().join(format!("{name}.json"));
        let mut args = vec!["--commit", "HEAD", "--no-cache", "--json", json.to_str().unwrap()];
        args.extend(extra);
        let run = check(repo, &args);
        assert!(run.code == 0 || run.code == 1, "{name}: {run:?}");
        assert_eq!(snapshot(repo), before, "the checkout is untouched: {run:?}");
        reports.push(verdicts(&read_report(&json)));
    }
    let alone = reports.pop().unwrap();
    (reports.pop().unwrap(), alone)
}

/// Every mutant has the same verdict both ways, but where the schema's recording shows that
/// no test reaches a mutant: it is NoCoverage there, and its package's tests pass with it
/// built alone (Survived). Returns the verdicts through the schema.
fn assert_same_verdicts(repo: &Path) -> Verdicts {
    let (schema, alone) = both_ways(repo);
    assert_eq!(schema.keys().collect::<Vec<_>>(), alone.keys().collect::<Vec<_>>(), "the same mutants");
    for (key, (status, how, _)) in &schema {
        let (status_alone, how_alone, _) = &alone[key];
        assert_eq!(how_alone, "build-then-test", "{key:?}");
        if status == "NoCoverage" {
            assert_eq!(status_alone, "Survived", "{key:?}");
        } else {
            assert_eq!(status, status_alone, "{key:?} ran {how} through the schema");
        }
    }
    schema
}

#[test]
fn every_kind_of_schema_site_gives_the_verdict_of_its_own_build() {
    let repo = fixture_repo("rust_schema");
    let schema = assert_same_verdicts(repo.path());

    let on_line = |line: u64| schema.iter().filter(move |(key, _)| key.1 == line).map(|(_, v)| v);
    // `const fn width`: the switch cannot run at compile time; `x / 2` becomes `x / 0`, which
    // rustc refuses: built on their own, that one a CompileError as alone.
    for line in [10, 50] {
        assert!(on_line(line).all(|(_, how, _)| how == "build-then-test"), "line {line}: {schema:?}");
    }
    assert!(schema
        .iter()
        .any(|(key, (status, ..))| key.1 == 50 && key.3 == "replace 2 with 0" && status == "CompileError"));
    // `Ticket` has no default: the schema's build shows the body replacement cannot build, as a
    // build of its own does, and nothing is built or run for it.
    let ticket: Vec<_> = schema
        .iter()
        .filter(|(key, _)| key.1 == 58 && key.3.starts_with("replace body"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(ticket.len(), 1, "{schema:?}");
    assert_eq!((ticket[0].0.as_str(), ticket[0].1.as_str()), ("CompileError", "none"), "{schema:?}");
    let switched: Vec<_> = schema.values().filter(|(_, how, _)| how == "schema").collect();
    assert!(switched.len() >= 25, "{schema:?}");
    // Reached only by its doctest, only in a thread no test names, only by an integration test.
    assert!(
        on_line(45).all(|(s, _, tests)| s == "Killed" && tests == &["rust_schema: doctests"]),
        "{schema:?}"
    );
    // The spawned closure's code is reached in a thread no test names; the body's own switch
    // (its replacement, on the body's line too) is read in the test's thread.
    let (body, in_thread): (Vec<_>, Vec<_>) =
        schema.iter().filter(|(key, _)| key.1 == 36).partition(|(key, _)| key.3.starts_with("replace body"));
    assert!(
        in_thread.len() == 4
            && in_thread
                .iter()
                .all(|(_, (_, _, tests))| tests.len() == 1
                    && tests[0].starts_with("rust_schema: every test of ")),
        "{schema:?}"
    );
    assert!(
        body.len() == 2 && body.iter().all(|(_, (_, _, tests))| tests == &["rust_schema: tests::doubles"]),
        "{schema:?}"
    );
    assert!(on_line(24).all(|(_, _, tests)| tests == &["rust_schema: tests::tallies"]), "{schema:?}");
}

#[test]
fn the_rust_fixtures_and_the_benchmarks_commit_give_the_same_verdicts_through_the_schema() {
    for fixture in ["rust_one_sided", "rust_parser", "rust_workspace", "rust_early_exit"] {
        let repo = fixture_repo(fixture);
        let schema = assert_same_verdicts(repo.path());
        assert!(schema.values().any(|(_, how, _)| how == "schema"), "{fixture}: {schema:?}");
    }
    // The benchmark's crate depends on regex; built once first, as a developer's checkout is.
    let repo = fixture_repo("../benches/rust_e2e");
    run_ok(std::process::Command::new("cargo").args(["test", "--no-run", "-q"]).current_dir(repo.path()));
    let schema = assert_same_verdicts(repo.path());
    assert!(schema.len() >= 15, "{schema:?}");
}
