//! The rest of the suite: its coverage run's question, begun beside the first round or measured when a second round needs it, and the mutants that ran the whole suite.

use std::sync::Arc;

use anyhow::Result;

use super::check::PythonCheck;
use super::coverage;
use super::job::PythonJob;
use super::rest::{RestOfSuite, RestSpec};
use crate::run::job::Job;
use crate::run::language::{Context, LanguageCheck};
use crate::run::timeouts::BASELINE_LIMIT;
use crate::worktree;

impl PythonCheck {
    /// The second round's coverage run: the rest of the suite (every test but those of the
    /// change's test files), watching every statement of the plan. The question reads the same
    /// whichever mutants are left open, and is known before the first round runs, so that a run
    /// begun beside the first round, and a re-run, can answer it.
    pub(super) fn rest_probe<'a>(&'a self, ctx: &'a Context) -> coverage::Probe<'a> {
        coverage::Probe {
            python: &self.python,
            runner: &self.runner,
            root: ctx.base,
            support: &self.support,
            files: &self.support,
            tests: &[],
            deselect: &self.tests,
            targets: coverage::plan_targets(ctx.plan),
        }
    }

    /// Measures the rest of the suite now, in the state under test.
    pub(super) fn measure_rest(&self, ctx: &Context) -> Result<coverage::Measured> {
        let probe = self.rest_probe(ctx);
        let log = ctx.logs.join("baseline-rest.log");
        coverage::measure(&probe, &self.memory, ctx.options.jobs.get(), BASELINE_LIMIT, &log, &|| {})
    }

    /// Begins measuring the rest of the suite beside the first round, in a copy no mutant is
    /// written to (made now, before any is), on the cores its `mutants` leave (at least one);
    /// on idle CPU time while only a survivor could need it. Not when an earlier run's
    /// measurement answers the question already.
    pub(super) fn begin_rest(
        &self,
        ctx: &Context,
        mutants: usize,
        idle: bool,
    ) -> Result<Option<RestOfSuite>> {
        let question = self.rest_probe(ctx);
        if !self.second_round() || self.memory.remembers(&question) {
            return Ok(None);
        }
        let root = ctx.scratch.path().join("copy-rest");
        worktree::duplicate(ctx.base, &root)?;
        let spec = RestSpec {
            python: self.python.clone(),
            runner: self.runner.clone(),
            support: self.support.clone(),
            files: self.support.join("rest"),
            root,
            deselect: self.tests.clone(),
            targets: question.targets,
            memory: Arc::clone(&self.memory),
            shards: ctx.options.jobs.get(),
            shards_at_first: ctx.options.jobs.get().saturating_sub(mutants).max(1),
            log: ctx.logs.join("baseline-rest-beside.log"),
        };
        Ok(Some(RestOfSuite::begin(spec, idle)?))
    }

    /// Which of `jobs` run the whole suite as it runs (under pytest, naming no test and leaving
    /// none out): a survivor among them needs no confirming.
    pub(super) fn whole_suite(&self, jobs: &[Job<PythonJob>]) -> Vec<usize> {
        if !self.pytest() {
            return Vec::new();
        }
        let whole = jobs.iter().filter(|job| job.tests.is_empty() && job.data.left_out.is_empty());
        whole.map(|job| job.planned.id).collect()
    }
}
