//! The added lines of a change: read from git as `git diff` shows them (git2 is touched only here, in `lines/` and in `worktree`), or from a coverage gate's list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use config::DiffConfig;
use git2::{DiffOptions, Oid, Repository, Status, StatusOptions};
use gitdiff::NewSide;
pub use list::parse_line_list;

use crate::model::plan::State;

mod config;
mod gitdiff;
mod list;
mod renames;
mod repository;

pub use repository::{open_repository, repository_root, workdir};

/// What to check: which change is mutated, and so which state is tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Staged,
    Commit(String),
    Base(String),
    /// The lines `to` adds over merge-base(`from`, `to`), tested on `to`'s tree: the range the
    /// pre-commit framework names in `PRE_COMMIT_FROM_REF` and `PRE_COMMIT_TO_REF`.
    Range {
        from: String,
        to: String,
    },
    /// A coverage gate's list of added lines, already read (from a file or standard input).
    Lines(String),
}

/// The lines a change adds, per file (paths relative to the repository root), as `git diff`
/// shows them.
#[derive(Debug, Clone)]
pub struct AddedLines {
    pub state: State,
    /// The commit the change is measured against: the parent for `--commit`, HEAD for
    /// `--staged`, the merge base for `--base`; None for a line list or a root commit.
    pub before: Option<Oid>,
    /// Added line numbers (1-based) per file that exists in the state under test.
    pub files: BTreeMap<PathBuf, BTreeSet<usize>>,
    /// The lines the same diff removes: old-side path (a renamed file's old name), old line
    /// number (1-based), the line's text without its line ending. Empty for a line list.
    pub removed: BTreeMap<PathBuf, BTreeMap<usize, String>>,
    /// The whole old text of each file in `removed`, by old path: which function each
    /// removed line was in.
    pub removed_from: BTreeMap<PathBuf, String>,
    /// Files the change deletes: nothing to mutate there.
    pub deleted: Vec<PathBuf>,
    /// Files git sees as binary: no lines to mutate.
    pub binary: Vec<PathBuf>,
}

/// Finds the added lines of `target`.
pub fn find(repo: &Repository, target: &Target) -> Result<AddedLines> {
    match target {
        Target::Staged => staged(repo),
        Target::Commit(rev) => commit(repo, rev),
        Target::Base(rev) => since_base(repo, rev),
        Target::Range { from, to } => range(repo, from, to),
        Target::Lines(text) => {
            let files = list::read(text, workdir(repo))?;
            Ok(AddedLines {
                state: State::WorkTree,
                before: None,
                files,
                removed: BTreeMap::new(),
                removed_from: BTreeMap::new(),
                deleted: Vec::new(),
                binary: Vec::new(),
            })
        }
    }
}

fn resolve_commit<'r>(repo: &'r Repository, rev: &str) -> Result<git2::Commit<'r>> {
    repo.revparse_single(rev).and_then(|object| object.peel_to_commit()).map_err(|_| {
        anyhow!("unknown revision '{rev}': give a commit, branch or tag that exists in this repository")
    })
}

fn head_commit(repo: &Repository) -> Result<Option<git2::Commit<'_>>> {
    match repo.head() {
        Ok(head) => Ok(Some(head.peel_to_commit().context("HEAD does not point at a commit")?)),
        Err(err) if err.code() == git2::ErrorCode::UnbornBranch => Ok(None),
        Err(err) => Err(err).context("could not read HEAD"),
    }
}

/// The lines `git diff -U0` shows for the diff `make` builds (without rename detection).
fn git_diff<'r>(
    repo: &'r Repository,
    new_side: NewSide,
    make: impl FnOnce(&mut DiffOptions) -> Result<git2::Diff<'r>, git2::Error>,
) -> Result<gitdiff::Lines> {
    let config = DiffConfig::read(repo)?;
    let diff = make(&mut DiffOptions::new()).context("could not diff the change")?;
    gitdiff::lines(repo, &diff, &config, new_side)
}

fn added_lines(lines: gitdiff::Lines, state: State, before: Option<Oid>) -> AddedLines {
    let gitdiff::Lines { files, removed, removed_from, deleted, binary } = lines;
    AddedLines { state, before, files, removed, removed_from, deleted, binary }
}

fn staged(repo: &Repository) -> Result<AddedLines> {
    refuse_unstaged_edits_of_staged_files(repo)?;
    let head = head_commit(repo)?;
    let head_tree =
        head.as_ref().map(|commit| commit.tree()).transpose().context("could not read HEAD's tree")?;
    let index = repo.index().context("could not read the index")?;
    let lines = git_diff(repo, NewSide::Objects, |options| {
        repo.diff_tree_to_index(head_tree.as_ref(), Some(&index), Some(options))
    })?;
    Ok(added_lines(lines, State::Index, head.map(|commit| commit.id())))
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
    let parent_tree = parent
        .as_ref()
        .map(|parent| parent.tree())
        .transpose()
        .context("could not read the parent commit's tree")?;
    let lines = git_diff(repo, NewSide::Objects, |options| {
        repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(options))
    })?;
    Ok(added_lines(lines, State::Commit(commit.id()), parent.map(|parent| parent.id())))
}

fn range(repo: &Repository, from: &str, to: &str) -> Result<AddedLines> {
    let from_commit = resolve_commit(repo, from)?;
    let to_commit = resolve_commit(repo, to)?;
    let merge_base = repo.merge_base(from_commit.id(), to_commit.id()).map_err(|_| {
        anyhow!("'{from}' and '{to}' share no history: give a range whose end descends from its start")
    })?;
    let base_tree = repo.find_commit(merge_base)?.tree().context("could not read the merge base's tree")?;
    let tree = to_commit.tree().context("could not read the range's last tree")?;
    let lines = git_diff(repo, NewSide::Objects, |options| {
        repo.diff_tree_to_tree(Some(&base_tree), Some(&tree), Some(options))
    })?;
    Ok(added_lines(lines, State::Commit(to_commit.id()), Some(merge_base)))
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
    let lines = git_diff(repo, NewSide::WorkTree, |options| {
        options.include_untracked(true).recurse_untracked_dirs(true);
        repo.diff_tree_to_workdir_with_index(Some(&base_tree), Some(options))
    })?;
    Ok(added_lines(lines, State::WorkTree, Some(merge_base)))
}
