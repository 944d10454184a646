//! The cargo workspace: its packages, the one that owns each mutated file, and where the user's build lives.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::run::outcome::last_line;

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
        let packages = vec![
            Package { name: "root".into(), dir: PathBuf::new() },
            Package { name: "parser".into(), dir: PathBuf::from("crates/parser") },
        ];
        assert_eq!(owner(&packages, Path::new("crates/parser/src/lib.rs")).unwrap().name, "parser");
        assert_eq!(owner(&packages, Path::new("src/main.rs")).unwrap().name, "root");
        assert!(owner(&packages[1..], Path::new("src/main.rs")).is_none());
    }
}
