//! Building and testing in a worker's copy: its own target directory, seeded from the user's build or the first worker's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::options::TestTool;
use crate::run::process::{Exit, Finished, TestCommand};

/// Starts the first worker's target directory from the user's own debug build, when there is
/// one, so that the baseline compiles only what changed: the dependencies' artifacts carry over
/// (their sources live in the same registry), while the workspace's crates are rebuilt for the
/// copy's paths. The user's directory is only read. `incremental/` is left out: it only serves
/// the workspace's crates, which are rebuilt anyway.
pub fn seed_from_user(user_target: &Path, target: &Path) -> Result<bool> {
    let debug = user_target.join("debug");
    let parts: Vec<PathBuf> = ["deps", "build", ".fingerprint"]
        .iter()
        .map(|part| debug.join(part))
        .filter(|p| p.is_dir())
        .collect();
    if parts.len() < 3 {
        return Ok(false);
    }
    std::fs::create_dir_all(target.join("debug"))?;
    for part in parts {
        seed_target(&part, &target.join("debug"))?;
    }
    Ok(true)
}

/// How one worker builds and tests: its copy, its own target directory, the tool.
#[derive(Debug, Clone)]
pub struct Cargo {
    pub root: PathBuf,
    pub target: PathBuf,
    pub tool: TestTool,
    /// `--test-cmd`: run this instead of cargo's tests, once the mutant builds.
    pub command: Option<String>,
    pub build_timeout: Duration,
    /// The workspace's packages, to name each by a spec no other package matches.
    pub packages: Vec<super::workspace::Package>,
    /// `--features=..`, `--all-features`, `--no-default-features` as asked.
    pub features: Vec<String>,
    /// Whether rustc keeps incremental state: not for a target directory built once (the
    /// schema's), where writing it costs about a third of a fresh build and nothing reads it.
    pub incremental: bool,
}

impl Cargo {
    /// `-p SPEC` for each of `packages` (by name), then the features asked for. The spec holds
    /// the package's path in this copy, its name and version, since a bare name is ambiguous
    /// when a dependency pulls the same crate from the registry (`criterion` → `serde_json` →
    /// `itoa`, for `itoa`).
    pub fn selection_args(&self, packages: &[impl AsRef<str>]) -> Vec<String> {
        let specs = packages.iter().flat_map(|name| ["-p".to_string(), self.spec(name.as_ref())]);
        specs.chain(self.features.iter().cloned()).collect()
    }

    /// `cargo test --doc` of the package `name`.
    pub fn doc_tests(&self, name: &str) -> TestCommand {
        let mut args = vec!["test".to_string(), "--doc".to_string()];
        args.extend(self.selection_args(&[name]));
        self.invocation(&args)
    }

    fn spec(&self, name: &str) -> String {
        let Some(package) = self.packages.iter().find(|package| package.name == name) else {
            return name.to_string();
        };
        // Resolved as cargo sees it from its working directory (a TMPDIR behind a symbolic link
        // too); no trailing `/` for the package at the root: cargo matches the path exactly.
        let root = self.root.canonicalize().unwrap_or_else(|_| self.root.clone());
        let dir = if package.dir.as_os_str().is_empty() { root } else { root.join(&package.dir) };
        format!("path+file://{}#{}@{}", dir.display(), package.name, package.version)
    }

    /// `cargo` with `args`, in the copy, with its own target directory.
    pub fn invocation(&self, args: &[impl AsRef<str>]) -> TestCommand {
        TestCommand {
            program: PathBuf::from("cargo"),
            args: args.iter().map(|arg| arg.as_ref().to_string()).collect(),
            dir: self.root.clone(),
            env: [
                // Never the user's target directory, whatever their cargo configuration says.
                ("CARGO_TARGET_DIR".to_string(), self.target.display().to_string()),
                ("CARGO_TERM_COLOR".to_string(), "never".to_string()),
            ]
            .into_iter()
            .chain(unless_set("CARGO_INCREMENTAL", "0").filter(|_| !self.incremental))
            .chain(quiet_panics())
            .collect(),
        }
    }

    /// Builds the tests of `packages`; `Exit::Unviable` when they do not build.
    pub fn build(&self, packages: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let specs = self.selection_args(packages);
        let mut args = vec!["test", "--no-run"];
        args.extend(specs.iter().map(String::as_str));
        let mut run = self.invocation(&args).run_build(timeout, log)?;
        if let Exit::Code(code) = run.exit {
            if code != 0 {
                run.exit = Exit::Unviable;
            }
        }
        Ok(run)
    }

    /// Runs the (built) tests of `packages`.
    pub fn test(&self, packages: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let with_packages = |args: &[&str]| -> Vec<String> {
            args.iter().map(|arg| arg.to_string()).chain(self.selection_args(packages)).collect()
        };
        match (&self.command, self.tool) {
            (Some(command), _) => TestCommand {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".to_string(), command.clone()],
                ..self.invocation(&[] as &[&str])
            }
            .run(timeout, log),
            (None, TestTool::Cargo) => self.invocation(&with_packages(&["test"])).run(timeout, log),
            (None, TestTool::Nextest) => {
                self.invocation(&with_packages(&["nextest", "run", "--no-fail-fast"])).run(timeout, log)
            }
        }
    }
}

/// `RUST_BACKTRACE=0` for the tests, in the baseline as in the mutants: with backtraces on, a
/// failing test spends about 90 ms capturing one for its panic message, which nobody reads, for
/// every killed mutant. What `std::backtrace::Backtrace::capture` does stays as the user had it
/// (it reads `RUST_LIB_BACKTRACE` first), so a test that inspects backtraces sees no change.
pub fn quiet_panics() -> Vec<(String, String)> {
    let mut env = vec![("RUST_BACKTRACE".to_string(), "0".to_string())];
    if let (Some(theirs), None) = (std::env::var_os("RUST_BACKTRACE"), std::env::var_os("RUST_LIB_BACKTRACE"))
    {
        env.push(("RUST_LIB_BACKTRACE".to_string(), theirs.to_string_lossy().into_owned()));
    }
    env
}

/// `name=value`, unless the user's environment sets `name`: theirs reaches the tests as it is.
fn unless_set(name: &str, value: &str) -> Option<(String, String)> {
    std::env::var_os(name).is_none().then(|| (name.to_string(), value.to_string()))
}

/// A worker's own target directory, seeded from the first worker's so that no worker builds the
/// dependencies again (copy-on-write where the filesystem allows).
pub fn seed_target(from: &Path, to: &Path) -> Result<()> {
    let status = Command::new("cp")
        .args(["-a", "--reflink=auto"])
        .arg(from)
        .arg(to)
        .status()
        .context("could not run cp to copy the build")?;
    if !status.success() {
        bail!("could not copy the build directory {} for a worker", from.display());
    }
    Ok(())
}

/// Fails early when `--test-tool nextest` is asked for and cargo-nextest is not installed.
pub fn require_tool(tool: TestTool) -> Result<()> {
    if tool == TestTool::Nextest {
        let installed =
            Command::new("cargo").args(["nextest", "--version"]).output().is_ok_and(|o| o.status.success());
        if !installed {
            bail!("--test-tool nextest needs cargo-nextest: install it with `cargo install cargo-nextest`, or leave the option out");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_build_seeds_only_when_it_has_deps_build_and_fingerprints() {
        let user = tempfile::tempdir().unwrap();
        let ours = tempfile::tempdir().unwrap();
        for part in ["deps", "build"] {
            std::fs::create_dir_all(user.path().join("debug").join(part)).unwrap();
        }
        std::fs::write(user.path().join("debug/deps/libx.rlib"), "artifact").unwrap();
        assert!(!seed_from_user(user.path(), &ours.path().join("t")).unwrap(), "no .fingerprint: no seed");
        assert!(!ours.path().join("t").exists());

        std::fs::create_dir_all(user.path().join("debug/.fingerprint/x")).unwrap();
        std::fs::create_dir_all(user.path().join("debug/incremental/x")).unwrap();
        assert!(seed_from_user(user.path(), &ours.path().join("t")).unwrap());
        let seeded = ours.path().join("t/debug");
        assert_eq!(std::fs::read_to_string(seeded.join("deps/libx.rlib")).unwrap(), "artifact");
        assert!(seeded.join(".fingerprint/x").is_dir() && seeded.join("build").is_dir());
        assert!(!seeded.join("incremental").exists(), "incremental/ is left out");
    }
}
