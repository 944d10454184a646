//! What a configuration file sets (the engine's keys, and each language's in the language's own form), which file it was and whether one was read: the data the reader fills and the resolver reads.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use mutators::catalog::Mutator;

use crate::choose::Exclude;
use crate::model::record::Bytes;

/// The file a configuration was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    MutdeltaToml,
    /// The `[tool.mutdelta]` table of `pyproject.toml`.
    Pyproject,
}

impl FileKind {
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            FileKind::MutdeltaToml => "mutdelta.toml",
            FileKind::Pyproject => "pyproject.toml",
        }
    }

    /// How the table of the language `name` is named: `mutdelta.toml [NAME]`, or
    /// `pyproject.toml [tool.mutdelta.NAME]`.
    pub fn table(self, name: &str) -> String {
        match self {
            FileKind::MutdeltaToml => format!("mutdelta.toml [{name}]"),
            FileKind::Pyproject => format!("pyproject.toml [tool.mutdelta.{name}]"),
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileKind::MutdeltaToml => f.write_str("mutdelta.toml"),
            FileKind::Pyproject => f.write_str("pyproject.toml [tool.mutdelta]"),
        }
    }
}

/// Whether a configuration was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Found {
    /// Neither file holds one.
    #[default]
    Nothing,
    /// `--no-config`: not looked for.
    Skipped,
    File(FileKind),
}

/// What a configuration file sets; `None` where it says nothing.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub found: Found,
    /// The repository root it was looked for in.
    pub root: PathBuf,
    /// What the user should know about how it was found.
    pub notes: Vec<String>,
    pub test_cmd: Option<String>,
    pub timeout: Option<f64>,
    /// `Some(None)`: no limit.
    pub memory_limit: Option<Option<Bytes>>,
    pub jobs: Option<NonZeroUsize>,
    pub exclude: Option<Exclude>,
    pub disable_mutators: Option<Vec<Mutator>>,
    pub no_arid: Option<bool>,
    pub one_per_line: Option<bool>,
    pub max_mutants: Option<usize>,
    pub include_reformatted: Option<bool>,
    pub mutate_unsafe: Option<bool>,
    pub no_audit: Option<bool>,
    /// Tests known to be flaky: node ids, or their files, classes or directories.
    pub flaky: Option<Vec<String>>,
    /// What the file gives each language's keys, by the language's name, in the language's own
    /// form (its `LanguageTable::read`).
    pub languages: BTreeMap<&'static str, Arc<dyn Any + Send + Sync>>,
}
