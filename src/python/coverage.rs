//! The coverage runs: tests run once, unmutated, under mutdelta's pytest probe, which says which test executes which added statement; they are also the baselines.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::interpreter::{self, Runner};
use crate::plan::{Language, Plan};
use crate::run::process::Finished;

/// The probe plugin, written next to the worker script and loaded with `-p mutdelta_probe`.
pub const PROBE_SOURCE: &str = include_str!("probe.py");
pub const PROBE_MODULE: &str = "mutdelta_probe";

/// One test's measurements.
#[derive(Debug, Clone)]
pub struct TestCoverage {
    pub id: String,
    pub duration: Duration,
    /// Target lines it executed, per file relative to the copy's root.
    pub lines: BTreeMap<PathBuf, BTreeSet<usize>>,
}

/// Which tests execute which added lines.
#[derive(Debug, Clone, Default)]
pub struct CoverageMap {
    pub tests: Vec<TestCoverage>,
    /// Target lines executed while the tests were collected (module-level code).
    pub collection: BTreeMap<PathBuf, BTreeSet<usize>>,
    /// Modules from outside the project that the tests imported: preloaded by warm workers.
    pub outside_modules: Vec<String>,
    /// Every module file the tests imported (real paths).
    pub module_files: Vec<PathBuf>,
    /// Target files the probe could not watch (imported before it, or by path): any of their
    /// lines may have run anywhere.
    pub untraced: BTreeSet<PathBuf>,
}

#[derive(Deserialize)]
struct ProbeTest {
    duration: f64,
    lines: BTreeMap<PathBuf, Vec<usize>>,
}

#[derive(Deserialize)]
struct ProbeOutput {
    tests: BTreeMap<String, ProbeTest>,
    collection: BTreeMap<PathBuf, Vec<usize>>,
    outside_modules: Vec<String>,
    module_files: Vec<PathBuf>,
    #[serde(default)]
    untraced: Vec<PathBuf>,
}

/// One run of tests under the probe.
pub struct Probe<'a> {
    pub python: &'a Path,
    pub runner: &'a Runner,
    /// The copy the tests run in.
    pub root: &'a Path,
    /// mutdelta's helpers (the probe module), also where its files go.
    pub support: &'a Path,
    /// The tests to run (empty: the suite as the project's configuration collects it).
    pub tests: &'a [String],
    /// Node ids not to run.
    pub deselect: &'a [String],
    /// The lines to watch, per file relative to `root`.
    pub targets: BTreeMap<PathBuf, Vec<usize>>,
}

/// The lines the probe watches for `plan`: every line of the added lines' statements.
pub fn plan_targets(plan: &Plan) -> BTreeMap<PathBuf, Vec<usize>> {
    plan.files
        .iter()
        .filter(|file| file.language == Language::Python)
        .map(|file| (file.path.clone(), file.statement_lines()))
        .collect()
}

/// Runs the probe's tests, and reads what it measured; no map when the tests fail.
pub fn measure(probe: &Probe, timeout: Duration, log: &Path) -> Result<(Finished, Option<CoverageMap>)> {
    let Probe { python, runner, root, support, tests, deselect, .. } = *probe;
    let real_root = root.canonicalize()?;
    let targets: BTreeMap<String, &Vec<usize>> = probe
        .targets
        .iter()
        .map(|(path, lines)| (real_root.join(path).display().to_string(), lines))
        .collect();
    let targets_path = support.join("probe-targets.json");
    let deselect_path = support.join("probe-deselect.json");
    let out_path = support.join("probe-out.json");
    std::fs::write(&targets_path, serde_json::to_vec(&targets)?)?;
    std::fs::write(&deselect_path, serde_json::to_vec(deselect)?)?;
    let _ = std::fs::remove_file(&out_path);
    let plugin = ["-p".to_string(), PROBE_MODULE.to_string()];
    let mut command = interpreter::test_command(runner, python, root, Some(support), &plugin, tests);
    command.env.push(("MUTDELTA_PROBE_TARGETS".into(), targets_path.display().to_string()));
    command.env.push(("MUTDELTA_PROBE_OUT".into(), out_path.display().to_string()));
    command.env.push(("MUTDELTA_PROBE_DESELECT".into(), deselect_path.display().to_string()));
    let finished = command.run(timeout, log)?;
    if !finished.passed() {
        return Ok((finished, None));
    }
    let text = std::fs::read(&out_path).context("the coverage probe wrote nothing")?;
    let probe: ProbeOutput =
        serde_json::from_slice(&text).context("the coverage probe wrote something unexpected")?;
    let relative = |path: PathBuf| path.strip_prefix(&real_root).map(Path::to_path_buf).unwrap_or(path);
    let lines = |map: BTreeMap<PathBuf, Vec<usize>>| -> BTreeMap<PathBuf, BTreeSet<usize>> {
        map.into_iter().map(|(path, lines)| (relative(path), lines.into_iter().collect())).collect()
    };
    let map = CoverageMap {
        tests: probe
            .tests
            .into_iter()
            .map(|(id, test)| TestCoverage {
                id,
                duration: Duration::from_secs_f64(test.duration.max(0.0)),
                lines: lines(test.lines),
            })
            .collect(),
        collection: lines(probe.collection),
        outside_modules: probe.outside_modules,
        module_files: probe.module_files,
        untraced: probe.untraced.into_iter().map(relative).collect(),
    };
    Ok((finished, Some(map)))
}

impl CoverageMap {
    /// The tests that executed a line of `statement` in `file`, fastest first.
    pub fn tests_covering(&self, file: &Path, statement: &RangeInclusive<usize>) -> Vec<&TestCoverage> {
        let mut tests: Vec<&TestCoverage> =
            self.tests.iter().filter(|test| ran(test.lines.get(file), statement)).collect();
        tests.sort_by(|a, b| a.duration.cmp(&b.duration).then_with(|| a.id.cmp(&b.id)));
        tests
    }

    /// True when a line of `statement` in `file` ran outside any test: while the tests were
    /// collected, or when a conftest imported the project.
    pub fn ran_at_collection(&self, file: &Path, statement: &RangeInclusive<usize>) -> bool {
        self.untraced.contains(file) || ran(self.collection.get(file), statement)
    }
}

fn ran(lines: Option<&BTreeSet<usize>>, statement: &RangeInclusive<usize>) -> bool {
    lines.is_some_and(|lines| lines.range(statement.clone()).next().is_some())
}
