//! A coverage gate's list of added lines: parsed, its paths read against the repository root, checked against the working tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail, Result};

/// The list's lines per file, paths relative to `root`, every line present in the working tree.
///
/// A relative path is read from the repository root, as `git diff` prints paths, wherever
/// mutdelta runs (`./pkg/a.py` is `pkg/a.py`); an absolute one must lie inside the repository
/// once symbolic links are resolved.
pub fn read(text: &str, root: &Path) -> Result<BTreeMap<PathBuf, BTreeSet<usize>>> {
    let mut files: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
    for (path, lines) in parse_line_list(text)? {
        files.entry(relative_to_root(&path, root)?).or_default().extend(lines);
    }
    check_lines_exist(root, &files)?;
    Ok(files)
}

/// `path` as a path from the repository root, or an error naming it when it lies outside.
fn relative_to_root(path: &Path, root: &Path) -> Result<PathBuf> {
    let outside = || {
        anyhow!(
            "the line list names {}, which is outside the repository at {}: list only files of this repository, by paths from its root",
            path.display(),
            root.display()
        )
    };
    if path.is_absolute() {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        // The directory is resolved, not the file: a file that is a link stays the file named.
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(outside());
        };
        let parent = parent.canonicalize().map_err(|_| {
            anyhow!(
                "the line list names {}, which is not in the working tree: list paths relative to the repository root",
                path.display()
            )
        })?;
        let relative = parent.strip_prefix(&root).map_err(|_| outside())?.join(name);
        return lexically_normal(&relative).ok_or_else(outside);
    }
    lexically_normal(path).ok_or_else(outside)
}

/// `path` without `.` and with each `..` taken back; None when it climbs above its start or
/// names nothing.
fn lexically_normal(path: &Path) -> Option<PathBuf> {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    return None;
                }
            }
            Component::Normal(part) => normal.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!normal.as_os_str().is_empty()).then_some(normal)
}

/// Parses a coverage gate's list: `path:LINE` / `path:START-END` per line, or a JSON object
/// `{"path": [lines]}`. Blank lines and lines starting with `#` are passed over.
pub fn parse_line_list(text: &str) -> Result<BTreeMap<PathBuf, BTreeSet<usize>>> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return parse_json_line_list(trimmed);
    }
    let mut files: BTreeMap<PathBuf, BTreeSet<usize>> = BTreeMap::new();
    for (index, raw) in text.lines().enumerate() {
        let entry = raw.trim();
        if entry.is_empty() || entry.starts_with('#') {
            continue;
        }
        let malformed = || {
            anyhow!(
                "line {} of the line list, {entry:?}, is not `path:LINE` or `path:START-END`: fix or remove it",
                index + 1
            )
        };
        let (path, range) = entry.rsplit_once(':').ok_or_else(malformed)?;
        if path.is_empty() {
            return Err(malformed());
        }
        let (start, end) = match range.split_once('-') {
            Some((start, end)) => (start, end),
            None => (range, range),
        };
        let start: usize = start.trim().parse().map_err(|_| malformed())?;
        let end: usize = end.trim().parse().map_err(|_| malformed())?;
        if start == 0 || end < start {
            return Err(malformed());
        }
        files.entry(PathBuf::from(path)).or_default().extend(start..=end);
    }
    Ok(files)
}

fn parse_json_line_list(text: &str) -> Result<BTreeMap<PathBuf, BTreeSet<usize>>> {
    let parsed: BTreeMap<String, Vec<usize>> = serde_json::from_str(text).map_err(|err| {
        anyhow!("the line list is not a JSON object of the form {{\"path\": [lines]}}: {err}")
    })?;
    let mut files = BTreeMap::new();
    for (path, lines) in parsed {
        if lines.contains(&0) {
            bail!("the line list names line 0 of {path}: lines are numbered from 1");
        }
        files.insert(PathBuf::from(path), lines.into_iter().collect());
    }
    Ok(files)
}

fn check_lines_exist(root: &Path, files: &BTreeMap<PathBuf, BTreeSet<usize>>) -> Result<()> {
    for (path, lines) in files {
        let full = root.join(path);
        let bytes = std::fs::read(&full).map_err(|_| {
            anyhow!(
                "the line list names {}, which is not in the working tree: list paths relative to the repository root",
                path.display()
            )
        })?;
        if bytes.contains(&0) || std::str::from_utf8(&bytes).is_err() {
            bail!(
                "the line list names {}, which is {}: mutdelta mutates UTF-8 source text only, so convert the file or leave it out of the list",
                path.display(),
                if bytes.contains(&0) { "a binary file" } else { "not UTF-8 text" }
            );
        }
        let line_count = bytes.split(|&b| b == b'\n').count() - usize::from(bytes.ends_with(b"\n"));
        if let Some(&last) = lines.iter().next_back() {
            if last > line_count {
                bail!(
                    "the line list names {}:{last}, but that file has {line_count} lines: regenerate the list from the current change",
                    path.display()
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_list_accepts_single_lines_and_ranges() {
        let files = parse_line_list("a.py:3\n\n# comment\npkg/b.py:5-7\na.py:1\n").unwrap();
        assert_eq!(files[Path::new("a.py")], BTreeSet::from([1, 3]));
        assert_eq!(files[Path::new("pkg/b.py")], BTreeSet::from([5, 6, 7]));
    }

    #[test]
    fn line_list_accepts_a_json_object() {
        let files = parse_line_list(r#"{"a.py": [2, 4]}"#).unwrap();
        assert_eq!(files[Path::new("a.py")], BTreeSet::from([2, 4]));
    }

    #[test]
    fn paths_are_read_from_the_repository_root_and_must_stay_inside_it() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("pkg")).unwrap();
        let root = root.path();
        let expected = PathBuf::from("pkg/mod.py");
        assert_eq!(relative_to_root(Path::new("./pkg/mod.py"), root).unwrap(), expected);
        assert_eq!(relative_to_root(Path::new("pkg/../pkg/./mod.py"), root).unwrap(), expected);
        assert_eq!(relative_to_root(&root.join("pkg/mod.py"), root).unwrap(), expected);
        for outside in [Path::new("../elsewhere.py"), Path::new("/etc/hosts"), Path::new(".")] {
            let err = relative_to_root(outside, root).unwrap_err().to_string();
            assert!(err.contains("outside the repository"), "{}: {err}", outside.display());
        }
    }

    #[test]
    fn malformed_line_list_entries_are_refused_with_their_line_number() {
        for bad in ["a.py", "a.py:x", "a.py:0", "a.py:5-3", ":4"] {
            let err = parse_line_list(&format!("ok.py:1\n{bad}\n")).unwrap_err().to_string();
            assert!(err.contains("line 2 of the line list"), "{bad}: {err}");
        }
    }
}
