//! The project's configuration file (`mutdelta.toml` at the repository root, else `[tool.mutdelta]` in its `pyproject.toml`), read from the working tree and checked; and where each resolved setting came from.

use std::num::NonZeroUsize;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use mutators::catalog::Mutator;
use toml::{Table, Value};

use crate::choose::Exclude;
use crate::memory::parse_limit;

mod file;
mod sources;
mod tables;
mod values;

pub use file::{Config, FileKind, Found};
pub use sources::{quoted, quoted_list, render, Provenance, Resolver, Setting, Source};
pub use tables::{Given, Key, LanguageTable};
use values::{boolean, describe, did_you_mean, strings};

/// Whether `seconds` is a usable time limit: positive, and within what a `Duration` holds.
pub fn is_seconds(seconds: f64) -> bool {
    seconds > 0.0 && Duration::try_from_secs_f64(seconds).is_ok()
}

/// The keys the engine's settings take in a configuration, spelled as on the command line
/// (each language's own are its `LanguageTable`'s).
pub const KEYS: &[&str] = &[
    "test-cmd",
    "timeout",
    "jobs",
    "exclude",
    "disable-mutators",
    "flaky",
    "no-arid",
    "one-per-line",
    "max-mutants",
    "include-reformatted",
    "mutate-unsafe",
    "no-audit",
    "memory-limit",
];

impl Config {
    /// The configuration of the checkout at `root`, as its working tree holds it:
    /// `mutdelta.toml`, else `pyproject.toml`'s `[tool.mutdelta]`, else none. With `skip`, none
    /// is looked for. Each of `languages` reads its own keys.
    pub fn load(root: &Path, skip: bool, languages: &[LanguageTable]) -> Result<Config> {
        let empty = Config { root: root.to_path_buf(), ..Config::default() };
        if skip {
            return Ok(Config { found: Found::Skipped, ..empty });
        }
        let pyproject = root.join("pyproject.toml");
        if let Some(text) = read(&root.join("mutdelta.toml"))? {
            let table = parse(&text, FileKind::MutdeltaToml)?;
            let mut config = Config::from_table(table, FileKind::MutdeltaToml, root, languages)?;
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
            Some(Value::Table(own)) => Config::from_table(own.clone(), FileKind::Pyproject, root, languages),
            Some(other) => {
                bail!("pyproject.toml: `tool.mutdelta` must be a table of settings, not {}", describe(other))
            }
        }
    }

    fn from_table(table: Table, kind: FileKind, root: &Path, languages: &[LanguageTable]) -> Result<Config> {
        let mut config = Config { found: Found::File(kind), root: root.to_path_buf(), ..Config::default() };
        let (mut flat, mut tables) = (Table::new(), Table::new());
        for (key, value) in table {
            let table_of = tables::language_of(languages, &key);
            if table_of.is_some() && (value.is_table() || tables::flat_owner(languages, &key).is_none()) {
                tables.insert(key, value);
            } else if tables::flat_owner(languages, &key).is_some() {
                flat.insert(key, value);
            } else {
                config.read_key(&key, &value, kind, languages)?;
            }
        }
        config.languages = tables::read_languages(languages, &flat, &tables, kind, root)?;
        Ok(config)
    }

    /// The engine's key `key`, checked; an unknown one refused with the closest known.
    fn read_key(
        &mut self,
        key: &str,
        value: &Value,
        kind: FileKind,
        languages: &[LanguageTable],
    ) -> Result<()> {
        let wrong = |allowed: &str| anyhow!("{kind}: `{key}` must be {allowed}, not {}", describe(value));
        if let Some(flag) = self.flag(key) {
            *flag = Some(boolean(value).ok_or_else(|| wrong("true or false"))?);
            return Ok(());
        }
        match key {
            "test-cmd" => match value {
                Value::String(cmd) if !cmd.trim().is_empty() => self.test_cmd = Some(cmd.clone()),
                _ => return Err(wrong("a shell command (a non-empty string)")),
            },
            "timeout" => match value {
                Value::Integer(n) if is_seconds(*n as f64) => self.timeout = Some(*n as f64),
                Value::Float(x) if is_seconds(*x) => self.timeout = Some(*x),
                _ => return Err(wrong("a positive number of seconds")),
            },
            "memory-limit" => match value {
                Value::String(text) => {
                    self.memory_limit =
                        Some(parse_limit(text).map_err(|err| anyhow!("{kind}: `memory-limit`: {err}"))?)
                }
                _ => return Err(wrong("an amount of memory such as \"4G\", or \"none\" (a string)")),
            },
            "jobs" => match value {
                Value::Integer(n) if *n > 0 => {
                    self.jobs = usize::try_from(*n).ok().and_then(NonZeroUsize::new)
                }
                _ => return Err(wrong("a whole number of at least 1")),
            },
            "max-mutants" => match value {
                Value::Integer(n) if *n >= 0 => self.max_mutants = usize::try_from(*n).ok(),
                _ => return Err(wrong("a whole number (0: no bound)")),
            },
            "exclude" => self.exclude = Some(exclude(value, kind, &wrong)?),
            "disable-mutators" => self.disable_mutators = Some(families(value, kind, &wrong)?),
            "flaky" => {
                let tests = strings(value)
                    .filter(|tests| tests.iter().all(|test| !test.trim().is_empty()))
                    .ok_or_else(|| {
                    wrong("a list of test ids, or their files, classes or directories (strings)")
                })?;
                self.flaky = Some(tests);
            }
            _ => {
                let keys = all_keys(languages);
                bail!(
                    "{kind}: unknown key `{key}`{}; the keys are {}",
                    did_you_mean(key, keys.iter().copied()),
                    keys.join(", ")
                )
            }
        }
        Ok(())
    }

    /// Where the true-or-false setting `key` goes, if it is one.
    fn flag(&mut self, key: &str) -> Option<&mut Option<bool>> {
        Some(match key {
            "no-arid" => &mut self.no_arid,
            "one-per-line" => &mut self.one_per_line,
            "include-reformatted" => &mut self.include_reformatted,
            "mutate-unsafe" => &mut self.mutate_unsafe,
            "no-audit" => &mut self.no_audit,
            _ => return None,
        })
    }
}

/// `exclude`: globs, each checked.
fn exclude(value: &Value, kind: FileKind, wrong: &dyn Fn(&str) -> anyhow::Error) -> Result<Exclude> {
    let patterns = strings(value).ok_or_else(|| wrong("a list of globs (strings)"))?;
    Exclude::new(&patterns, crate::choose::CONFIGURED).map_err(|(pattern, why)| {
        anyhow!("{kind}: `exclude` holds {pattern:?}, which is not a glob ({why}): fix or remove it")
    })
}

/// `disable-mutators`: names of mutator families, each known.
fn families(value: &Value, kind: FileKind, wrong: &dyn Fn(&str) -> anyhow::Error) -> Result<Vec<Mutator>> {
    let names = strings(value).ok_or_else(|| wrong("a list of mutator family names (strings)"))?;
    names.iter().map(|name| Mutator::from_name(name).ok_or_else(|| unknown_family(kind, name))).collect()
}

/// The keys a file's top level may hold: the engine's, then each language's (as the top level
/// spells them), then the names of the languages' tables.
fn all_keys(languages: &[LanguageTable]) -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = KEYS.to_vec();
    keys.extend(languages.iter().flat_map(|language| language.keys.iter().map(|key| key.flat)));
    for language in languages {
        if !keys.contains(&language.table) {
            keys.push(language.table);
        }
    }
    keys
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

/// The configuration `text` holds, as if read from `kind` at `/repo` (for the languages' tests).
#[cfg(test)]
pub fn from_text(text: &str, kind: FileKind, languages: &[LanguageTable]) -> Result<Config> {
    let mut table = parse(text, kind)?;
    if kind == FileKind::Pyproject {
        match table
            .remove("tool")
            .and_then(|tool| tool.as_table().and_then(|tool| tool.get("mutdelta")).cloned())
        {
            Some(Value::Table(own)) => table = own,
            _ => return Ok(Config::default()),
        }
    }
    Config::from_table(table, kind, Path::new("/repo"), languages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::Bytes;

    /// A language whose table is named as one of its top-level keys is, as the interpreter's is.
    const LANG: LanguageTable = LanguageTable {
        table: "lang",
        keys: &[Key { table: "path", flat: "lang" }, Key { table: "names", flat: "names" }],
        read: |given| {
            let mut read = Vec::new();
            for key in ["path", "names"] {
                if let Some(value) = given.value(key) {
                    if key == "path" && !value.is_str() {
                        return Err(given.wrong(key, "a path (a string)"));
                    }
                    read.push((key, describe(value), given.source(key)));
                }
            }
            Ok(std::sync::Arc::new(read))
        },
    };
    const OTHER: LanguageTable =
        LanguageTable { table: "other", keys: &[], read: |_| Ok(std::sync::Arc::new(())) };

    fn load(text: &str) -> Result<Config> {
        from_text(text, FileKind::MutdeltaToml, &[LANG, OTHER])
    }

    /// What the language `lang` read: each key, its value, where it was written.
    fn read_by_lang(config: &Config) -> Vec<(&'static str, String, Source)> {
        config.languages["lang"].downcast_ref::<Vec<(&'static str, String, Source)>>().unwrap().clone()
    }

    #[test]
    fn every_key_is_read() {
        let config = load(
            "test-cmd = \"make test\"\ntimeout = 2.5\njobs = 3\n\
             exclude = [\"docs/conf.py\"]\ndisable-mutators = [\"StringLiteral\"]\nflaky = [\"tests/test_net.py\"]\n\
             no-arid = true\none-per-line = true\ninclude-reformatted = false\nmutate-unsafe = true\nno-audit = true\n\
             memory-limit = \"2G\"\n",
        )
        .unwrap();
        assert_eq!(config.test_cmd.as_deref(), Some("make test"));
        assert_eq!(config.timeout, Some(2.5));
        assert_eq!(config.jobs, NonZeroUsize::new(3));
        assert!(config.exclude.unwrap().matches(Path::new("docs/conf.py")));
        assert_eq!(config.disable_mutators, Some(vec![Mutator::StringLiteral]));
        assert_eq!(config.flaky, Some(vec!["tests/test_net.py".to_string()]));
        assert_eq!(
            (config.no_arid, config.one_per_line, config.include_reformatted, config.no_audit),
            (Some(true), Some(true), Some(false), Some(true))
        );
        assert_eq!(config.mutate_unsafe, Some(true));
        assert_eq!(config.memory_limit, Some(Some(Bytes(2 << 30))));
        assert_eq!(load("memory-limit = \"none\"").unwrap().memory_limit, Some(None));
    }

    #[test]
    fn a_language_reads_its_keys_from_its_table_or_from_the_top_level() {
        let flat = load("lang = \"bin/x\"\nnames = [\"a\"]\n").unwrap();
        assert_eq!(
            read_by_lang(&flat),
            [
                ("path", "the string \"bin/x\"".to_string(), Source::File(FileKind::MutdeltaToml)),
                ("names", "a list".to_string(), Source::File(FileKind::MutdeltaToml)),
            ]
        );
        let table = load("[lang]\npath = \"bin/x\"\n").unwrap();
        assert_eq!(
            read_by_lang(&table),
            [("path", "the string \"bin/x\"".to_string(), Source::Table(FileKind::MutdeltaToml, "lang"))]
        );
        assert_eq!(Source::Table(FileKind::MutdeltaToml, "lang").to_string(), "mutdelta.toml [lang]");
        let pyproject =
            from_text("[tool.mutdelta.lang]\nnames = []\n", FileKind::Pyproject, &[LANG]).unwrap();
        let source = Source::Table(FileKind::Pyproject, "lang");
        assert_eq!(read_by_lang(&pyproject), [("names", "a list".to_string(), source)]);
        assert_eq!(source.to_string(), "pyproject.toml [tool.mutdelta.lang]");
        assert!(read_by_lang(&load("jobs = 2").unwrap()).is_empty(), "read even when it says nothing");
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
                "flaky = \"tests/test_net.py\"",
                "`flaky` must be a list of test ids, or their files, classes or directories (strings), not the string",
            ),
            ("flaky = [\" \"]", "`flaky` must be a list of test ids"),
            ("test-cmd = \" \"", "`test-cmd` must be a shell command"),
            ("exclude = [\"docs/[conf.py\"]", "`exclude` holds \"docs/[conf.py\", which is not a glob"),
            ("jbos = 2", "unknown key `jbos` (did you mean `jobs`?); the keys are test-cmd, timeout,"),
            ("test_cmd = \"x\"", "unknown key `test_cmd` (did you mean `test-cmd`?)"),
            ("nmaes = 2", "unknown key `nmaes` (did you mean `names`?)"),
            ("othre = 2", "unknown key `othre` (did you mean `other`?)"),
            (
                "disable-mutators = [\"StringLiterals\"]",
                "names \"StringLiterals\", which is no mutator family (did you mean `StringLiteral`?)",
            ),
            // A language's table.
            (
                "[lang]\npaht = \"x\"",
                "mutdelta.toml [lang]: unknown key `paht` (did you mean `path`?); the keys are path, names",
            ),
            ("[lang]\npath = 1", "mutdelta.toml [lang]: `path` must be a path (a string), not 1"),
            ("lang = 1", "mutdelta.toml: `lang` must be a path (a string), not 1"),
            ("other = 1", "mutdelta.toml: `other` must be a table of settings, not 1"),
            ("other = [\"a\"]", "mutdelta.toml: `other` must be a table of settings, not a list"),
            (
                "names = []\n[lang]\nnames = []",
                "mutdelta.toml: `names` is set both at the top level and in mutdelta.toml [lang]: keep one (the table's)",
            ),
            ("[lang.path]\nx = 1", "mutdelta.toml [lang]: `path` must be a path (a string), not a table"),
        ];
        for (text, expected) in cases {
            let err = load(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        let err = from_text("[tool.mutdelta.lang]\nfoo = 1\n", FileKind::Pyproject, &[LANG]).unwrap_err();
        assert!(
            err.to_string().starts_with("pyproject.toml [tool.mutdelta.lang]: unknown key `foo`"),
            "{err}"
        );
    }

    #[test]
    fn bad_toml_is_placed_by_line_and_column() {
        let err = load("jobs = 2\ntimeout = \n").unwrap_err().to_string();
        assert!(err.starts_with("mutdelta.toml is not valid TOML: line 2, column "), "{err}");
    }
}
