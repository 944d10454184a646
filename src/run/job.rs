//! One mutant and the tests to run against it: what a language's selection hands the pool, the verdict memory and a worker, with what the language adds for its own workers.

use std::time::Duration;

use crate::model::plan::PlannedMutant;

/// One mutant and the tests to run against it; `data`: what its language adds.
#[derive(Debug, Clone)]
pub struct Job<D = ()> {
    pub planned: PlannedMutant,
    /// What the language's runner is told to run: test ids or paths (empty: the whole suite),
    /// or a package name.
    pub tests: Vec<String>,
    pub timeout: Duration,
    /// What its tests took unmutated: the costliest jobs run first.
    pub cost: Duration,
    pub data: D,
}

impl<D: Default> Job<D> {
    /// A job with nothing its language adds.
    pub fn new(planned: PlannedMutant, tests: Vec<String>, timeout: Duration, cost: Duration) -> Job<D> {
        Job { planned, tests, timeout, cost, data: D::default() }
    }

    /// The same job with what its language adds.
    pub fn with(self, data: D) -> Job<D> {
        Job { data, ..self }
    }
}

/// What a language adds to its jobs, and what the pool and the verdict memory need of it.
pub trait JobData: Clone + Default + Send + Sync + std::fmt::Debug {
    /// Slower to start than the others (a fresh process rather than a prepared one): the pool
    /// takes such jobs first.
    fn starts_slowly(&self) -> bool {
        false
    }

    /// The other lists of tests its worker may run for its verdict (an order, a first few, the
    /// files left out), which the verdict memory's key holds beside `tests`.
    fn other_tests(&self) -> [&[String]; 3] {
        [&[], &[], &[]]
    }
}

impl JobData for () {}
