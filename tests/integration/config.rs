//! The configuration file: `mutdelta.toml` or `pyproject.toml [tool.mutdelta]`, read from the checked repository's root.

use std::path::Path;

use crate::common::{check, fixture_repo, mutdelta, Run};

fn write(repo: &Path, name: &str, text: &str) {
    std::fs::write(repo.join(name), text).unwrap();
}

/// `list --json` on the change's commit: its mutants as (path, mutatorName).
fn listed(repo: &Path, extra: &[&str]) -> (Vec<(String, String)>, Run) {
    let mut args = vec!["list", "--commit", "HEAD", "--json"];
    args.extend_from_slice(extra);
    let run = mutdelta(repo, &args);
    assert_eq!(run.code, 0, "{run:?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let mutants = json["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["path"].as_str().unwrap().to_string(), m["mutatorName"].as_str().unwrap().to_string()))
        .collect();
    (mutants, run)
}

/// The value and source `--print-config` printed for `key`.
fn setting(printed: &str, key: &str) -> (String, String) {
    let line = printed
        .lines()
        .find(|line| line.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no {key} in:\n{printed}"));
    let columns: Vec<&str> =
        line[key.len()..].split("  ").map(str::trim).filter(|part| !part.is_empty()).collect();
    match columns.as_slice() {
        [value, source] => (value.to_string(), source.to_string()),
        _ => panic!("{key}: not a value and a source: {line:?}"),
    }
}

fn pair(value: &str, source: &str) -> (String, String) {
    (value.to_string(), source.to_string())
}

/// Asserts exit 2 and a single `error:` line that contains `phrase`.
fn assert_refused(run: &Run, phrase: &str) {
    assert_eq!(run.code, 2, "{run:?}");
    let first = run.stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("error: ") && first.contains(phrase), "expected {phrase:?}: {run:?}");
}

#[test]
fn an_excluded_file_is_not_mutated_and_one_note_counts_the_files_passed_over() {
    let repo = fixture_repo("configured");
    let (all, _) = listed(repo.path(), &[]);
    assert!(all.iter().any(|(path, _)| path == "docs/conf.py"), "{all:?}");

    write(repo.path(), "mutdelta.toml", "exclude = [\"docs/conf.py\"]\n");
    let (kept, run) = listed(repo.path(), &[]);
    assert!(!kept.iter().any(|(path, _)| path == "docs/conf.py"), "{kept:?}");
    let others: Vec<_> = all.iter().filter(|(path, _)| path != "docs/conf.py").cloned().collect();
    assert_eq!(kept, others, "only the excluded file's mutants are gone");
    assert!(
        run.stderr.contains("note: docs/conf.py: matches `exclude` in the configuration, skipped"),
        "{run:?}"
    );

    write(repo.path(), "mutdelta.toml", "exclude = [\"docs/conf.py\", \"**/migrations/**\"]\n");
    let (kept, run) = listed(repo.path(), &[]);
    let paths: std::collections::BTreeSet<&str> = kept.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths.into_iter().collect::<Vec<_>>(), ["checks/discounts.py", "shop/prices.py"]);
    let notes: Vec<&str> = run.stderr.lines().filter(|line| line.contains("exclude")).collect();
    assert_eq!(
        notes,
        ["note: 3 files that match `exclude` in the configuration skipped: docs/conf.py, shop/migrations/0001_initial.py, shop/migrations/0002_discounts.py"]
    );

    // Globs given with --exclude are named as such, beside the configuration's.
    write(repo.path(), "mutdelta.toml", "exclude = [\"docs/conf.py\"]\n");
    let (_, run) = listed(repo.path(), &["--exclude", "**/migrations/**"]);
    let notes: Vec<&str> = run.stderr.lines().filter(|line| line.contains("exclude")).collect();
    assert_eq!(
        notes,
        [
            "note: 2 files that match --exclude skipped: shop/migrations/0001_initial.py, shop/migrations/0002_discounts.py",
            "note: docs/conf.py: matches `exclude` in the configuration, skipped",
        ]
    );
}

#[test]
fn a_disabled_mutator_family_makes_no_mutants_of_that_family() {
    let repo = fixture_repo("configured");
    let (all, _) = listed(repo.path(), &[]);
    for family in ["StringLiteral", "NumberLiteral", "ComparisonOperator"] {
        assert!(all.iter().any(|(_, name)| name == family), "{family} in {all:?}");
    }
    write(repo.path(), "mutdelta.toml", "disable-mutators = [\"StringLiteral\", \"NumberLiteral\"]\n");
    let (kept, _) = listed(repo.path(), &[]);
    let expected: Vec<_> =
        all.into_iter().filter(|(_, name)| name != "StringLiteral" && name != "NumberLiteral").collect();
    assert!(expected.iter().any(|(_, name)| name == "ComparisonOperator"));
    assert_eq!(kept, expected);
}

#[test]
fn configured_values_are_printed_with_their_source_and_the_command_line_overrides_them() {
    let repo = fixture_repo("configured");
    write(
        repo.path(),
        "mutdelta.toml",
        "timeout = 30\njobs = 3\ntests = [\"tests/test_prices.py::test_total_adds_prices\"]\n\
         python = \".venv/bin/python\"\nno-arid = true\n",
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let repo_arg = repo.path().to_str().unwrap();
    let run = mutdelta(elsewhere.path(), &["-C", repo_arg, "check", "--print-config"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("configuration: "), "{run:?}");
    assert!(run.stdout.lines().next().unwrap().ends_with("/mutdelta.toml"), "{run:?}");
    let file = "mutdelta.toml";
    assert_eq!(setting(&run.stdout, "timeout"), pair("30", file));
    assert_eq!(setting(&run.stdout, "jobs"), pair("3", file));
    assert_eq!(
        setting(&run.stdout, "tests"),
        pair("[\"tests/test_prices.py::test_total_adds_prices\"]", file)
    );
    let (python, source) = setting(&run.stdout, "python");
    assert_eq!(source, file);
    let python = Path::new(python.trim_matches('"'));
    assert!(python.is_absolute() && python.ends_with(".venv/bin/python"), "read from the root: {run:?}");
    let root = python.ancestors().nth(3).unwrap();
    assert_eq!(root.canonicalize().unwrap(), repo.path().canonicalize().unwrap());
    assert_eq!(setting(&run.stdout, "no-arid"), pair("true", file));
    assert_eq!(setting(&run.stdout, "one-per-line"), pair("false", "default"));
    assert_eq!(setting(&run.stdout, "test-cmd").1, "default");

    let run = mutdelta(
        elsewhere.path(),
        &[
            "-C",
            repo_arg,
            "check",
            "--print-config",
            "-j",
            "5",
            "--timeout",
            "7",
            "--test",
            "tests/test_prices.py",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(setting(&run.stdout, "timeout"), pair("7", "cli"));
    assert_eq!(setting(&run.stdout, "jobs"), pair("5", "cli"));
    assert_eq!(setting(&run.stdout, "tests"), pair("[\"tests/test_prices.py\"]", "cli"));
    assert_eq!(setting(&run.stdout, "no-arid"), pair("true", file));

    write(repo.path(), "mutdelta.toml", "test-cmd = \"make test\"\n");
    let run = mutdelta(repo.path(), &["check", "--print-config"]);
    assert_eq!(setting(&run.stdout, "test-cmd"), pair("\"make test\"", file));
    let run = mutdelta(repo.path(), &["audit-tests", "--print-config"]);
    assert_eq!(
        setting(&run.stdout, "test-cmd"),
        pair("(not used: audit-tests runs the edited tests with pytest)", file)
    );

    let run = mutdelta(repo.path(), &["list", "--print-config", "--no-config"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("configuration: not read (--no-config)"), "{run:?}");
    assert_eq!(setting(&run.stdout, "no-arid"), pair("false", "default"));
    assert!(!run.stdout.contains("jobs"), "list prints what list uses: {run:?}");
}

#[test]
fn a_language_s_table_is_read_and_printed_as_its_source() {
    let repo = fixture_repo("configured");
    write(
        repo.path(),
        "mutdelta.toml",
        "jobs = 2\n[python]\ntests = [\"tests/test_prices.py\"]\n[rust]\ntest-tool = \"nextest\"\n",
    );
    let run = mutdelta(repo.path(), &["check", "--print-config"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(setting(&run.stdout, "jobs"), pair("2", "mutdelta.toml"));
    assert_eq!(setting(&run.stdout, "tests"), pair("[\"tests/test_prices.py\"]", "mutdelta.toml [python]"));
    assert_eq!(setting(&run.stdout, "test-tool"), pair("\"nextest\"", "mutdelta.toml [rust]"));
    let run = mutdelta(repo.path(), &["check", "--print-config", "--test-tool", "cargo"]);
    assert_eq!(setting(&run.stdout, "test-tool"), pair("\"cargo\"", "cli"));

    write(repo.path(), "pyproject.toml", "[tool.mutdelta.python]\nconfirm-survivors = true\n");
    std::fs::remove_file(repo.path().join("mutdelta.toml")).unwrap();
    let run = mutdelta(repo.path(), &["check", "--print-config"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        setting(&run.stdout, "confirm-survivors"),
        pair("true", "pyproject.toml [tool.mutdelta.python]")
    );
}

#[test]
fn pyproject_tool_mutdelta_is_read_and_mutdelta_toml_wins_over_it_with_a_note() {
    let repo = fixture_repo("configured");
    write(
        repo.path(),
        "pyproject.toml",
        "[project]\nname = \"shop\"\n\n[tool.mutdelta]\njobs = 2\nexclude = [\"docs/**\"]\n",
    );
    let run = mutdelta(repo.path(), &["check", "--print-config"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(setting(&run.stdout, "jobs"), pair("2", "pyproject.toml [tool.mutdelta]"));
    let (kept, _) = listed(repo.path(), &[]);
    assert!(!kept.iter().any(|(path, _)| path.starts_with("docs/")), "{kept:?}");

    write(repo.path(), "mutdelta.toml", "jobs = 4\n");
    let run = mutdelta(repo.path(), &["check", "--print-config"]);
    assert_eq!(setting(&run.stdout, "jobs"), pair("4", "mutdelta.toml"));
    assert_eq!(setting(&run.stdout, "exclude"), pair("[]", "default"));
    let note = "pyproject.toml's [tool.mutdelta] table is ignored: mutdelta.toml is read instead";
    assert!(run.stdout.contains(note), "{run:?}");
    let (kept, run) = listed(repo.path(), &[]);
    assert!(kept.iter().any(|(path, _)| path.starts_with("docs/")), "{kept:?}");
    assert!(run.stderr.contains(note), "{run:?}");
}

#[test]
fn bad_configuration_is_refused_naming_the_file_the_key_and_what_is_allowed() {
    let repo = fixture_repo("configured");
    let cases = [
        (
            "mutdelta.toml",
            "jbos = 2\n",
            "mutdelta.toml: unknown key `jbos` (did you mean `jobs`?); the keys are test-cmd, timeout, jobs, exclude",
        ),
        ("mutdelta.toml", "jobs = \"four\"\n", "mutdelta.toml: `jobs` must be a whole number of at least 1, not the string \"four\""),
        ("mutdelta.toml", "timeout = 0\n", "mutdelta.toml: `timeout` must be a positive number of seconds, not 0"),
        ("mutdelta.toml", "no-audit = 1\n", "mutdelta.toml: `no-audit` must be true or false, not 1"),
        (
            "mutdelta.toml",
            "exclude = [\"docs/[conf.py\"]\n",
            "mutdelta.toml: `exclude` holds \"docs/[conf.py\", which is not a glob (unclosed character class",
        ),
        (
            "mutdelta.toml",
            "disable-mutators = [\"StringLiterals\"]\n",
            "mutdelta.toml: `disable-mutators` names \"StringLiterals\", which is no mutator family (did you mean `StringLiteral`?); the families are ArithmeticOperator,",
        ),
        ("mutdelta.toml", "jobs = 2\nexclude = [\"docs\"\n", "mutdelta.toml is not valid TOML: line 2, column "),
        ("pyproject.toml", "[tool.mutdelta]\none-per-line = \"yes\"\n", "pyproject.toml [tool.mutdelta]: `one-per-line` must be true or false"),
        ("pyproject.toml", "[tool.mutdelta]\njobs = 2\n[project\n", "pyproject.toml is not valid TOML: line 3, column "),
        (
            "mutdelta.toml",
            "[python]\ninterpretr = \".venv\"\n",
            "mutdelta.toml [python]: unknown key `interpretr` (did you mean `interpreter`?); the keys are interpreter, tests, confirm-survivors",
        ),
        ("mutdelta.toml", "[rust]\ntest-tool = \"vitest\"\n", "mutdelta.toml [rust]: `test-tool` must be \"cargo\" or \"nextest\", not the string \"vitest\""),
        ("mutdelta.toml", "rust = 1\n", "mutdelta.toml: `rust` must be a table of settings, not 1"),
        (
            "pyproject.toml",
            "[tool.mutdelta]\ntests = [\"a.py\"]\n[tool.mutdelta.python]\ntests = [\"b.py\"]\n",
            "pyproject.toml [tool.mutdelta]: `tests` is set both at the top level and in pyproject.toml [tool.mutdelta.python]: keep one (the table's)",
        ),
    ];
    for (file, text, phrase) in cases {
        write(repo.path(), file, text);
        assert_refused(&mutdelta(repo.path(), &["list", "--commit", "HEAD"]), phrase);
        assert_refused(&mutdelta(repo.path(), &["check", "--print-config"]), phrase);
        std::fs::remove_file(repo.path().join(file)).unwrap();
    }
}

#[test]
fn a_configured_test_command_and_exclusions_decide_a_real_check() {
    let repo = fixture_repo("configured");
    let plain = check(repo.path(), &["--commit", "HEAD", "--no-audit"]);
    assert_eq!(plain.code, 1, "pytest's weak test lets mutants of discounted through: {plain:?}");
    assert!(plain.stdout.contains("docs/conf.py"), "{plain:?}");

    write(
        repo.path(),
        "mutdelta.toml",
        "test-cmd = \"python checks/discounts.py\"\nexclude = [\"docs/conf.py\", \"**/migrations/**\", \"checks/**\"]\n",
    );
    let report = tempfile::tempdir().unwrap();
    let json = report.path().join("report.json");
    let configured = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(configured.code, 0, "the strict check kills every mutant: {configured:?}");
    let report = crate::common::read_report(&json);
    let files: Vec<&String> = report["files"].as_object().unwrap().keys().collect();
    assert_eq!(files, ["shop/prices.py"]);
    let mutants = report["files"]["shop/prices.py"]["mutants"].as_array().unwrap();
    assert!(!mutants.is_empty());
    for mutant in mutants {
        assert_eq!(mutant["status"], "Killed", "{mutant}");
    }
    let commands = serde_json::to_string(&report["mutdelta"]).unwrap();
    assert!(commands.contains("python checks/discounts.py"), "the configured command ran: {commands}");
}
