//! One Python copy's worker: each mutant swapped into its collector's live functions when it can be, else imported fresh; the canaries that prove both paths see the copy.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;

use super::collector::{Collector, Swapped};
use super::executor::Executor;
use super::job::PythonJob;
use super::pytest;
use super::rest;
use crate::interrupt::{Interrupted, INTERRUPTED};
use crate::model::outcome::{continued, Outcome, Status};
use crate::model::plan::{FilePlan, Plan};
use crate::model::record::{CommandRecord, Exit, Finished, How, RunRecord};
use crate::run::flaky::Flaky;
use crate::run::job::Job;
use crate::run::language::{with_mutant, Worker};
use crate::run::{outcome, timeouts};
use crate::worktree::{self, Stamp};

/// A file that fails on import, standing in for a mutated file to prove the tests import the copy.
pub const CANARY_SOURCE: &str =
    "raise RuntimeError('mutdelta canary: this file was replaced to prove the tests import it')\n";

/// Whether and how this worker swaps mutants into live code.
pub enum Swap {
    /// Not tried: `--no-swap`, `--no-fork` or a test command.
    Off,
    /// Tried, but there is no collector to swap in: why.
    Unavailable(String),
    On(Box<Collector>),
}

/// One copy and how tests run there.
pub struct PythonWorker {
    pub root: PathBuf,
    pub executor: Box<dyn Executor>,
    /// Under pytest (else a user's command): pytest's exit codes and summary are read.
    pub pytest: bool,
    pub swap: Swap,
    /// Files whose mutants cannot be swapped in (the swap canary did not hold), with why.
    pub unswappable: BTreeMap<usize, String>,
    /// What stands for a swapped run on a command line: the interpreter, the environment and
    /// pytest's arguments before the tests.
    pub equivalent: Equivalent,
    /// Selections of tests run unmutated after a kill, and whether they passed.
    pub verified: HashMap<Vec<String>, bool>,
    /// Killing tests that passed alone unmutated after their selection did, and how often: on
    /// the swap path, where such a run costs little, a kill runs them so up to
    /// `VERIFIED_AFTER` times, so that a test that fails at random shows it.
    pub passed_unmutated: HashMap<Vec<String>, u32>,
    /// Those runs, in all: at most `EXTRA_VERIFICATIONS`.
    pub extra_verifications: u32,
    /// Selections that failed unmutated every time they ran again after a kill: not run again.
    pub fails_unmutated: HashSet<Vec<String>>,
    /// The tests known to fail at random: a kill by them alone must fail again and again.
    pub flaky: Flaky,
    /// Whether swapped mutants get a short limit first (not under `--timeout`).
    pub short_limits: bool,
    /// Selections run unmutated after a swapped mutant ran past its short limit: how long
    /// they took, when well within it.
    pub quick_unmutated: HashMap<Vec<String>, Option<Duration>>,
    /// The rest of the suite, when its coverage run was begun beside the first round.
    pub beside: Option<rest::Watch>,
}

/// The command a forked or swapped run stands for.
#[derive(Clone)]
pub struct Equivalent {
    pub python: PathBuf,
    pub env: Vec<(String, String)>,
    pub pytest_args: Vec<String>,
}

impl Equivalent {
    fn record(&self, root: &Path, tests: &[String], run: &Finished) -> CommandRecord {
        let argv = [self.python.display().to_string(), "-m".into(), "pytest".into()];
        let argv =
            argv.into_iter().chain(self.pytest_args.iter().cloned()).chain(tests.iter().cloned()).collect();
        CommandRecord::new(argv, root.to_path_buf(), &self.env, run.exit.clone(), run.duration)
            .with_inherited(super::interpreter::INHERITED)
    }
}

impl PythonWorker {
    /// Runs `tests` with `file` replaced by one that raises on import.
    pub fn canary(
        &mut self,
        file: &FilePlan,
        tests: &[String],
        timeout: Duration,
        log: &Path,
    ) -> Result<Finished> {
        let path = self.root.join(&file.path);
        worktree::replace_file(&path, CANARY_SOURCE, Stamp::FreshSecond)?;
        let run = self.executor.run(tests, timeout, log);
        worktree::replace_file(&path, &file.source, Stamp::FreshSecond)?;
        run
    }

    /// Runs `tests` in the collector with every function of `file` made to raise. `Ok(None)`
    /// when they fail, as they must for the swap path to be trusted with the file; else why not.
    pub fn swap_canary(
        &mut self,
        file: &FilePlan,
        tests: &[String],
        timeout: Duration,
        log: &Path,
    ) -> Result<Option<String>> {
        let Swap::On(collector) = &mut self.swap else {
            return Ok(Some("no collector".to_string()));
        };
        Ok(match collector.canary(&self.root.join(&file.path), tests, timeout, log)? {
            Swapped::Refused(why) => Some(why),
            Swapped::Ran { finished, .. } if finished.exit == Exit::Interrupted => {
                return Err(Interrupted.into())
            }
            Swapped::Ran { finished, .. } if finished.passed() => Some(
                "its tests pass in the collector with every function of the file made to raise".to_string(),
            ),
            Swapped::Ran { .. } => None,
        })
    }

    /// Why `job` cannot take the swap path; `None` when it can.
    fn swap_refusal(&self, job: &Job<PythonJob>) -> Option<String> {
        match &self.swap {
            Swap::Off => None,
            _ if job.data.fresh.is_some() => job.data.fresh.map(|fresh| fresh.reason().to_string()),
            Swap::Unavailable(why) => Some(why.clone()),
            Swap::On(_) => self.unswappable.get(&job.planned.file).cloned(),
        }
    }

    /// The mutant swapped into the collector's live code; `Err(why)` when it cannot be.
    fn swapped(
        &mut self,
        file: &FilePlan,
        job: &Job<PythonJob>,
        tests: &[String],
        limit: Duration,
        log: &Path,
    ) -> std::result::Result<Outcome, String> {
        if let Some(why) = self.swap_refusal(job) {
            return Err(why);
        }
        let Swap::On(collector) = &mut self.swap else {
            return Err("swapping is off".to_string());
        };
        let path = self.root.join(&file.path);
        match collector.mutant(&path, file.source.len(), &job.planned.mutant, tests, limit, log) {
            Ok(Swapped::Refused(why)) => Err(why),
            Ok(Swapped::Ran { mut finished, failed, split }) => {
                finished.command = Some(self.equivalent.record(&self.root, tests, &finished));
                let mut outcome = pytest::read(&finished, tests, limit, &self.root);
                if outcome.status == Status::Killed && !failed.is_empty() {
                    outcome.reason = format!("failed: {}", failed.join(", "));
                    outcome.killed_by = failed;
                }
                let mut record = RunRecord::of(How::Swap, &[&finished]);
                record.split = split;
                outcome.record = Some(record);
                Ok(outcome)
            }
            Err(err) => {
                let why = format!("the collector broke: {err:#}");
                self.swap = Swap::Unavailable(why.clone());
                Err(why)
            }
        }
    }
}

impl Worker for PythonWorker {
    type Data = PythonJob;

    /// The swap path when it can be taken, else the executor (a fork of the warm worker, or a
    /// fresh interpreter). The mutated file is in the copy either way.
    ///
    /// The job's `tried_first` tests run on their own first: a kill among them that holds is
    /// the verdict, else its whole selection decides.
    ///
    /// While the rest of the suite runs beside, its processes may hold what a test needs (a
    /// port, a file outside the copy). While a mutant is known to need it (a line no test of
    /// the change ran, or a survivor), a kill, timeout or broken run beside it holds only if
    /// its tests pass unmutated here, with the rest of the suite still running from before the
    /// mutant's run to after that check; if they fail, the rest of the suite is stopped. While
    /// none is, it runs on idle CPU time for a survivor that may never come, and stopping it
    /// costs less than checking each kill (the killing test's whole run). If it ended
    /// meanwhile (another worker stopped it, or it finished), nothing shows whether it did it.
    /// Whichever way it ended, the mutant runs again without it.
    fn test(&mut self, plan: &Plan, job: &Job<PythonJob>, log: &Path) -> Result<Outcome> {
        let Some(rest) = self.beside.clone().filter(rest::Watch::running) else {
            self.beside = None;
            return self.test_mutant(plan, job, log);
        };
        let outcome = self.test_mutant(plan, job, log)?;
        if outcome.status.is_missed() {
            rest.want();
        }
        let failed = outcome.status.is_caught() || outcome.status == Status::RuntimeError;
        if !failed {
            return Ok(outcome);
        }
        let wanted = rest.wanted();
        let holds = wanted && rest.running() && self.passes_unmutated_now(&outcome, job, log)?;
        if holds && rest.running() {
            return Ok(outcome);
        }
        let why = match (rest.running(), wanted) {
            (false, _) => "was over: it ran beside the first try",
            (true, true) => "was stopped: beside it, the tests failed without the mutant too",
            (true, false) => {
                "was stopped: no mutant needed it yet (a kill made while it ran counts once made again without it)"
            }
        };
        rest.stop();
        self.beside = None;
        let mut again = self.test_mutant(plan, job, log)?;
        again.reason = format!("{}; run again once the rest of the suite, begun beside, {why}", again.reason);
        Ok(continued(outcome, again))
    }
}

/// How many times killing tests run alone unmutated, after their selection passed so.
const VERIFIED_AFTER: u32 = 5;
/// The most such runs one worker makes: a test that kills often is run early, and a check
/// without flaky tests pays for a few runs of one test each, whatever the size of the change.
const EXTRA_VERIFICATIONS: u32 = 8;

impl PythonWorker {
    /// The job's mutant against its tests (`test_mutant_once`), a kill whose failing tests are
    /// all flaky confirmed: the mutant runs again with each of them, until it passes or has
    /// failed as often as its flakiness alone would almost never fail (`Known::runs_to_kill`).
    /// One that fails every time kills it. One that passes once is not a kill: it passed with
    /// the mutant, as it fails without it; the mutant then runs again without it, and with
    /// nothing left to run it survived. Under pytest-rerunfailures' `--reruns N` every
    /// failure must happen N + 1 times, as in the project's own runs.
    fn test_mutant(&mut self, plan: &Plan, job: &Job<PythonJob>, log: &Path) -> Result<Outcome> {
        let file = &plan.files[job.planned.file];
        let mut outcome = self.test_mutant_once(plan, job, log)?;
        let mut job = std::borrow::Cow::Borrowed(job);
        let mut flaky: Vec<String> = Vec::new();
        let mut passed = Vec::new();
        while outcome.status == Status::Killed && !outcome.killed_by.is_empty() {
            let tail = outcome.record.as_ref().map(|record| record.tail.clone()).unwrap_or_default();
            let runs: Option<Vec<(String, u32, String)>> =
                outcome.killed_by.iter().map(|test| self.runs_to_kill(test, &tail)).collect();
            // A steady test failed: the kill stands as the usual checks held it.
            let Some(runs) = runs else { break };
            for (test, _, _) in &runs {
                if !flaky.contains(test) {
                    flaky.push(test.clone());
                }
            }
            let mut reproduced = None;
            let mut spent = Duration::ZERO;
            for (test, needed, known) in &runs {
                let (failed, took) = self.fails_every_time(file, &job, test, *needed, log)?;
                spent += took;
                if failed == *needed {
                    reproduced =
                        Some(format!("{test} failed in all {needed} runs under the mutant (flaky: {known})"));
                    break;
                }
                let failures = crate::words::count_of(failed as usize, "failure", "failures");
                passed.push(format!("{test} ({known}; with the mutant it passed after {failures})"));
            }
            outcome.duration += spent;
            if let Some(why) = reproduced {
                outcome.reason = format!("{}; {why}: a kill", outcome.reason);
                break;
            }
            let gone: Vec<String> = runs.into_iter().map(|(test, _, _)| test).collect();
            let Some(rest) = without_tests(&job, &gone) else {
                outcome = Outcome { status: Status::Survived, killed_by: Vec::new(), ..outcome };
                outcome.reason = String::new();
                break;
            };
            job = std::borrow::Cow::Owned(rest);
            let again = self.test_mutant_once(plan, &job, log)?;
            outcome = continued(outcome, again);
        }
        if !passed.is_empty() {
            let said =
                format!("not killed by flaky tests whose failures did not reproduce: {}", passed.join("; "));
            outcome.reason =
                if outcome.reason.is_empty() { said } else { format!("{said}; {}", outcome.reason) };
        }
        outcome.flaky = flaky;
        Ok(outcome)
    }

    /// When `test` is flaky, its failure in the run's output `tail` looks like a flaky test's
    /// (`Flaky::looks_like`), or every failure must repeat (`--reruns`): how many runs in a row
    /// must fail for it to kill, and what is known of it, in words.
    fn runs_to_kill(&self, test: &str, tail: &str) -> Option<(String, u32, String)> {
        if let Some(known) = self.flaky.known(test) {
            return Some((test.to_string(), known.runs_to_kill(), known.describe()));
        }
        let failure = super::pytest::failure_of(tail, test);
        if let Some((flaky, known)) = failure.and_then(|failure| self.flaky.looks_like(test, failure)) {
            let said = format!("its failure looks like flaky {flaky}'s: {}", known.describe());
            return Some((test.to_string(), known.runs_to_kill(), said));
        }
        let reruns = self.flaky.reruns();
        (reruns > 0).then(|| {
            let said = format!("the project reruns a failing test up to {reruns} times (--reruns)");
            (test.to_string(), reruns + 1, said)
        })
    }

    /// Runs the mutant with `test` alone until it passes, at most `needed` times; how many of
    /// the runs failed, and how long they took.
    fn fails_every_time(
        &mut self,
        file: &FilePlan,
        job: &Job<PythonJob>,
        test: &str,
        needed: u32,
        log: &Path,
    ) -> Result<(u32, Duration)> {
        let alone = [test.to_string()];
        let mut took = Duration::ZERO;
        for failed in 0..needed {
            let run = self.run_mutant(file, job, &alone, log)?;
            took += run.duration;
            if !run.status.is_caught() {
                return Ok((failed, took));
            }
        }
        Ok((needed, took))
    }
}

/// `job` without `tests`: those it names, or when it runs the whole suite, those left out
/// too; none when nothing is left to run.
fn without_tests(job: &Job<PythonJob>, tests: &[String]) -> Option<Job<PythonJob>> {
    let mut job = job.clone();
    let keep = |list: &mut Vec<String>| list.retain(|test| !tests.contains(test));
    if job.tests.is_empty() {
        job.data.left_out.extend(tests.iter().cloned());
    } else {
        keep(&mut job.tests);
        if job.tests.is_empty() {
            return None;
        }
    }
    keep(&mut job.data.in_suite_order);
    keep(&mut job.data.tried_first);
    Some(job)
}

impl PythonWorker {
    /// The job's `tried_first` tests on their own first, then its selection.
    fn test_mutant_once(&mut self, plan: &Plan, job: &Job<PythonJob>, log: &Path) -> Result<Outcome> {
        let file = &plan.files[job.planned.file];
        if job.data.tried_first.is_empty() {
            return self.test_selection(file, job, log);
        }
        let first = self.run_mutant(file, job, &job.data.tried_first, log)?;
        if first.status.is_caught()
            && self.unheld_kill(&job.data.tried_first, &first, job.timeout, log)?.is_none()
        {
            return Ok(first);
        }
        let rest = self.test_selection(file, job, log)?;
        Ok(continued(first, rest))
    }
}

/// What selects `tests` of `job` on pytest's command line: the tests, or for the whole suite
/// less the files the first round ran (`left_out`), those files deselected.
fn selection_args(job: &Job<PythonJob>, tests: &[String]) -> Vec<String> {
    if tests.is_empty() && !job.data.left_out.is_empty() {
        // `--deselect` takes node id prefixes: `FILE::` is every item of that file; a test's
        // node id is itself.
        let deselect = |left: &String| match left.contains("::") {
            true => format!("--deselect={left}"),
            false => format!("--deselect={left}::"),
        };
        job.data.left_out.iter().map(deselect).collect()
    } else {
        tests.to_vec()
    }
}

impl PythonWorker {
    /// The job's mutant against its tests.
    ///
    /// A kill counts only if the tests that ran up to the first failure pass without the
    /// mutant, in the same order: a test that fails on its own (it needs what another test
    /// left behind) proves nothing. When they fail, the tests are tried in the order the suite
    /// runs them: if they pass so unmutated, the mutant's run in that order decides.
    fn test_selection(&mut self, file: &FilePlan, job: &Job<PythonJob>, log: &Path) -> Result<Outcome> {
        let outcome = self.run_mutant(file, job, &job.tests, log)?;
        let Some(selection) = self.unheld_kill(&job.tests, &outcome, job.timeout, log)? else {
            return Ok(outcome);
        };
        if !job.data.in_suite_order.is_empty()
            && self.passes_unmutated(&job.data.in_suite_order, job.timeout, log)?
        {
            let mut again = self.run_mutant(file, job, &job.data.in_suite_order, log)?;
            again.reason = format!(
                "{}; run in the suite's order, as fastest first the tests fail without the mutant too",
                again.reason
            );
            return Ok(continued(outcome, again));
        }
        Ok(Outcome {
            status: Status::RuntimeError,
            reason: format!(
                "the tests fail without the mutant too when run in this selection ({}): a test that depends on others ran alone; its verdict is unknown",
                selection.join(" ")
            ),
            killed_by: Vec::new(),
            ..outcome
        })
    }

    /// The mutant in the copy, tested by `tests`: swapped in when it can be, else by the
    /// executor (a fork of the warm worker, or a fresh interpreter).
    ///
    /// Swapped in, the tests first get a short limit (`timeouts::short_limit`, stretched by the
    /// machine's load) unless `--timeout` was given: a swapped child has everything imported,
    /// so a mutant that hangs shows it long before the usual timeout. Running past that limit
    /// is a timeout only when the same tests, unmutated, finish here within a third of the
    /// limit an idle machine gives; else the mutant runs again with the usual timeout.
    ///
    /// Past the usual timeout, on any path, it is a timeout only when the same tests, unmutated,
    /// run the same way (`unmutated_alike`), finish within a third of it: on a machine busy
    /// enough that they take longer (or do not finish), the limit, not the mutant, stopped
    /// them, and the mutant runs again with five times what they took unmutated just now.
    fn run_mutant(
        &mut self,
        file: &FilePlan,
        job: &Job<PythonJob>,
        tests: &[String],
        log: &Path,
    ) -> Result<Outcome> {
        let short =
            Some(timeouts::short_limit(job.cost)).filter(|short| self.short_limits && *short < job.timeout);
        // The run's own limit is stretched by the machine's load; the tests, unmutated, must
        // still finish within a third of the limit an idle machine gives.
        let first = short.map(|short| timeouts::stretched(short).min(job.timeout));
        let mut outcome = self.run_mutant_within(file, job, tests, first.unwrap_or(job.timeout), log)?;
        if outcome.status != Status::Timeout || outcome.memory_limit.is_some() {
            return Ok(outcome);
        }
        let swapped = outcome.record.as_ref().is_some_and(|record| record.how == How::Swap);
        if let (Some(short), Some(first), true) = (short, first, swapped) {
            if let Some(unmutated) = self.quick_unmutated(tests, short, log)? {
                outcome.reason = format!(
                    "the tests ran past {:.1} s, where unmutated they take {:.2} s",
                    first.as_secs_f64(),
                    unmutated.as_secs_f64()
                );
                return Ok(outcome);
            }
            let again = self.run_mutant_within(file, job, tests, job.timeout, log)?;
            if again.status != Status::Timeout || again.memory_limit.is_some() {
                return Ok(continued(outcome, again));
            }
            outcome = continued(outcome, again);
        }
        self.confirm_timeout(file, job, tests, outcome, log)
    }

    /// A timeout at the job's limit holds when `tests`, unmutated, run as the mutant's run
    /// did, finish within a third of it; else the mutant runs again, once, with five times
    /// what they took (not finishing within three times the limit unmutated, they leave the
    /// mutant's verdict unknown).
    fn confirm_timeout(
        &mut self,
        file: &FilePlan,
        job: &Job<PythonJob>,
        tests: &[String],
        mut outcome: Outcome,
        log: &Path,
    ) -> Result<Outcome> {
        let limit = job.timeout;
        let swapped = outcome.record.as_ref().is_some_and(|record| record.how == How::Swap);
        let unmutated = self.unmutated_alike(swapped, job, tests, limit * 3, log)?;
        let took = unmutated.duration.as_secs_f64();
        if unmutated.exit == Exit::Interrupted {
            return Err(Interrupted.into());
        }
        if !unmutated.passed() {
            outcome.status = Status::RuntimeError;
            outcome.reason = format!(
                "the tests ran past {:.1} s with the mutant, and without it, run the same way, they {} too: the limit, not the mutant, stopped them; its verdict is unknown",
                limit.as_secs_f64(),
                match unmutated.exit {
                    Exit::TimedOut => format!("did not finish within {:.1} s", (limit * 3).as_secs_f64()),
                    _ => "failed".to_string(),
                }
            );
            return Ok(outcome);
        }
        if unmutated.duration * 3 <= limit {
            outcome.reason = format!(
                "{}; without the mutant, run the same way, the tests take {took:.2} s",
                outcome.reason
            );
            return Ok(outcome);
        }
        let raised = Job { timeout: unmutated.duration * 5, ..job.clone() };
        let mut again = self.run_mutant_within(file, &raised, tests, raised.timeout, log)?;
        again.reason = format!(
            "{}; run again with a limit of {:.1} s: without the mutant, run the same way, the tests took {took:.2} s just now, more than a third of the first limit ({:.1} s)",
            again.reason,
            raised.timeout.as_secs_f64(),
            limit.as_secs_f64()
        );
        Ok(continued(outcome, again))
    }

    /// `tests` run without any mutant the way a mutant's run took: swapped into the collector
    /// (`swapped`), else by the executor (a fork of the warm worker, or a fresh interpreter).
    fn unmutated_alike(
        &mut self,
        swapped: bool,
        job: &Job<PythonJob>,
        tests: &[String],
        limit: Duration,
        log: &Path,
    ) -> Result<Finished> {
        if let (true, Swap::On(collector)) = (swapped, &mut self.swap) {
            if let Swapped::Ran { finished, .. } = collector.unmutated(tests, limit, log)? {
                return Ok(finished);
            }
        }
        self.executor.run(&selection_args(job, tests), limit, log)
    }

    /// How long `tests` take unmutated in the collector, when they pass within a third of
    /// `short`; once per selection and worker.
    fn quick_unmutated(&mut self, tests: &[String], short: Duration, log: &Path) -> Result<Option<Duration>> {
        if let Some(known) = self.quick_unmutated.get(tests) {
            return Ok(*known);
        }
        let Swap::On(collector) = &mut self.swap else { return Ok(None) };
        let quick = match collector.unmutated(tests, short, log)? {
            Swapped::Ran { finished, .. } if finished.passed() && finished.duration * 3 <= short => {
                Some(finished.duration)
            }
            _ => None,
        };
        self.quick_unmutated.insert(tests.to_vec(), quick);
        Ok(quick)
    }

    /// `run_mutant` with `limit` on the swap path; the other paths keep the job's timeout.
    fn run_mutant_within(
        &mut self,
        file: &FilePlan,
        job: &Job<PythonJob>,
        tests: &[String],
        limit: Duration,
        log: &Path,
    ) -> Result<Outcome> {
        let root = self.root.clone();
        let mut outcome =
            with_mutant(&root, file, &job.planned, Stamp::FreshSecond, || -> Result<Outcome> {
                let fallback = match self.swapped(file, job, tests, limit, log) {
                    Ok(outcome) => return Ok(outcome),
                    Err(why) => (!matches!(self.swap, Swap::Off)).then_some(why),
                };
                let run = self.executor.run(&selection_args(job, tests), job.timeout, log)?;
                let mut outcome = if self.pytest {
                    pytest::read(&run, tests, job.timeout, &root)
                } else {
                    outcome::read_command(&run, job.timeout)
                };
                let mut record = RunRecord::of(self.executor.how(), &[&run]);
                record.fallback = fallback;
                outcome.record = Some(record);
                Ok(outcome)
            })??;
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(Interrupted.into());
        }
        if !job.data.covers.is_empty() && tests == job.tests.as_slice() {
            outcome.covered_by = job.data.covers.clone();
        }
        Ok(outcome)
    }

    /// Whether the tests of a mutant whose run failed (those that failed, else its whole selection) pass
    /// unmutated here now: uncached, as what runs beside may take what they need at any moment.
    /// A run that never got to a test (pytest could not start, or collect them) is asked
    /// the same question by collecting its selection again: running it would cost the whole
    /// test file, for code run at import, while only its collection failed.
    fn passes_unmutated_now(&mut self, outcome: &Outcome, job: &Job<PythonJob>, log: &Path) -> Result<bool> {
        if self.pytest && outcome.record.as_ref().is_some_and(pytest::ran_no_test) {
            let collect = ["--collect-only".to_string(), "-q".to_string()];
            let args: Vec<String> = collect.into_iter().chain(selection_args(job, &job.tests)).collect();
            return Ok(self.executor.run(&args, job.timeout, log)?.passed());
        }
        let tests = if outcome.killed_by.is_empty() { &job.tests } else { &outcome.killed_by };
        self.run_unmutated(tests, job.timeout, log)
    }

    /// When `outcome` is a kill that does not hold (the tests up to the first failure fail
    /// without the mutant too, every time), those tests. A kill by flaky tests alone is left
    /// to `test_mutant`. Tests that fail unmutated, where the baseline passed, and then pass
    /// when run again, fail at random: the killing tests are flaky from then on, and
    /// `test_mutant` confirms the kill. Where the baseline's run stands for the check, on the
    /// swap path (where a run costs little) the killing tests still run unmutated alone, so
    /// that a flaky one shows.
    fn unheld_kill(
        &mut self,
        tests: &[String],
        outcome: &Outcome,
        timeout: Duration,
        log: &Path,
    ) -> Result<Option<Vec<String>>> {
        if !self.pytest || outcome.status != Status::Killed || outcome.killed_by.is_empty() {
            return Ok(None);
        }
        let first_killer = tests.iter().position(|test| outcome.killed_by.contains(test));
        let selection: Vec<String> = match first_killer {
            Some(index) => tests[..=index].to_vec(),
            None => tests.to_vec(),
        };
        if self.flaky.reruns() > 0 || outcome.killed_by.iter().all(|test| self.flaky.holds(test)) {
            return Ok(None);
        }
        let swapping = matches!(self.swap, Swap::On(_));
        let (failing, selection_failed) = if !self.passes_unmutated(&selection, timeout, log)? {
            (selection, true)
        } else if swapping && !self.killers_pass_alone(&outcome.killed_by, timeout, log)? {
            (outcome.killed_by.clone(), false)
        } else {
            return Ok(None);
        };
        let runs = match self.fails_unmutated.contains(&failing) {
            true => None,
            false => self.passes_at_last(&failing, timeout, log)?,
        };
        let Some(runs) = runs else {
            self.fails_unmutated.insert(failing.clone());
            // Failing every time: the selection does not hold the kill; the killing tests
            // alone (after a selection that passed) lean on the tests before them, which the
            // selection ran: the kill holds.
            return Ok(selection_failed.then_some(failing));
        };
        self.verified.remove(&failing);
        for test in &outcome.killed_by {
            self.flaky.seen(test, runs, runs - 1, &[]);
        }
        Ok(None)
    }

    /// Whether the killing `tests`, whose selection passed unmutated, pass alone unmutated
    /// (uncached): run while they have passed so fewer than `VERIFIED_AFTER` times, within the
    /// worker's `EXTRA_VERIFICATIONS`; else taken to pass, as their selection did.
    fn killers_pass_alone(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<bool> {
        let passed = self.passed_unmutated.get(tests).copied().unwrap_or(0);
        if passed >= VERIFIED_AFTER || self.extra_verifications >= EXTRA_VERIFICATIONS {
            return Ok(true);
        }
        self.extra_verifications += 1;
        if !self.run_unmutated(tests, timeout, log)? {
            return Ok(false);
        }
        *self.passed_unmutated.entry(tests.to_vec()).or_default() += 1;
        Ok(true)
    }

    /// Runs `tests`, which failed unmutated once, again until they pass, at most
    /// `flaky::RETRIES` times (twice that on the swap path, where a run costs little: a test
    /// that fails one run in two then stays unseen once in 130,000 times); the runs it took, the
    /// first failure included, when they did.
    fn passes_at_last(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<Option<u32>> {
        let swapping = matches!(self.swap, Swap::On(_));
        let retries = crate::run::flaky::RETRIES * if swapping { 2 } else { 1 };
        for retry in 1..=retries {
            if self.run_unmutated(tests, timeout, log)? {
                return Ok(Some(retry + 1));
            }
        }
        Ok(None)
    }

    /// Whether `tests` pass, in this order, in this copy as it is; each selection is run once
    /// per worker, and not at all when it begins a selection that passed (its tests ran the
    /// same way there, up to its last one).
    fn passes_unmutated(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<bool> {
        if let Some(passed) = self.verified.get(tests) {
            return Ok(*passed);
        }
        if !tests.is_empty() && self.verified.iter().any(|(done, passed)| *passed && done.starts_with(tests))
        {
            return Ok(true);
        }
        let passed = self.run_unmutated(tests, timeout, log)?;
        self.verified.insert(tests.to_vec(), passed);
        Ok(passed)
    }

    /// Whether `tests` pass in this copy as it is (no mutant), by the path mutants take; within
    /// three times the mutant's `timeout`: the question is whether they fail, and a limit that
    /// does not cover the path's start-up (`confirm_timeout`) must not answer it.
    fn run_unmutated(&mut self, tests: &[String], timeout: Duration, log: &Path) -> Result<bool> {
        let timeout = timeout * 3;
        if let Swap::On(collector) = &mut self.swap {
            if let Swapped::Ran { finished, .. } = collector.unmutated(tests, timeout, log)? {
                return Ok(finished.passed());
            }
        }
        Ok(self.executor.run(tests, timeout, log)?.passed())
    }
}
