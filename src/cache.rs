//! What a run learns that the next one can reuse, kept in the repository's git directory (`.git/mutdelta/`), never in the work tree, keyed by content.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;
use git2::{ObjectType, Oid, Repository};

/// The folder of saved findings; nothing is read or written when it is off (`--no-cache`, or no
/// git directory found).
#[derive(Debug, Clone, Default)]
pub struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    /// The cache of the repository at `repo_root`, or none when `enabled` is false.
    pub fn open(repo_root: &Path, enabled: bool) -> Cache {
        let dir = enabled
            .then(|| Repository::open(repo_root).ok())
            .flatten()
            .map(|repo| repo.commondir().join("mutdelta"));
        Cache { dir }
    }

    /// A cache that keeps nothing.
    pub fn off() -> Cache {
        Cache { dir: None }
    }

    pub fn is_on(&self) -> bool {
        self.dir.is_some()
    }

    /// The bytes saved under `name`, if any.
    pub fn read(&self, name: &str) -> Option<Vec<u8>> {
        fs::read(self.dir.as_ref()?.join(name)).ok()
    }

    /// Saves `bytes` under `name`, whole or not at all (a reader never sees half a file). A
    /// cache that cannot be written only makes the next run slower, so failures are ignored.
    pub fn write(&self, name: &str, bytes: &[u8]) {
        let Some(dir) = &self.dir else { return };
        let path = dir.join(name);
        let Some(parent) = path.parent() else { return };
        if fs::create_dir_all(parent).is_err() {
            return;
        }
        let Ok(mut file) = tempfile::NamedTempFile::new_in(parent) else { return };
        if std::io::Write::write_all(&mut file, bytes).is_ok() {
            let _ = file.persist(&path);
        }
    }
}

impl Cache {
    /// Removes all but the `keep` most recently written files of the folder `name`, so that
    /// the cache does not grow with every change checked.
    pub fn keep_newest(&self, name: &str, keep: usize) {
        let Some(dir) = &self.dir else { return };
        let Ok(entries) = fs::read_dir(dir.join(name)) else { return };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(|entry| {
                let entry = entry.ok()?;
                Some((entry.metadata().ok()?.modified().ok()?, entry.path()))
            })
            .collect();
        files.sort();
        let surplus = files.len().saturating_sub(keep);
        for (_, path) in files.into_iter().take(surplus) {
            let _ = fs::remove_file(path);
        }
    }
}

/// A digest of `parts`, each framed by its length so that no two lists share one.
pub fn key(parts: &[&[u8]]) -> String {
    let mut framed = Vec::new();
    for part in parts {
        framed.extend_from_slice(&(part.len() as u64).to_le_bytes());
        framed.extend_from_slice(part);
    }
    Oid::hash_object(ObjectType::Blob, &framed).expect("hashing bytes in memory cannot fail").to_string()
}

/// A digest of every file under `root` (path, mode, content; a symlink's target), leaving out
/// the bytecode and caches that running the tests writes.
pub fn tree_digest(root: &Path) -> Result<String> {
    let manifest: String = manifest(root)?.into_iter().map(|entry| entry.line).collect();
    Ok(key(&[manifest.as_bytes()]))
}

/// One file of a `manifest`: its path relative to the root, and a line naming its path, mode
/// and content (or a symlink's target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub line: String,
}

/// Every file under `root` in path order, as `tree_digest` reads it.
pub fn manifest(root: &Path) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    manifest_dir(root, root, &mut entries)?;
    Ok(entries)
}

const WRITTEN_BY_RUNS: &[&str] = &["__pycache__", ".pytest_cache", ".mypy_cache", ".git"];

fn manifest_dir(root: &Path, dir: &Path, manifest: &mut Vec<Entry>) -> Result<()> {
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if kind.is_dir() {
            if !WRITTEN_BY_RUNS.contains(&entry.file_name().to_string_lossy().as_ref()) {
                manifest_dir(root, &path, manifest)?;
            }
            continue;
        }
        let shown = relative.to_string_lossy();
        let line = if kind.is_symlink() {
            format!("link {shown} {}\n", fs::read_link(&path)?.display())
        } else {
            use std::os::unix::fs::PermissionsExt;
            let executable = entry.metadata()?.permissions().mode() & 0o111 != 0;
            let content = Oid::hash_file(ObjectType::Blob, &path)?;
            format!("file {shown} {executable} {content}\n")
        };
        manifest.push(Entry { path: relative, line });
    }
    Ok(())
}

/// mutdelta's environment, which the tests inherit, without what changes from one shell or
/// terminal to the next.
pub fn environment_fingerprint() -> String {
    const VOLATILE: &[&str] = &[
        "_",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "TERM",
        "COLORTERM",
        "COLUMNS",
        "LINES",
        "DISPLAY",
        "WINDOWID",
        "XAUTHORITY",
        "MAIL",
        "LS_COLORS",
        "PS1",
        "HISTFILE",
        "STY",
        "TMUX",
        "TMUX_PANE",
        // Where temporary files go: a place, not a behaviour.
        "TMPDIR",
        // Which run this is (see `watchdog`): a new value every run.
        crate::watchdog::MARK,
    ];
    const VOLATILE_PREFIXES: &[&str] = &["SSH_", "XDG_SESSION", "TERM_", "VSCODE_", "KITTY_", "WT_"];
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .map(|(name, value)| (name.to_string_lossy().into_owned(), value.to_string_lossy().into_owned()))
        .filter(|(name, _)| {
            !VOLATILE.contains(&name.as_str())
                && !VOLATILE_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        })
        .collect();
    vars.sort();
    vars.iter().map(|(name, value)| format!("{name}={value}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tell_apart_lists_that_concatenate_alike() {
        assert_eq!(key(&[b"ab", b"c"]), key(&[b"ab", b"c"]));
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_ne!(key(&[b"abc"]), key(&[b"abc", b""]));
    }

    #[test]
    fn the_tree_digest_follows_content_names_and_modes_but_not_bytecode() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("pkg/__pycache__")).unwrap();
        fs::write(root.join("pkg/a.py"), "x = 1\n").unwrap();
        let first = tree_digest(root).unwrap();
        fs::write(root.join("pkg/__pycache__/a.cpython-311.pyc"), "bytecode").unwrap();
        assert_eq!(tree_digest(root).unwrap(), first, "bytecode written by a run");
        fs::write(root.join("pkg/a.py"), "x = 2\n").unwrap();
        let changed = tree_digest(root).unwrap();
        assert_ne!(changed, first, "content");
        fs::rename(root.join("pkg/a.py"), root.join("pkg/b.py")).unwrap();
        assert_ne!(tree_digest(root).unwrap(), changed, "name");
        use std::os::unix::fs::PermissionsExt;
        let renamed = tree_digest(root).unwrap();
        fs::set_permissions(root.join("pkg/b.py"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_ne!(tree_digest(root).unwrap(), renamed, "mode");
    }

    #[test]
    fn only_the_newest_files_of_a_folder_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        let cache = Cache::open(dir.path(), true);
        let folder = dir.path().join(".git/mutdelta/probe");
        for (index, name) in ["a", "b", "c", "d"].iter().enumerate() {
            cache.write(&format!("probe/{name}.json"), b"{}");
            let written =
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + index as u64);
            fs::File::options()
                .write(true)
                .open(folder.join(format!("{name}.json")))
                .unwrap()
                .set_modified(written)
                .unwrap();
        }
        cache.keep_newest("probe", 2);
        let mut left: Vec<String> = fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["c.json", "d.json"]);
    }

    #[test]
    fn a_cache_keeps_bytes_in_the_git_directory_and_an_off_one_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        let cache = Cache::open(dir.path(), true);
        cache.write("probe/k.json", b"{}");
        assert_eq!(cache.read("probe/k.json").as_deref(), Some(&b"{}"[..]));
        assert!(dir.path().join(".git/mutdelta/probe/k.json").is_file());
        let off = Cache::open(dir.path(), false);
        assert!(!off.is_on());
        off.write("other.json", b"1");
        assert_eq!(off.read("probe/k.json"), None);
        assert!(!dir.path().join(".git/mutdelta/other.json").exists());
    }
}
