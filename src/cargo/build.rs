//! Building and testing in a worker's copy: its own target directory, seeded from the user's build or the first worker's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::settings::TestTool;
use crate::model::record::{Exit, Finished};
use crate::process::TestCommand;

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
    /// `--features`, `--all-features`, `--no-default-features` as asked.
    pub features: super::settings::Features,
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
        let selected: Vec<&str> = packages.iter().map(AsRef::as_ref).collect();
        let specs = selected.iter().flat_map(|name| ["-p".to_string(), self.spec(name)]);
        let mut features = self.features.clone();
        features.named = features.named.iter().flat_map(|name| self.qualified(name, &selected)).collect();
        specs.chain(features.cargo_args()).collect()
    }

    /// A bare feature name as cargo takes it for the `selected` packages: it refuses a name
    /// one of them lacks (`-p indexmap -p test-serde --features rayon`). So it becomes
    /// `package/name` for each selected package that has it, else for each workspace package
    /// that has it and a selected one depends on, else nothing (no selected package can see
    /// it); a name no package has is left for cargo to refuse.
    fn qualified(&self, name: &str, selected: &[&str]) -> Vec<String> {
        let has = |package: &&super::workspace::Package| package.features.contains_key(name);
        let owners: Vec<&super::workspace::Package> = self.packages.iter().filter(has).collect();
        if name.contains('/') || owners.is_empty() {
            return vec![name.to_string()];
        }
        let selected_owners: Vec<&str> =
            owners.iter().map(|p| p.name.as_str()).filter(|owner| selected.contains(owner)).collect();
        if selected.iter().all(|package| selected_owners.contains(package)) {
            return vec![name.to_string()];
        }
        if !selected_owners.is_empty() {
            return selected_owners.iter().map(|owner| format!("{owner}/{name}")).collect();
        }
        let depended_on = |owner: &&&super::workspace::Package| {
            self.packages.iter().any(|package| {
                selected.contains(&package.name.as_str()) && package.depends_on.contains(&owner.name)
            })
        };
        owners.iter().filter(depended_on).map(|owner| format!("{}/{name}", owner.name)).collect()
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
            .chain(seeded())
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

/// The files under a workspace's root that rustc read for some crate of a build, relative to
/// that root: a source file missing there is compiled out, its module left out by a
/// `#[cfg(..)]` somewhere above it (a feature, a platform).
pub struct CompiledSources(std::collections::BTreeSet<PathBuf>);

impl CompiledSources {
    /// Read from the dep-info files (`debug/deps/*.d`) of the builds in `target`.
    pub fn read(target: &Path, root: &Path) -> CompiledSources {
        CompiledSources(compiled_sources(target, root))
    }

    /// Whether `file` was left out of the build: no crate read it, while some crate read files
    /// of its package (in `package_dir`); a dep-info that names none of them tells nothing.
    pub fn leave_out(&self, file: &Path, package_dir: &Path) -> bool {
        !self.0.contains(file) && self.0.iter().any(|read| read.starts_with(package_dir))
    }
}

fn compiled_sources(target: &Path, root: &Path) -> std::collections::BTreeSet<PathBuf> {
    let roots: Vec<PathBuf> =
        [Some(root.to_path_buf()), root.canonicalize().ok()].into_iter().flatten().collect();
    let mut found = std::collections::BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(target.join("debug").join("deps")) else { return found };
    for entry in entries.flatten() {
        if entry.path().extension().is_none_or(|extension| extension != "d") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
        for line in text.lines() {
            let Some((_, sources)) = line.split_once(": ") else { continue };
            for source in dep_info_paths(sources) {
                // The workspace's own crates are named relative to its root, as cargo passed them.
                if source.is_relative() {
                    found.insert(source);
                } else if let Some(inside) = roots.iter().find_map(|root| source.strip_prefix(root).ok()) {
                    found.insert(inside.to_path_buf());
                }
            }
        }
    }
    found
}

/// The paths of a dep-info rule's right-hand side: separated by spaces, a space inside a path
/// escaped as `\ `.
fn dep_info_paths(sources: &str) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = sources.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => current.push(chars.next().expect("peeked")),
            ' ' => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
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

/// proptest's seed, alike in every run of a check, unmutated and mutated (unless the user's
/// environment sets one: theirs reaches the tests as it is), so that its properties draw the
/// same cases each time.
pub fn seeded() -> Option<(String, String)> {
    unless_set("PROPTEST_RNG_SEED", &crate::run::flaky::RANDOM_SEED.to_string())
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

    #[test]
    fn a_dep_info_rule_names_its_sources_with_escaped_spaces_kept() {
        assert_eq!(
            dep_info_paths("/a/src/lib.rs /a/my\\ dir/x.rs  /a/b\\c.rs /a/src/y.rs "),
            ["/a/src/lib.rs", "/a/my dir/x.rs", "/a/b\\c.rs", "/a/src/y.rs"].map(PathBuf::from)
        );
        assert_eq!(dep_info_paths("src/lib.rs src/y.rs"), ["src/lib.rs", "src/y.rs"].map(PathBuf::from));
    }

    #[test]
    fn the_compiled_sources_are_the_files_under_the_root_some_dep_info_names() {
        let target = tempfile::tempdir().unwrap();
        let deps = target.path().join("debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(
            deps.join("crate-1.d"),
            "# a line that is no rule\n/copy/target/debug/deps/crate-1: src/lib.rs /copy/src/map.rs /registry/dep/src/lib.rs\n\nsrc/lib.rs:\n",
        )
        .unwrap();
        std::fs::write(deps.join("crate-1.rmeta"), "x: /copy/src/rayon/map.rs").unwrap();
        let found = compiled_sources(target.path(), Path::new("/copy"));
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("src/lib.rs"), PathBuf::from("src/map.rs")]
        );
    }

    #[test]
    fn a_bare_feature_reaches_the_packages_that_have_it_when_several_are_selected() {
        let package = |name: &str, depends_on: &[&str], features: &[&str]| super::super::workspace::Package {
            name: name.into(),
            version: "1.0.0".into(),
            dir: PathBuf::from(name),
            depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
            proc_macro: false,
            build_script: None,
            features: features.iter().map(|f| (f.to_string(), Vec::new())).collect(),
        };
        let cargo = Cargo {
            root: PathBuf::from("/copy"),
            target: PathBuf::from("/target"),
            tool: TestTool::Cargo,
            command: None,
            build_timeout: Duration::from_secs(1),
            packages: vec![
                package("indexmap", &[], &["rayon", "std"]),
                package("test-serde", &["indexmap"], &[]),
                package("bench", &[], &[]),
                package("sval", &[], &["rayon"]),
            ],
            features: crate::cargo::settings::Features {
                named: vec!["rayon".into(), "indexmap/std".into(), "nope".into()],
                ..Default::default()
            },
            incremental: true,
        };
        let features = |selected: &[&str]| -> String {
            let args = cargo.selection_args(selected);
            args.into_iter().filter(|arg| arg.starts_with("--features=")).collect()
        };
        // One package that has it: the name as given; a name no package has: left to cargo.
        assert_eq!(
            cargo.selection_args(&["indexmap"]),
            ["-p", "path+file:///copy/indexmap#indexmap@1.0.0", "--features=rayon,indexmap/std,nope"]
        );
        assert_eq!(features(&["indexmap"]), "--features=rayon,indexmap/std,nope");
        // Selected packages that have it get it, whether or not another selected one depends on them.
        assert_eq!(features(&["indexmap", "bench"]), "--features=indexmap/rayon,indexmap/std,nope");
        assert_eq!(features(&["indexmap", "sval"]), "--features=rayon,indexmap/std,nope");
        assert_eq!(features(&["indexmap", "test-serde"]), "--features=indexmap/rayon,indexmap/std,nope");
        // A dependent alone reaches it through its dependency; a package that cannot see it drops it.
        assert_eq!(features(&["test-serde"]), "--features=indexmap/rayon,indexmap/std,nope");
        assert_eq!(features(&["bench"]), "--features=indexmap/std,nope");
    }
}
