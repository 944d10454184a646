//! Isolated copies of the state under test (a commit's tree, the index or the working tree, via git2); the user's checkout is only ever read.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{ObjectType, Repository, Status, StatusOptions, TreeWalkMode, TreeWalkResult};

use crate::lines::workdir;
use crate::model::plan::State;

/// Writes `state` of `repo` into the empty directory `dest`, with the generated files of the
/// checkout beside it (`carry_generated`); returns those, by path in the copy.
pub fn materialize(repo: &Repository, state: State, dest: &Path) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(dest)?;
    match state {
        State::Commit(oid) => write_commit(repo, oid, dest),
        State::Index => write_index(repo, dest),
        State::WorkTree => copy_working_tree(repo, dest),
    }?;
    carry_submodules(repo, dest, 0)?;
    carry_generated(repo, dest)
}

/// How deep submodules of submodules are followed.
const DEEPEST_SUBMODULE: usize = 8;

/// Copies into `dest` the files of each submodule as the checkout has it checked out (its
/// working tree, its own submodules too): no part of the change, but what the tests import and
/// run as they do in the checkout. A submodule not checked out is left out, as in the checkout;
/// one whose path leaves the repository (a hostile `.gitmodules`) too.
fn carry_submodules(repo: &Repository, dest: &Path, depth: usize) -> Result<()> {
    if depth >= DEEPEST_SUBMODULE {
        return Ok(());
    }
    for submodule in repo.submodules().context("could not list the submodules")? {
        let path = submodule.path();
        let plain = path.components().all(|part| matches!(part, std::path::Component::Normal(_)));
        if !plain || path.as_os_str().is_empty() {
            continue;
        }
        let Ok(inner) = submodule.open() else { continue };
        let to = dest.join(path);
        copy_working_tree(&inner, &to)
            .with_context(|| format!("could not copy the submodule {}", path.display()))?;
        carry_submodules(&inner, &to, depth + 1)?;
    }
    Ok(())
}

/// Files larger than this are not carried: no build product a test imports is that large.
const LARGEST_CARRIED: u64 = 64 << 20;

/// Copies into `dest` the files of the checkout that git ignores and that sit in a directory
/// (other than the top) holding files of the state under test: what building or installing
/// the project wrote beside its sources (a version module, compiled extensions, message
/// catalogues), which its tests import as they do in the checkout. Directories git ignores
/// whole (virtual environments, build trees, caches), bytecode, logs and whatever sits under
/// the tests are left out.
fn carry_generated(repo: &Repository, dest: &Path) -> Result<Vec<PathBuf>> {
    let source = workdir(repo);
    let mut options = StatusOptions::new();
    options.include_untracked(false).include_ignored(true).recurse_ignored_dirs(false);
    let statuses = repo.statuses(Some(&mut options)).context("could not list the ignored files")?;
    let mut carried = Vec::new();
    for entry in statuses.iter().filter(|entry| entry.status().contains(Status::IGNORED)) {
        let Ok(relative) = entry.path() else { continue };
        let relative = Path::new(relative);
        let Some(parent) = relative.parent().filter(|parent| !parent.as_os_str().is_empty()) else {
            continue; // the top directory's own ignored files are the user's, not the build's
        };
        let bytecode = relative.extension().is_some_and(|ext| ext == "pyc" || ext == "pyo");
        // What tests leave behind among them changes every run, and would make every run's
        // copy new content to the verdicts kept.
        let left_by_tests = crate::model::plan::in_directory_named(relative, &["tests", "test"])
            || relative.extension().is_some_and(|ext| ext == "log");
        if bytecode || left_by_tests || !dest.join(parent).is_dir() {
            continue;
        }
        let from = source.join(relative);
        match fs::symlink_metadata(&from) {
            Ok(metadata) if metadata.is_file() && metadata.len() <= LARGEST_CARRIED => {}
            _ => continue,
        }
        let to = dest.join(relative);
        if to.exists() {
            continue; // the state under test has a file of that name
        }
        fs::copy(&from, &to).with_context(|| format!("could not copy {}", from.display()))?;
        carried.push(relative.to_path_buf());
    }
    carried.sort();
    Ok(carried)
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
        if inside_a_scratch(source, &from) {
            continue; // a run's own copies, when the temporary directory lies in the checkout
        }
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

/// Whether `path` lies in a scratch directory that is itself inside the checkout at `source`.
fn inside_a_scratch(source: &Path, path: &Path) -> bool {
    crate::scratch::enclosing(path).is_some_and(|scratch| scratch.starts_with(source) && scratch != source)
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
///
/// Each write gets a time the file system *keeps* as later than the moment of the write and
/// than every earlier stamp of the same rule, whatever its timestamp resolution (nanoseconds
/// on ext4, btrfs, xfs or tmpfs; whole seconds on ext4 with small inodes, HFS+ or many network
/// file systems; even seconds on FAT). The time is set explicitly and read back: when the
/// file system kept an earlier time than asked for, a later one is asked for (twice as far
/// each try) until the stored time is later. That is sound for both readers of the stamp:
/// - cargo takes a build as fresh when no source file is newer than the build's dep-info file,
///   which it stamps with the moment the build *started*, as the file system keeps it. A build
///   that read the other content started before this write, so its stored start is at most
///   the moment of the write, and the stored stamp is later: cargo rebuilds. A build that
///   starts after the stamp is fresh; one that starts before it (a stamp in the future, on a
///   coarse file system) is only rebuilt once more, never taken for the other content.
/// - Python takes cached bytecode as current when the whole seconds of the source's stored
///   modification time (and its size) equal those the bytecode records. Every stamp's whole
///   second is later than those of every earlier stamp and of the moment it was written, so
///   no bytecode of an earlier content (written before, or by an earlier stamp) matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// Later than the write (cargo's rule): on a file system with nanosecond timestamps,
    /// barely, so the build that follows is fresh.
    Now,
    /// A later whole second (Python's rule).
    FreshSecond,
}

/// Writes `content` to a file of a copy, with its modification time set as `stamp` says.
/// A symbolic link is never followed: a copy's link may point out of the copy.
pub fn replace_file(path: &Path, content: &str, stamp: Stamp) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| {
            format!("could not write {} (a file of a copy, never a symbolic link)", path.display())
        })?;
    std::io::Write::write_all(&mut &file, content.as_bytes())?;
    set_stamp(&file, stamp)
        .with_context(|| format!("could not set the modification time of {}", path.display()))?;
    Ok(())
}

/// Stamps `file` as `rule` says; returns the time the file system kept.
fn set_stamp(file: &fs::File, rule: Stamp) -> std::io::Result<std::time::SystemTime> {
    use std::sync::Mutex;
    use std::time::{SystemTime, UNIX_EPOCH};
    // The last stamp of each rule: a clock set back never makes a stamp repeat.
    static LAST: [Mutex<SystemTime>; 2] = [Mutex::new(UNIX_EPOCH), Mutex::new(UNIX_EPOCH)];
    let mut last = LAST[rule as usize].lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let floor = SystemTime::now().max(*last);
    let kept = later_than(floor, rule, |wanted| {
        file.set_modified(wanted)?;
        file.metadata()?.modified()
    })?;
    *last = kept;
    Ok(kept)
}

/// The first time after `floor` (by `rule`: any later time, or a later whole second) that
/// `set` (which sets a time and returns the one the file system kept) keeps.
fn later_than(
    floor: std::time::SystemTime,
    rule: Stamp,
    mut set: impl FnMut(std::time::SystemTime) -> std::io::Result<std::time::SystemTime>,
) -> std::io::Result<std::time::SystemTime> {
    use std::time::{Duration, UNIX_EPOCH};
    let seconds = |time: std::time::SystemTime| time.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let (start, mut step) = match rule {
        Stamp::Now => (floor, Duration::from_nanos(1)),
        Stamp::FreshSecond => (UNIX_EPOCH + Duration::from_secs(seconds(floor)), Duration::from_secs(1)),
    };
    loop {
        let kept = set(start + step)?;
        let later = match rule {
            Stamp::Now => kept > floor,
            Stamp::FreshSecond => seconds(kept) > seconds(floor),
        };
        if later {
            return Ok(kept);
        }
        if step > Duration::from_secs(60) {
            return Err(std::io::Error::other("the file system keeps no later modification time"));
        }
        step *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    fn modified(path: &Path) -> SystemTime {
        fs::metadata(path).unwrap().modified().unwrap()
    }

    fn seconds(time: SystemTime) -> u64 {
        time.duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    }

    fn repository_with(dir: &Path, file: &str, text: &str) {
        fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q"]);
        fs::write(dir.join(file), text).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "x"]);
    }

    #[test]
    fn a_submodule_is_copied_as_checked_out_and_one_whose_path_leaves_the_repository_is_not() {
        let holder = tempfile::tempdir().unwrap();
        let (root, dest) = (holder.path().join("a/repo"), holder.path().join("a/copy"));
        repository_with(&holder.path().join("vendor"), "helper.py", "H = 1\n");
        repository_with(&root, "README", "x\n");
        git(&root, &["submodule", "add", "-q", holder.path().join("vendor").to_str().unwrap(), "vendor"]);
        git(&root, &["commit", "-q", "-m", "the submodule"]);
        let repo = Repository::open(&root).unwrap();
        materialize(&repo, State::WorkTree, &dest).unwrap();
        assert_eq!(fs::read_to_string(dest.join("vendor/helper.py")).unwrap(), "H = 1\n");
        assert!(!dest.join("vendor/.git").exists(), "the copy holds no way into the submodule's repository");

        // A `.gitmodules` naming a repository beside the checkout, by a path out of it (libgit2
        // lists no such submodule; the copy would not follow it either).
        repository_with(&holder.path().join("a/escape"), "payload.py", "P = 1\n");
        fs::write(root.join(".gitmodules"), "[submodule \"x\"]\n\tpath = ../escape\n\turl = ../escape\n")
            .unwrap();
        let repo = Repository::open(&root).unwrap();
        let elsewhere = holder.path().join("b/copy");
        materialize(&repo, State::WorkTree, &elsewhere).unwrap();
        assert!(!holder.path().join("b/escape").exists(), "nothing is written beside the copy");
    }

    #[test]
    fn writes_within_one_second_get_strictly_increasing_whole_seconds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("module.py");
        let before = SystemTime::now();
        replace_file(&path, "x = 1\n", Stamp::FreshSecond).unwrap();
        let first = modified(&path);
        replace_file(&path, "x = 2\n", Stamp::FreshSecond).unwrap();
        let second = modified(&path);
        replace_file(&path, "x = 1\n", Stamp::FreshSecond).unwrap();
        let third = modified(&path);
        assert!(seconds(first) > seconds(before), "{before:?} {first:?}");
        assert!(seconds(second) > seconds(first), "{first:?} {second:?}");
        assert!(seconds(third) > seconds(second), "{second:?} {third:?}");
    }

    #[test]
    fn each_write_is_stamped_later_than_its_moment_and_the_write_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lib.rs");
        // A build that starts just before the write stamps its dep-info with this moment.
        let build_started = SystemTime::now();
        replace_file(&path, "fn a() {}\n", Stamp::Now).unwrap();
        let first = modified(&path);
        replace_file(&path, "fn b() {}\n", Stamp::Now).unwrap();
        let second = modified(&path);
        assert!(first > build_started, "{build_started:?} {first:?}");
        assert!(second > first, "{first:?} {second:?}");
        // Barely later: a build that starts now finds the file older than its start.
        assert!(second < SystemTime::now() + Duration::from_millis(100), "{second:?}");
    }

    /// A file system that keeps times truncated to `granularity` (whole seconds, FAT's even
    /// seconds), as `set` sees it.
    fn coarse(granularity: Duration) -> impl FnMut(SystemTime) -> std::io::Result<SystemTime> {
        move |wanted| {
            let since = wanted.duration_since(UNIX_EPOCH).unwrap().as_nanos();
            let kept = since - since % granularity.as_nanos();
            Ok(UNIX_EPOCH + Duration::from_nanos(kept as u64))
        }
    }

    #[test]
    fn on_a_file_system_with_coarse_times_the_kept_stamp_is_still_later() {
        let at = |seconds: f64| UNIX_EPOCH + Duration::from_secs_f64(seconds);
        for granularity in [Duration::from_secs(1), Duration::from_secs(2)] {
            for rule in [Stamp::Now, Stamp::FreshSecond] {
                // A build started at 100.2 s (kept as 100 s) and ended; the mutant is written at
                // 100.9 s, within the same second.
                let mutant = later_than(at(100.9), rule, coarse(granularity)).unwrap();
                let build = coarse(granularity)(at(100.2)).unwrap();
                assert!(mutant > build, "{granularity:?} {rule:?}: the old build is stale");
                assert!(mutant <= at(100.9) + granularity * 2, "{granularity:?} {rule:?}: not far ahead");
                // The original written back at once: later again than the mutant's stamp (its
                // build started at or after that stamp, or is rebuilt anyway).
                let original = later_than(mutant.max(at(101.0)), rule, coarse(granularity)).unwrap();
                assert!(original > mutant, "{granularity:?} {rule:?}");
                assert!(
                    seconds(original) > seconds(mutant),
                    "{granularity:?} {rule:?}: whole seconds differ"
                );
            }
        }
    }
}
