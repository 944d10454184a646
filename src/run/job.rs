//! One mutant and the tests to run against it: what a language's selection hands the pool, the verdict memory and a worker.

use std::time::Duration;

use crate::model::plan::PlannedMutant;

/// One mutant and the tests to run against it.
#[derive(Debug, Clone)]
pub struct Job {
    pub planned: PlannedMutant,
    /// What the language's runner is told to run: test ids or paths (empty: the whole suite),
    /// or a package name.
    pub tests: Vec<String>,
    /// The same tests in the order the suite runs them, when the language knows it and it
    /// differs (empty otherwise): a kill that does not hold up in `tests`' order is tried
    /// again in this one, for tests that lean on the ones before them.
    pub in_suite_order: Vec<String>,
    /// A few of `tests`, the likeliest to catch it, run on their own first when `tests` is a
    /// far larger selection (empty: none): a kill among them spares the rest.
    pub tried_first: Vec<String>,
    /// Test files an earlier round ran in full against it, left out when `tests` is the whole
    /// suite (empty: none).
    pub left_out: Vec<String>,
    /// The tests a run of the whole suite (no `tests`) runs, by id, as a coverage run listed
    /// them: what the report says the mutant ran under (empty: `tests` say it).
    pub covers: Vec<String>,
    pub timeout: Duration,
    /// What its tests took unmutated: the costliest jobs run first.
    pub cost: Duration,
    /// Why only a fresh import tests it (none: it may be swapped into a process that collected
    /// its tests): its code ran when the project was imported or its tests collected, which a
    /// process that has them imported cannot be patched for (`AT_IMPORT`), or it faces the
    /// whole suite as the suite runs (`CONFIRMING`).
    pub fresh: Option<&'static str>,
}

/// Why a job runs fresh: its code ran at import or collection.
pub const AT_IMPORT: &str = "its code ran when the project was imported or collected";

/// Why a job runs fresh: a survivor confirmed against the whole suite.
pub const CONFIRMING: &str = "a survivor confirmed against the whole suite, as it runs";
