//! Isolated copies of the state under test (a commit's tree, the index or the working tree, via git2); the user's checkout is only ever read.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{ObjectType, Repository, Status, StatusOptions, TreeWalkMode, TreeWalkResult};

use crate::lines::{workdir, State};

/// Writes `state` of `repo` into the empty directory `dest`.
pub fn materialize(repo: &Repository, state: State, dest: &Path) -> Result<()> {
    fs::create_dir_all(dest)?;
    match state {
        State::Commit(oid) => write_commit(repo, oid, dest),
        State::Index => write_index(repo, dest),
        State::WorkTree => copy_working_tree(repo, dest),
    }
}

/// Copies the copy at `from` to `to`, for another worker.
pub fn duplicate(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    copy_dir(from, to).with_context(|| format!("could not copy {} for a worker", from.display()))
}

fn write_file(root: &Path, relative: &Path, content: &[u8], executable: bool) -> Result<()> {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(&path, content).with_context(|| format!("could not write {}", path.display()))?;
    if executable {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

fn write_symlink(root: &Path, relative: &Path, target: &[u8]) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), &path)
        .with_context(|| format!("could not create the symlink {}", path.display()))
}

/// Git file modes that matter for a copy.
const MODE_EXECUTABLE: u32 = 0o100755;
const MODE_SYMLINK: u32 = 0o120000;

fn write_blob(repo: &Repository, root: &Path, relative: &Path, oid: git2::Oid, mode: u32) -> Result<()> {
    let blob = repo.find_blob(oid).with_context(|| format!("could not read {}", relative.display()))?;
    if mode == MODE_SYMLINK {
        write_symlink(root, relative, blob.content())
    } else {
        write_file(root, relative, blob.content(), mode == MODE_EXECUTABLE)
    }
}

fn write_commit(repo: &Repository, oid: git2::Oid, root: &Path) -> Result<()> {
    let tree = repo.find_commit(oid)?.tree()?;
    let mut failure = None;
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() != Some(ObjectType::Blob) {
            return TreeWalkResult::Ok; // trees are walked into; submodules are left out
        }
        let relative = PathBuf::from(dir).join(String::from_utf8_lossy(entry.name_bytes()).as_ref());
        match write_blob(repo, root, &relative, entry.id(), entry.filemode() as u32) {
            Ok(()) => TreeWalkResult::Ok,
            Err(err) => {
                failure = Some(err);
                TreeWalkResult::Abort
            }
        }
    })
    .context("could not read the commit's tree")?;
    failure.map_or(Ok(()), Err)
}

fn write_index(repo: &Repository, root: &Path) -> Result<()> {
    let index = repo.index().context("could not read the index")?;
    for entry in index.iter() {
        let stage = (entry.flags >> 12) & 0x3;
        if stage != 0 || entry.mode == 0o160000 {
            continue; // conflict stages and submodules are not part of a testable state
        }
        let relative = PathBuf::from(String::from_utf8_lossy(&entry.path).as_ref());
        write_blob(repo, root, &relative, entry.id, entry.mode)?;
    }
    Ok(())
}

fn copy_working_tree(repo: &Repository, root: &Path) -> Result<()> {
    let source = workdir(repo);
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_unmodified(true)
        .include_ignored(false);
    let statuses = repo.statuses(Some(&mut options)).context("could not list the working tree")?;
    for entry in statuses.iter() {
        if entry.status().contains(Status::WT_DELETED) {
            continue;
        }
        let Ok(relative) = entry.path() else { continue };
        let from = source.join(relative);
        let to = root.join(relative);
        let metadata = match fs::symlink_metadata(&from) {
            Ok(metadata) => metadata,
            Err(_) => continue,
        };
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        if metadata.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&from)?, &to)?;
        } else if metadata.is_file() {
            fs::copy(&from, &to).with_context(|| format!("could not copy {}", from.display()))?;
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        let target = to.join(entry.file_name());
        if file_type.is_dir() {
            fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else if file_type.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// How a rewritten file's modification time is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// The time of the write: cargo compares nanosecond mtimes, so a later write is newer. A
    /// future mtime would make cargo rebuild on every invocation.
    Now,
    /// A whole second no earlier write had. Python trusts cached bytecode whose recorded source
    /// mtime (in whole seconds) and size match the source; a mutant of the same size written
    /// within the same second would run the original's bytecode.
    FreshSecond,
}

/// Writes `content` to a file of a copy, with its modification time set as `stamp` says.
pub fn replace_file(path: &Path, content: &str, stamp: Stamp) -> Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let file = fs::File::create(path).with_context(|| format!("could not write {}", path.display()))?;
    std::io::Write::write_all(&mut &file, content.as_bytes())?;
    if stamp == Stamp::FreshSecond {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        file.set_modified(
            UNIX_EPOCH + Duration::from_secs(now + 1 + WRITES.fetch_add(1, Ordering::Relaxed)),
        )?;
    }
    Ok(())
}
