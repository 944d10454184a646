//! Rust's settings: what runs the tests, whether mutants share one build, the cargo features; their keys (`[rust]`, or the file's top level as before), the flags they read, their resolution and checks (a feature name cargo would read as an option never reaches it).

use std::any::Any;
use std::sync::Arc;

use anyhow::{bail, Result};

use crate::cli::{CheckArgs, TestToolArg};
use crate::config::{self, Given, Key, LanguageTable, Resolver, Source};
use crate::options::{LanguageOptions, Options, SettingsOf};

/// Settings only the Rust side reads.
#[derive(Debug, Clone)]
pub struct RustSettings {
    pub test_tool: TestTool,
    /// Mutants switched into one build per package (`--no-schema`: each built alone).
    pub schema: bool,
    pub features: Features,
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

/// The cargo features the packages are built and tested with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Features {
    /// `--features`: names, `package/feature` for one package's.
    pub named: Vec<String>,
    pub all: bool,
    pub no_default: bool,
}

impl Features {
    /// What each cargo build and test command is given: the names as one word of their own,
    /// so none can be read as another option.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if !self.named.is_empty() {
            args.push(format!("--features={}", self.named.join(",")));
        }
        if self.all {
            args.push("--all-features".to_string());
        }
        if self.no_default {
            args.push("--no-default-features".to_string());
        }
        args
    }
}

impl RustSettings {
    /// Rust's settings among `options`.
    pub fn of(options: &Options) -> &RustSettings {
        options.languages.get().expect("the options hold Rust's settings")
    }
}

impl LanguageOptions for RustSettings {
    /// The test tool, the schema and the features (as the key of verdicts has always written
    /// them).
    fn verdict_key(&self) -> String {
        format!("{:?} {} {:?}", self.test_tool, self.schema, self.features)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Rust's keys, its flags, and how they are read and resolved.
pub const SETTINGS: SettingsOf = SettingsOf {
    file: LanguageTable { table: "rust", keys: KEYS, read },
    flags: &["--test-tool", "--features", "--all-features", "--no-default-features", "--no-schema"],
    tests_run_by: "cargo test for Rust files",
    audit_runs_with: None,
    resolve,
};

const KEYS: &[Key] = &[
    Key { table: "test-tool", flat: "test-tool" },
    Key { table: "features", flat: "features" },
    Key { table: "all-features", flat: "all-features" },
    Key { table: "no-default-features", flat: "no-default-features" },
];

/// What the file gives Rust's keys, checked, with where each was written.
#[derive(Debug, Default)]
struct FromFile {
    test_tool: Option<(TestTool, Source)>,
    features: Option<(Vec<String>, Source)>,
    all_features: Option<(bool, Source)>,
    no_default_features: Option<(bool, Source)>,
}

fn read(given: &Given) -> Result<Arc<dyn Any + Send + Sync>> {
    let mut file = FromFile::default();
    if given.value("test-tool").is_some() {
        let tool = match given.string("test-tool") {
            Some("cargo") => TestTool::Cargo,
            Some("nextest") => TestTool::Nextest,
            _ => return Err(given.wrong("test-tool", "\"cargo\" or \"nextest\"")),
        };
        file.test_tool = Some((tool, given.source("test-tool")));
    }
    if let Some(value) = given.value("features") {
        let lists = match value.as_str() {
            Some(names) => vec![names.to_string()],
            None => given
                .strings("features")
                .ok_or_else(|| given.wrong("features", "a list of cargo feature names (strings)"))?,
        };
        file.features = Some((feature_names(&lists, given.place("features"))?, given.source("features")));
    }
    let flag = |key: &str| -> Result<Option<(bool, Source)>> {
        given
            .value(key)
            .map(|value| {
                Ok((value.as_bool().ok_or_else(|| given.wrong(key, "true or false"))?, given.source(key)))
            })
            .transpose()
    };
    file.all_features = flag("all-features")?;
    file.no_default_features = flag("no-default-features")?;
    Ok(Arc::new(file))
}

fn resolve(
    args: &CheckArgs,
    file: Option<&(dyn Any + Send + Sync)>,
    settings: &mut Resolver,
) -> Result<Arc<dyn LanguageOptions>> {
    let empty = FromFile::default();
    let file = file.and_then(|file| file.downcast_ref::<FromFile>()).unwrap_or(&empty);
    let test_tool = settings.given(
        "test-tool",
        args.test_tool.map(|tool| match tool {
            TestToolArg::Cargo => TestTool::Cargo,
            TestToolArg::Nextest => TestTool::Nextest,
        }),
        file.test_tool,
        TestTool::Cargo,
        |tool| config::quoted(tool.name()),
    );
    let features = Features {
        named: settings.given(
            "features",
            (!args.features.is_empty()).then(|| feature_names(&args.features, "--features")).transpose()?,
            file.features.clone(),
            Vec::new(),
            |names| config::quoted_list(names),
        ),
        all: settings.given(
            "all-features",
            args.all_features.then_some(true),
            file.all_features,
            false,
            bool::to_string,
        ),
        no_default: settings.given(
            "no-default-features",
            args.no_default_features.then_some(true),
            file.no_default_features,
            false,
            bool::to_string,
        ),
    };
    Ok(Arc::new(RustSettings { test_tool, schema: !args.no_schema, features }))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{from_text, Config, FileKind};

    fn load(text: &str) -> Result<Config> {
        from_text(text, FileKind::MutdeltaToml, &[SETTINGS.file])
    }

    fn resolved(config: &Config, args: &[&str]) -> (RustSettings, Vec<(String, String, String)>) {
        crate::options::resolved_for_tests(&SETTINGS, config, args)
    }

    fn row(key: &str, value: &str, source: &str) -> (String, String, String) {
        (key.to_string(), value.to_string(), source.to_string())
    }

    #[test]
    fn the_keys_are_read_from_the_rust_table_or_the_top_level_and_shown_with_their_source() {
        let table = "[rust]\ntest-tool = \"nextest\"\nfeatures = [\"a\", \"pkg/b\"]\nall-features = false\nno-default-features = true\n";
        let (settings, shown) = resolved(&load(table).unwrap(), &[]);
        assert_eq!(settings.test_tool, TestTool::Nextest);
        assert_eq!(
            settings.features,
            Features { named: vec!["a".into(), "pkg/b".into()], all: false, no_default: true }
        );
        let source = "mutdelta.toml [rust]";
        assert_eq!(
            shown,
            [
                row("test-tool", "\"nextest\"", source),
                row("features", "[\"a\", \"pkg/b\"]", source),
                row("all-features", "false", source),
                row("no-default-features", "true", source),
            ]
        );
        let flat = load("test-tool = \"nextest\"\nfeatures = \"a, b c\"\n").unwrap();
        let (settings, shown) = resolved(&flat, &["--all-features"]);
        assert_eq!(settings.features.named, ["a", "b", "c"]);
        assert_eq!(
            shown,
            [
                row("test-tool", "\"nextest\"", "mutdelta.toml"),
                row("features", "[\"a\", \"b\", \"c\"]", "mutdelta.toml"),
                row("all-features", "true", "cli"),
                row("no-default-features", "false", "default"),
            ]
        );
        let (settings, _) = resolved(&flat, &["--test-tool", "cargo", "-F", "x", "--no-schema"]);
        assert_eq!(
            (settings.test_tool, settings.schema, settings.features.named),
            (TestTool::Cargo, false, vec!["x".to_string()])
        );
    }

    #[test]
    fn bad_rust_keys_are_refused_in_one_sentence() {
        let cases = [
            ("test-tool = \"pytest\"", "mutdelta.toml: `test-tool` must be \"cargo\" or \"nextest\", not the string \"pytest\""),
            // A feature name that cargo would read as an option never reaches cargo.
            (
                "features = [\"rounding\", \"--config=build.rustc-wrapper='x'\"]",
                "mutdelta.toml: `features` holds \"--config=build.rustc-wrapper='x'\", which is not a cargo feature name",
            ),
            ("features = [1]", "mutdelta.toml: `features` must be a list of cargo feature names (strings)"),
            ("all-features = 1", "mutdelta.toml: `all-features` must be true or false, not 1"),
            ("[rust]\ntest-tool = \"vitest\"", "mutdelta.toml [rust]: `test-tool` must be \"cargo\" or \"nextest\", not the string \"vitest\""),
            ("[rust]\nfeatures = [\"-x\"]", "mutdelta.toml [rust]: `features` holds \"-x\", which is not a cargo feature name"),
            ("[rust]\nno-default-features = \"no\"", "mutdelta.toml [rust]: `no-default-features` must be true or false"),
            (
                "[rust]\ntest_tool = \"cargo\"",
                "mutdelta.toml [rust]: unknown key `test_tool` (did you mean `test-tool`?); the keys are test-tool, features, all-features, no-default-features",
            ),
            ("rust = \"nextest\"", "mutdelta.toml: `rust` must be a table of settings, not the string \"nextest\""),
            (
                "test-tool = \"cargo\"\n[rust]\ntest-tool = \"nextest\"",
                "mutdelta.toml: `test-tool` is set both at the top level and in mutdelta.toml [rust]: keep one (the table's)",
            ),
        ];
        for (text, expected) in cases {
            let err = load(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
        let pyproject = from_text("[tool.mutdelta]\nrust = 1\n", FileKind::Pyproject, &[SETTINGS.file]);
        assert!(pyproject
            .unwrap_err()
            .to_string()
            .contains("pyproject.toml [tool.mutdelta]: `rust` must be a table of settings, not 1"));
    }

    #[test]
    fn the_verdict_key_holds_the_test_tool_the_schema_and_the_features() {
        let (settings, _) = resolved(&Config::default(), &[]);
        assert_eq!(
            settings.verdict_key(),
            "Cargo true Features { named: [], all: false, no_default: false }"
        );
    }
}
