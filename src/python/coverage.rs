//! The coverage run: the relevant tests once, unmutated, under mutdelta's pytest probe; it is also the baseline.

use std::collections::{BTreeMap, BTreeSet};
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
}

/// Runs `tests` with the probe (from `support`) in the copy at `root`, and reads what it measured;
/// no map when the tests fail.
pub fn measure(
    python: &Path,
    plan: &Plan,
    root: &Path,
    support: &Path,
    tests: &[String],
    timeout: Duration,
    log: &Path,
) -> Result<(Finished, Option<CoverageMap>)> {
    let real_root = root.canonicalize()?;
    let targets: BTreeMap<String, Vec<usize>> = plan
        .files
        .iter()
        .filter(|file| file.language == Language::Python)
        .map(|file| (real_root.join(&file.path).display().to_string(), file.lines.clone()))
        .collect();
    let targets_path = support.join("probe-targets.json");
    let out_path = support.join("probe-out.json");
    std::fs::write(&targets_path, serde_json::to_vec(&targets)?)?;
    let _ = std::fs::remove_file(&out_path);
    let probe = ["-p".to_string(), PROBE_MODULE.to_string()];
    let mut command = interpreter::test_command(&Runner::Pytest, python, root, Some(support), &probe, tests);
    command.env.push(("MUTDELTA_PROBE_TARGETS".into(), targets_path.display().to_string()));
    command.env.push(("MUTDELTA_PROBE_OUT".into(), out_path.display().to_string()));
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
    };
    Ok((finished, Some(map)))
}

impl CoverageMap {
    /// The tests that executed `line` of `file`, fastest first.
    pub fn tests_covering(&self, file: &Path, line: usize) -> Vec<&TestCoverage> {
        let mut tests: Vec<&TestCoverage> = self
            .tests
            .iter()
            .filter(|test| test.lines.get(file).is_some_and(|lines| lines.contains(&line)))
            .collect();
        tests.sort_by(|a, b| a.duration.cmp(&b.duration).then_with(|| a.id.cmp(&b.id)));
        tests
    }

    /// True when `line` of `file` ran while the tests were collected (module-level code).
    pub fn ran_at_collection(&self, file: &Path, line: usize) -> bool {
        self.collection.get(file).is_some_and(|lines| lines.contains(&line))
    }
}
