//! Python's settings: the interpreter, the tests a check adds, whether it forks and swaps, the survivors' confirmation and the test-impact map; their keys (`[python]`, or the file's top level as before), the flags they read, their resolution and checks.

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use crate::cli::CheckArgs;
use crate::config::{self, Given, Key, LanguageTable, Resolver, Source};
use crate::options::{LanguageOptions, Options, SettingsOf};

/// Settings only the Python side reads.
#[derive(Debug, Clone)]
pub struct PythonSettings {
    /// `--python`: the interpreter that runs the tests (else found from the environment).
    pub interpreter: Option<PathBuf>,
    /// `--test`: more tests to run.
    pub extra_tests: Vec<String>,
    /// Fork each mutant's pytest run from a warm worker (else one process per mutant).
    pub fork: bool,
    /// Swap a mutant's code into a process that collected the tests, where it can be.
    pub swap: bool,
    /// `--confirm-survivors`: run each survivor against the whole suite, as it runs.
    pub confirm_survivors: bool,
    /// Which test-impact map the rest of the suite consults.
    pub impact_map: ImpactMap,
}

/// The test-impact map a Python check consults (and records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImpactMap {
    /// The one kept in `.git/mutdelta/`, recorded by earlier checks.
    Kept,
    /// `--impact-map FILE`: one made elsewhere (this check still records in the kept one).
    File(PathBuf),
    /// `--no-impact-map`: none consulted.
    Off,
}

impl PythonSettings {
    /// Python's settings among `options`.
    pub fn of(options: &Options) -> &PythonSettings {
        options.languages.get().expect("the options hold Python's settings")
    }
}

impl LanguageOptions for PythonSettings {
    /// Whether mutants fork and swap (as the key of verdicts has always written them).
    fn verdict_key(&self) -> String {
        format!("{} {}", self.fork, self.swap)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Python's keys, its flags, and how they are read and resolved.
pub const SETTINGS: SettingsOf = SettingsOf {
    file: LanguageTable { table: "python", keys: KEYS, read },
    flags: &[
        "--python",
        "--test",
        "--no-fork",
        "--no-swap",
        "--confirm-survivors",
        "--impact-map",
        "--no-impact-map",
    ],
    tests_run_by: "pytest",
    audit_runs_with: Some("pytest"),
    resolve,
};

const KEYS: &[Key] = &[
    Key { table: "interpreter", flat: "python" },
    Key { table: "tests", flat: "tests" },
    Key { table: "confirm-survivors", flat: "confirm-survivors" },
];

/// What the file gives Python's keys, checked, with where each was written.
#[derive(Debug, Default)]
struct FromFile {
    /// Read from the repository root (a bare name is a command looked up on `PATH`).
    interpreter: Option<(PathBuf, Source)>,
    tests: Option<(Vec<String>, Source)>,
    confirm_survivors: Option<(bool, Source)>,
}

fn read(given: &Given) -> Result<Arc<dyn Any + Send + Sync>> {
    let mut file = FromFile::default();
    if given.value("interpreter").is_some() {
        let path = given.string("interpreter").filter(|path| !path.is_empty()).ok_or_else(|| {
            given.wrong("interpreter", "a path to an interpreter or a virtual environment (a string)")
        })?;
        file.interpreter = Some((given.path(path), given.source("interpreter")));
    }
    if given.value("tests").is_some() {
        let tests = given
            .strings("tests")
            .filter(|tests| tests.iter().all(|test| !test.is_empty()))
            .ok_or_else(|| given.wrong("tests", "a list of test files or pytest node ids (strings)"))?;
        file.tests = Some((tests, given.source("tests")));
    }
    if let Some(value) = given.value("confirm-survivors") {
        let on = value.as_bool().ok_or_else(|| given.wrong("confirm-survivors", "true or false"))?;
        file.confirm_survivors = Some((on, given.source("confirm-survivors")));
    }
    Ok(Arc::new(file))
}

fn resolve(
    args: &CheckArgs,
    file: Option<&(dyn Any + Send + Sync)>,
    settings: &mut Resolver,
) -> Result<Arc<dyn LanguageOptions>> {
    let empty = FromFile::default();
    let file = file.and_then(|file| file.downcast_ref::<FromFile>()).unwrap_or(&empty);
    let interpreter =
        settings.given("python", args.python.clone().map(Some), some(&file.interpreter), None, |path| {
            path.as_ref().map_or("(not set: $VIRTUAL_ENV, .venv or python3)".into(), |path| {
                config::quoted(&path.display().to_string())
            })
        });
    let extra_tests = settings.given(
        "tests",
        (!args.tests.is_empty()).then(|| args.tests.clone()),
        file.tests.clone(),
        Vec::new(),
        |tests| config::quoted_list(tests),
    );
    let confirm_survivors = settings.given(
        "confirm-survivors",
        args.confirm_survivors.then_some(true),
        file.confirm_survivors,
        false,
        bool::to_string,
    );
    Ok(Arc::new(PythonSettings {
        interpreter,
        extra_tests,
        fork: !args.no_fork,
        swap: !args.no_swap,
        confirm_survivors,
        impact_map: match (&args.impact_map, args.no_impact_map) {
            (_, true) => ImpactMap::Off,
            (Some(file), false) => ImpactMap::File(file.clone()),
            (None, false) => ImpactMap::Kept,
        },
    }))
}

/// A value the file gave, as an optional setting.
fn some<T: Clone>(given: &Option<(T, Source)>) -> Option<(Option<T>, Source)> {
    given.as_ref().map(|(value, source)| (Some(value.clone()), *source))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::{from_text, Config, FileKind};

    fn load(text: &str) -> Result<Config> {
        from_text(text, FileKind::MutdeltaToml, &[SETTINGS.file])
    }

    fn resolved(config: &Config, args: &[&str]) -> (PythonSettings, Vec<(String, String, String)>) {
        crate::options::resolved_for_tests(&SETTINGS, config, args)
    }

    fn row(key: &str, value: &str, source: &str) -> (String, String, String) {
        (key.to_string(), value.to_string(), source.to_string())
    }

    #[test]
    fn the_keys_are_read_from_the_python_table_or_the_top_level_and_shown_with_their_source() {
        let table = load("[python]\ninterpreter = \".venv/bin/python\"\ntests = [\"tests/test_a.py\"]\nconfirm-survivors = true\n")
            .unwrap();
        let (settings, shown) = resolved(&table, &[]);
        assert_eq!(settings.interpreter, Some(PathBuf::from("/repo/.venv/bin/python")));
        assert_eq!(settings.extra_tests, ["tests/test_a.py"]);
        assert!(settings.confirm_survivors);
        assert_eq!(
            shown,
            [
                row("python", "\"/repo/.venv/bin/python\"", "mutdelta.toml [python]"),
                row("tests", "[\"tests/test_a.py\"]", "mutdelta.toml [python]"),
                row("confirm-survivors", "true", "mutdelta.toml [python]"),
            ]
        );
        let flat = load("python = \"python3.12\"\ntests = [\"tests/test_a.py\"]\n").unwrap();
        let (settings, shown) = resolved(&flat, &["--confirm-survivors"]);
        assert_eq!(settings.interpreter, Some(PathBuf::from("python3.12")), "a bare name stays a command");
        assert_eq!(
            shown,
            [
                row("python", "\"python3.12\"", "mutdelta.toml"),
                row("tests", "[\"tests/test_a.py\"]", "mutdelta.toml"),
                row("confirm-survivors", "true", "cli"),
            ]
        );
        let (settings, shown) = resolved(&table, &["--python", "py", "--test", "t.py", "--no-swap"]);
        assert_eq!((settings.interpreter.as_deref(), settings.swap), (Some(Path::new("py")), false));
        assert_eq!(shown[..2], [row("python", "\"py\"", "cli"), row("tests", "[\"t.py\"]", "cli")]);
        let (_, shown) = resolved(&Config::default(), &[]);
        assert_eq!(shown[0], row("python", "(not set: $VIRTUAL_ENV, .venv or python3)", "default"));
        let pyproject =
            from_text("[tool.mutdelta.python]\ntests = [\"t.py\"]\n", FileKind::Pyproject, &[SETTINGS.file])
                .unwrap();
        assert_eq!(
            resolved(&pyproject, &[]).1[1],
            row("tests", "[\"t.py\"]", "pyproject.toml [tool.mutdelta.python]")
        );
    }

    #[test]
    fn bad_python_keys_are_refused_in_one_sentence() {
        let cases = [
            ("python = 1", "mutdelta.toml: `python` must be a path to an interpreter or a virtual environment (a string), not 1"),
            ("python = \"\"", "mutdelta.toml: `python` must be a path to an interpreter"),
            ("tests = [1]", "mutdelta.toml: `tests` must be a list of test files or pytest node ids (strings), not a list holding 1"),
            ("confirm-survivors = \"yes\"", "mutdelta.toml: `confirm-survivors` must be true or false, not the string \"yes\""),
            (
                "[python]\ninterpretr = \"x\"",
                "mutdelta.toml [python]: unknown key `interpretr` (did you mean `interpreter`?); the keys are interpreter, tests, confirm-survivors",
            ),
            ("[python]\npython = \"x\"", "mutdelta.toml [python]: unknown key `python`"),
            ("[python]\ninterpreter = 3", "mutdelta.toml [python]: `interpreter` must be a path to an interpreter or a virtual environment (a string), not 3"),
            ("[python]\ntests = \"t.py\"", "mutdelta.toml [python]: `tests` must be a list of test files"),
            ("[python]\nconfirm-survivors = 1", "mutdelta.toml [python]: `confirm-survivors` must be true or false, not 1"),
            ("[python.interpreter]\npath = \"x\"", "mutdelta.toml [python]: `interpreter` must be a path to an interpreter or a virtual environment (a string), not a table"),
            (
                "tests = [\"a.py\"]\n[python]\ntests = [\"b.py\"]",
                "mutdelta.toml: `tests` is set both at the top level and in mutdelta.toml [python]: keep one (the table's)",
            ),
            ("pyhton = \"x\"", "mutdelta.toml: unknown key `pyhton` (did you mean `python`?)"),
        ];
        for (text, expected) in cases {
            let err = load(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn the_verdict_key_holds_whether_mutants_fork_and_swap() {
        let (settings, _) = resolved(&Config::default(), &["--no-fork"]);
        assert_eq!(settings.verdict_key(), "false true");
    }
}
