//! Where the added lines come from: the working tree over a base, the index (a staged change), a `--lines` list, a root commit, an empty change, pragmas, files passed over.

use serde_json::Value;

use crate::common::{
    check, fixture_repo, git, mutdelta, mutdelta_with_stdin, python, read_report, read_valid_report,
    snapshot, statuses,
};

fn mutant_lines(report: &Value, file: &str, status: &str) -> Vec<u64> {
    report["files"][file]["mutants"]
        .as_array()
        .map(|mutants| {
            mutants
                .iter()
                .filter(|m| m["status"] == status)
                .map(|m| m["location"]["start"]["line"].as_u64().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

/// The fixture's change, moved out of the last commit into the working tree.
fn uncommitted_change() -> tempfile::TempDir {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["reset", "-q", "--mixed", "HEAD~1"]);
    repo
}

#[test]
fn base_mode_checks_the_working_tree_including_untracked_files() {
    let repo = uncommitted_change();
    std::fs::write(repo.path().join("limits.py"), "def limit(n):\n    return n * 2\n").unwrap();
    std::fs::write(
        repo.path().join("tests/test_limits.py"),
        "from limits import limit\n\n\ndef test_limit():\n    limit(3)\n",
    )
    .unwrap();
    std::fs::write(repo.path().join("NOTES.txt"), "not code\n").unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--base", "main", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_report(&json);
    let survivors = mutant_lines(&report, "limits.py", "Survived");
    assert!(
        !survivors.is_empty() && survivors.iter().all(|&line| line == 2),
        "untracked file mutated: {run:?}"
    );
    assert!(!mutant_lines(&report, "model_client.py", "Survived").is_empty(), "{run:?}");
    assert!(run.stdout.contains("note: NOTES.txt: not a Python or Rust file, skipped"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before);
}

#[test]
fn root_commit_counts_every_line_as_added() {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["checkout", "-q", "--orphan", "fresh"]);
    git(repo.path(), &["commit", "-q", "-m", "everything at once"]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_report(&json);
    let killed = mutant_lines(&report, "model_client.py", "Killed");
    assert!(killed.contains(&12), "the old `text = payload[...]` line is new in a root commit: {run:?}");
}

#[test]
fn a_change_without_python_lines_has_nothing_to_mutate() {
    let repo = fixture_repo("model_client");
    std::fs::write(repo.path().join("README.md"), "# docs\n").unwrap();
    git(repo.path(), &["add", "README.md"]);

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("note: README.md: not a Python or Rust file, skipped"), "{run:?}");

    std::fs::write(repo.path().join("CHANGES.txt"), "more docs\n").unwrap();
    std::fs::write(repo.path().join("setup.cfg"), "[metadata]\n").unwrap();
    git(repo.path(), &["add", "CHANGES.txt", "setup.cfg"]);
    let run = check(repo.path(), &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let notes: Vec<&str> = run.stdout.lines().filter(|line| line.starts_with("note: ")).collect();
    assert_eq!(
        notes,
        ["note: 3 files that are not Python or Rust skipped: CHANGES.txt, README.md, setup.cfg"],
        "one line for them all: {run:?}"
    );
    let said = "mutation delta: nothing to mutate: the change adds no executable Python or Rust lines";
    assert!(run.stdout.lines().any(|line| line == said), "the languages looked for, named: {run:?}");
}

#[test]
fn a_deleted_file_is_noted_and_not_mutated() {
    let repo = fixture_repo("strong_tests");
    git(repo.path(), &["rm", "-q", "grades.py"]);

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("note: grades.py: deleted by the change, nothing to mutate"), "{run:?}");
}

#[test]
fn a_skip_pragma_with_a_reason_ignores_its_line() {
    let repo = uncommitted_change();
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("token limit\")\n", "token limit\")  # mutdelta: skip message wording is free\n");
    std::fs::write(&file, source).unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--base", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "line 14 still has survivors: {run:?}");
    let report = read_report(&json);
    assert!(mutant_lines(&report, "model_client.py", "Ignored").iter().all(|&line| line == 15));
    assert!(!mutant_lines(&report, "model_client.py", "Ignored").is_empty(), "{run:?}");
    assert!(mutant_lines(&report, "model_client.py", "Survived").iter().all(|&line| line == 14), "{run:?}");
    let reasons: Vec<&str> = report["files"]["model_client.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["status"] == "Ignored")
        .map(|m| m["statusReason"].as_str().unwrap())
        .collect();
    assert!(reasons.iter().all(|&reason| reason == "message wording is free"), "{reasons:?}");
}

#[test]
fn a_skip_pragma_without_a_reason_is_refused() {
    let repo = uncommitted_change();
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("token limit\")\n", "token limit\")  # mutdelta: skip\n");
    std::fs::write(&file, source).unwrap();

    let run = check(repo.path(), &["--base", "HEAD"]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.starts_with("error: model_client.py: line 15: `mutdelta: skip` needs a reason"),
        "{run:?}"
    );
}

#[test]
fn dash_c_checks_another_repository() {
    let repo = fixture_repo("model_client");
    let elsewhere = tempfile::tempdir().unwrap();
    let python = crate::common::python();
    let dir = repo.path().to_str().unwrap();

    let run = crate::common::mutdelta(
        elsewhere.path(),
        &["-C", dir, "check", "--commit", "HEAD", "--python", python.to_str().unwrap()],
    );

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("[MUT-survived] model_client.py:15"), "{run:?}");
}

#[test]
fn a_changed_file_with_a_syntax_error_is_refused() {
    let repo = uncommitted_change();
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("return Reply(text, stop_reason)", "return Reply(text stop_reason)");
    std::fs::write(&file, source).unwrap();

    let run = check(repo.path(), &["--base", "HEAD"]);

    assert_eq!(run.code, 2, "{run:?}");
    let error = crate::common::error_line(&run);
    assert!(error.starts_with("error: model_client.py does not compile (SyntaxError"), "{run:?}");
}

#[test]
fn a_changed_file_that_cannot_be_tokenized_is_refused() {
    let repo = uncommitted_change();
    let file = repo.path().join("model_client.py");
    let source = std::fs::read_to_string(&file)
        .unwrap()
        .replace("def parse_reply(payload):", "def parse_reply(payload:");
    std::fs::write(&file, source).unwrap();

    let run = check(repo.path(), &["--base", "HEAD"]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.starts_with("error: model_client.py: line 10: '(' was never closed"), "{run:?}");
}

#[test]
fn crlf_files_are_mutated_and_reported_like_any_other() {
    let repo = uncommitted_change();
    let file = repo.path().join("model_client.py");
    let crlf = std::fs::read_to_string(&file).unwrap().replace('\n', "\r\n");
    std::fs::write(&file, &crlf).unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--base", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let report = read_report(&json);
    assert!(mutant_lines(&report, "model_client.py", "Survived").contains(&15), "{run:?}");
    assert!(mutant_lines(&report, "model_client.py", "Killed").contains(&14), "{run:?}");
    assert_eq!(
        report["files"]["model_client.py"]["source"],
        crlf.as_str(),
        "the report keeps the source as it is"
    );
}

#[test]
fn a_source_file_that_is_not_utf8_text_is_refused_unless_excluded_and_other_binaries_are_noted() {
    for (name, bytes, what) in [
        ("latin1.py", &b"NAME = '\xe9t\xe9'\n"[..], "latin1.py is not UTF-8 text"),
        ("blob.py", &b"x = 1\n\x00\x01\x02\n"[..], "blob.py is a binary file"),
    ] {
        let repo = fixture_repo("model_client");
        std::fs::write(repo.path().join(name), bytes).unwrap();
        git(repo.path(), &["add", name]);

        let run = check(repo.path(), &[]);

        assert_eq!(run.code, 2, "its added lines are not passed over in silence: {run:?}");
        let error = crate::common::error_line(&run);
        assert!(error.contains(what) && error.contains("leave it out with `exclude`"), "{run:?}");
    }
    // Left out by the configuration, it is a note; a binary that is no source file always is.
    let repo = fixture_repo("model_client");
    std::fs::write(repo.path().join("latin1.py"), b"NAME = '\xe9t\xe9'\n").unwrap();
    std::fs::write(repo.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\x00\x00").unwrap();
    std::fs::write(repo.path().join("mutdelta.toml"), "exclude = [\"latin1.py\"]\n").unwrap();
    git(repo.path(), &["add", "latin1.py", "logo.png", "mutdelta.toml"]);

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("note: latin1.py: matches `exclude` in the configuration, skipped"),
        "{run:?}"
    );
    assert!(run.stdout.contains("note: logo.png: binary file, skipped"), "{run:?}");
}

/// A file in another encoding that says so (PEP 263) does not stop the gate: it is passed over
/// with a note, and the rest of the change gets its verdicts. One that does not say so is still
/// refused (above).
#[test]
fn a_source_file_declaring_another_encoding_is_passed_over_with_a_note_and_the_rest_is_checked() {
    let repo = fixture_repo("model_client");
    std::fs::write(repo.path().join("legacy.py"), b"# -*- coding: latin-1 -*-\nNAME = '\xe9t\xe9'\n")
        .unwrap();
    git(repo.path(), &["add", "legacy.py"]);
    git(repo.path(), &["commit", "-q", "--amend", "--no-edit"]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "the change's own survivors decide, not the file: {run:?}");
    let note = "note: legacy.py: its source encoding is latin-1, as its PEP 263 coding comment declares, \
                and mutdelta mutates UTF-8 source only: skipped, its added lines got no mutant";
    assert!(run.stdout.contains(note), "{run:?}");
    let report = read_report(&json);
    assert!(mutant_lines(&report, "model_client.py", "Survived").contains(&15), "{run:?}");
    assert!(mutant_lines(&report, "model_client.py", "Killed").contains(&14), "{run:?}");
    assert!(report["files"].get("legacy.py").is_none(), "{report}");
}

/// A change with more mutants than `--max-mutants` is sampled: the check tests that many, says
/// so, and its report names the lines left without a mutant; `list` shows the same sample, and
/// the configuration's `max-mutants` sets the bound (a value that is no count is refused).
#[test]
fn a_change_over_the_mutant_bound_is_sampled_said_and_its_lines_left_out_named() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");

    let run =
        check(repo.path(), &["--commit", "HEAD", "--max-mutants", "1", "--json", json.to_str().unwrap()]);

    assert!(matches!(run.code, 0 | 1), "{run:?}");
    let report = read_report(&json);
    let sampled = &report["mutdelta"]["sampled"];
    assert_eq!(sampled["maxMutants"], 1, "{report}");
    let left_out = sampled["leftOut"]["model_client.py"].as_array().unwrap();
    let tested = report["files"]["model_client.py"]["mutants"].as_array().unwrap();
    assert_eq!(tested.len(), 1, "{report}");
    let lines = sampled["lines"].as_u64().unwrap() as usize;
    assert!(lines >= 2, "{report}");
    assert_eq!(left_out.len(), lines - 1, "one mutant, on one line: {report}");
    for mutant in tested {
        let line = &mutant["location"]["start"]["line"];
        assert!(!left_out.contains(line), "a tested line is not left out: {report}");
    }
    let note = format!(
        "note: the change has {} mutants on {lines} lines, over the bound of 1 (--max-mutants): 1 kept",
        sampled["planned"]
    );
    assert!(run.stdout.contains(&note), "{run:?}");

    std::fs::write(repo.path().join("mutdelta.toml"), "max-mutants = 1\n").unwrap();
    let listed = mutdelta(repo.path(), &["list", "--commit", "HEAD", "--json"]);
    let plan: Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(plan["sampled"]["leftOut"], sampled["leftOut"], "{plan}");
    assert_eq!(plan["mutants"].as_array().unwrap().len(), 1, "{plan}");

    std::fs::write(repo.path().join("mutdelta.toml"), "max-mutants = \"many\"\n").unwrap();
    let refused = mutdelta(repo.path(), &["list", "--commit", "HEAD"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("max-mutants") && refused.stderr.contains("a whole number"),
        "{refused:?}"
    );
}

#[test]
fn staged_change_is_checked_from_the_index_not_the_working_tree() {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["reset", "-q", "--soft", "HEAD~1"]);
    let before = snapshot(repo.path());

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("[MUT-survived] model_client.py:15"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before, "index and checkout untouched");
}

#[test]
fn staged_file_with_unstaged_edits_is_refused() {
    let repo = fixture_repo("model_client");
    git(repo.path(), &["reset", "-q", "--soft", "HEAD~1"]);
    let file = repo.path().join("model_client.py");
    let edited = std::fs::read_to_string(&file).unwrap() + "\nEXTRA = 1\n";
    std::fs::write(&file, edited).unwrap();

    let run = check(repo.path(), &[]);

    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("model_client.py is staged and also has unstaged edits"), "{run:?}");
}

#[test]
fn coverage_gate_list_limits_the_mutants_to_its_lines() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let python = python();

    let run = mutdelta_with_stdin(
        repo.path(),
        &["check", "--python", python.to_str().unwrap(), "--lines", "-", "--json", json.to_str().unwrap()],
        "model_client.py:15\n",
    );

    assert_eq!(run.code, 1, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "model_client.py");
    assert!(!verdicts.is_empty() && verdicts.iter().all(|(line, _)| *line == 15), "{verdicts:?}");
}

#[test]
fn a_listed_line_gets_the_same_verdicts_by_a_relative_an_absolute_or_a_linked_path() {
    let repo = fixture_repo("model_client");
    let links = tempfile::tempdir().unwrap();
    let linked = links.path().join("checkout");
    std::os::unix::fs::symlink(repo.path(), &linked).unwrap();
    let python = python();
    let out = tempfile::tempdir().unwrap();
    let verdicts_of = |entry: String| {
        let json = out.path().join("r.json");
        let run = mutdelta_with_stdin(
            repo.path(),
            &[
                "check",
                "--python",
                python.to_str().unwrap(),
                "--lines",
                "-",
                "--json",
                json.to_str().unwrap(),
            ],
            &format!("{entry}\n"),
        );
        assert_eq!(run.code, 1, "{entry}: {run:?}");
        statuses(&read_report(&json), "model_client.py")
    };

    let plain = verdicts_of("model_client.py:15".to_string());
    assert!(plain.iter().any(|(_, status)| status == "Survived"), "{plain:?}");
    assert!(plain.iter().all(|(line, status)| *line == 15 && status != "NoCoverage"), "{plain:?}");
    assert_eq!(verdicts_of("./model_client.py:15".to_string()), plain);
    assert_eq!(verdicts_of(format!("{}/model_client.py:15", repo.path().display())), plain);
    assert_eq!(verdicts_of(format!("{}/model_client.py:15", linked.display())), plain);
}
