//! Where each resolved setting came from (the command line, the configuration file, a default), and `--print-config`'s table of them.

use std::fmt;
use std::path::PathBuf;

use super::file::{Config, FileKind, Found};

/// Where a resolved setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cli,
    /// The file's top level (`[tool.mutdelta]` in `pyproject.toml`).
    File(FileKind),
    /// A language's table in the file.
    Table(FileKind, &'static str),
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Cli => f.write_str("cli"),
            Source::File(kind) => kind.fmt(f),
            Source::Table(kind, name) => f.write_str(&kind.table(name)),
            Source::Default => f.write_str("default"),
        }
    }
}

/// One resolved setting and where it came from.
#[derive(Debug, Clone)]
pub struct Setting {
    pub key: &'static str,
    /// As TOML would write it, or a word in parentheses when it is not set.
    pub value: String,
    pub source: Source,
}

/// The resolved settings of a run and where each came from: what `--print-config` prints.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    pub found: Found,
    pub root: PathBuf,
    pub notes: Vec<String>,
    pub settings: Vec<Setting>,
}

impl Provenance {
    /// Shows `key` as `value` (a setting the command then leaves unused), keeping its source.
    pub fn set(&mut self, key: &str, value: &str) {
        if let Some(setting) = self.settings.iter_mut().find(|setting| setting.key == key) {
            setting.value = value.to_string();
        }
    }
}

/// Picks each setting from the command line, else the configuration, else the default, and
/// keeps where it came from.
pub struct Resolver {
    found: Found,
    root: PathBuf,
    notes: Vec<String>,
    settings: Vec<Setting>,
}

impl Resolver {
    pub fn new(config: &Config) -> Resolver {
        Resolver {
            found: config.found,
            root: config.root.clone(),
            notes: config.notes.clone(),
            settings: Vec::new(),
        }
    }

    /// The command line's value, else the file's, else `default`; `show` writes it for
    /// `--print-config`.
    pub fn value<T>(
        &mut self,
        key: &'static str,
        cli: Option<T>,
        file: Option<T>,
        default: T,
        show: impl Fn(&T) -> String,
    ) -> T {
        let (value, source) = match (cli, file, self.found) {
            (Some(value), _, _) => (value, Source::Cli),
            (None, Some(value), Found::File(kind)) => (value, Source::File(kind)),
            _ => (default, Source::Default),
        };
        self.settings.push(Setting { key, value: show(&value), source });
        value
    }

    /// The command line's value, else the file's (with where the file gave it: `Given::source`),
    /// else `default`; `show` writes it for `--print-config`.
    pub fn given<T>(
        &mut self,
        key: &'static str,
        cli: Option<T>,
        file: Option<(T, Source)>,
        default: T,
        show: impl Fn(&T) -> String,
    ) -> T {
        let (value, source) = match (cli, file) {
            (Some(value), _) => (value, Source::Cli),
            (None, Some((value, source))) => (value, source),
            (None, None) => (default, Source::Default),
        };
        self.settings.push(Setting { key, value: show(&value), source });
        value
    }

    /// A flag: on when the command line gives it, else as the file says, else off.
    pub fn flag(&mut self, key: &'static str, cli: bool, file: Option<bool>) -> bool {
        self.value(key, cli.then_some(true), file, false, bool::to_string)
    }

    pub fn finish(self) -> Provenance {
        Provenance { found: self.found, root: self.root, notes: self.notes, settings: self.settings }
    }
}

/// `--print-config`: the file read, then one line per setting: key, value, source.
pub fn render(provenance: &Provenance) -> String {
    let mut out = match provenance.found {
        Found::File(FileKind::MutdeltaToml) => {
            format!("configuration: {}\n", provenance.root.join("mutdelta.toml").display())
        }
        Found::File(FileKind::Pyproject) => {
            format!("configuration: {} [tool.mutdelta]\n", provenance.root.join("pyproject.toml").display())
        }
        Found::Nothing => format!(
            "configuration: none (no mutdelta.toml, and no [tool.mutdelta] in a pyproject.toml, in {})\n",
            provenance.root.display()
        ),
        Found::Skipped => "configuration: not read (--no-config)\n".to_string(),
    };
    for note in &provenance.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    let key_width = provenance.settings.iter().map(|s| s.key.len()).max().unwrap_or(0);
    let value_width = provenance.settings.iter().map(|s| s.value.chars().count()).max().unwrap_or(0);
    for setting in &provenance.settings {
        out.push_str(&format!(
            "{:key_width$}  {:value_width$}  {}\n",
            setting.key, setting.value, setting.source
        ));
    }
    out
}

/// A string as TOML writes it (for the values `--print-config` prints).
pub fn quoted(text: &str) -> String {
    format!("{text:?}")
}

/// A list of strings as TOML writes it.
pub fn quoted_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|item| quoted(item.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use super::*;

    #[test]
    fn the_command_line_wins_over_the_file_and_the_file_over_the_default() {
        let config = Config {
            found: Found::File(FileKind::MutdeltaToml),
            jobs: NonZeroUsize::new(3),
            timeout: Some(7.0),
            ..Config::default()
        };
        let mut resolver = Resolver::new(&config);
        assert_eq!(
            resolver.value("jobs", Some(5), config.jobs.map(NonZeroUsize::get), 1, usize::to_string),
            5
        );
        assert_eq!(resolver.value("timeout", None, config.timeout, 1.0, f64::to_string), 7.0);
        assert!(!resolver.flag("no-arid", false, config.no_arid));
        let sources: Vec<(&str, String, Source)> =
            resolver.finish().settings.into_iter().map(|s| (s.key, s.value, s.source)).collect();
        assert_eq!(
            sources,
            [
                ("jobs", "5".to_string(), Source::Cli),
                ("timeout", "7".to_string(), Source::File(FileKind::MutdeltaToml)),
                ("no-arid", "false".to_string(), Source::Default),
            ]
        );
    }

    #[test]
    fn a_file_that_was_not_read_is_never_a_source() {
        let config = Config { found: Found::Skipped, jobs: NonZeroUsize::new(3), ..Config::default() };
        let mut resolver = Resolver::new(&config);
        assert_eq!(resolver.value("jobs", None, config.jobs.map(NonZeroUsize::get), 1, usize::to_string), 1);
        assert_eq!(resolver.finish().settings[0].source, Source::Default);
    }
}
