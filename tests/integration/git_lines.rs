//! The added and removed lines are `git diff -U0`'s: over a real project's whole history, under each diff setting of the config, for renames and the indent heuristic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use mutdelta::lines::{self, AddedLines};
use mutdelta::options::Target;

use crate::common::git;

const HISTORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/history/python-semver.bundle");
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The lines a diff adds (new path → line numbers) and removes (old path → line number → text).
#[derive(Debug, Default, PartialEq, Eq)]
struct Lines {
    added: BTreeMap<PathBuf, BTreeSet<usize>>,
    removed: BTreeMap<PathBuf, BTreeMap<usize, String>>,
}

impl From<AddedLines> for Lines {
    fn from(found: AddedLines) -> Lines {
        Lines { added: found.files, removed: found.removed }
    }
}

/// The name in a `--- a/NAME` or `+++ b/NAME` line (None for /dev/null).
fn header_path(rest: &str, prefix: &str) -> Option<PathBuf> {
    let rest = rest.trim_end_matches('\t');
    if rest == "/dev/null" {
        return None;
    }
    assert!(!rest.starts_with('"'), "quoted file names are not read here: {rest}");
    Some(PathBuf::from(rest.strip_prefix(prefix).unwrap_or_else(|| panic!("{rest} lacks {prefix}"))))
}

fn count(range: &str) -> (usize, usize) {
    match range.split_once(',') {
        Some((start, count)) => (start.parse().unwrap(), count.parse().unwrap()),
        None => (range.parse().unwrap(), 1),
    }
}

/// Reads `git diff -U0` output.
fn parse_git_diff(text: &[u8]) -> Lines {
    let text = String::from_utf8_lossy(text);
    let mut lines = Lines::default();
    let (mut old_path, mut new_path) = (None, None);
    let (mut old_line, mut old_left, mut new_line, mut new_left) = (0, 0, 0, 0);
    for raw in text.split_inclusive('\n') {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if old_left + new_left > 0 {
            if let Some(removed) = line.strip_prefix('-') {
                let path: &PathBuf = old_path.as_ref().expect("a removed line has an old file");
                lines.removed.entry(path.clone()).or_default().insert(old_line, removed.to_string());
                old_line += 1;
                old_left -= 1;
            } else if line.starts_with('+') {
                let path: &PathBuf = new_path.as_ref().expect("an added line has a new file");
                lines.added.entry(path.clone()).or_default().insert(new_line);
                new_line += 1;
                new_left -= 1;
            } else {
                assert!(line.starts_with('\\'), "unexpected line in a hunk: {line}");
            }
        } else if line.starts_with("diff --git ") {
            (old_path, new_path) = (None, None);
        } else if let Some(rest) = line.strip_prefix("--- ") {
            old_path = header_path(rest, "a/");
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            new_path = header_path(rest, "b/");
        } else if let Some(rest) = line.strip_prefix("@@ -") {
            let (old, rest) = rest.split_once(" +").unwrap();
            let (new, _) = rest.split_once(" @@").unwrap();
            (old_line, old_left) = count(old);
            (new_line, new_left) = count(new);
        }
    }
    lines
}

/// What `git diff -U0 PARENT REV` shows in `repo`, with the repository's config.
fn git_diff_lines(repo: &Path, rev: &str) -> Lines {
    let parent = format!("{rev}^");
    let has_parent = Command::new("git")
        .args(["rev-parse", "-q", "--verify", &parent])
        .current_dir(repo)
        .output()
        .unwrap()
        .status
        .success();
    let parent = if has_parent { parent.as_str() } else { EMPTY_TREE };
    let out = git(
        repo,
        &[
            "-c",
            "core.quotePath=false",
            "diff",
            "-U0",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            parent,
            rev,
        ],
    );
    parse_git_diff(&out.stdout)
}

fn mutdelta_lines(repo: &Path, rev: &str) -> Lines {
    let repository = git2::Repository::open(repo).unwrap();
    lines::find(&repository, &Target::Commit(rev.to_string())).unwrap().into()
}

/// A clone of the bundled history without a checkout, with `config` set in its own config.
fn history(config: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("history-").tempdir().unwrap();
    git(dir.path(), &["clone", "-q", "--no-checkout", HISTORY, "."]);
    for (key, value) in config {
        git(dir.path(), &["config", key, value]);
    }
    dir
}

fn commits(repo: &Path) -> Vec<String> {
    let out = git(repo, &["rev-list", "origin/main"]);
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

/// Every commit of the history, compared; the differing ones named with both readings.
fn assert_every_commit_matches(config: &[(&str, &str)]) {
    let repo = history(config);
    let commits = commits(repo.path());
    assert_eq!(commits.len(), 499, "the whole bundled history");
    let mut differing = Vec::new();
    let mut added = 0;
    for rev in &commits {
        let expected = git_diff_lines(repo.path(), rev);
        let found = mutdelta_lines(repo.path(), rev);
        added += expected.added.values().map(BTreeSet::len).sum::<usize>();
        if found != expected {
            differing.push(format!("{rev}:\n  git diff: {expected:?}\n  mutdelta: {found:?}"));
        }
    }
    assert!(added > 10_000, "the history adds lines to compare: {added}");
    assert!(
        differing.is_empty(),
        "{config:?}: {} commits differ:\n{}",
        differing.len(),
        differing.join("\n")
    );
}

#[test]
fn every_commit_of_a_real_history_reads_the_lines_git_diff_shows() {
    assert_every_commit_matches(&[]);
}

#[test]
fn every_commit_matches_under_each_diff_algorithm_git_diff_can_be_configured_with() {
    assert_every_commit_matches(&[("diff.algorithm", "patience")]);
    assert_every_commit_matches(&[("diff.algorithm", "minimal"), ("diff.indentHeuristic", "false")]);
}

#[test]
fn every_commit_matches_without_rename_detection_and_with_copy_detection() {
    assert_every_commit_matches(&[("diff.renames", "false")]);
    assert_every_commit_matches(&[("diff.renames", "copies")]);
}

const ARGPARSE_BEFORE: &str = r#"import argparse


def parser():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--dry-run",
        action="store_true",
    )
    parser.add_argument(
        "--version",
        action="version",
    )
    return parser
"#;

const IN_PLACE: &str = r#"    parser.add_argument(
        "--in-place",
        action="store_true",
    )
"#;

/// A repository whose first commit holds `files`; returns it with the first commit's id.
fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new().prefix("lines-").tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    write(dir.path(), files);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "first"]);
    let first = String::from_utf8(git(dir.path(), &["rev-parse", "HEAD"]).stdout).unwrap().trim().to_string();
    (dir, first)
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn find(dir: &Path, target: Target) -> AddedLines {
    lines::find(&git2::Repository::open(dir).unwrap(), &target).unwrap()
}

fn added(found: &AddedLines, path: &str) -> Vec<usize> {
    found.files.get(Path::new(path)).map(|lines| lines.iter().copied().collect()).unwrap_or_default()
}

#[test]
fn an_added_argparse_argument_is_read_where_git_diff_places_it_for_every_target() {
    let (repo, first) = repo_with(&[("cli.py", ARGPARSE_BEFORE)]);
    let after = ARGPARSE_BEFORE.replace(
        "    parser.add_argument(\n        \"--version\"",
        &format!("{IN_PLACE}    parser.add_argument(\n        \"--version\""),
    );
    write(repo.path(), &[("cli.py", &after)]);

    let in_worktree = find(repo.path(), Target::Base("HEAD".into()));
    git(repo.path(), &["add", "cli.py"]);
    let staged = find(repo.path(), Target::Staged);
    git(repo.path(), &["commit", "-q", "-m", "in place"]);
    let committed = find(repo.path(), Target::Commit("HEAD".into()));

    for found in [&in_worktree, &staged, &committed] {
        assert_eq!(
            added(found, "cli.py"),
            vec![10, 11, 12, 13],
            "the new argument, not the --version call below"
        );
        assert_eq!(found.before.map(|id| id.to_string()), Some(first.clone()));
    }
    assert_eq!(Lines::from(committed), git_diff_lines(repo.path(), "HEAD"));

    git(repo.path(), &["config", "diff.indentHeuristic", "false"]);
    let without = find(repo.path(), Target::Commit("HEAD".into()));
    assert_eq!(added(&without, "cli.py"), vec![11, 12, 13, 14], "git's own reading without the heuristic");
    assert_eq!(Lines::from(without), git_diff_lines(repo.path(), "HEAD"));
}

#[test]
fn a_renamed_file_adds_only_its_edited_line_and_removes_the_old_one_under_its_old_name() {
    let body: String = (1..=12).map(|i| format!("def f{i}():\n    return {i}\n\n\n")).collect();
    let (repo, _) = repo_with(&[("pkg/old_name.py", &body)]);
    git(repo.path(), &["mv", "pkg/old_name.py", "pkg/new_name.py"]);
    write(repo.path(), &[("pkg/new_name.py", &body.replace("return 7\n", "return 70\n"))]);

    let in_worktree = find(repo.path(), Target::Base("HEAD".into()));
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "rename"]);
    let committed = find(repo.path(), Target::Commit("HEAD".into()));

    for found in [&in_worktree, &committed] {
        assert_eq!(found.files.keys().collect::<Vec<_>>(), vec![Path::new("pkg/new_name.py")]);
        assert_eq!(added(found, "pkg/new_name.py"), vec![26]);
        assert_eq!(
            found.removed[Path::new("pkg/old_name.py")],
            BTreeMap::from([(26, "    return 7".to_string())])
        );
        assert!(found.deleted.is_empty(), "a renamed file is not deleted: {found:?}");
    }
    assert_eq!(Lines::from(committed), git_diff_lines(repo.path(), "HEAD"));

    git(repo.path(), &["config", "diff.renames", "false"]);
    let without = find(repo.path(), Target::Commit("HEAD".into()));
    assert_eq!(added(&without, "pkg/new_name.py").len(), 48, "without rename detection every line is new");
    assert_eq!(without.deleted, vec![PathBuf::from("pkg/old_name.py")]);
    assert_eq!(Lines::from(without), git_diff_lines(repo.path(), "HEAD"));
}

#[test]
fn a_root_commit_and_a_line_list_are_measured_against_nothing() {
    let (repo, _) = repo_with(&[("a.py", "x = 1\n")]);
    assert_eq!(find(repo.path(), Target::Commit("HEAD".into())).before, None);
    let listed = find(repo.path(), Target::Lines("a.py:1\n".into()));
    assert_eq!((listed.before, listed.removed.len()), (None, 0));
}

#[test]
fn a_histogram_diff_algorithm_is_refused_rather_than_read_differently() {
    let (repo, _) = repo_with(&[("a.py", "x = 1\n")]);
    git(repo.path(), &["config", "diff.algorithm", "histogram"]);
    let err = lines::find(&git2::Repository::open(repo.path()).unwrap(), &Target::Commit("HEAD".into()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("diff.algorithm=histogram"), "{err}");
    let run = crate::common::mutdelta(repo.path(), &["list", "--commit", "HEAD"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.starts_with("error: the git config sets diff.algorithm=histogram"), "{run:?}");
}

#[test]
fn a_working_tree_file_with_crlf_under_autocrlf_adds_only_its_new_line() {
    let (repo, _) = repo_with(&[("a.py", "x = 1\ny = 2\n")]);
    git(repo.path(), &["config", "core.autocrlf", "true"]);
    write(repo.path(), &[("a.py", "x = 1\r\nz = 3\r\ny = 2\r\n")]);
    let shown = String::from_utf8(git(repo.path(), &["diff", "-U0", "HEAD"]).stdout).unwrap();
    assert!(shown.contains("@@ -1,0 +2 @@"), "git sees one added line: {shown}");

    let found = find(repo.path(), Target::Base("HEAD".into()));

    assert_eq!(added(&found, "a.py"), vec![2]);
    assert!(found.removed.is_empty(), "{found:?}");
}
