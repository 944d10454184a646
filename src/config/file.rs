//! What a configuration file sets, which file it was and whether one was read: the data the reader fills and the resolver reads.

use std::fmt;
use std::num::NonZeroUsize;
use std::path::PathBuf;

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
    /// Read from the repository root (a bare name is a command looked up on `PATH`).
    pub python: Option<PathBuf>,
    pub timeout: Option<f64>,
    /// `Some(None)`: no limit.
    pub memory_limit: Option<Option<Bytes>>,
    pub jobs: Option<NonZeroUsize>,
    pub exclude: Option<Exclude>,
    pub disable_mutators: Option<Vec<Mutator>>,
    pub tests: Option<Vec<String>>,
    pub no_arid: Option<bool>,
    pub one_per_line: Option<bool>,
    pub include_reformatted: Option<bool>,
    pub mutate_unsafe: Option<bool>,
    pub test_tool: Option<TestTool>,
    pub features: Option<Vec<String>>,
    pub all_features: Option<bool>,
    pub no_default_features: Option<bool>,
    pub no_audit: Option<bool>,
    pub confirm_survivors: Option<bool>,
    /// Tests known to be flaky: node ids, or their files, classes or directories.
    pub flaky: Option<Vec<String>>,
}

/// What runs a cargo package's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestTool {
    Cargo,
    Nextest,
}

impl TestTool {
    /// As `--test-tool` spells it.
    pub fn name(self) -> &'static str {
        match self {
            TestTool::Cargo => "cargo",
            TestTool::Nextest => "nextest",
        }
    }
}
