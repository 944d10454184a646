//! The environment of every process started in a copy: git finds no repository above the copy, none of the user's `GIT_` variables reach it, and `PWD` is its real working directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Seals `command` from the checkout when it runs in a copy inside a scratch directory (its
/// working directory says so); any other command is left as it is.
///
/// A copy has no `.git` of its own, so git run by a test walks up from it: with the temporary
/// directory inside the repository being checked (`TMPDIR=$PWD/.tmp`), it would find the
/// user's repository and stash, reset or commit there. `GIT_CEILING_DIRECTORIES` names the
/// scratch directory and every directory above it, so the walk stops at the copy. The user's
/// `GIT_` variables (a hook's `GIT_INDEX_FILE`, `GIT_DIR`, `GIT_WORK_TREE`, ...) name the
/// checkout's repository and are left out. `PWD` and `OLDPWD` would name the directory
/// mutdelta was started in.
pub fn seal(command: &mut Command) {
    let Some(dir) = command.get_current_dir().map(Path::to_path_buf) else { return };
    let Some(scratch) = crate::scratch::enclosing(&dir) else { return };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    let set: Vec<OsString> = command
        .get_envs()
        .filter(|(name, value)| value.is_some() && name.to_string_lossy().starts_with("GIT_"))
        .map(|(name, _)| name.to_os_string())
        .collect();
    for name in set {
        command.env_remove(name);
    }
    command.env("GIT_CEILING_DIRECTORIES", ceilings(&scratch)).env("PWD", &dir).env_remove("OLDPWD");
}

/// `scratch` and every directory above it but the root, as a `GIT_CEILING_DIRECTORIES` list:
/// both as given and with symbolic links resolved, which is how git compares them.
fn ceilings(scratch: &Path) -> OsString {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let absolute = std::path::absolute(scratch).unwrap_or_else(|_| scratch.to_path_buf());
    let resolved = scratch.canonicalize().unwrap_or_else(|_| absolute.clone());
    for start in [&absolute, &resolved] {
        for dir in start.ancestors().filter(|dir| dir.parent().is_some()) {
            if !dirs.iter().any(|known| known == dir) {
                dirs.push(dir.to_path_buf());
            }
        }
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(command: &Command, name: &str) -> Option<Option<String>> {
        command
            .get_envs()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.map(|value| value.to_string_lossy().into_owned()))
    }

    #[test]
    fn a_command_in_a_copy_gets_ceilings_up_from_its_scratch_directory_and_its_own_pwd() {
        let scratch = crate::scratch::Scratch::create().unwrap();
        let copy = scratch.subdir("copy-1").unwrap();
        let mut command = Command::new("git");
        command.current_dir(&copy).env("GIT_INDEX_FILE", "/elsewhere/index");
        seal(&mut command);
        let ceilings = env_of(&command, "GIT_CEILING_DIRECTORIES").flatten().unwrap();
        let listed: Vec<PathBuf> = std::env::split_paths(&ceilings).collect();
        assert!(listed.contains(&scratch.path().to_path_buf()), "{listed:?}");
        assert!(listed.contains(&scratch.path().parent().unwrap().to_path_buf()), "{listed:?}");
        assert!(!listed.contains(&copy), "git may still find a repository of the copy's own");
        assert!(!listed.contains(&PathBuf::from("/")));
        assert_eq!(env_of(&command, "PWD"), Some(Some(copy.display().to_string())));
        assert_eq!(env_of(&command, "OLDPWD"), Some(None), "removed");
        assert_eq!(env_of(&command, "GIT_INDEX_FILE"), Some(None), "removed");
    }

    #[test]
    fn a_command_outside_any_copy_is_left_as_it_is() {
        let elsewhere = tempfile::tempdir().unwrap();
        let mut command = Command::new("git");
        command.current_dir(elsewhere.path()).env("GIT_DIR", "/x/.git");
        seal(&mut command);
        assert_eq!(env_of(&command, "GIT_DIR"), Some(Some("/x/.git".to_string())));
        assert_eq!(env_of(&command, "GIT_CEILING_DIRECTORIES"), None);
    }
}
