//! The cargo workspace: its packages, the one that owns each mutated file, and where the user's build lives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::settings::Features;
use crate::run::outcome::last_line;

/// A package of the cargo workspace, as `cargo metadata` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub version: String,
    /// The directory of its Cargo.toml, relative to the copy's root.
    pub dir: PathBuf,
    /// The workspace packages it depends on, for any kind of target (dev-dependencies too).
    pub depends_on: Vec<String>,
    /// Its code runs inside the compiler (a proc-macro crate), not in its tests.
    pub proc_macro: bool,
    /// Its build script, relative to the copy's root: it runs while building, not in the tests.
    pub build_script: Option<PathBuf>,
    /// Its features, each with what it enables (`cargo metadata`'s `features`).
    pub features: BTreeMap<String, Vec<String>>,
}

impl Package {
    /// The features of this package that `asked` turns on: those named (plainly or as
    /// `package/feature`), `default` unless left out, or all; and what they enable in turn.
    pub fn enabled_features(&self, asked: &Features) -> BTreeSet<String> {
        if asked.all {
            return self.features.keys().cloned().collect();
        }
        let mut pending: Vec<String> = asked
            .named
            .iter()
            .filter_map(|name| match name.split_once('/') {
                Some((package, feature)) => (package == self.name).then(|| feature.to_string()),
                None => Some(name.clone()),
            })
            .collect();
        if !asked.no_default {
            pending.push("default".to_string());
        }
        let mut enabled = BTreeSet::new();
        while let Some(feature) = pending.pop() {
            if !enabled.insert(feature.clone()) {
                continue;
            }
            for enables in self.features.get(&feature).into_iter().flatten() {
                // `dep:x` turns on the optional dependency x, whose implicit feature is x;
                // `other/x` and `x?/y` are another package's.
                match enables.strip_prefix("dep:") {
                    Some(dependency) => pending.push(dependency.to_string()),
                    None if !enables.contains('/') => pending.push(enables.clone()),
                    None => {}
                }
            }
        }
        enabled
    }
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetadataPackage>,
    target_directory: PathBuf,
    workspace_root: PathBuf,
}

#[derive(Deserialize)]
struct MetadataPackage {
    name: String,
    version: String,
    manifest_path: PathBuf,
    #[serde(default)]
    dependencies: Vec<MetadataDependency>,
    #[serde(default)]
    targets: Vec<MetadataTarget>,
    #[serde(default)]
    features: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct MetadataDependency {
    name: String,
    /// Set for a path dependency, which is how workspace members depend on each other.
    path: Option<PathBuf>,
}

#[derive(Deserialize)]
struct MetadataTarget {
    kind: Vec<String>,
    src_path: PathBuf,
}

/// What a check needs to know of the cargo workspace.
pub struct Workspace {
    pub packages: Vec<Package>,
    /// The user's target directory, as their checkout and configuration place it.
    pub user_target: PathBuf,
    /// The workspace's root, relative to the copy's (empty: the copy's own).
    pub root: PathBuf,
}

/// The workspace's own packages, found from the copy at `root` of the checkout at `repo_root`.
pub fn workspace(root: &Path, repo_root: &Path) -> Result<Workspace> {
    let mut command = Command::new("cargo");
    command.args(["metadata", "--format-version", "1", "--no-deps"]).current_dir(root);
    crate::seal::seal(&mut command);
    let output =
        command.output().context("could not run `cargo metadata`: is cargo installed and on PATH?")?;
    if !output.status.success() {
        bail!(
            "`cargo metadata` failed, so the Rust files' packages are unknown: {}",
            last_line(&String::from_utf8_lossy(&output.stderr))
        );
    }
    let metadata: Metadata =
        serde_json::from_slice(&output.stdout).context("`cargo metadata` printed something unexpected")?;
    let real_root = root.canonicalize()?;
    let members: Vec<String> = metadata.packages.iter().map(|package| package.name.clone()).collect();
    let inside = |path: &Path| Some(path.canonicalize().ok()?.strip_prefix(&real_root).ok()?.to_path_buf());
    let packages = metadata
        .packages
        .into_iter()
        .filter_map(|package| {
            let dir = inside(package.manifest_path.parent()?)?;
            let depends_on = package
                .dependencies
                .iter()
                .filter(|dep| dep.path.is_some() && members.contains(&dep.name))
                .map(|dep| dep.name.clone())
                .collect();
            let has_kind = |target: &MetadataTarget, kind: &str| target.kind.iter().any(|k| k == kind);
            let proc_macro = package.targets.iter().any(|target| has_kind(target, "proc-macro"));
            let build_script = package
                .targets
                .iter()
                .find(|target| has_kind(target, "custom-build"))
                .and_then(|target| inside(&target.src_path));
            Some(Package {
                name: package.name,
                version: package.version,
                dir,
                depends_on,
                proc_macro,
                build_script,
                features: package.features,
            })
        })
        .collect();
    let user_target = match std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => repo_root.join(dir),
        None => match metadata.target_directory.strip_prefix(&real_root) {
            Ok(inside) => repo_root.join(inside),
            Err(_) => metadata.target_directory,
        },
    };
    let root = inside(&metadata.workspace_root).unwrap_or_default();
    Ok(Workspace { packages, user_target, root })
}

/// `package` and every workspace package that depends on it, directly or through others: the
/// packages whose tests can reach its code.
pub fn with_dependents(packages: &[Package], package: &str) -> Vec<String> {
    let mut found = vec![package.to_string()];
    let mut at = 0;
    while at < found.len() {
        for other in packages {
            if other.depends_on.contains(&found[at]) && !found.contains(&other.name) {
                found.push(other.name.clone());
            }
        }
        at += 1;
    }
    found
}

/// The package whose directory holds `file` most closely.
pub fn owner<'a>(packages: &'a [Package], file: &Path) -> Option<&'a Package> {
    packages
        .iter()
        .filter(|package| file.starts_with(&package.dir))
        .max_by_key(|package| package.dir.components().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_belongs_to_the_innermost_package() {
        let packages = vec![package("root", "", &[]), package("parser", "crates/parser", &[])];
        assert_eq!(owner(&packages, Path::new("crates/parser/src/lib.rs")).unwrap().name, "parser");
        assert_eq!(owner(&packages, Path::new("src/main.rs")).unwrap().name, "root");
        assert!(owner(&packages[1..], Path::new("src/main.rs")).is_none());
    }

    fn package(name: &str, dir: &str, depends_on: &[&str]) -> Package {
        Package {
            name: name.into(),
            version: "0.1.0".into(),
            dir: PathBuf::from(dir),
            depends_on: depends_on.iter().map(|d| d.to_string()).collect(),
            proc_macro: false,
            build_script: None,
            features: BTreeMap::new(),
        }
    }

    #[test]
    fn the_features_asked_for_turn_on_what_they_enable_and_default_unless_left_out() {
        let mut featured = package("featured", "", &[]);
        let table = [
            ("default", &["std"][..]),
            ("std", &["alloc", "serde?/std"]),
            ("alloc", &[]),
            ("fast", &["dep:simd"]),
            ("simd", &["dep:simd"]),
            ("rounding", &[]),
        ];
        featured.features = table
            .iter()
            .map(|(name, enables)| (name.to_string(), enables.iter().map(|e| e.to_string()).collect()))
            .collect();
        let enabled = |named: &[&str], all: bool, no_default: bool| -> Vec<String> {
            let asked = Features { named: named.iter().map(|n| n.to_string()).collect(), all, no_default };
            featured.enabled_features(&asked).into_iter().collect()
        };
        assert_eq!(enabled(&[], false, false), ["alloc", "default", "std"]);
        assert_eq!(enabled(&["fast"], false, true), ["fast", "simd"]);
        assert_eq!(enabled(&["featured/rounding", "other/rounding"], false, true), ["rounding"]);
        assert_eq!(enabled(&["other/rounding"], false, true), Vec::<String>::new());
        assert_eq!(enabled(&[], true, true).len(), table.len());
    }

    #[test]
    fn a_packages_tests_and_those_of_every_package_that_depends_on_it_reach_its_code() {
        let packages = vec![
            package("core", "core", &[]),
            package("lock_api", "lock_api", &["core"]),
            package("parking_lot", "", &["lock_api"]),
            package("bench", "bench", &["parking_lot", "core"]),
            package("other", "other", &[]),
        ];
        assert_eq!(with_dependents(&packages, "core"), ["core", "lock_api", "bench", "parking_lot"]);
        assert_eq!(with_dependents(&packages, "lock_api"), ["lock_api", "parking_lot", "bench"]);
        assert_eq!(with_dependents(&packages, "other"), ["other"]);
    }
}
