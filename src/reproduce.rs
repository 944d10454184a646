//! A recorded verdict read back from a JSON report: `show` prints it with a command that reproduces it, `apply` writes the mutant into a copy.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::model::plan::State;
use crate::report::diff::unified_diff;
use crate::report::document::{byte_offset, CommandEntry, Document, MutantEntry, Section, ShardPlace};
use crate::report::test_files::Defined;
use crate::report::text::within_a_screen;
use crate::{lines, worktree};

/// The temporary directories the report's commands ran in: the check's, or each shard's.
fn scratches(section: &Section) -> Vec<&Path> {
    let shards = section.shards.iter().filter_map(|shard| shard.scratch.as_deref());
    section.scratch.as_deref().into_iter().chain(shards).collect()
}

/// One mutant of a report, with its file, borrowed from the report read once.
struct Found<'d> {
    path: &'d str,
    source: &'d str,
    mutant: &'d MutantEntry,
    origin: &'d Section,
}

/// A report, read: untrusted until `Found::of` has checked the mutant it is asked for.
fn read_report(report: &Path) -> Result<Document> {
    crate::report::input::read(report, "the report", "give the file `check --json` wrote")
}

impl<'d> Found<'d> {
    /// The mutant `id` of `document`, the report at `report`, which is untrusted: its file must
    /// be named by a plain relative path, the mutant must lie within that file's recorded text,
    /// and each variable its commands set must be named as a shell variable is.
    fn of(report: &Path, id: &str, document: &'d Document) -> Result<Found<'d>> {
        let found = Found::find(report, id, document)?;
        relative_path(found.path)?;
        found.mutated()?;
        for command in found.mutant.run.iter().flat_map(|run| &run.commands) {
            if let Some(name) = command.env.keys().find(|name| !is_variable_name(name)) {
                bail!(
                    "mutant {id} of the report {} sets a variable named {}, which is no shell variable name: the report is damaged or hostile, so nothing of it is used",
                    report.display(),
                    inert(name)
                );
            }
        }
        Ok(found)
    }

    fn find(report: &Path, id: &str, document: &'d Document) -> Result<Found<'d>> {
        let holding = document.files.values().flat_map(|file| &file.mutants).filter(|m| m.id == id).count();
        if holding > 1 {
            bail!(
                "the report {} holds mutant {} {holding} times: it is damaged or hostile, so nothing of it is used",
                report.display(),
                inert(id)
            );
        }
        let count: usize = document.files.values().map(|file| file.mutants.len()).sum();
        if let Some(ShardPlace { index, count: shards }) = document.mutdelta.shard {
            if !document.files.values().any(|file| file.mutants.iter().any(|mutant| mutant.id == id)) {
                bail!(
                    "{} has no mutant {id}: it is the report of shard {index}/{shards}, which holds {count} of the plan's mutants; look in the other shards' reports or in their merge",
                    report.display()
                );
            }
        }
        let defined = document.test_files.as_ref().map(Defined::read).transpose()?;
        for (path, file) in &document.files {
            if let Some(mutant) = file.mutants.iter().find(|mutant| mutant.id == id) {
                if let Some(defined) = &defined {
                    defined.check(path, id, mutant.covered_by.iter().chain(&mutant.killed_by))?;
                }
                return Ok(Found { path, source: &file.source, mutant, origin: &document.mutdelta });
            }
        }
        bail!("{} has no mutant {id}: it holds {count} mutants, numbered from 1", report.display())
    }

    /// The file's source with the mutant applied; refused when the mutant does not lie within
    /// the recorded source.
    fn mutated(&self) -> Result<String> {
        let location = &self.mutant.location;
        let outside = || {
            anyhow!(
                "mutant {} does not lie within the text the report records for {}: the report is damaged or hostile, so nothing of it is used",
                inert(&self.mutant.id),
                inert(self.path)
            )
        };
        let start = byte_offset(self.source, location.start).ok_or_else(outside)?;
        let end = byte_offset(self.source, location.end).filter(|&end| end >= start).ok_or_else(outside)?;
        let replacement = self.mutant.replacement.as_deref().unwrap_or("");
        Ok(format!("{}{replacement}{}", &self.source[..start], &self.source[end..]))
    }
}

/// What `show` prints of one mutant, and the parts of it a program reads apart.
pub struct Shown {
    pub text: String,
    /// The mutant as a unified diff of its file.
    pub diff: String,
    /// The command line that reproduces its verdict (or makes the copy to inspect it).
    pub command: String,
}

/// `mutdelta show REPORT ID`: where, the diff, the verdict and why, what ran, and a command that
/// reproduces it.
pub fn show(report: &Path, id: &str) -> Result<String> {
    shown_each(report, &[id])?.pop().expect("one asked, one shown").map(|shown| shown.text)
}

/// `show` of each mutant of `ids` in `report`, read once: each one's text with its diff and
/// command apart, or why it cannot be shown.
pub fn shown_each(report: &Path, ids: &[&str]) -> Result<Vec<Result<Shown>>> {
    let document = read_report(report)?;
    Ok(shown_each_in(report, &document, ids))
}

/// `shown_each` of a report already read: `document`, read from `report`.
pub fn shown_each_in(report: &Path, document: &Document, ids: &[&str]) -> Vec<Result<Shown>> {
    ids.iter().map(|id| Found::of(report, id, document).and_then(|found| shown(report, &found))).collect()
}

/// `show`'s text of `found`, of `report`, with its diff and command apart.
fn shown(report: &Path, found: &Found<'_>) -> Result<Shown> {
    let m = found.mutant;
    let mut out = String::new();
    let description = m.description.clone().unwrap_or_else(|| m.mutator_name.clone());
    let _ = writeln!(
        out,
        "mutant {}: {}:{}:{}: {} ({})",
        inert(&m.id),
        inert(found.path),
        m.location.start.line,
        m.location.start.column,
        inert(&description),
        inert(&m.mutator_name)
    );
    let reason = m.status_reason.as_deref().unwrap_or("");
    let _ = writeln!(
        out,
        "verdict: {}{}{}",
        inert(&format!("{:?}", m.status)),
        m.likely_equivalent
            .as_ref()
            .map(|rule| format!(" (likely equivalent: {})", inert(rule)))
            .unwrap_or_default(),
        if reason.is_empty() { String::new() } else { format!(": {}", inert(reason)) }
    );
    let diff = unified_diff(&inert(found.path), found.source, &found.mutated()?);
    for line in diff.lines() {
        let _ = writeln!(out, "    {}", inert_code(&within_a_screen(line)));
    }
    out.push_str(&test_list("tests run", &m.covered_by, "coveredBy"));
    out.push_str(&test_list("failed", &m.killed_by, "killedBy"));
    let apply = format!(
        "cd \"$({} apply {} {})\"",
        quote(&std::env::current_exe()?.display().to_string()),
        quote(&std::path::absolute(report)?.display().to_string()),
        quote(&m.id)
    );
    match &m.run {
        Some(run) => {
            let _ = writeln!(out, "how it ran: {}", inert(&run.how));
            for command in &run.commands {
                let _ = writeln!(
                    out,
                    "    in {}: {} -> {} after {:.0} ms",
                    inert(&command.cwd.display().to_string()),
                    inert(&shell_line(&command.env, &command.argv)),
                    inert(&command.exit),
                    command.duration
                );
            }
            let scratches = scratches(found.origin);
            let commands: Vec<String> =
                run.commands.iter().map(|command| portable(command, &scratches)).collect();
            let _ = writeln!(
                out,
                "reproduce (a fresh copy of the state under test with this mutant, then its tests):"
            );
            let command = format!("{apply} && {}", commands.join(" && "));
            let _ = writeln!(out, "    {command}");
            Ok(Shown { text: out, diff, command })
        }
        None => {
            let _ = writeln!(out, "nothing ran for this verdict");
            let _ = writeln!(out, "inspect (a fresh copy of the state under test with this mutant):");
            let _ = writeln!(out, "    {apply}");
            Ok(Shown { text: out, diff, command: apply })
        }
    }
}

/// How many tests `show` names in a list before it counts the rest.
const TESTS_SHOWN: usize = 10;

/// `tests` under a heading, one a line, the first `TESTS_SHOWN` of them and a count of the rest
/// (all of them are in the report's `field`); nothing when there are none.
fn test_list(heading: &str, tests: &[String], field: &str) -> String {
    if tests.is_empty() {
        return String::new();
    }
    let mut out = format!("{heading} ({}):\n", tests.len());
    for test in tests.iter().take(TESTS_SHOWN) {
        let _ = writeln!(out, "    {}", inert(test));
    }
    if tests.len() > TESTS_SHOWN {
        let _ =
            writeln!(out, "    and {} more (the report's {field} names them all)", tests.len() - TESTS_SHOWN);
    }
    out
}

/// The command as it would run from the root of a fresh copy: paths inside the copy it ran in
/// made relative, mutdelta's own temporary paths left out.
fn portable(command: &CommandEntry, scratches: &[&Path]) -> String {
    let local = |value: &str| -> Option<String> {
        let path = Path::new(value);
        if path == command.cwd {
            return Some(".".to_string());
        }
        if let Ok(inside) = path.strip_prefix(&command.cwd) {
            return Some(inside.display().to_string());
        }
        // The report's own temporary directories, and the one the copy lay in (a verdict reused
        // from an earlier run ran in that run's).
        let run_directory = command.cwd.parent().filter(|run| run.parent().is_some());
        if scratches.iter().copied().chain(run_directory).any(|scratch| path.starts_with(scratch)) {
            return None;
        }
        Some(value.to_string())
    };
    let mut env = BTreeMap::new();
    let shell = command.argv.first().is_some_and(|program| program == "/bin/sh");
    for (name, value) in &command.env {
        if name == "PATH" && !shell {
            continue; // the program is named by its full path
        }
        let kept: Vec<String> = value.split(':').filter_map(local).collect();
        if !kept.is_empty() {
            env.insert(name.clone(), kept.join(":"));
        }
    }
    let argv: Vec<String> = command
        .argv
        .iter()
        .enumerate()
        .map(|(i, arg)| if i == 0 { arg.clone() } else { local(arg).unwrap_or_default() })
        .collect();
    shell_line(&env, &argv)
}

fn shell_line(env: &BTreeMap<String, String>, argv: &[String]) -> String {
    env.iter()
        .map(|(name, value)| format!("{name}={}", quote(value)))
        .chain(argv.iter().map(|arg| quote(arg)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with every control character written as an escape, so that a report's strings
/// cannot move the cursor, recolour the terminal or start a line of their own.
fn inert(text: &str) -> String {
    text.chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}

/// A line of the report's source as `inert` makes it, its tabs kept as they are.
fn inert_code(line: &str) -> String {
    line.split('\t').map(inert).collect::<Vec<_>>().join("\t")
}

/// A name the shell takes as a variable's in `NAME=value command`.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// A report's file path as a path inside a repository: relative, in normal form (no `.`, `..`,
/// empty or trailing parts), no NUL; anything else is refused, naming it.
fn relative_path(path: &str) -> Result<&Path> {
    let as_path = Path::new(path);
    let normal = as_path.components().all(|part| matches!(part, Component::Normal(_)))
        && as_path.components().collect::<PathBuf>().as_os_str() == as_path.as_os_str();
    if path.is_empty() || path.contains('\0') || !normal {
        bail!(
            "the report names the file {}, which is not a plain relative path inside a repository: a report may only name the files it tested",
            inert(&format!("{path:?}"))
        );
    }
    Ok(as_path)
}

/// `text` as one shell word.
fn quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `mutdelta apply REPORT ID [--to DIR]`: writes the mutated file into `to` (whose file must
/// still hold the source the report tested), or else into a new copy of the state under test
/// made from `repository` (or the one the report names), a git repository whose one commit is
/// that state. Returns the directory written.
pub fn apply(report: &Path, id: &str, to: Option<&Path>, repository: Option<&Path>) -> Result<PathBuf> {
    let document = read_report(report)?;
    let found = Found::of(report, id, &document)?;
    let mutated = found.mutated()?;
    if let Some(dir) = to {
        write_over_original(&tracked_file(dir, found.path)?, &found, &mutated)?;
        return Ok(dir.to_path_buf());
    }
    let origin = &found.origin;
    let repository = repository
        .map(Path::to_path_buf)
        .or_else(|| origin.repository.clone())
        .ok_or_else(|| anyhow!("the report does not say which repository it checked: name it with -C DIR"))?;
    let state = origin.state.as_deref().and_then(State::from_text).ok_or_else(|| {
        anyhow!("the report does not say which state it tested: give --to DIR, a checkout of it")
    })?;
    let repo = lines::open_repository(&repository)?;
    let plain_id: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    let copy = tempfile::Builder::new()
        .prefix(&format!("mutdelta-apply-{plain_id}-"))
        .tempdir_in(&crate::scratch::location()?.dir)
        .context("could not create a temporary directory")?;
    worktree::materialize(&repo, state, copy.path())?;
    commit_unmutated(copy.path()).context("could not make the copy a git repository")?;
    write_over_original(&tracked_file(copy.path(), found.path)?, &found, &mutated)?;
    Ok(copy.keep())
}

/// Makes the copy at `dir` a git repository whose one commit is the state under test, so
/// that `git diff` there shows the mutant and nothing else.
fn commit_unmutated(dir: &Path) -> Result<()> {
    let repo = git2::Repository::init(dir)?;
    let mut index = repo.index()?;
    index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let signature = git2::Signature::now("mutdelta", "mutdelta@localhost")?;
    repo.commit(Some("HEAD"), &signature, &signature, "the state under test, unmutated", &tree, &[])?;
    Ok(())
}

/// The file a report's `path` names in the checkout at `dir`: a regular file git tracks there,
/// reached without a symbolic link, inside `dir`, which must be the checkout's root. Anything
/// else is refused, naming the path.
fn tracked_file(dir: &Path, path: &str) -> Result<PathBuf> {
    let relative = relative_path(path)?;
    let shown = inert(path);
    let root = dir.canonicalize().map_err(|err| anyhow!("could not open {}: {err}", dir.display()))?;
    let repo = git2::Repository::open(&root)
        .ok()
        .filter(|repo| {
            repo.workdir().and_then(|workdir| workdir.canonicalize().ok()).as_deref() == Some(&root)
        })
        .ok_or_else(|| {
            anyhow!(
                "{} is not the root of a git checkout: apply writes only into one, over a file it tracks",
                dir.display()
            )
        })?;
    let target = root.join(relative);
    if target.canonicalize().ok().as_deref() != Some(target.as_path()) || !target.is_file() {
        bail!(
            "{shown} is not a file of {} reached without a symbolic link: apply writes only over a tracked file inside the checkout",
            dir.display()
        );
    }
    let tracked = repo.index().is_ok_and(|index| index.get_path(relative, 0).is_some());
    if !tracked {
        bail!("{shown} is not a file git tracks in {}: apply writes only over a tracked file", dir.display());
    }
    Ok(target)
}

/// Writes `mutated` to `path` if `path` still holds the report's source; else refuses, so that
/// nothing is overwritten that the report did not see. The file is opened without following a
/// symbolic link, in case one took its place since it was checked.
fn write_over_original(path: &Path, found: &Found, mutated: &str) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let current =
        std::fs::read_to_string(path).map_err(|err| anyhow!("could not read {}: {err}", path.display()))?;
    if current != found.source {
        bail!(
            "{} differs from the {} the report tested, so the mutant would not reproduce there: check out the state the report tested first",
            path.display(),
            inert(found.path)
        );
    }
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .and_then(|mut file| file.write_all(mutated.as_bytes()))
        .with_context(|| format!("could not write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_of_tests_shows_ten_one_a_line_and_counts_the_rest() {
        let tests: Vec<String> = (1..=58).map(|n| format!("tests/test_a.py::test_{n}")).collect();
        let shown = test_list("tests run", &tests, "coveredBy");
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), 12, "{shown}");
        assert_eq!(lines[0], "tests run (58):");
        assert_eq!(lines[1], "    tests/test_a.py::test_1");
        assert_eq!(lines[10], "    tests/test_a.py::test_10");
        assert_eq!(lines[11], "    and 48 more (the report's coveredBy names them all)");
        assert_eq!(
            test_list("failed", &tests[..2], "killedBy"),
            "failed (2):\n    tests/test_a.py::test_1\n    tests/test_a.py::test_2\n"
        );
        assert_eq!(test_list("failed", &[], "killedBy"), "");
        let hostile = test_list("failed", &["a\u{1b}[2Jb\nc".to_string()], "killedBy");
        assert_eq!(hostile, "failed (1):\n    a\\u{1b}[2Jb\\nc\n", "control characters stay inert");
    }

    #[test]
    fn words_the_shell_would_split_are_quoted() {
        assert_eq!(quote("tests/test_a.py::test_x"), "tests/test_a.py::test_x");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn quoted_words_come_back_from_sh_exactly_as_they_were_and_run_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let words = [
            "a b",
            "it's",
            "$(touch pwned)",
            "`touch pwned`",
            "line\nbreak",
            "né ü 日本",
            "\"; touch pwned; \"",
            "*",
            "~",
            "",
            "-n",
        ];
        let line =
            format!("printf '%s\\0' {}", words.iter().map(|word| quote(word)).collect::<Vec<_>>().join(" "));
        let output =
            std::process::Command::new("sh").args(["-c", &line]).current_dir(dir.path()).output().unwrap();
        assert!(output.status.success());
        let back: Vec<String> =
            String::from_utf8(output.stdout).unwrap().split_terminator('\0').map(String::from).collect();
        assert_eq!(back, words);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing ran");
    }

    #[test]
    fn a_reports_strings_are_shown_with_their_control_characters_escaped() {
        assert_eq!(inert("ok\x1b[2J\nnext\ttab é"), "ok\\u{1b}[2J\\nnext\\ttab é");
        assert_eq!(inert_code("+\tx = '\x1b[2J'\t# é"), "+\tx = '\\u{1b}[2J'\t# é");
    }

    #[test]
    fn only_plain_relative_paths_name_a_reports_files() {
        for good in ["a.py", "pkg/a b/ç.py", "..a/b"] {
            assert!(relative_path(good).is_ok(), "{good}");
        }
        for bad in ["", "/etc/passwd", "../a.py", "a/../b.py", "./a.py", "a/./b.py", "a//b.py", "a/", "a\0b"]
        {
            assert!(relative_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_portable_command_runs_from_the_copys_root_without_mutdelta_s_temporary_paths() {
        let command = CommandEntry {
            argv: ["/venv/bin/python", "-m", "pytest", "/tmp/run/copy-1/tests/test_a.py"]
                .map(String::from)
                .to_vec(),
            cwd: PathBuf::from("/tmp/run/copy-1"),
            env: BTreeMap::from([
                (
                    "PYTHONPATH".to_string(),
                    "/tmp/run/copy-1:/tmp/run/copy-1/src:/tmp/run/support:/home/u/lib".to_string(),
                ),
                ("PATH".to_string(), "/venv/bin:/usr/bin".to_string()),
            ]),
            exit: "exit code 1".to_string(),
            exit_code: Some(1),
            duration: 1.0,
        };
        assert_eq!(
            portable(&command, &[Path::new("/tmp/run")]),
            "PYTHONPATH=.:src:/home/u/lib /venv/bin/python -m pytest tests/test_a.py"
        );
        // A verdict reused from an earlier run: its copy lay in a directory the report does not
        // name, whose paths are left out as well.
        assert_eq!(
            portable(&command, &[Path::new("/tmp/another-run")]),
            "PYTHONPATH=.:src:/home/u/lib /venv/bin/python -m pytest tests/test_a.py"
        );
    }
}
