//! Added lines that only reformat or move removed code are old code: not mutated, counted in a note, kept with --include-reformatted.

use serde_json::Value;

use crate::common::{check, git, mutdelta};

const BEFORE: &str = r#""""Version helpers."""
__version__ = '1.2.0'


def bump(version, part='patch', strict=False):
    major, minor, patch = version.split('.')
    if part == 'major':
        return f"{int(major) + 1}.0.0"
    return f"{major}.{minor}.{int(patch) + 1}"


def parse(text):
    parts = text.split(".")
    if len(parts) != 3:
        raise ValueError(text)
    return tuple(int(p) for p in parts)
"#;

/// Re-quoted, `bump`'s signature re-wrapped, `parse` moved above it.
const REFORMATTED: &str = r#""""Version helpers."""
__version__ = "1.2.0"


def parse(text):
    parts = text.split(".")
    if len(parts) != 3:
        raise ValueError(text)
    return tuple(int(p) for p in parts)


def bump(
    version,
    part="patch",
    strict=False,
):
    major, minor, patch = version.split(".")
    if part == "major":
        return f"{int(major) + 1}.0.0"
    return f"{major}.{minor}.{int(patch) + 1}"
"#;

/// A repository whose last commit turns BEFORE into `after` (with a test file beside it).
fn repo_changing_to(after: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("reformat-").tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(dir.path().join("versions.py"), BEFORE).unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    std::fs::write(
        dir.path().join("tests/test_versions.py"),
        "from versions import bump, parse\n\n\ndef test_bump():\n    assert bump(\"1.2.3\") == \"1.2.4\"\n\n\ndef test_parse():\n    assert parse(\"1.2.3\") == (1, 2, 3)\n",
    )
    .unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "before"]);
    std::fs::write(dir.path().join("versions.py"), after).unwrap();
    git(dir.path(), &["commit", "-q", "-am", "the change"]);
    dir
}

fn listed(dir: &std::path::Path, extra: &[&str]) -> (Value, String) {
    let mut args = vec!["list", "--commit", "HEAD", "--json"];
    args.extend_from_slice(extra);
    let run = mutdelta(dir, &args);
    assert_eq!(run.code, 0, "{run:?}");
    (serde_json::from_str(&run.stdout).unwrap(), run.stderr)
}

fn mutant_lines(listed: &Value) -> Vec<u64> {
    let mut lines: Vec<u64> =
        listed["mutants"].as_array().unwrap().iter().map(|m| m["line"].as_u64().unwrap()).collect();
    lines.dedup();
    lines
}

#[test]
fn a_commit_that_only_requotes_rewraps_and_moves_code_mutates_nothing() {
    let repo = repo_changing_to(REFORMATTED);
    let diff = String::from_utf8(git(repo.path(), &["diff", "-U0", "HEAD^", "HEAD"]).stdout).unwrap();
    assert!(
        diff.lines().filter(|line| line.starts_with('+') && !line.starts_with("+++")).count() >= 10,
        "{diff}"
    );

    let (plan, stderr) = listed(repo.path(), &[]);
    assert_eq!(mutant_lines(&plan), Vec::<u64>::new(), "{plan}");
    let reformatted = plan["reformatted"]["versions.py"].as_array().unwrap();
    assert!(reformatted.len() >= 8, "the moved and re-wrapped lines are listed: {plan}");
    let lines: Vec<usize> = reformatted.iter().map(|line| line.as_u64().unwrap() as usize).collect();
    let note = format!(
        "note: {} added executable lines only reformat or move removed code and were passed over (--include-reformatted keeps them): versions.py:{}",
        reformatted.len(),
        mutdelta::words::line_runs(&lines)
    );
    assert!(stderr.contains(&note), "{stderr}");
    assert!(note.contains(": versions.py:") && note.contains(", "), "runs of lines, by file: {note}");

    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(&note) && run.stdout.contains("nothing to mutate"), "{run:?}");
    assert_eq!(crate::common::read_report(&json)["mutdelta"]["reformatted"], plan["reformatted"], "{run:?}");

    let (kept, _) = listed(repo.path(), &["--include-reformatted"]);
    let kept_lines = mutant_lines(&kept);
    assert!(kept_lines.len() >= 6, "--include-reformatted mutates them: {kept}");
    assert!(kept_lines.iter().all(|line| reformatted.contains(&serde_json::json!(line))), "{kept} {plan}");
    assert_eq!(kept["reformatted"], serde_json::json!({}));
}

#[test]
fn a_real_edit_beside_reformatting_keeps_its_mutants() {
    let edited = REFORMATTED.replace("    if len(parts) != 3:\n", "    if len(parts) > 3:\n");
    let repo = repo_changing_to(&edited);

    let (plan, _) = listed(repo.path(), &[]);

    assert_eq!(mutant_lines(&plan), vec![7], "only the edited comparison: {plan}");
    let reformatted = plan["reformatted"]["versions.py"].as_array().unwrap();
    assert!(
        !reformatted.contains(&serde_json::json!(7)) && reformatted.contains(&serde_json::json!(2)),
        "{plan}"
    );
}

#[test]
fn code_moved_into_a_function_the_change_adds_is_new_code_and_is_mutated() {
    // `parse`'s check moves into a new `check_parts` above it, which runs it in a new context.
    let extracted = REFORMATTED
        .replace(
            "    parts = text.split(\".\")\n    if len(parts) != 3:\n        raise ValueError(text)\n",
            "    parts = text.split(\".\")\n    check_parts(parts, text)\n",
        )
        .replace(
            "\n\ndef parse(text):",
            "\n\ndef check_parts(parts, text):\n    if len(parts) != 3:\n        raise ValueError(text)\n\n\ndef parse(text):",
        );
    let repo = repo_changing_to(&extracted);
    let new_text = std::fs::read_to_string(repo.path().join("versions.py")).unwrap();
    let line_of = |text: &str| new_text.lines().position(|line| line == text).unwrap() as u64 + 1;

    let (plan, _) = listed(repo.path(), &[]);

    let lines = mutant_lines(&plan);
    let check = line_of("    if len(parts) != 3:");
    let call = line_of("    check_parts(parts, text)");
    assert!(lines.contains(&check) && lines.contains(&call), "the moved check and the call: {plan}");
    let reformatted = plan["reformatted"]["versions.py"].as_array().unwrap();
    assert!(!reformatted.contains(&serde_json::json!(check)), "{plan}");
    // `bump`, moved whole and re-wrapped, stays old code.
    assert!(reformatted.contains(&serde_json::json!(line_of("    if part == \"major\":"))), "{plan}");
}
