//! The rest of the suite: its coverage run's question, begun beside the first round or measured when a second round needs it, and the mutants that ran the whole suite.

use std::sync::Arc;

use anyhow::Result;

use super::check::PythonCheck;
use super::coverage;
use super::job::PythonJob;
use super::rest::{RestOfSuite, RestSpec};
use super::spec;
use super::{impact, invalidate};
use crate::run::job::Job;
use crate::run::language::{Context, Rounds, Widened};
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
            ruled_out: &self.impact.tests,
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
        if !self.widens() || self.impact.nothing_left.is_some() || self.memory.remembers(&question) {
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
            ruled_out: self.impact.tests.clone(),
            targets: question.targets,
            memory: Arc::clone(&self.memory),
            shards: ctx.options.jobs.get(),
            shards_at_first: ctx.options.jobs.get().saturating_sub(mutants).max(1),
            log: ctx.logs.join("baseline-rest-beside.log"),
        };
        Ok(Some(RestOfSuite::begin(spec, idle)?))
    }

    /// The rest of the suite once the first coverage run said whether it left a line uncovered:
    /// begun beside it, it goes on (on idle CPU time when `all_covered`: only a survivor could
    /// need it); else it begins now beside the first round's `mutants`, unless the check begins
    /// it only once a mutant needs it and none does yet.
    pub(super) fn rest_once_covered(
        &self,
        ctx: &Context,
        rest: Option<RestOfSuite>,
        mutants: usize,
        all_covered: bool,
    ) -> Option<RestOfSuite> {
        match rest {
            Some(begun) => {
                if all_covered {
                    begun.yield_the_cpu();
                }
                begun.resume();
                Some(begun)
            }
            None if self.rest_before_needed || !all_covered => {
                self.begin_rest(ctx, mutants, all_covered).unwrap_or(None)
            }
            None => None,
        }
    }

    /// Leaves out of the rest of the suite (of the whole suite, when it is the first round) the
    /// tests the test-impact map proves cannot reach the change (`impact::rule_out`): those it
    /// recorded executing only blocks unchanged since, none holding an added line, and reading
    /// only files unchanged since. Without a map, or with one made under another environment,
    /// the suite runs whole.
    pub(super) fn consult_impact_map(&mut self, ctx: &Context) {
        // The rest of the suite, or the whole suite when the change edits no test.
        if !(self.widens && self.pytest() && self.watch.is_none()) {
            return;
        }
        let Some(store) = &self.memory.impact else { return };
        let map = match store.chosen(&super::settings::PythonSettings::of(ctx.options).impact_map) {
            Ok(Some(map)) => map,
            Ok(None) => return,
            Err(why) => {
                self.impact.unused.push(format!("the test-impact map was not used: {why}"));
                return;
            }
        };
        let now = match impact::now(&self.python, &self.support, ctx.base, &map) {
            Ok(now) => now,
            Err(err) => {
                self.impact.unused.push(format!("the test-impact map was not used: {err:#}"));
                return;
            }
        };
        let added = coverage::plan_targets(ctx.plan);
        let is_test_file = |path: &std::path::Path| spec::is_test_file(path);
        let first = |test: &str| !coverage::selection_runs(&[], &self.tests, test);
        self.impact = match self.widens() {
            true => invalidate::rule_out_for_rounds(&map, &now, &added, &is_test_file, &first),
            false => invalidate::rule_out(&map, &now, &added, &is_test_file),
        };
    }

    /// The second round when the test-impact map proves the rest of the suite holds only tests
    /// it ruled out (`tests`): no test is left to run, and nothing starts.
    pub(super) fn nothing_left_to_run(&self, tests: &[String]) -> Widened<PythonJob> {
        let impact = self.impact_words(tests, true).unwrap_or_default();
        let why =
            format!("the rest of the test suite was not started, having no test left to run ({impact})");
        let step = format!("baseline of the rest of the suite; not started: {impact}");
        let record = crate::model::record::RunRecord::of(crate::model::record::How::Fresh, &[]);
        Widened {
            jobs: Vec::new(),
            baseline: std::time::Duration::ZERO,
            what: "the rest of the test suite".to_string(),
            reused: false,
            nothing_else: Some(why),
            steps: vec![crate::model::record::StepRecord { step, record }],
        }
    }

    /// What the test-impact map did for a run that left out `deselected`, in words; none when
    /// there was no map. `whole`: the run is the rest of the suite (or the whole suite), and
    /// the words say too why the map could not rule out the tests it kept (the floor), and why
    /// a record went unused; else it is the change's test files, and they say only how many of
    /// their tests the map ruled out, if any.
    pub(super) fn impact_words(&self, deselected: &[String], whole: bool) -> Option<String> {
        // The rest of the suite leaves out the change's test files too: what the map ruled out
        // there, and could not, is the first round's to say.
        let in_this_run = |test: &str| !whole || coverage::selection_runs(&[], &self.tests, test);
        let ruled_out = deselected
            .iter()
            .filter(|test| self.impact.tests.contains_key(*test) && in_this_run(test))
            .count();
        let at = self.impact.at.join(" and ");
        if !whole {
            return (ruled_out > 0).then(|| {
                format!(
                    "the test-impact map recorded at {at} ruled out {} of them: they execute only code, and read only files, unchanged since, holding no added line",
                    crate::words::count_of(ruled_out, "test", "tests"),
                )
            });
        }
        let mut said = Vec::new();
        if !self.impact.at.is_empty() {
            said.push(format!(
                "the test-impact map recorded at {at} ruled out {}: they execute only code, and read only files, unchanged since, holding no added line",
                crate::words::count_of(ruled_out, "test", "tests"),
            ));
        }
        said.extend(self.impact.floor(&in_this_run));
        said.extend(self.impact.unused.iter().cloned());
        (!said.is_empty()).then(|| said.join("; "))
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
