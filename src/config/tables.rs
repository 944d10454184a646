//! The keys a language owns in a configuration file: read from its table (`[NAME]` in `mutdelta.toml`, `[tool.mutdelta.NAME]` in `pyproject.toml`) or, as before tables, from the file's top level; each checked by the language that owns it.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Result};
use toml::{Table, Value};

use super::file::FileKind;
use super::sources::Source;
use super::values;

/// One key a language reads: as its table spells it, and as the file's top level spells it.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub table: &'static str,
    pub flat: &'static str,
}

/// What the configuration knows of a language's keys: its table, its keys, and how the language
/// reads what the file gives them into a form of its own.
#[derive(Clone, Copy)]
pub struct LanguageTable {
    /// The language's name: its table's.
    pub table: &'static str,
    pub keys: &'static [Key],
    /// The values `given`, each checked, into the language's own form (kept in `Config`).
    pub read: fn(&Given) -> Result<Arc<dyn Any + Send + Sync>>,
}

/// The values a file gives one language's keys, each with where it was written.
pub struct Given<'a> {
    /// The repository root, which a path in the file is read from.
    pub root: &'a Path,
    values: BTreeMap<&'static str, Value>,
    sources: BTreeMap<&'static str, Source>,
    /// How each key is named in an error: `file: \`key\``, or `file [table]: \`key\``.
    places: BTreeMap<&'static str, String>,
}

impl Given<'_> {
    /// The value given the key its table spells `key`, if any.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// Where the value of `key` was written: the file, or the file's table.
    pub fn source(&self, key: &str) -> Source {
        self.sources.get(key).copied().unwrap_or(Source::Default)
    }

    /// The error for a value of `key` that is not `allowed`.
    pub fn wrong(&self, key: &str, allowed: &str) -> anyhow::Error {
        let found = self.values.get(key).map_or_else(String::new, values::describe);
        anyhow!("{} must be {allowed}, not {found}", self.place(key))
    }

    /// How `key` is named in an error: the file (and table) it was written in, then the key as
    /// written there.
    pub fn place(&self, key: &str) -> &str {
        self.places.get(key).map_or("", String::as_str)
    }

    /// The string `key` holds, if it holds one.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.value(key)?.as_str()
    }

    /// The list of strings `key` holds, if it holds one.
    pub fn strings(&self, key: &str) -> Option<Vec<String>> {
        values::strings(self.value(key)?)
    }

    /// `path`, as the file gave it, read from the repository root (a bare name that is no file
    /// there stays a command name).
    pub fn path(&self, path: &str) -> PathBuf {
        values::from_root(self.root, path)
    }
}

/// The language whose table is named `key`, if any.
pub(super) fn language_of<'l>(languages: &'l [LanguageTable], key: &str) -> Option<&'l LanguageTable> {
    languages.iter().find(|language| language.table == key)
}

/// The language whose top-level key `key` is, if any.
pub(super) fn flat_owner<'l>(languages: &'l [LanguageTable], key: &str) -> Option<&'l LanguageTable> {
    languages.iter().find(|language| language.keys.iter().any(|known| known.flat == key))
}

/// Each language's keys, from the file's top level (`flat`: those the file's own table gives
/// outside any language's table) and from its own table, refused where both give one, where
/// the table holds an unknown key, and where the table is no table; then read by the language.
pub(super) fn read_languages(
    languages: &[LanguageTable],
    flat: &Table,
    tables: &Table,
    kind: FileKind,
    root: &Path,
) -> Result<BTreeMap<&'static str, Arc<dyn Any + Send + Sync>>> {
    let mut read = BTreeMap::new();
    for language in languages {
        let mut given =
            Given { root, values: BTreeMap::new(), sources: BTreeMap::new(), places: BTreeMap::new() };
        for key in language.keys {
            if let Some(value) = flat.get(key.flat) {
                given.values.insert(key.table, value.clone());
                given.sources.insert(key.table, Source::File(kind));
                given.places.insert(key.table, format!("{kind}: `{}`", key.flat));
            }
        }
        if let Some(table) = tables.get(language.table) {
            let Value::Table(table) = table else {
                bail!(
                    "{kind}: `{}` must be a table of settings, not {}",
                    language.table,
                    values::describe(table)
                )
            };
            let place = kind.table(language.table);
            for (name, value) in table {
                let Some(key) = language.keys.iter().find(|key| key.table == name) else {
                    let names: Vec<&str> = language.keys.iter().map(|key| key.table).collect();
                    bail!(
                        "{place}: unknown key `{name}`{}; the keys are {}",
                        values::did_you_mean(name, names.iter().copied()),
                        names.join(", ")
                    )
                };
                if flat.contains_key(key.flat) {
                    bail!(
                        "{kind}: `{}` is set both at the top level and in {place}: keep one (the table's)",
                        key.flat
                    );
                }
                given.values.insert(key.table, value.clone());
                given.sources.insert(key.table, Source::Table(kind, language.table));
                given.places.insert(key.table, format!("{place}: `{name}`"));
            }
        }
        read.insert(language.table, (language.read)(&given)?);
    }
    Ok(read)
}
