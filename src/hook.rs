//! `mutdelta install-hook`: the git pre-commit hook that runs `mutdelta check --staged`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};

/// The line that marks a hook as mutdelta's: replacing one needs no backup.
const MARKER: &str = "# mutdelta pre-commit hook, written by `mutdelta install-hook`.";

/// A hook written: where, what it runs, and where the hook it replaced was kept.
#[derive(Debug)]
pub struct Installed {
    pub path: PathBuf,
    pub command: String,
    pub backup: Option<PathBuf>,
}

/// Writes the pre-commit hook of the repository that contains `directory`; it runs this binary
/// as `check --staged` with `check_options`. An existing hook is replaced only with `force`.
pub fn install(directory: &Path, force: bool, check_options: &[String]) -> Result<Installed> {
    let args = crate::cli::parse_check_options(check_options).map_err(|err| {
        anyhow!(
            "the options after -- must be options of `mutdelta check` ({err}): see `mutdelta check --help`"
        )
    })?;
    let change = &args.change;
    if change.staged || change.commit.is_some() || change.base.is_some() || change.lines.is_some() {
        bail!("the hook checks the staged change: leave --staged, --commit, --base and --lines out of the options after --");
    }
    let repo = crate::lines::open_repository(directory)?;
    let top = crate::lines::workdir(&repo);
    let hooks = hooks_directory(top)?;
    let path = hooks.join("pre-commit");
    let existing = std::fs::symlink_metadata(&path).is_ok();
    if existing && !force {
        bail!("{} already exists: pass --force to replace it", path.display());
    }
    let backup = if existing && !is_ours(&path) {
        let backup = hooks.join("pre-commit.bak");
        if std::fs::symlink_metadata(&backup).is_ok() {
            bail!(
                "{} already exists, so the hook --force replaces cannot be kept there: move it away first",
                backup.display()
            );
        }
        std::fs::rename(&path, &backup)
            .with_context(|| format!("could not keep the old hook as {}", backup.display()))?;
        Some(backup)
    } else {
        None
    };
    let binary = std::env::current_exe().context("could not find the running mutdelta binary")?;
    let binary = binary
        .to_str()
        .ok_or_else(|| anyhow!("{} is not a UTF-8 path: a hook cannot name it", binary.display()))?;
    let command = ["check", "--staged"]
        .into_iter()
        .chain(check_options.iter().map(String::as_str))
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::create_dir_all(&hooks).with_context(|| format!("could not create {}", hooks.display()))?;
    if existing && backup.is_none() {
        std::fs::remove_file(&path).with_context(|| format!("could not replace {}", path.display()))?;
    }
    std::fs::write(&path, script(binary, &command))
        .with_context(|| format!("could not write {}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("could not make {} executable", path.display()))?;
    Ok(Installed { path, command: format!("mutdelta {command}"), backup })
}

/// The hooks directory git runs hooks from (`core.hooksPath` respected, a linked worktree's
/// hooks in the common directory), as `git rev-parse --git-path hooks` names it.
fn hooks_directory(top: &Path) -> Result<PathBuf> {
    let output = Command::new("git")
        .args(["rev-parse", "--git-path", "hooks"])
        .current_dir(top)
        .output()
        .context("could not run git, which finds the hooks directory: is git installed?")?;
    if !output.status.success() {
        bail!(
            "`git rev-parse --git-path hooks` failed in {}: {}",
            top.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let text = String::from_utf8(output.stdout).context("git named a hooks directory that is not UTF-8")?;
    Ok(top.join(text.trim_end_matches(['\n', '\r'])))
}

fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.lines().any(|line| line == MARKER))
}

/// The hook: this binary if it is still there (git runs hooks with whatever PATH the commit
/// was started with, which may lack a virtual environment's `bin`), else `mutdelta` on PATH.
fn script(binary: &str, command: &str) -> String {
    format!(
        "#!/bin/sh\n\
         {MARKER}\n\
         # It mutation-tests the staged change: a new line with a surviving mutant (exit 1) or a\n\
         # check that cannot run (exit 2) stops the commit. `git commit --no-verify` skips it.\n\
         mutdelta={}\n\
         if [ ! -x \"$mutdelta\" ]; then\n    mutdelta=mutdelta\nfi\n\
         exec \"$mutdelta\" {command}\n",
        quote(binary)
    )
}

/// `word` quoted for the POSIX shell.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn words_the_shell_would_split_or_expand_are_quoted() {
        assert_eq!(quote("--python"), "--python");
        assert_eq!(quote("/a/b c"), "'/a/b c'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote(""), "''");
    }
}
