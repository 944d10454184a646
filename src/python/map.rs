//! `mutdelta map`: the whole suite run once under the probe, its test-impact map recorded and kept (and written where the user asks).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Result};

use super::check::PythonCheck;
use super::coverage::{self, Memory};
use super::impact::ImpactMap;
use super::refusal::PythonRun;
use crate::run::language::Context;
use crate::run::require;
use crate::run::timeouts::BASELINE_LIMIT;

/// What building the map came to.
pub struct Built {
    /// The tests recorded.
    pub tests: usize,
    /// The state they were recorded at, in words.
    pub at: String,
    /// How long the suite took under the probe.
    pub took: Duration,
    /// Whether the map was kept in the repository's git directory.
    pub kept: bool,
    /// This run's map alone, for another machine.
    pub map: ImpactMap,
}

/// Runs the whole suite in `ctx.base` under the probe and records what each test ran into the
/// kept map (with the cache on), and returns this run's map.
pub fn build(ctx: &Context) -> Result<Built> {
    if ctx.options.test_cmd.is_some() {
        bail!("a test-impact map needs pytest to run the suite: drop --test-cmd (or `test-cmd` in the configuration)");
    }
    let check = PythonCheck::with_tests(ctx, Vec::new(), false, Some(BTreeMap::new()))?;
    let Some(store) = check.memory.impact.clone() else {
        bail!("{} could not describe itself (its version and packages)", check.python.display());
    };
    // Never an earlier run's measurement: this one must record.
    let memory = Memory::recording_only(store.clone());
    let probe = coverage::Probe {
        python: &check.python,
        runner: &check.runner,
        root: ctx.base,
        support: &check.support,
        files: &check.support,
        tests: &[],
        deselect: &[],
        ruled_out: &coverage::NONE_RULED_OUT,
        targets: BTreeMap::new(),
    };
    let log = ctx.logs.join("map.log");
    let measured =
        coverage::measure_recording(&probe, &memory, ctx.options.jobs.get(), BASELINE_LIMIT, &log)?;
    if let Some(run) = measured.decisive() {
        require::passed(run, &PythonRun::Pytest("the whole test suite".to_string()), BASELINE_LIMIT)?;
    }
    let Some(recorded) = measured.map.and_then(|map| map.impact) else {
        bail!("the probe recorded no test-impact map: the suite collected no test, or (before Python 3.12) another trace function, such as coverage measurement or a debugger, took the probe's place: run `mutdelta map` without it");
    };
    let at = ctx.state.to_text();
    let mut map = ImpactMap::new(store.environment());
    map.record(&at, &recorded);
    Ok(Built { tests: recorded.tests.len(), at, took: measured.took, kept: store.records(), map })
}
