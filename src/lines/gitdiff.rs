//! The lines `git diff -U0` shows for a libgit2 diff's files: renamed files paired as git pairs them, binary files as git sees them, each file diffed as git diffs it (its common tail trimmed first).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{Delta, Patch, Repository};

use super::config::{DiffConfig, Renames};
use super::renames;

/// The lines of a change, before they are told apart by target.
#[derive(Debug, Default)]
pub struct Lines {
    pub files: BTreeMap<PathBuf, BTreeSet<usize>>,
    pub removed: BTreeMap<PathBuf, BTreeMap<usize, String>>,
    /// The whole old text of each file with removed lines, by old path.
    pub removed_from: BTreeMap<PathBuf, String>,
    pub deleted: Vec<PathBuf>,
    pub binary: Vec<PathBuf>,
}

/// Where the new side of each file is read: the object database (a commit, the index), or the
/// working tree when the object database does not hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewSide {
    Objects,
    WorkTree,
}

/// One side of a changed file.
#[derive(Debug, Clone)]
struct Side {
    path: PathBuf,
    mode: u32,
    content: Vec<u8>,
    binary: bool,
}

/// A file of the change: its old side, its new side, or both.
#[derive(Debug)]
struct Change {
    old: Option<Side>,
    new: Option<Side>,
    /// Untracked (only with a working tree): no rename can end there, git does not see it.
    untracked: bool,
}

const GITLINK: u32 = 0o160000;
const SYMLINK: u32 = 0o120000;

/// Reads the lines `git diff -U0` would show for the files of `diff` (made without rename
/// detection), with the repository's diff settings.
pub fn lines(
    repo: &Repository,
    diff: &git2::Diff<'_>,
    config: &DiffConfig,
    new_side: NewSide,
) -> Result<Lines> {
    let mut changes = Vec::new();
    for delta in diff.deltas() {
        let old = || side(repo, &delta.old_file(), NewSide::Objects);
        let new = || side(repo, &delta.new_file(), new_side);
        match delta.status() {
            Delta::Added => changes.push(Change { old: None, new: Some(new()?), untracked: false }),
            Delta::Untracked => changes.push(Change { old: None, new: Some(new()?), untracked: true }),
            Delta::Deleted => changes.push(Change { old: Some(old()?), new: None, untracked: false }),
            Delta::Modified => {
                changes.push(Change { old: Some(old()?), new: Some(new()?), untracked: false })
            }
            // git shows a file that became a symlink (or the reverse) as deleted and added.
            Delta::Typechange => {
                changes.push(Change { old: Some(old()?), new: None, untracked: false });
                changes.push(Change { old: None, new: Some(new()?), untracked: false });
            }
            _ => {}
        }
    }
    if config.renames != Renames::Off {
        changes = pair_renames(changes, config);
    }
    let mut lines = Lines::default();
    for change in &changes {
        read_change(change, config, &mut lines)?;
    }
    lines.files.retain(|_, added| !added.is_empty());
    Ok(lines)
}

fn side(repo: &Repository, file: &git2::DiffFile<'_>, from: NewSide) -> Result<Side> {
    let path = file.path().context("a changed file has no path")?.to_path_buf();
    let mode = u32::from(file.mode());
    let content = if mode == GITLINK {
        format!("Subproject commit {}\n", file.id()).into_bytes()
    } else if let Some(blob) = (!file.id().is_zero()).then(|| repo.find_blob(file.id()).ok()).flatten() {
        blob.content().to_vec()
    } else if from == NewSide::WorkTree {
        let full = super::repository::workdir(repo).join(&path);
        if mode == SYMLINK {
            let target = std::fs::read_link(&full)
                .with_context(|| format!("could not read the link {}", path.display()))?;
            target.into_os_string().into_encoded_bytes()
        } else {
            let raw = std::fs::read(&full).with_context(|| format!("could not read {}", path.display()))?;
            as_stored(repo, &path, raw)
        }
    } else {
        anyhow::bail!(
            "the object {} of {} is missing from the repository: run `git fsck`",
            file.id(),
            path.display()
        )
    };
    let binary = is_binary(repo, &path, &content);
    Ok(Side { path, mode, content, binary })
}

/// A working-tree file's content as git reads it into a diff: CRLF line endings turned into LF
/// where git would (`core.autocrlf` true or input, the `text` or `eol` attribute; not for a file
/// with a NUL byte under `auto`, as git does). Other filters (`filter=`, `ident`) are not run.
fn as_stored(repo: &Repository, path: &Path, raw: Vec<u8>) -> Vec<u8> {
    if !raw.windows(2).any(|pair| pair == b"\r\n") {
        return raw;
    }
    let attribute = |name| {
        git2::AttrValue::from_string(
            repo.get_attr(path, name, git2::AttrCheckFlags::default()).ok().flatten(),
        )
    };
    let auto = || {
        let config = repo.config().ok();
        let autocrlf =
            config.as_ref().and_then(|config| config.get_string("core.autocrlf").ok()).unwrap_or_default();
        matches!(autocrlf.to_ascii_lowercase().as_str(), "true" | "input" | "yes" | "on" | "1")
            && !raw.contains(&0)
    };
    let convert = match attribute("text") {
        git2::AttrValue::False => false,
        git2::AttrValue::True => true,
        git2::AttrValue::String("auto") => !raw.contains(&0),
        _ => !matches!(attribute("eol"), git2::AttrValue::Unspecified) || auto(),
    };
    if !convert {
        return raw;
    }
    let mut lf = Vec::with_capacity(raw.len());
    for (index, &byte) in raw.iter().enumerate() {
        if byte != b'\r' || raw.get(index + 1) != Some(&b'\n') {
            lf.push(byte);
        }
    }
    lf
}

/// git's rule: the `diff` attribute unset (`-diff`, `binary`), else a NUL in the first 8000 bytes.
fn is_binary(repo: &Repository, path: &Path, content: &[u8]) -> bool {
    let attribute = repo.get_attr(path, "diff", git2::AttrCheckFlags::default()).ok().flatten();
    if git2::AttrValue::from_string(attribute) == git2::AttrValue::False {
        return true;
    }
    content[..content.len().min(8000)].contains(&0)
}

fn git_path(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// Deleted files (and with copy detection, modified ones) paired with added ones as git pairs
/// them; a deleted file that became another is no longer deleted.
fn pair_renames(changes: Vec<Change>, config: &DiffConfig) -> Vec<Change> {
    let copies = config.renames == Renames::Copies;
    let mut sources: Vec<usize> = (0..changes.len())
        .filter(|&i| changes[i].old.is_some() && (changes[i].new.is_none() || copies))
        .collect();
    let mut destinations: Vec<usize> =
        (0..changes.len()).filter(|&i| changes[i].old.is_none() && !changes[i].untracked).collect();
    let old_path = |&i: &usize| git_path(&changes[i].old.as_ref().unwrap().path).to_vec();
    let new_path = |&i: &usize| git_path(&changes[i].new.as_ref().unwrap().path).to_vec();
    sources.sort_by_key(old_path);
    destinations.sort_by_key(new_path);
    fn file(side: &Side) -> renames::File<'_> {
        renames::File {
            path: git_path(&side.path),
            mode: side.mode,
            content: &side.content,
            binary: side.binary,
        }
    }
    let source_files: Vec<renames::Source<'_>> = sources
        .iter()
        .map(|&i| renames::Source {
            file: file(changes[i].old.as_ref().unwrap()),
            stays: changes[i].new.is_some(),
        })
        .collect();
    let destination_files: Vec<renames::File<'_>> =
        destinations.iter().map(|&i| file(changes[i].new.as_ref().unwrap())).collect();
    let paired = renames::pair(&source_files, &destination_files, copies, config.rename_limit);

    let mut origin: BTreeMap<usize, usize> = BTreeMap::new();
    for (dst, src) in paired.iter().enumerate() {
        if let Some(src) = src {
            origin.insert(destinations[dst], sources[*src]);
        }
    }
    let renamed_away: BTreeSet<usize> =
        origin.values().copied().filter(|&src| changes[src].new.is_none()).collect();
    let olds: BTreeMap<usize, Side> =
        origin.iter().map(|(&dst, &src)| (dst, changes[src].old.clone().unwrap())).collect();
    changes
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !renamed_away.contains(i))
        .map(|(i, mut change)| {
            if let Some(old) = olds.get(&i) {
                change.old = Some(old.clone());
            }
            change
        })
        .collect()
}

/// git diffs with `-U0` after trimming the files' common tail in 1024-byte blocks (back to a
/// line end), which can move where an ambiguous insertion lands: the same is done here.
fn trim_common_tail<'a>(old: &'a [u8], new: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    const BLOCK: usize = 1024;
    let smaller = old.len().min(new.len());
    let mut trimmed = 0;
    while trimmed + BLOCK <= smaller
        && old[old.len() - trimmed - BLOCK..old.len() - trimmed]
            == new[new.len() - trimmed - BLOCK..new.len() - trimmed]
    {
        trimmed += BLOCK;
    }
    let tail = &old[old.len() - trimmed..];
    let recovered = tail.iter().position(|&b| b == b'\n').map_or(trimmed, |at| at + 1);
    (&old[..old.len() - trimmed + recovered], &new[..new.len() - trimmed + recovered])
}

fn read_change(change: &Change, config: &DiffConfig, lines: &mut Lines) -> Result<()> {
    let Some(new) = &change.new else {
        let old = change.old.as_ref().expect("a change has a side");
        lines.deleted.push(old.path.clone());
        if !old.binary {
            for (index, text) in old.content.split_inclusive(|&b| b == b'\n').enumerate() {
                lines.removed.entry(old.path.clone()).or_default().insert(index + 1, text_of(text));
            }
            lines.removed_from.insert(old.path.clone(), String::from_utf8_lossy(&old.content).into_owned());
        }
        return Ok(());
    };
    lines.files.entry(new.path.clone()).or_default();
    let old = change.old.as_ref();
    if new.binary || old.is_some_and(|old| old.binary) {
        lines.binary.push(new.path.clone());
        return Ok(());
    }
    let (old_content, new_content) = trim_common_tail(old.map_or(&[][..], |old| &old.content), &new.content);
    let mut options = config.diff_options();
    options.force_text(true);
    let patch = Patch::from_buffers(
        old_content,
        old.map(|old| old.path.as_path()),
        new_content,
        Some(&new.path),
        Some(&mut options),
    )
    .with_context(|| format!("could not diff {}", new.path.display()))?;
    for hunk in 0..patch.num_hunks() {
        for index in 0..patch.num_lines_in_hunk(hunk)? {
            let line = patch.line_in_hunk(hunk, index)?;
            match (line.origin(), old) {
                ('+', _) => {
                    if let Some(number) = line.new_lineno() {
                        lines.files.entry(new.path.clone()).or_default().insert(number as usize);
                    }
                }
                ('-', Some(old)) => {
                    if !lines.removed_from.contains_key(&old.path) {
                        let text = String::from_utf8_lossy(&old.content).into_owned();
                        lines.removed_from.insert(old.path.clone(), text);
                    }
                    if let Some(number) = line.old_lineno() {
                        lines
                            .removed
                            .entry(old.path.clone())
                            .or_default()
                            .insert(number as usize, text_of(line.content()));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A line's text without its line ending.
fn text_of(content: &[u8]) -> String {
    let content = content.strip_suffix(b"\n").unwrap_or(content);
    let content = content.strip_suffix(b"\r").unwrap_or(content);
    String::from_utf8_lossy(content).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_tail_is_trimmed_in_whole_blocks_back_to_a_line_end() {
        let tail = "yy\n".repeat(400);
        let old = format!("a\n{tail}");
        let new = format!("b\n{tail}");
        let (old_kept, new_kept) = trim_common_tail(old.as_bytes(), new.as_bytes());
        assert_eq!(old.len() - old_kept.len(), new.len() - new_kept.len());
        assert_eq!(
            old.len() - old_kept.len(),
            1023,
            "1024 bytes trimmed, back to the first line end in them"
        );
        assert!(old_kept.ends_with(b"\n") && new_kept.ends_with(b"\n"));
        let (short_old, short_new) = trim_common_tail(b"a\nb\n", b"a\nc\nb\n");
        assert_eq!((short_old, short_new), (&b"a\nb\n"[..], &b"a\nc\nb\n"[..]), "less than a block: kept");
    }
}
