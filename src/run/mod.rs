//! Runs a check: plan the mutants, compile-check them, prove the baseline, then test every mutant in parallel worktrees.

pub mod baseline;
pub mod cargo;
pub mod coverage;
pub mod executor;
pub mod pool;
pub mod process;
pub mod python_check;
pub mod rust_check;
pub mod warm;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Result;

use self::python_check::{compile_check, Session};
use self::rust_check::check_rust;
use crate::lines::{self, workdir};
use crate::options::Options;
use crate::plan::{Language, Plan, PlannedMutant};
use crate::python;
use crate::report::{MutantResult, Report, Status, Timings};
use crate::scratch::Scratch;
use crate::select;
use crate::worktree;

/// Set by the Ctrl-C / SIGTERM handler; workers stop and kill their tests when they see it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The run was stopped by a signal before it finished.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: no mutant results were kept, and the temporary copies were removed")]
pub struct Interrupted;

/// What the runner tells its reporters, in order.
#[derive(Debug)]
pub enum Event<'a> {
    /// The unmutated tests passed; `what` says which ran.
    BaselinePassed {
        duration: Duration,
        what: String,
    },
    /// Mutants are about to run.
    MutantsStarting {
        total: usize,
        workers: usize,
    },
    MutantFinished {
        result: &'a MutantResult,
        done: usize,
        total: usize,
    },
}

/// Where a check works: the user's checkout (only read), the first copy, the scratch directory.
#[derive(Clone, Copy)]
pub struct Places<'a> {
    pub repo_root: &'a Path,
    pub base: &'a Path,
    pub scratch: &'a Scratch,
}

/// The change read and its state written to the first copy: what `list` and `check` share.
struct Prepared {
    repo_root: PathBuf,
    scratch: Scratch,
    base: PathBuf,
    added: lines::AddedLines,
}

fn prepare(options: &Options, stdin: &mut dyn Read) -> Result<Prepared> {
    let repo = lines::open_repository(&options.directory)?;
    let repo_root = workdir(&repo).to_path_buf();
    let added = lines::find(&repo, &options.change, stdin)?;
    let scratch = Scratch::create()?;
    let base = scratch.path().join("copy-0");
    worktree::materialize(&repo, added.state, &base)?;
    Ok(Prepared { repo_root, scratch, base, added })
}

/// The planned mutants of the change in `options`, without running anything.
pub fn plan(options: &Options, stdin: &mut dyn Read) -> Result<Plan> {
    let prepared = prepare(options, stdin)?;
    Plan::make(&prepared.added, &prepared.base)
}

/// Mutates the change in `options` and tests every mutant; `events` hears of the progress.
pub fn check(options: &Options, stdin: &mut dyn Read, events: &mut dyn FnMut(Event)) -> Result<Report> {
    let start = Instant::now();
    let mut clock = start;
    let mut lap = move || std::mem::replace(&mut clock, Instant::now()).elapsed();
    let mut timings = Timings::default();
    let Prepared { repo_root, scratch, base, added } = prepare(options, stdin)?;
    timings.diff = lap();
    let plan = Plan::make(&added, &base)?;
    let tests = select::relevant_tests(&plan, &options.extra_tests);
    let mut report = Report { plan, tests, ..Report::default() };
    let mutants = report.plan.mutants();
    timings.generate = lap();
    if mutants.is_empty() {
        timings.wall = start.elapsed();
        report.timings = timings;
        return Ok(report);
    }
    let (mut results, candidates) = split_ignored(mutants);
    let (python_candidates, rust_candidates): (Vec<_>, Vec<_>) =
        candidates.into_iter().partition(|c| report.plan.files[c.file].language == Language::Python);
    if !python_candidates.is_empty() {
        let python = python::find_interpreter(options.python.as_deref(), &repo_root)?;
        let session = Session::new(options, &report, python.clone(), &repo_root, &scratch)?;
        // The compile check needs no tests: it overlaps the unmutated run.
        let (ran, baseline) = std::thread::scope(|scope| {
            let compiling = scope.spawn(|| {
                let started = Instant::now();
                compile_check(&python, &report.plan, &python_candidates)
                    .map(|errors| (errors, started.elapsed()))
            });
            let compiled = || compiling.join().map_err(|_| anyhow::anyhow!("the compile check panicked"))?;
            session.run(&base, python_candidates.clone(), compiled, &mut timings, events)
        })?;
        results.extend(ran);
        report.baseline = Some(baseline);
    }
    if !rust_candidates.is_empty() {
        let places = Places { repo_root: &repo_root, base: &base, scratch: &scratch };
        let (ran, baseline) =
            check_rust(options, &report.plan, &places, rust_candidates, &mut timings, events)?;
        results.extend(ran);
        report.baseline = Some(report.baseline.unwrap_or_default() + baseline);
    }
    timings.wall = start.elapsed();
    report.timings = timings;
    results.sort_by_key(|result| result.planned.id);
    report.results = results;
    Ok(report)
}

/// Gives Ignored mutants their verdicts; returns them and the mutants left to check.
fn split_ignored(mutants: Vec<PlannedMutant>) -> (Vec<MutantResult>, Vec<PlannedMutant>) {
    let mut settled = Vec::new();
    let mut candidates = Vec::new();
    for planned in mutants {
        match planned.mutant.ignored.clone() {
            Some(reason) => settled.push(verdict(planned, Status::Ignored, reason)),
            None => candidates.push(planned),
        }
    }
    (settled, candidates)
}

pub(crate) fn verdict(planned: PlannedMutant, status: Status, reason: String) -> MutantResult {
    MutantResult {
        planned,
        status,
        reason,
        duration: Duration::ZERO,
        covered_by: Vec::new(),
        killed_by: Vec::new(),
    }
}
