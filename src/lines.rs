//! The added lines of a change: read from git (the only module besides `worktree` that touches git2) or from a coverage gate's list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use git2::{Delta, DiffOptions, Oid, Repository, Status, StatusOptions};

use crate::options::Target;

/// Which state of the repository is materialised and tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A commit's tree.
    Commit(Oid),
    /// The index (staged content).
    Index,
    /// The working tree, untracked non-ignored files included.
    WorkTree,
}

impl State {
    /// As reports write it: `commit <id>`, `index` or `worktree`.
    pub fn to_text(self) -> String {
        match self {
            State::Commit(oid) => format!("commit {oid}"),
            State::Index => "index".to_string(),
            State::WorkTree => "worktree".to_string(),
        }
    }

    /// Reads what `to_text` wrote.
    pub fn from_text(text: &str) -> Option<State> {
        match text {
            "index" => Some(State::Index),
            "worktree" => Some(State::WorkTree),
            _ => Oid::from_str(text.strip_prefix("commit ")?).ok().map(State::Commit),
        }
    }
}

/// The lines a change adds, per file (paths relative to the repository root).
#[derive(Debug, Clone)]
pub struct AddedLines {
    pub state: State,
    /// Added line numbers (1-based) per file that exists in the state under test.
    pub files: BTreeMap<PathBuf, BTreeSet<usize>>,
    /// Files the change deletes: nothing to mutate there.
    pub deleted: Vec<PathBuf>,
    /// Files git sees as binary: no lines to mutate.
    pub binary: Vec<PathBuf>,
    /// The lines the change removes: old path, old line number, the line's text.
    pub removed: BTreeMap<PathBuf, BTreeMap<usize, String>>,
    /// The commit the change is measured against (none for a line list or a root commit).
    pub before: Option<Oid>,
}

/// Opens the repository that contains `dir`.
pub fn open_repository(dir: &Path) -> Result<Repository> {
    let repo = Repository::discover(dir).map_err(|_| {
        anyhow!(
            "{} is not inside a git repository: run mutdelta in a repository or point -C at one",
            dir.display()
        )
    })?;
    if repo.is_bare() {
        bail!("{} is a bare repository: mutdelta needs a checkout to test", dir.display());
    }
    Ok(repo)
}

/// The repository's working directory.
pub fn workdir(repo: &Repository) -> &Path {
    repo.workdir().expect("bare repositories are refused on open")
}

/// Finds the added lines of `target`.
pub fn find(repo: &Repository, target: &Target) -> Result<AddedLines> {
    match target {
        Target::Staged => staged(repo),
        Target::Commit(rev) => commit(repo, rev),
        Target::Base(rev) => since_base(repo, rev),
        Target::Lines(text) => {
            let files = parse_line_list(text)?;
            check_lines_exist(workdir(repo), &files)?;
            Ok(AddedLines {
                state: State::WorkTree,
                files,
                deleted: Vec::new(),
                binary: Vec::new(),
                removed: BTreeMap::new(),
                before: None,
            })
        }
    }
}

fn resolve_commit<'r>(repo: &'r Repository, rev: &str) -> Result<git2::Commit<'r>> {
    repo.revparse_single(rev).and_then(|object| object.peel_to_commit()).map_err(|_| {
        anyhow!("unknown revision '{rev}': give a commit, branch or tag that exists in this repository")
    })
}

fn head_tree(repo: &Repository) -> Result<Option<git2::Tree<'_>>> {
    match repo.head() {
        Ok(head) => Ok(Some(head.peel_to_tree().context("HEAD does not point at a commit")?)),
        Err(err) if err.code() == git2::ErrorCode::UnbornBranch => Ok(None),
        Err(err) => Err(err).context("could not read HEAD"),
    }
}

fn zero_context() -> DiffOptions {
    let mut options = DiffOptions::new();
    options.context_lines(0).interhunk_lines(0);
    options
}

fn staged(repo: &Repository) -> Result<AddedLines> {
    refuse_unstaged_edits_of_staged_files(repo)?;
    let head = head_tree(repo)?;
    let index = repo.index().context("could not read the index")?;
    let diff = repo
        .diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut zero_context()))
        .context("could not diff the index against HEAD")?;
    let before = repo.head().ok().and_then(|head| head.peel_to_commit().ok()).map(|commit| commit.id());
    collect(&diff, State::Index, before)
}

fn refuse_unstaged_edits_of_staged_files(repo: &Repository) -> Result<()> {
    let mut options = StatusOptions::new();
    options.include_untracked(false).include_ignored(false);
    let statuses = repo.statuses(Some(&mut options)).context("could not read git status")?;
    let staged =
        Status::INDEX_NEW | Status::INDEX_MODIFIED | Status::INDEX_RENAMED | Status::INDEX_TYPECHANGE;
    let unstaged = Status::WT_MODIFIED | Status::WT_DELETED | Status::WT_TYPECHANGE | Status::WT_RENAMED;
    for entry in statuses.iter() {
        let status = entry.status();
        if status.intersects(staged) && status.intersects(unstaged) {
            let path = entry.path().unwrap_or("(a file with a non-UTF-8 name)");
            bail!(
                "{path} is staged and also has unstaged edits, so the tests would run code that is not in the commit: stage those edits or stash them with `git stash --keep-index` first"
            );
        }
    }
    Ok(())
}

fn commit(repo: &Repository, rev: &str) -> Result<AddedLines> {
    let commit = resolve_commit(repo, rev)?;
    let tree = commit.tree().context("could not read the commit's tree")?;
    let parent = commit.parent(0).ok();
    let parent_tree = match &parent {
        Some(parent) => Some(parent.tree().context("could not read the parent commit's tree")?),
        None => None,
    };
    let diff = repo
        .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut zero_context()))
        .context("could not diff the commit against its parent")?;
    collect(&diff, State::Commit(commit.id()), parent.map(|parent| parent.id()))
}

fn since_base(repo: &Repository, rev: &str) -> Result<AddedLines> {
    let base = resolve_commit(repo, rev)?;
    let head = repo
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|_| anyhow!("HEAD has no commit yet, so there is no merge base with '{rev}'"))?;
    let merge_base = repo
        .merge_base(base.id(), head.id())
        .map_err(|_| anyhow!("'{rev}' and HEAD share no history: give a revision HEAD descends from"))?;
    let base_tree = repo.find_commit(merge_base)?.tree()?;
    let mut options = zero_context();
    options.include_untracked(true).recurse_untracked_dirs(true).show_untracked_content(true);
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&base_tree), Some(&mut options))
        .context("could not diff the working tree against the merge base")?;
    collect(&diff, State::WorkTree, Some(merge_base))
}

fn collect(diff: &git2::Diff<'_>, state: State, before: Option<Oid>) -> Result<AddedLines> {
    let mut files: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
    let mut removed: BTreeMap<PathBuf, BTreeMap<usize, String>> = BTreeMap::new();
    let mut deleted = Vec::new();
    let mut binary = Vec::new();
    for delta in diff.deltas() {
        match delta.status() {
            Delta::Deleted => deleted.extend(delta.old_file().path().map(Path::to_path_buf)),
            Delta::Added
            | Delta::Modified
            | Delta::Renamed
            | Delta::Copied
            | Delta::Untracked
            | Delta::Typechange => {
                if let Some(path) = delta.new_file().path() {
                    files.entry(path.to_path_buf()).or_default();
                }
            }
            _ => {}
        }
    }
    diff.foreach(
        &mut |_, _| true,
        Some(&mut |delta, _| {
            if delta.status() != Delta::Deleted {
                binary.extend(delta.new_file().path().map(Path::to_path_buf));
            }
            true
        }),
        None,
        Some(&mut |delta, _hunk, line| {
            if line.origin() == '+' {
                if let (Some(path), Some(number)) = (delta.new_file().path(), line.new_lineno()) {
                    files.entry(path.to_path_buf()).or_default().insert(number as usize);
                }
            }
            if line.origin() == '-' {
                if let (Some(path), Some(number)) = (delta.old_file().path(), line.old_lineno()) {
                    let text =
                        String::from_utf8_lossy(line.content()).trim_end_matches(['\n', '\r']).to_string();
                    removed.entry(path.to_path_buf()).or_default().insert(number as usize, text);
                }
            }
            true
        }),
    )
    .context("could not read the diff")?;
    // Files whose change adds no line (pure deletions of lines, mode changes) have nothing to mutate.
    files.retain(|_, lines| !lines.is_empty());
    Ok(AddedLines { state, files, deleted, binary, removed, before })
}

/// Parses a coverage gate's list: `path:LINE` / `path:START-END` per line, or a JSON object
/// `{"path": [lines]}`. Blank lines and lines starting with `#` are passed over.
pub fn parse_line_list(text: &str) -> Result<BTreeMap<PathBuf, BTreeSet<usize>>> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return parse_json_line_list(trimmed);
    }
    let mut files: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
    for (index, raw) in text.lines().enumerate() {
        let entry = raw.trim();
        if entry.is_empty() || entry.starts_with('#') {
            continue;
        }
        let malformed = || {
            anyhow!(
                "line {} of the line list, {entry:?}, is not `path:LINE` or `path:START-END`: fix or remove it",
                index + 1
            )
        };
        let (path, range) = entry.rsplit_once(':').ok_or_else(malformed)?;
        if path.is_empty() {
            return Err(malformed());
        }
        let (start, end) = match range.split_once('-') {
            Some((start, end)) => (start, end),
            None => (range, range),
        };
        let start: usize = start.trim().parse().map_err(|_| malformed())?;
        let end: usize = end.trim().parse().map_err(|_| malformed())?;
        if start == 0 || end < start {
            return Err(malformed());
        }
        files.entry(PathBuf::from(path)).or_default().extend(start..=end);
    }
    Ok(files)
}

fn parse_json_line_list(text: &str) -> Result<BTreeMap<PathBuf, BTreeSet<usize>>> {
    let parsed: BTreeMap<String, Vec<usize>> = serde_json::from_str(text).map_err(|err| {
        anyhow!("the line list is not a JSON object of the form {{\"path\": [lines]}}: {err}")
    })?;
    let mut files = BTreeMap::new();
    for (path, lines) in parsed {
        if lines.contains(&0) {
            bail!("the line list names line 0 of {path}: lines are numbered from 1");
        }
        files.insert(PathBuf::from(path), lines.into_iter().collect());
    }
    Ok(files)
}

fn check_lines_exist(root: &Path, files: &BTreeMap<PathBuf, BTreeSet<usize>>) -> Result<()> {
    for (path, lines) in files {
        let full = root.join(path);
        let bytes = std::fs::read(&full).map_err(|_| {
            anyhow!(
                "the line list names {}, which is not in the working tree: list paths relative to the repository root",
                path.display()
            )
        })?;
        let line_count = bytes.split(|&b| b == b'\n').count() - usize::from(bytes.ends_with(b"\n"));
        if let Some(&last) = lines.iter().next_back() {
            if last > line_count {
                bail!(
                    "the line list names {}:{last}, but that file has {line_count} lines: regenerate the list from the current change",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_list_accepts_single_lines_and_ranges() {
        let files = parse_line_list("a.py:3\n\n# comment\npkg/b.py:5-7\na.py:1\n").unwrap();
        assert_eq!(files[Path::new("a.py")], BTreeSet::from([1, 3]));
        assert_eq!(files[Path::new("pkg/b.py")], BTreeSet::from([5, 6, 7]));
    }

    #[test]
    fn line_list_accepts_a_json_object() {
        let files = parse_line_list(r#"{"a.py": [2, 4]}"#).unwrap();
        assert_eq!(files[Path::new("a.py")], BTreeSet::from([2, 4]));
    }

    #[test]
    fn malformed_line_list_entries_are_refused_with_their_line_number() {
        for bad in ["a.py", "a.py:x", "a.py:0", "a.py:5-3", ":4"] {
            let err = parse_line_list(&format!("ok.py:1\n{bad}\n")).unwrap_err().to_string();
            assert!(err.contains("line 2 of the line list"), "{bad}: {err}");
        }
    }
}
