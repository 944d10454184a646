//! The run's one temporary directory (copies, logs, helpers), made outside every git repository, watched by the run's watchdog and marked with its owner, so that neither a killed run nor a later one leaves it behind.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tempfile::TempDir;

use crate::watchdog::process_identity;

const PREFIX: &str = "mutdelta-run-";
const OWNER_FILE: &str = "owner";

/// A temporary directory removed on drop (also on Ctrl-C and SIGTERM, which unwind to it), and
/// by the watchdog if mutdelta is killed.
pub struct Scratch {
    dir: TempDir,
}

impl Scratch {
    pub fn create() -> Result<Scratch> {
        // The owner is named in the directory's name, made by the one mkdir, so that a run
        // killed before it wrote the owner file leaves no directory a next run cannot claim.
        let owner = process_identity(std::process::id()).unwrap_or_default();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", owner.replace(' ', "-")))
            .tempdir_in(&location()?.dir)
            .context("could not create a temporary directory")?;
        fs::write(dir.path().join(OWNER_FILE), &owner)?;
        crate::watchdog::watch_dir(dir.path())?;
        Ok(Scratch { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A new subdirectory.
    pub fn subdir(&self, name: &str) -> Result<PathBuf> {
        let path = self.dir.path().join(name);
        fs::create_dir_all(&path)?;
        Ok(path)
    }
}

/// Where the run's temporary directories are made.
pub struct Location {
    pub dir: PathBuf,
    /// Why there, when TMPDIR was passed over.
    pub note: Option<String>,
}

/// Where temporary directories go when TMPDIR lies in a git repository.
const ELSEWHERE: &[&str] = &["/tmp", "/var/tmp"];

/// The run's location, chosen once (`choose`): TMPDIR, unless it lies in a git repository.
pub fn location() -> Result<&'static Location> {
    static CHOSEN: std::sync::OnceLock<Result<Location, String>> = std::sync::OnceLock::new();
    let elsewhere: Vec<PathBuf> = ELSEWHERE.iter().map(PathBuf::from).collect();
    let chosen = CHOSEN.get_or_init(|| choose(&std::env::temp_dir(), &elsewhere));
    chosen.as_ref().map_err(|why| anyhow::anyhow!("{why}"))
}

/// `temp_dir`, unless it lies in a git repository: git run from a copy there by a test that
/// clears its environment (and with it `GIT_CEILING_DIRECTORIES`, `seal`'s wall) or starts
/// above the copy would climb into that repository, the user's checkout perhaps, and stash,
/// reset or commit there. Then the first of `elsewhere` that is a directory in no repository,
/// with a note saying so; an error when there is none.
fn choose(temp_dir: &Path, elsewhere: &[PathBuf]) -> Result<Location, String> {
    let Some(repository) = repository_holding(temp_dir) else {
        return Ok(Location { dir: temp_dir.to_path_buf(), note: None });
    };
    let why = format!(
        "the temporary directory {} lies in the git repository {}, which git run by a test from a copy there could reach",
        temp_dir.display(),
        repository.display()
    );
    match elsewhere.iter().find(|dir| dir.is_dir() && repository_holding(dir).is_none()) {
        Some(dir) => Ok(Location {
            dir: dir.clone(),
            note: Some(format!("{why}: the copies were made in {} instead", dir.display())),
        }),
        None => Err(format!(
            "{why}, and so do {}: set TMPDIR to a directory outside every git repository",
            elsewhere.iter().map(|dir| dir.display().to_string()).collect::<Vec<_>>().join(" and ")
        )),
    }
}

/// The nearest directory at or above `dir` (its links resolved) that holds `.git`: a
/// repository, or a linked worktree or submodule's file naming one.
fn repository_holding(dir: &Path) -> Option<PathBuf> {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors().find(|above| fs::symlink_metadata(above.join(".git")).is_ok()).map(Path::to_path_buf)
}

/// How many times a scratch directory's removal is tried before the watchdog is left to it.
const REMOVAL_TRIES: u32 = 5;

impl Drop for Scratch {
    fn drop(&mut self) {
        // Removed here (the TempDir finds it gone), then no longer the watchdog's to remove. A
        // child that was just killed may still be writing into it (its bytecode) while it goes:
        // the removal is tried again a few times, and if it still fails the watchdog, which
        // kills whatever works in the directory first, removes it when mutdelta exits.
        let path = self.dir.path();
        for attempt in 1..=REMOVAL_TRIES {
            if fs::remove_dir_all(path).is_ok() || !path.exists() {
                crate::watchdog::forget_dir(path);
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20 * u64::from(attempt)));
        }
    }
}

/// Gives a cargo `command` (which runs in a copy inside a scratch directory) that directory's
/// `tmp/` as its TMPDIR, unless it sets one: what compilers and linkers leave in a temporary
/// directory goes with the scratch directory, also when a killed run leaves them half done.
/// The project's own tests keep the user's TMPDIR: where they keep files is theirs to decide.
pub fn keep_temporary_files_inside(command: &mut std::process::Command) {
    let is_cargo = Path::new(command.get_program()).file_name().is_some_and(|name| name == "cargo");
    if !is_cargo || command.get_envs().any(|(name, _)| name == "TMPDIR") {
        return;
    }
    let Some(dir) = command.get_current_dir().map(Path::to_path_buf) else { return };
    if let Some(scratch) = enclosing(&dir) {
        let tmp = scratch.join("tmp");
        if fs::create_dir_all(&tmp).is_ok() {
            command.env("TMPDIR", tmp);
        }
    }
}

/// The scratch directory that `dir` lies in, if any.
pub fn enclosing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|dir| {
            dir.file_name().is_some_and(|name| name.to_string_lossy().starts_with(PREFIX))
                && dir.join(OWNER_FILE).is_file()
        })
        .map(Path::to_path_buf)
}

fn owner_is_alive(marker: &str) -> bool {
    let Some(pid) = marker.split_whitespace().next().and_then(|pid| pid.parse::<u32>().ok()) else {
        return false;
    };
    process_identity(pid).as_deref() == Some(marker.trim())
}

/// The owner ("pid start-time") a scratch directory's name gives, as `Scratch::create` named it.
fn owner_in_name(name: &str) -> Option<String> {
    let mut parts = name.strip_prefix(PREFIX)?.splitn(3, '-');
    let (pid, start) = (parts.next()?, parts.next()?);
    let numeric = |part: &str| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
    (numeric(pid) && numeric(start) && parts.next().is_some()).then(|| format!("{pid} {start}"))
}

/// Removes the scratch directories of runs that were killed before they could clean up, and
/// kills the test processes still working in them. Returns how many directories it removed.
pub fn sweep_stale() -> usize {
    sweep_stale_in(&location().map_or_else(|_| std::env::temp_dir(), |location| location.dir.clone()))
}

fn sweep_stale_in(temp_dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(temp_dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(PREFIX) {
            continue;
        }
        let dir = entry.path();
        let marker = owner_in_name(&name).or_else(|| fs::read_to_string(dir.join(OWNER_FILE)).ok());
        let Some(marker) = marker else { continue };
        if owner_is_alive(&marker) {
            continue;
        }
        // The dead run's mark reaches the forked children that work elsewhere, and a child
        // forked while an earlier pass killed its parent is found by the next pass.
        if crate::watchdog::clear_away(marker.trim(), &dir) {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_still_written_into_while_it_goes_is_removed_all_the_same() {
        // A child killed a moment ago may still write a file or two while the directory goes.
        let scratch = Scratch::create().unwrap();
        let path = scratch.path().to_path_buf();
        let cache = scratch.subdir("copy-0/__pycache__").unwrap();
        // It writes for 100 ms from now, as Python writes bytecode: making its `__pycache__`
        // (never the directories above it) and a file in it.
        let until = std::time::Instant::now() + std::time::Duration::from_millis(100);
        let writer = std::thread::spawn(move || {
            let mut count = 0;
            while std::time::Instant::now() < until {
                let _ = fs::create_dir(&cache);
                let _ = fs::write(cache.join(format!("m{count}.pyc")), b"bytecode");
                count += 1;
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(5));
        drop(scratch);
        writer.join().unwrap();
        assert!(!path.exists(), "{} is left behind", path.display());
    }

    #[test]
    fn cargo_in_a_copy_gets_the_scratch_directorys_tmp_and_others_are_left_alone() {
        let scratch = Scratch::create().unwrap();
        let copy = scratch.subdir("copy-1/pkg").unwrap();
        let tmpdir = |command: &std::process::Command| {
            command
                .get_envs()
                .find(|(name, _)| *name == "TMPDIR")
                .and_then(|(_, value)| value.map(PathBuf::from))
        };
        let mut inside = std::process::Command::new("cargo");
        inside.current_dir(&copy);
        keep_temporary_files_inside(&mut inside);
        assert_eq!(tmpdir(&inside), Some(scratch.path().join("tmp")));
        assert!(scratch.path().join("tmp").is_dir());
        let mut tests = std::process::Command::new("python3");
        tests.current_dir(&copy);
        keep_temporary_files_inside(&mut tests);
        assert_eq!(tmpdir(&tests), None, "the project's tests keep the user's TMPDIR");
        let mut chosen = std::process::Command::new("cargo");
        chosen.current_dir(&copy).env("TMPDIR", "/elsewhere");
        keep_temporary_files_inside(&mut chosen);
        assert_eq!(tmpdir(&chosen), Some(PathBuf::from("/elsewhere")));
        let mut outside = std::process::Command::new("cargo");
        outside.current_dir(std::env::temp_dir());
        keep_temporary_files_inside(&mut outside);
        assert_eq!(tmpdir(&outside), None);
    }

    #[test]
    fn a_run_killed_before_it_wrote_its_owner_file_is_swept_and_a_live_runs_directory_is_kept() {
        let temp = tempfile::tempdir().unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead_owner = process_identity(gone.id()).unwrap();
        gone.wait().unwrap();
        // As `Scratch::create` names it, killed between the mkdir and the owner file's write.
        let dead = temp.path().join(format!("{PREFIX}{}-AbC123", dead_owner.replace(' ', "-")));
        fs::create_dir_all(dead.join("copy-0")).unwrap();
        let me = process_identity(std::process::id()).unwrap();
        let live = temp.path().join(format!("{PREFIX}{}-XyZ789", me.replace(' ', "-")));
        fs::create_dir(&live).unwrap();
        // An older run's name holds no owner: its owner file tells.
        let older = temp.path().join(format!("{PREFIX}q1w2e3"));
        fs::create_dir(&older).unwrap();
        fs::write(older.join(OWNER_FILE), &dead_owner).unwrap();
        let unclaimed = temp.path().join(format!("{PREFIX}r4t5y6"));
        fs::create_dir(&unclaimed).unwrap();

        assert_eq!(sweep_stale_in(temp.path()), 2);
        assert!(!dead.exists() && !older.exists());
        assert!(live.is_dir(), "a live run's directory, owner file or not, is its own");
        assert!(unclaimed.is_dir(), "a directory no owner claims is left alone");
    }

    #[test]
    fn the_owner_is_read_from_a_scratch_directorys_name() {
        let scratch = Scratch::create().unwrap();
        let name = scratch.path().file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(owner_in_name(&name), process_identity(std::process::id()));
        assert_eq!(owner_in_name(&format!("{PREFIX}12-34-Ab1")).as_deref(), Some("12 34"));
        assert_eq!(owner_in_name(&format!("{PREFIX}12-Ab1")), None);
        assert_eq!(owner_in_name(&format!("{PREFIX}12-34")), None, "the random part is missing");
        assert_eq!(owner_in_name(&format!("{PREFIX}-34-Ab1")), None);
        assert_eq!(owner_in_name("other-12-34-Ab1"), None);
    }

    #[test]
    fn this_process_is_a_live_owner_and_a_dead_pid_is_not() {
        let me = process_identity(std::process::id()).unwrap();
        assert!(owner_is_alive(&me));
        let reused = format!("{} 1", std::process::id());
        assert!(!owner_is_alive(&reused), "same pid, other start time");
        assert!(!owner_is_alive("not a marker"));
    }

    #[test]
    fn a_temporary_directory_in_a_repository_is_passed_over_for_one_in_none_and_said() {
        let repository = tempfile::tempdir().unwrap();
        std::fs::create_dir(repository.path().join(".git")).unwrap();
        let inside = repository.path().join("tmp/deeper");
        std::fs::create_dir_all(&inside).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let missing = outside.path().join("missing");
        let elsewhere = [missing, inside.clone(), outside.path().to_path_buf()];
        let chosen = choose(&inside, &elsewhere).unwrap();
        assert_eq!(chosen.dir, outside.path(), "neither a missing directory nor one in the repository");
        let note = chosen.note.unwrap();
        assert!(
            note.contains(&format!("lies in the git repository {}", repository.path().display())),
            "{note}"
        );
        assert!(
            note.ends_with(&format!("the copies were made in {} instead", outside.path().display())),
            "{note}"
        );

        let plain = choose(outside.path(), &elsewhere).unwrap();
        assert_eq!(
            (plain.dir.as_path(), plain.note),
            (outside.path(), None),
            "a directory in no repository is kept"
        );
    }

    #[test]
    fn a_worktrees_git_file_marks_a_repository_and_with_nowhere_else_the_run_is_refused() {
        let worktree = tempfile::tempdir().unwrap();
        std::fs::write(worktree.path().join(".git"), "gitdir: /elsewhere/.git/worktrees/w\n").unwrap();
        let inside = worktree.path().join("tmp");
        std::fs::create_dir(&inside).unwrap();
        let err = choose(&inside, &[worktree.path().to_path_buf()]).err().unwrap();
        assert!(err.contains("set TMPDIR to a directory outside every git repository"), "{err}");
    }
}
