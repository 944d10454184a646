//! Cargo projects: the package that owns each mutated file, one baseline build shared by every worker, and a build-then-test executor per mutant.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;

use super::baseline::{last_line, BASELINE_LIMIT};
use super::executor::Executor;
use super::process::{Exit, Finished, TestCommand};
use super::Interrupted;
use crate::options::{TestRunner, TestTool};

/// A package of the cargo workspace, as `cargo metadata` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    /// The directory of its Cargo.toml, relative to the copy's root.
    pub dir: PathBuf,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetadataPackage>,
    target_directory: PathBuf,
}

#[derive(Deserialize)]
struct MetadataPackage {
    name: String,
    manifest_path: PathBuf,
}

/// What a check needs to know of the cargo workspace.
pub struct Workspace {
    pub packages: Vec<Package>,
    /// The user's target directory, as their checkout and configuration place it.
    pub user_target: PathBuf,
}

/// The workspace's own packages, found from the copy at `root` of the checkout at `repo_root`.
pub fn workspace(root: &Path, repo_root: &Path) -> Result<Workspace> {
    let output = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("could not run `cargo metadata`: is cargo installed and on PATH?")?;
    if !output.status.success() {
        bail!(
            "`cargo metadata` failed, so the Rust files' packages are unknown: {}",
            last_line(&String::from_utf8_lossy(&output.stderr))
        );
    }
    let metadata: Metadata =
        serde_json::from_slice(&output.stdout).context("`cargo metadata` printed something unexpected")?;
    let real_root = root.canonicalize()?;
    let packages = metadata
        .packages
        .into_iter()
        .filter_map(|package| {
            let dir = package.manifest_path.parent()?.canonicalize().ok()?;
            let dir = dir.strip_prefix(&real_root).ok()?.to_path_buf();
            Some(Package { name: package.name, dir })
        })
        .collect();
    let user_target = match std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => repo_root.join(dir),
        None => match metadata.target_directory.strip_prefix(&real_root) {
            Ok(inside) => repo_root.join(inside),
            Err(_) => metadata.target_directory,
        },
    };
    Ok(Workspace { packages, user_target })
}

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

/// The package whose directory holds `file` most closely.
pub fn owner<'a>(packages: &'a [Package], file: &Path) -> Option<&'a Package> {
    packages
        .iter()
        .filter(|package| file.starts_with(&package.dir))
        .max_by_key(|package| package.dir.components().count())
}

/// How one worker builds and tests: its copy, its own target directory, the tool.
pub struct Cargo {
    pub root: PathBuf,
    pub target: PathBuf,
    pub tool: TestTool,
    /// `--test-cmd`: run this instead of cargo's tests, once the mutant builds.
    pub command: Option<String>,
    pub build_timeout: Duration,
}

impl Cargo {
    fn cargo(&self, args: &[&str]) -> TestCommand {
        TestCommand {
            program: PathBuf::from("cargo"),
            args: args.iter().map(|arg| arg.to_string()).collect(),
            dir: self.root.clone(),
            env: vec![
                // Never the user's target directory, whatever their cargo configuration says.
                ("CARGO_TARGET_DIR".to_string(), self.target.display().to_string()),
                ("CARGO_TERM_COLOR".to_string(), "never".to_string()),
            ],
        }
    }

    /// Builds the tests of `packages`; `Exit::Unviable` when they do not build.
    pub fn build(&self, packages: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let mut args = vec!["test", "--no-run"];
        for package in packages {
            args.extend(["-p", package]);
        }
        let mut run = self.cargo(&args).run(timeout, log)?;
        if let Exit::Code(code) = run.exit {
            if code != 0 {
                run.exit = Exit::Unviable;
            }
        }
        Ok(run)
    }

    /// Runs the (built) tests of `package`.
    pub fn test(&self, package: &str, timeout: Duration, log: &Path) -> Result<Finished> {
        match (&self.command, self.tool) {
            (Some(command), _) => TestCommand {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".to_string(), command.clone()],
                ..self.cargo(&[])
            }
            .run(timeout, log),
            (None, TestTool::Cargo) => self.cargo(&["test", "-p", package]).run(timeout, log),
            (None, TestTool::Nextest) => {
                self.cargo(&["nextest", "run", "--no-fail-fast", "-p", package]).run(timeout, log)
            }
        }
    }
}

impl Executor for Cargo {
    /// `tests` is the package's name: build its tests, then run them.
    fn run(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<Finished> {
        let build = self.build(tests, self.build_timeout, log)?;
        if build.exit != Exit::Code(0) {
            return Ok(build);
        }
        let package = tests.first().ok_or_else(|| anyhow!("a Rust mutant without a package"))?;
        let mut run = self.test(package, timeout, log)?;
        run.duration += build.duration;
        Ok(run)
    }
}

/// The baseline of a cargo check: the build and each package's test time.
pub struct CargoBaseline {
    pub build: Duration,
    /// How long each package's tests took unmutated.
    pub tests: BTreeMap<String, Duration>,
}

/// Builds every package once in the first copy and runs its tests: they must build and pass.
pub fn prove(first: &Cargo, packages: &[String], log: &Path) -> Result<CargoBaseline> {
    let build = first.build(packages, BASELINE_LIMIT, log)?;
    match build.exit {
        Exit::Code(0) => {}
        Exit::Interrupted => return Err(Interrupted.into()),
        _ => bail!(
            "the crate does not build before any mutation: fix the build first. Cargo's output ended with:\n{}",
            build.tail.trim_end()
        ),
    }
    let mut tests = BTreeMap::new();
    for package in packages {
        let run = first.test(package, BASELINE_LIMIT, log)?;
        match run.exit {
            Exit::Code(0) => {}
            Exit::Interrupted => return Err(Interrupted.into()),
            _ => bail!(
                "the tests of {package} fail before any mutation, so a mutant's failure would prove nothing: make them pass first. Their output ended with:\n{}",
                run.tail.trim_end()
            ),
        }
        tests.insert(package.clone(), run.duration);
    }
    Ok(CargoBaseline { build: build.duration, tests })
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

/// How a runner's choice reads for cargo projects.
pub fn shell_command(runner: &TestRunner) -> Option<String> {
    match runner {
        TestRunner::Shell(command) => Some(command.clone()),
        TestRunner::Pytest => None,
    }
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

    #[test]
    fn a_file_belongs_to_the_innermost_package() {
        let packages = vec![
            Package { name: "root".into(), dir: PathBuf::new() },
            Package { name: "parser".into(), dir: PathBuf::from("crates/parser") },
        ];
        assert_eq!(owner(&packages, Path::new("crates/parser/src/lib.rs")).unwrap().name, "parser");
        assert_eq!(owner(&packages, Path::new("src/main.rs")).unwrap().name, "root");
        assert!(owner(&packages[1..], Path::new("src/main.rs")).is_none());
    }
}
