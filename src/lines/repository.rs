//! The repository a check reads: found from a directory (the index a commit hook names used), its checkout's root.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use git2::Repository;

/// Opens the repository that contains `dir`.
pub fn open_repository(dir: &Path) -> Result<Repository> {
    let repo = Repository::discover(dir).map_err(|_| {
        anyhow!(
            "{} is not inside a git repository: run mutdelta in a repository or point -C at one",
            dir.display()
        )
    })?;
    if repo.is_bare() {
        bail!("{} is a bare repository: mutdelta needs a checkout to test", dir.display());
    }
    // In a pre-commit hook, git names the index the commit is made from: `git commit -a` and
    // `git commit PATHS` build a temporary one. The staged change is the one in that index.
    if let Some(index_file) = std::env::var_os("GIT_INDEX_FILE").filter(|path| !path.is_empty()) {
        let path = std::path::absolute(&index_file)?;
        let mut index = git2::Index::open(&path)
            .with_context(|| format!("could not read the index GIT_INDEX_FILE names, {}", path.display()))?;
        repo.set_index(&mut index).context("could not use the index GIT_INDEX_FILE names")?;
    }
    Ok(repo)
}

/// The root of the checkout that holds `dir`.
pub fn repository_root(dir: &Path) -> Result<std::path::PathBuf> {
    Ok(workdir(&open_repository(dir)?).to_path_buf())
}

/// The repository's working directory.
pub fn workdir(repo: &Repository) -> &Path {
    repo.workdir().expect("bare repositories are refused on open")
}
