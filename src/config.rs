//! The project's configuration file (`mutdelta.toml` at the repository root, else `[tool.mutdelta]` in its `pyproject.toml`), read from the working tree and checked; and where each resolved setting came from.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use mutators::catalog::Mutator;
use toml::{Table, Value};

use crate::choose::Exclude;
use crate::memory::parse_limit;

mod file;
mod sources;

pub use file::{Config, FileKind, Found, TestTool};
pub use sources::{quoted, quoted_list, render, Provenance, Resolver, Setting, Source};

/// The feature names in `lists` (each names features separated by commas or spaces), or the
/// first that is not a cargo feature name (`where_` says which setting held it).
pub fn feature_names(lists: &[String], where_: &str) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for name in lists.iter().flat_map(|list| list.split(|c: char| c == ',' || c.is_whitespace())) {
        if name.is_empty() {
            continue;
        }
        // Cargo's rule for a feature name (letters, digits, `_`, `-`, `+`, `.`, a word start),
        // with one `/` after a package name.
        let word = |part: &str| {
            part.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || "_-+.".contains(c))
        };
        let valid = match name.split_once('/') {
            Some((package, feature)) => word(package) && word(feature),
            None => word(name),
        };
        if !valid {
            bail!("{where_} holds {name:?}, which is not a cargo feature name: give names such as `serde` or `package/feature`, separated by commas");
        }
        names.push(name.to_string());
    }
    Ok(names)
}

/// Whether `seconds` is a usable time limit: positive, and within what a `Duration` holds.
pub fn is_seconds(seconds: f64) -> bool {
    seconds > 0.0 && Duration::try_from_secs_f64(seconds).is_ok()
}

/// The keys a configuration may set, spelled as on the command line.
pub const KEYS: &[&str] = &[
    "test-cmd",
    "python",
    "timeout",
    "jobs",
    "exclude",
    "disable-mutators",
    "tests",
    "flaky",
    "no-arid",
    "one-per-line",
    "include-reformatted",
    "mutate-unsafe",
    "test-tool",
    "features",
    "all-features",
    "no-default-features",
    "no-audit",
    "confirm-survivors",
    "memory-limit",
];

impl Config {
    /// The configuration of the checkout at `root`, as its working tree holds it:
    /// `mutdelta.toml`, else `pyproject.toml`'s `[tool.mutdelta]`, else none. With `skip`, none
    /// is looked for.
    pub fn load(root: &Path, skip: bool) -> Result<Config> {
        let empty = Config { root: root.to_path_buf(), ..Config::default() };
        if skip {
            return Ok(Config { found: Found::Skipped, ..empty });
        }
        let pyproject = root.join("pyproject.toml");
        if let Some(text) = read(&root.join("mutdelta.toml"))? {
            let table = parse(&text, FileKind::MutdeltaToml)?;
            let mut config = Config::from_table(table, FileKind::MutdeltaToml, root)?;
            let shadowed = read(&pyproject)
                .ok()
                .flatten()
                .and_then(|text| text.parse::<Table>().ok())
                .is_some_and(|table| mutdelta_table(&table).is_some());
            if shadowed {
                config.notes.push(
                    "pyproject.toml's [tool.mutdelta] table is ignored: mutdelta.toml is read instead"
                        .to_string(),
                );
            }
            return Ok(config);
        }
        let Some(text) = read(&pyproject)? else { return Ok(empty) };
        let table = parse(&text, FileKind::Pyproject)?;
        match mutdelta_table(&table) {
            None => Ok(empty),
            Some(Value::Table(own)) => Config::from_table(own.clone(), FileKind::Pyproject, root),
            Some(other) => {
                bail!("pyproject.toml: `tool.mutdelta` must be a table of settings, not {}", describe(other))
            }
        }
    }

    fn from_table(table: Table, kind: FileKind, root: &Path) -> Result<Config> {
        let mut config = Config { found: Found::File(kind), root: root.to_path_buf(), ..Config::default() };
        for (key, value) in table {
            let wrong =
                |allowed: &str| anyhow!("{kind}: `{key}` must be {allowed}, not {}", describe(&value));
            if let Some(flag) = config.flag(&key) {
                *flag = Some(boolean(&value).ok_or_else(|| wrong("true or false"))?);
                continue;
            }
            match key.as_str() {
                "test-cmd" => match &value {
                    Value::String(cmd) if !cmd.trim().is_empty() => config.test_cmd = Some(cmd.clone()),
                    _ => return Err(wrong("a shell command (a non-empty string)")),
                },
                "python" => match &value {
                    Value::String(path) if !path.is_empty() => config.python = Some(from_root(root, path)),
                    _ => return Err(wrong("a path to an interpreter or a virtual environment (a string)")),
                },
                "timeout" => match &value {
                    Value::Integer(n) if is_seconds(*n as f64) => config.timeout = Some(*n as f64),
                    Value::Float(x) if is_seconds(*x) => config.timeout = Some(*x),
                    _ => return Err(wrong("a positive number of seconds")),
                },
                "memory-limit" => match &value {
                    Value::String(text) => {
                        config.memory_limit =
                            Some(parse_limit(text).map_err(|err| anyhow!("{kind}: `memory-limit`: {err}"))?)
                    }
                    _ => return Err(wrong("an amount of memory such as \"4G\", or \"none\" (a string)")),
                },
                "jobs" => match &value {
                    Value::Integer(n) if *n > 0 => {
                        config.jobs = usize::try_from(*n).ok().and_then(NonZeroUsize::new)
                    }
                    _ => return Err(wrong("a whole number of at least 1")),
                },
                "exclude" => config.exclude = Some(exclude(&value, kind, &wrong)?),
                "disable-mutators" => config.disable_mutators = Some(families(&value, kind, &wrong)?),
                "tests" => {
                    let tests = strings(&value)
                        .filter(|tests| tests.iter().all(|test| !test.is_empty()))
                        .ok_or_else(|| wrong("a list of test files or pytest node ids (strings)"))?;
                    config.tests = Some(tests);
                }
                "flaky" => {
                    let tests = strings(&value)
                        .filter(|tests| tests.iter().all(|test| !test.trim().is_empty()))
                        .ok_or_else(|| {
                            wrong("a list of test ids, or their files, classes or directories (strings)")
                        })?;
                    config.flaky = Some(tests);
                }
                "features" => config.features = Some(features(&value, kind, &wrong)?),
                "test-tool" => match &value {
                    Value::String(tool) if tool == "cargo" => config.test_tool = Some(TestTool::Cargo),
                    Value::String(tool) if tool == "nextest" => config.test_tool = Some(TestTool::Nextest),
                    _ => return Err(wrong("\"cargo\" or \"nextest\"")),
                },
                _ => bail!(
                    "{kind}: unknown key `{key}`{}; the keys are {}",
                    did_you_mean(&key, KEYS.iter().copied()),
                    KEYS.join(", ")
                ),
            }
        }
        Ok(config)
    }

    /// Where the true-or-false setting `key` goes, if it is one.
    fn flag(&mut self, key: &str) -> Option<&mut Option<bool>> {
        Some(match key {
            "no-arid" => &mut self.no_arid,
            "one-per-line" => &mut self.one_per_line,
            "include-reformatted" => &mut self.include_reformatted,
            "mutate-unsafe" => &mut self.mutate_unsafe,
            "no-audit" => &mut self.no_audit,
            "confirm-survivors" => &mut self.confirm_survivors,
            "all-features" => &mut self.all_features,
            "no-default-features" => &mut self.no_default_features,
            _ => return None,
        })
    }
}

/// `exclude`: globs, each checked.
fn exclude(value: &Value, kind: FileKind, wrong: &dyn Fn(&str) -> anyhow::Error) -> Result<Exclude> {
    let patterns = strings(value).ok_or_else(|| wrong("a list of globs (strings)"))?;
    Exclude::new(&patterns).map_err(|(pattern, why)| {
        anyhow!("{kind}: `exclude` holds {pattern:?}, which is not a glob ({why}): fix or remove it")
    })
}

/// `disable-mutators`: names of mutator families, each known.
fn families(value: &Value, kind: FileKind, wrong: &dyn Fn(&str) -> anyhow::Error) -> Result<Vec<Mutator>> {
    let names = strings(value).ok_or_else(|| wrong("a list of mutator family names (strings)"))?;
    names.iter().map(|name| Mutator::from_name(name).ok_or_else(|| unknown_family(kind, name))).collect()
}

/// `features`: one string of names or a list of them, each a valid cargo feature name.
fn features(value: &Value, kind: FileKind, wrong: &dyn Fn(&str) -> anyhow::Error) -> Result<Vec<String>> {
    let lists = match value {
        Value::String(names) => vec![names.clone()],
        _ => strings(value).ok_or_else(|| wrong("a list of cargo feature names (strings)"))?,
    };
    feature_names(&lists, &format!("{kind}: `features`"))
}

/// A file's text; `None` when there is no such file.
fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => bail!("could not read {}: {err}", path.display()),
    }
}

fn parse(text: &str, kind: FileKind) -> Result<Table> {
    text.parse::<Table>().map_err(|err| {
        let (line, column) = err.span().map_or((1, 1), |span| line_and_column(text, span.start));
        let message = err.message().trim().replace('\n', "; ");
        anyhow!(
            "{} is not valid TOML: line {line}, column {column}: {message} (fix it, or pass --no-config to run without it)",
            kind.file_name()
        )
    })
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

fn mutdelta_table(pyproject: &Table) -> Option<&Value> {
    pyproject.get("tool")?.as_table()?.get("mutdelta")
}

/// A path in the configuration, read from the repository root; a bare name that is no file
/// there stays a command name.
fn from_root(root: &Path, path: &str) -> PathBuf {
    let joined = root.join(path);
    if Path::new(path).components().count() == 1 && !joined.exists() {
        PathBuf::from(path)
    } else {
        joined
    }
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|item| item.as_str().map(str::to_string)).collect()
}

fn boolean(value: &Value) -> Option<bool> {
    value.as_bool()
}

/// A value in words, for an error that says what was found instead.
fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => format!("the string {text:?}"),
        Value::Integer(n) => n.to_string(),
        Value::Float(x) => format!("{x:?}"),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(when) => format!("the date {when}"),
        Value::Array(items) => match items.iter().find(|item| !item.is_str()) {
            Some(item) => format!("a list holding {}", describe(item)),
            None => "a list".to_string(),
        },
        Value::Table(_) => "a table".to_string(),
    }
}

/// The mutator family `name` names, as `--disable-mutator` gives it; else what the names are.
pub fn mutator_family(name: &str) -> Result<Mutator> {
    Mutator::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Mutator::ALL.iter().map(|mutator| mutator.name()).collect();
        anyhow!(
            "{name:?} is no mutator family{}; the families are {} (`mutdelta mutators` shows what each makes)",
            did_you_mean(name, names.iter().copied()),
            names.join(", ")
        )
    })
}

fn unknown_family(kind: FileKind, name: &str) -> anyhow::Error {
    let names: Vec<&str> = Mutator::ALL.iter().map(|mutator| mutator.name()).collect();
    anyhow!(
        "{kind}: `disable-mutators` names {name:?}, which is no mutator family{}; the families are {} (`mutdelta mutators` shows what each makes)",
        did_you_mean(name, names.iter().copied()),
        names.join(", ")
    )
}

/// " (did you mean `x`?)" for the candidate closest to `word`, when one is close.
fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let plain = |text: &str| text.to_lowercase().replace(['_', '-'], "");
    let word = plain(word);
    candidates
        .map(|candidate| (strsim::jaro_winkler(&word, &plain(candidate)), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| format!(" (did you mean `{candidate}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Bytes;

    fn load(text: &str) -> Result<Config> {
        let table = parse(text, FileKind::MutdeltaToml)?;
        Config::from_table(table, FileKind::MutdeltaToml, Path::new("/repo"))
    }

    #[test]
    fn every_key_is_read() {
        let config = load(
            "test-cmd = \"make test\"\npython = \".venv/bin/python\"\ntimeout = 2.5\njobs = 3\n\
             exclude = [\"docs/conf.py\"]\ndisable-mutators = [\"StringLiteral\"]\ntests = [\"tests/test_a.py\"]\nflaky = [\"tests/test_net.py\"]\n\
             no-arid = true\none-per-line = true\ninclude-reformatted = false\nmutate-unsafe = true\nfeatures = [\"a\", \"pkg/b\"]\nall-features = false\nno-default-features = true\ntest-tool = \"nextest\"\nno-audit = true\n\
             memory-limit = \"2G\"\n",
        )
        .unwrap();
        assert_eq!(config.test_cmd.as_deref(), Some("make test"));
        assert_eq!(config.python, Some(PathBuf::from("/repo/.venv/bin/python")));
        assert_eq!(config.timeout, Some(2.5));
        assert_eq!(config.jobs, NonZeroUsize::new(3));
        assert!(config.exclude.unwrap().matches(Path::new("docs/conf.py")));
        assert_eq!(config.disable_mutators, Some(vec![Mutator::StringLiteral]));
        assert_eq!(config.tests, Some(vec!["tests/test_a.py".to_string()]));
        assert_eq!(config.flaky, Some(vec!["tests/test_net.py".to_string()]));
        assert_eq!(
            (config.no_arid, config.one_per_line, config.include_reformatted, config.no_audit),
            (Some(true), Some(true), Some(false), Some(true))
        );
        assert_eq!(config.mutate_unsafe, Some(true));
        assert_eq!(config.features, Some(vec!["a".to_string(), "pkg/b".to_string()]));
        assert_eq!((config.all_features, config.no_default_features), (Some(false), Some(true)));
        assert_eq!(
            load("features = \"a, b c\"").unwrap().features,
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(config.test_tool, Some(TestTool::Nextest));
        assert_eq!(config.memory_limit, Some(Some(Bytes(2 << 30))));
        assert_eq!(load("memory-limit = \"none\"").unwrap().memory_limit, Some(None));
    }

    #[test]
    fn a_bare_interpreter_name_stays_a_command() {
        assert_eq!(load("python = \"python3.12\"").unwrap().python, Some(PathBuf::from("python3.12")));
    }

    #[test]
    fn bad_values_name_the_key_and_what_is_allowed() {
        let cases = [
            ("jobs = 0", "mutdelta.toml: `jobs` must be a whole number of at least 1, not 0"),
            ("jobs = \"4\"", "`jobs` must be a whole number of at least 1, not the string \"4\""),
            ("timeout = -1", "`timeout` must be a positive number of seconds, not -1"),
            ("timeout = 1e300", "`timeout` must be a positive number of seconds, not 1e300"),
            ("timeout = nan", "`timeout` must be a positive number of seconds, not NaN"),
            (
                "memory-limit = 4",
                "`memory-limit` must be an amount of memory such as \"4G\", or \"none\" (a string), not 4",
            ),
            ("memory-limit = \"lots\"", "mutdelta.toml: `memory-limit`: \"lots\" is not an amount of memory"),
            ("no-arid = \"yes\"", "`no-arid` must be true or false, not the string \"yes\""),
            ("exclude = \"docs\"", "`exclude` must be a list of globs (strings), not the string \"docs\""),
            (
                "tests = [1]",
                "`tests` must be a list of test files or pytest node ids (strings), not a list holding 1",
            ),
            ("test-tool = \"pytest\"", "`test-tool` must be \"cargo\" or \"nextest\""),
            (
                "flaky = \"tests/test_net.py\"",
                "`flaky` must be a list of test ids, or their files, classes or directories (strings), not the string",
            ),
            ("flaky = [\" \"]", "`flaky` must be a list of test ids"),
            // A feature name that cargo would read as an option never reaches cargo.
            (
                "features = [\"rounding\", \"--config=build.rustc-wrapper='x'\"]",
                "mutdelta.toml: `features` holds \"--config=build.rustc-wrapper='x'\", which is not a cargo feature name",
            ),
            ("features = [1]", "`features` must be a list of cargo feature names (strings)"),
            ("all-features = 1", "`all-features` must be true or false"),
            ("test-cmd = \" \"", "`test-cmd` must be a shell command"),
            ("exclude = [\"docs/[conf.py\"]", "`exclude` holds \"docs/[conf.py\", which is not a glob"),
            ("jbos = 2", "unknown key `jbos` (did you mean `jobs`?); the keys are test-cmd, python,"),
            ("test_cmd = \"x\"", "unknown key `test_cmd` (did you mean `test-cmd`?)"),
            (
                "disable-mutators = [\"StringLiterals\"]",
                "names \"StringLiterals\", which is no mutator family (did you mean `StringLiteral`?)",
            ),
        ];
        for (text, expected) in cases {
            let err = load(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn bad_toml_is_placed_by_line_and_column() {
        let err = load("jobs = 2\ntimeout = \n").unwrap_err().to_string();
        assert!(err.starts_with("mutdelta.toml is not valid TOML: line 2, column "), "{err}");
    }
}
