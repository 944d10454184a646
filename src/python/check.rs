//! `PythonCheck`: what every phase of the Python check shares (the interpreter, the runner, the relevant tests, the helpers' directory, the coverage runs of earlier checks), and what the first round hands on to the phases after it (`FirstRound`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Result;

use super::collector::Collector;
use super::executor::{Executor, Spawn, Warm};
use super::interpreter::Runner;
use super::rest::RestOfSuite;
use super::settings::PythonSettings;
use super::worker::Equivalent;
use super::{collector, coverage, interpreter, invalidate, select, spec};
use crate::run::language::Context;

pub(super) const WORKER_SCRIPT: &str = include_str!("worker.py");
/// What the warm worker and the collector share: their forked children.
pub(super) const FORKED_MODULE: &str = include_str!("forked.py");

/// Mutants a worker must have to swap in before a later round starts a collector for them
/// (fewer are imported fresh).
pub(super) const SWAPPED_PER_COLLECTOR: usize = 4;

/// Everything the Python test runs of one check share.
pub struct PythonCheck {
    pub(super) python: PathBuf,
    /// Why `python` was chosen, said with the baseline's tests when it is not plain.
    pub(super) python_chosen: Option<String>,
    pub(super) runner: Runner,
    /// The relevant tests (empty: the whole suite).
    pub(super) tests: Vec<String>,
    /// mutdelta's Python helpers (the probe plugin, the warm worker), on every test's PYTHONPATH.
    pub(super) support: PathBuf,
    /// Coverage runs of earlier checks.
    pub(super) memory: Arc<coverage::Memory>,
    /// Whether mutants the relevant tests let through face the rest of the suite.
    pub(super) widens: bool,
    /// Whether each mutant runs the whole suite, in its order: the change's test files failed
    /// apart from the rest of it (`first_round::FailAlone`), so a selection of its tests may
    /// fail unmutated too.
    pub(super) suite_context: bool,
    /// Whether the rest of the suite may begin beside the first coverage run, before any
    /// mutant is known to need it (else only once that run leaves a line uncovered, or for
    /// the second round).
    pub(super) rest_before_needed: bool,
    /// Survivors face the whole suite, as it runs, after the last round (`confirm`); those of
    /// the kills the audit carried always do.
    pub(super) confirm_survivors: bool,
    /// What the coverage runs watch, when not the plan's statements: every source line, for
    /// a check confined to some tests (its first coverage run, `lines_run`, is then the same
    /// question as its baseline's, which reuses it).
    pub(super) watch: Option<BTreeMap<PathBuf, Vec<usize>>>,
    /// What the test-impact map proved, or why it was not used.
    pub(super) impact: invalidate::RuledOut,
    /// Copies, warm workers and collectors a confined check's `lines_run` started beside its
    /// coverage run: the round after it takes them, its own coverage run being that one, reused.
    pub(super) begun: Mutex<Option<EarlyStart>>,
}

/// An executor per copy, in the copies' order.
pub(super) type Executors = Vec<Box<dyn Executor>>;

/// Copies, and in each a warm worker and the collector it forked, collecting the change's
/// test files, started while the first round's coverage run runs (they need nothing it
/// learns); its workers take them over.
pub(super) struct EarlyStart {
    /// The copies, the first being the state under test itself.
    pub(super) roots: Vec<PathBuf>,
    /// The test files the collectors collect.
    pub(super) files: BTreeSet<String>,
    /// A warm worker per copy (none when one failed to start), importing nothing it may
    /// preload: the first round's coverage run names those.
    pub(super) warm: Vec<Warm>,
    pub(super) collectors: Vec<Result<Collector>>,
}

impl PythonCheck {
    /// Finds the interpreter and writes the helpers into the scratch directory.
    pub fn new(ctx: &Context) -> Result<PythonCheck> {
        let tests = select::relevant_tests(ctx.plan, &PythonSettings::of(ctx.options).extra_tests);
        PythonCheck::with_tests(ctx, tests, true, None)
    }

    /// A check that runs `tests` alone (never the rest of the suite), watching every source
    /// line of `ctx.base`: what they run, and what they kill.
    pub fn confined(ctx: &Context, tests: Vec<String>) -> Result<PythonCheck> {
        PythonCheck::with_tests(ctx, tests, false, Some(every_source_line(ctx.base)?))
    }

    pub(super) fn with_tests(
        ctx: &Context,
        tests: Vec<String>,
        widens: bool,
        watch: Option<BTreeMap<PathBuf, Vec<usize>>>,
    ) -> Result<PythonCheck> {
        let settings = PythonSettings::of(ctx.options);
        let interpreter::Found { path: python, why: python_chosen } =
            interpreter::find_interpreter(settings.interpreter.as_deref(), ctx.repo_root)?;
        let runner = Runner::new(ctx.options.test_cmd.as_deref(), &python, ctx.scratch.path(), ctx.base);
        if runner.is_pytest() {
            interpreter::require_pytest(&python)?;
        }
        let support = ctx.scratch.subdir("support")?;
        coverage::write_probe(&support)?;
        std::fs::write(support.join("mutdelta_worker.py"), WORKER_SCRIPT)?;
        std::fs::write(support.join("mutdelta_forked.py"), FORKED_MODULE)?;
        std::fs::write(support.join(format!("{}.py", collector::PLUGIN_MODULE)), collector::PLUGIN_SOURCE)?;
        // The copy is still as the state under test left it: no test has run in it.
        let memory = Arc::new(coverage::Memory::new(
            ctx.cache.clone(),
            &python,
            &runner,
            ctx.base,
            &ctx.state.to_text(),
        ));
        let mut check = PythonCheck {
            python,
            python_chosen,
            runner,
            tests: Vec::new(),
            support,
            memory,
            widens,
            // Most kills the audit carries hold: with no mutant of the change's own, the rest
            // of the suite begun on speculation would take the cores they need.
            rest_before_needed: ctx.plan.carried.is_empty() || ctx.plan.mutant_count() > 0,
            confirm_survivors: PythonSettings::of(ctx.options).confirm_survivors,
            watch,
            suite_context: false,
            impact: invalidate::RuledOut::default(),
            begun: Mutex::default(),
        };
        check.tests = tests;
        check.consult_impact_map(ctx);
        Ok(check)
    }

    pub(super) fn pytest(&self) -> bool {
        self.runner.is_pytest()
    }

    /// Whether mutants may be swapped into collectors: under pytest, forking, not `--no-swap`.
    pub(super) fn swapping(&self, ctx: &Context) -> bool {
        let settings = PythonSettings::of(ctx.options);
        self.pytest() && settings.fork && settings.swap
    }

    /// Which tests the baseline ran, in words.
    pub(super) fn describe_tests(&self) -> String {
        let tests = if self.pytest() {
            crate::words::describe_tests(&self.tests)
        } else {
            "the test command's tests".to_string()
        };
        let tests = match &self.python_chosen {
            Some(why) => format!("{tests} with {} ({why})", self.python.display()),
            None => tests,
        };
        let seeds: Vec<&String> = match &self.runner {
            Runner::Pytest { options } => options.iter().filter(|option| option.contains("-seed=")).collect(),
            Runner::Shell(_) => Vec::new(),
        };
        match seeds.as_slice() {
            [] => tests,
            seeds => format!(
                "{tests}, seeded alike in every run ({})",
                seeds.iter().map(|seed| seed.as_str()).collect::<Vec<_>>().join(" ")
            ),
        }
    }

    /// Per file, the tests the test-impact map saw run its functions (empty without a map).
    pub(super) fn users_of_files(&self, ctx: &Context) -> BTreeMap<String, BTreeSet<String>> {
        let Some(store) = &self.memory.impact else { return BTreeMap::new() };
        match store.chosen(&PythonSettings::of(ctx.options).impact_map) {
            Ok(Some(map)) => map.users_of_files(),
            _ => BTreeMap::new(),
        }
    }

    pub(super) fn spawn(&self, root: &Path) -> Spawn {
        Spawn {
            runner: self.runner.clone(),
            python: self.python.clone(),
            root: root.to_path_buf(),
            support: self.support.clone(),
        }
    }

    pub(super) fn probe<'a>(&'a self, ctx: &'a Context) -> coverage::Probe<'a> {
        coverage::Probe {
            python: &self.python,
            runner: &self.runner,
            root: ctx.base,
            support: &self.support,
            files: &self.support,
            tests: &self.tests,
            deselect: &[],
            // The whole suite (no test file edited), or the change's test files, leave out what
            // the map rules out: their new and edited tests, and those that ran changed code, run.
            ruled_out: if self.watch.is_none() { &self.impact.tests } else { &coverage::NONE_RULED_OUT },
            targets: self.watch.clone().unwrap_or_else(|| coverage::plan_targets(ctx.plan)),
        }
    }

    /// pytest's arguments before the tests, in every run of a mutant.
    pub(super) fn pytest_args(&self) -> Vec<String> {
        match &self.runner {
            Runner::Pytest { options } => interpreter::pytest_args(options, &[]),
            Runner::Shell(_) => Vec::new(),
        }
    }

    /// The command line a forked or swapped run in the copy at `root` stands for.
    pub(super) fn equivalent(&self, root: &Path) -> Equivalent {
        Equivalent {
            python: self.python.clone(),
            env: interpreter::environment(&self.python, root, Some(&self.support)),
            pytest_args: self.pytest_args(),
        }
    }
}

/// What the first round's coverage run learned, and what it began for the phases after it:
/// returned by `prove`, handed to `workers`, `widen` and `confirm`.
#[derive(Default)]
pub struct FirstRound {
    /// Modules from outside the project the tests imported: the warm workers import them
    /// before forking.
    pub(super) preload: Vec<String>,
    /// The mutants it ran against all of the change's test files, whole (their code ran at
    /// import): a second round need not run those files again.
    pub(super) whole_files: BTreeSet<usize>,
    /// The copies, their warm workers and collectors, started beside the coverage run;
    /// `workers` takes them.
    pub(super) early: Option<EarlyStart>,
    /// The second round's coverage run, begun beside the first round; `widen` takes it.
    pub(super) rest: Option<RestOfSuite>,
    /// The mutants whose tests were the whole suite as it runs (no test named, none left out):
    /// `--confirm-survivors` would only run them again.
    pub(super) ran_whole_suite: BTreeSet<usize>,
}

/// Every line of every Python file under `root` that is not a test file, by path relative to
/// `root`: what the probe watches to learn all the source a test runs.
fn every_source_line(root: &Path) -> Result<BTreeMap<PathBuf, Vec<usize>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<usize>>) -> Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') || name == "__pycache__" {
                continue;
            }
            if entry.file_type()?.is_dir() {
                walk(root, &path, out)?;
                continue;
            }
            let relative = path.strip_prefix(root).expect("under root").to_path_buf();
            if relative.extension().is_some_and(|ext| ext == "py") && !spec::is_test_file(&relative) {
                let count = std::fs::read(&path)?.split(|&b| b == b'\n').count();
                out.insert(relative, (1..=count).collect());
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn python_test_files_follow_pytest_discovery_rules() {
        for test in ["tests/test_a.py", "test_a.py", "pkg/a_test.py", "conftest.py", "tests/helpers.py"] {
            assert!(spec::is_test_file(Path::new(test)), "{test}");
        }
        for source in ["pkg/a.py", "testing.py", "src/contest.py", "latest/x.py"] {
            assert!(!spec::is_test_file(Path::new(source)), "{source}");
        }
    }
}
