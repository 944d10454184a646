//! The Rust check: `CargoCheck` (owning packages and those that depend on them; the schema tried first, else one unmutated build) and `CargoWorker`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Result};
use mutators::rust::schema::MUTANT_VAR;

use super::build::Cargo;
use super::refusal::CargoRun;
use super::schema::Switched;
use super::settings::{RustSettings, TestTool};
use super::{build, libtest, nextest, schema, spec, workspace};
use crate::interrupt::Interrupted;
use crate::model::outcome::{continued, Outcome, Status};
use crate::model::plan::{Language, Plan, PlannedMutant};
use crate::model::record::{Exit, Finished, How, RunRecord, StepRecord};
use crate::run::flaky::{self, Flaky};
use crate::run::job::Job;
use crate::run::language::{with_mutant, Context, LanguageCheck, Proven, Started, Worker};
use crate::run::outcome;
use crate::run::require;
use crate::run::timeouts::{build_timeout, mutant_timeout, BASELINE_LIMIT};
use crate::worktree::{self, Stamp};

/// A check of Rust mutants in a cargo workspace.
pub struct CargoCheck {
    workspace: workspace::Workspace,
}

/// What proving the baseline learned: how long a build takes, and the schema when one holds.
pub struct Evidence {
    build: Duration,
    switched: Option<Arc<Switched>>,
    /// Files the schema rewrote in the first copy: a copy that builds mutants on their own
    /// gets their original text back.
    rewritten: Vec<usize>,
}

impl CargoCheck {
    /// Checks that the test tool is there, reads the workspace's packages, and tells the flaky
    /// tests what nextest's configuration retries.
    pub fn new(ctx: &Context) -> Result<CargoCheck> {
        build::require_tool(RustSettings::of(ctx.options).test_tool)?;
        let workspace = workspace::workspace(ctx.base, ctx.repo_root)?;
        let retries = nextest::Retries::read(&ctx.base.join(&workspace.root))
            .map_err(|why| anyhow!("{why}: mend it as nextest would ask, or remove it"))?;
        ctx.flaky.rerun_by_project(retries.every);
        ctx.flaky.retried_by_project(retries.tests);
        Ok(CargoCheck { workspace })
    }

    /// The worker with copy `root` and target directory number `index`.
    fn cargo(&self, ctx: &Context, root: PathBuf, index: usize, build_timeout: Duration) -> Cargo {
        Cargo {
            root,
            target: target_dir(ctx, index),
            tool: RustSettings::of(ctx.options).test_tool,
            command: ctx.options.test_cmd.clone(),
            build_timeout,
            packages: self.workspace.packages.clone(),
            features: RustSettings::of(ctx.options).features.clone(),
            incremental: true,
        }
    }

    /// Each mutant with its package and the packages whose tests can reach it; and the names of
    /// all those packages, in the order first met.
    fn owned(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<(Vec<Owned>, Vec<String>)> {
        let mut owned = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for planned in candidates {
            let file = &ctx.plan.files[planned.file].path;
            let package = workspace::owner(&self.workspace.packages, file).ok_or_else(|| {
                anyhow!(
                    "{} is not in any package of a cargo workspace: run mutdelta in the workspace that builds it",
                    file.display()
                )
            })?;
            let tested = workspace::with_dependents(&self.workspace.packages, &package.name);
            for name in &tested {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            owned.push(Owned { planned, package: package.clone(), tested });
        }
        Ok((owned, names))
    }

    /// Whether mutants are switched into one build: not with a test command, which the schema
    /// cannot see into. With nextest, the schema's recording still says which tests reach each
    /// mutant; nextest then runs those.
    fn schema_wanted(ctx: &Context) -> bool {
        RustSettings::of(ctx.options).schema && ctx.options.test_cmd.is_none()
    }
}

/// A mutant, its package and the packages whose tests can reach it.
struct Owned {
    planned: PlannedMutant,
    package: workspace::Package,
    tested: Vec<String>,
}

fn target_dir(ctx: &Context, index: usize) -> PathBuf {
    ctx.scratch.path().join(format!("target-{index}"))
}

impl LanguageCheck for CargoCheck {
    type Data = ();
    type Evidence = Evidence;
    type Worker = CargoWorker;
    const LANGUAGE: Language = spec::LANGUAGE;

    /// The toolchain the copy selects and the environment; every file counts, since a
    /// package's tests sit in its source files.
    fn verdict_scope(&self, ctx: &Context) -> Option<crate::run::verdicts::Scope> {
        let version = |program: &str, flag: &str| {
            let output = std::process::Command::new(program).arg(flag).current_dir(ctx.base).output().ok()?;
            output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        };
        let identity = format!(
            "{}{}{}",
            version("rustc", "-vV")?,
            version("cargo", "-V")?,
            crate::cache::environment_fingerprint()
        );
        Some(crate::run::verdicts::Scope { identity, test_module: |_| false })
    }

    /// The tests that can reach a mutant are those of its package and of every workspace
    /// package that depends on it. With the schema, every mutant is built once in the first
    /// copy and runs against the tests that reached it; a mutant the schema cannot hold (and
    /// every mutant with `--no-schema`) builds on its own and runs all of those packages' tests.
    fn prove(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<Proven<Evidence, ()>> {
        let (mut owned, names) = self.owned(ctx, candidates)?;
        let first = self.cargo(ctx, ctx.base.to_path_buf(), 0, BASELINE_LIMIT);
        build::seed_from_user(&self.workspace.user_target, &first.target)?;
        let log = ctx.logs.join("cargo-baseline.log");
        let switchable: Vec<&PlannedMutant> = owned
            .iter()
            .filter(|o| Self::schema_wanted(ctx) && schema::can_switch(ctx.plan, &o.planned, &o.package))
            .map(|o| &o.planned)
            .collect();
        let mut steps = Vec::new();
        let mut settled = Vec::new();
        let mut schema_build = Duration::ZERO;
        if !switchable.is_empty() {
            // The schema's build is made once and never rebuilt: no incremental state.
            let once = Cargo { incremental: false, ..first.clone() };
            let attempt = schema::attempt(
                ctx.plan,
                &once,
                &names,
                &switchable,
                ctx.options.jobs.get(),
                &log,
                ctx.flaky,
            )?;
            if let Some(switched) = attempt.switched {
                let schema = Schema { switched, unviable: attempt.unviable, rewritten: attempt.rewritten };
                return Ok(switched_jobs(ctx, owned, schema, attempt.steps, attempt.build));
            }
            steps = attempt.steps;
            schema_build = attempt.build;
            let mut buildable = Vec::new();
            for o in owned {
                match attempt.unviable.iter().find(|(id, _)| *id == o.planned.id) {
                    Some((_, reason)) => settled
                        .push(Outcome::settled(Status::CompileError, reason.clone()).for_mutant(o.planned)),
                    None => buildable.push(o),
                }
            }
            owned = buildable;
        }
        // Without the schema's recording, a mutant compiled out by a feature left off would build
        // unchanged and pass every test: it is settled here. A test command may turn features
        // on itself, so then it runs.
        if ctx.options.test_cmd.is_none() {
            let mut compiled = Vec::new();
            for o in owned {
                match compiled_out(ctx, &o.planned, &o.package) {
                    Some(reason) => settled.push(not_covered(o.planned, reason)),
                    None => compiled.push(o),
                }
            }
            owned = compiled;
        }
        if owned.is_empty() {
            // Every mutant is settled: no verdict rests on the unmutated tests.
            return Ok(all_settled(settled, steps, schema_build));
        }
        Unswitched { ctx, first: &first, names: &names, log: &log }.prove(owned, settled, steps)
    }

    /// Workers share the schema's build; each makes its own copy and target directory (seeded
    /// from the first) when it first has a mutant to build on its own. Without a schema the
    /// first worker builds in the first copy, and the others' copies are made at once.
    fn workers(
        &self,
        ctx: &Context,
        evidence: &mut Evidence,
        count: usize,
        _jobs: &[Job],
    ) -> Result<Started<CargoWorker>> {
        let build_timeout = build_timeout(evidence.build);
        let restore: Vec<(PathBuf, String)> = evidence
            .rewritten
            .iter()
            .map(|&file| (ctx.plan.files[file].path.clone(), ctx.plan.files[file].source.clone()))
            .collect();
        let shared = Arc::new(Shared {
            base: ctx.base.to_path_buf(),
            base_target: target_dir(ctx, 0),
            restore,
            switched: evidence.switched.clone(),
            first_target: Mutex::new(()),
        });
        let mut workers: Vec<CargoWorker> = (0..count)
            .map(|index| {
                // Without a schema the first copy is the first worker's own.
                let in_base = index == 0 && evidence.switched.is_none();
                let root = if in_base {
                    ctx.base.to_path_buf()
                } else {
                    ctx.scratch.path().join(format!("rust-copy-{index}"))
                };
                let target_index = if in_base { 0 } else { index + 1 };
                CargoWorker {
                    cargo: self.cargo(ctx, root, target_index, build_timeout),
                    ready: in_base,
                    shared: shared.clone(),
                    flaky: ctx.flaky.clone(),
                    passed_unmutated: HashMap::new(),
                }
            })
            .collect();
        if evidence.switched.is_none() {
            // The first worker builds in the first target directory: the others copy it now,
            // before it does.
            for worker in &mut workers {
                worker.ensure_copy()?;
            }
        }
        Ok(Started { workers, steps: Vec::new() })
    }

    /// Nothing to prove: a cargo worker builds what it tests in its own copy, and the schema
    /// was proven live by its canary.
    fn prove_round(
        &self,
        _ctx: &Context,
        _workers: &mut [CargoWorker],
        _jobs: &[Job],
    ) -> Result<Vec<StepRecord>> {
        Ok(Vec::new())
    }
}

/// The proof when every mutant is settled before the baseline: nothing was built but the
/// schema (if one was tried).
fn all_settled(
    settled: Vec<crate::model::outcome::MutantResult>,
    steps: Vec<StepRecord>,
    schema_build: Duration,
) -> Proven<Evidence, ()> {
    Proven {
        jobs: Vec::new(),
        settled,
        baseline: Duration::ZERO,
        what: String::new(),
        reused: false,
        compile: Duration::ZERO,
        build: schema_build,
        evidence: Evidence { build: schema_build, switched: None, rewritten: Vec::new() },
        steps,
    }
}

/// The baseline without a schema: the packages built once in the first copy, then each
/// mutant's packages' tests run there, which also gives each mutant's cost.
struct Unswitched<'a> {
    ctx: &'a Context<'a>,
    first: &'a Cargo,
    /// Every package whose tests reach a mutant.
    names: &'a [String],
    log: &'a Path,
}

impl Unswitched<'_> {
    fn prove(
        &self,
        mut owned: Vec<Owned>,
        mut settled: Vec<crate::model::outcome::MutantResult>,
        mut steps: Vec<StepRecord>,
    ) -> Result<Proven<Evidence, ()>> {
        let (ctx, first, log) = (self.ctx, self.first, self.log);
        crate::run::event::set_stage(Some("building"));
        let built = first.build(self.names, BASELINE_LIMIT, log)?;
        require::passed(&built, &CargoRun::Build, BASELINE_LIMIT)?;
        steps.push(StepRecord { step: "build".to_string(), record: RunRecord::of(How::Fresh, &[&built]) });
        // A file no crate of the build read is compiled out (a `#[cfg]` above its module): its
        // mutants would build unchanged and pass every test.
        if ctx.options.test_cmd.is_none() {
            let compiled = build::CompiledSources::read(&first.target, &first.root);
            let (left_out, read): (Vec<Owned>, Vec<Owned>) = owned
                .into_iter()
                .partition(|o| compiled.leave_out(&ctx.plan.files[o.planned.file].path, &o.package.dir));
            owned = read;
            settled.extend(left_out.into_iter().map(|o| not_covered(o.planned, NOT_COMPILED.to_string())));
        }
        let mut tests_took: BTreeMap<Vec<String>, Duration> = BTreeMap::new();
        crate::run::event::set_stage(Some("running the tests"));
        for tested in owned.iter().map(|o| o.tested.clone()) {
            if tests_took.contains_key(&tested) {
                continue;
            }
            // Tests that failed run again: if they then pass, they are flaky.
            let run = first.test(&tested, BASELINE_LIMIT, log)?;
            let failed = libtest::failed_in_tests(&run);
            let (mut runs, flaky_said) = flaky::run_failed_again(ctx.flaky, run, &failed, || {
                first.test(&tested, BASELINE_LIMIT, log)
            })?;
            let named = tested.join(", ");
            steps.push(StepRecord {
                step: format!("tests of {named}{flaky_said}"),
                record: RunRecord::of(How::Fresh, &runs.iter().collect::<Vec<_>>()),
            });
            let run = runs.pop().expect("a run");
            require::passed(&run, &CargoRun::Tests(&named), BASELINE_LIMIT)?;
            tests_took.insert(tested.clone(), run.duration);
        }
        let jobs = owned
            .into_iter()
            .map(|Owned { planned, tested, .. }| {
                let cost = tests_took[&tested];
                built_job(ctx, planned, tested, cost)
            })
            .collect();
        Ok(Proven {
            jobs,
            settled,
            baseline: tests_took.values().sum(),
            what: format!("the tests of {}", self.names.join(", ")),
            reused: false,
            compile: Duration::ZERO,
            build: built.duration,
            evidence: Evidence { build: built.duration, switched: None, rewritten: Vec::new() },
            steps,
        })
    }
}

/// A mutant built on its own, then tested by its packages' tests.
fn built_job(ctx: &Context, planned: PlannedMutant, tested: Vec<String>, cost: Duration) -> Job {
    Job::new(planned, tested, mutant_timeout(ctx.options.timeout, cost), cost)
}

/// A schema that holds, with what its builds found.
struct Schema {
    switched: Switched,
    /// Body replacements the schema's build showed cannot build, with the compiler's words.
    unviable: Vec<(usize, String)>,
    rewritten: Vec<usize>,
}

/// The NoCoverage reason of a mutant whose line is compiled only with features this check
/// leaves off; None when its line is compiled.
fn compiled_out(ctx: &Context, planned: &PlannedMutant, package: &workspace::Package) -> Option<String> {
    let path = &ctx.plan.files[planned.file].path;
    let needed = ctx.plan.feature_gated.get(path)?.get(&planned.mutant.line)?;
    let enabled = package.enabled_features(&RustSettings::of(ctx.options).features);
    let off: Vec<&str> =
        needed.iter().filter(|feature| !enabled.contains(*feature)).map(String::as_str).collect();
    if off.is_empty() {
        return None;
    }
    let names: Vec<String> = off.iter().map(|feature| format!("`{feature}`")).collect();
    Some(format!(
        "no test reaches this line: it is compiled only with feature {}, which this check leaves off (--features {} or --all-features turns it on)",
        names.join(" and "),
        off.join(",")
    ))
}

/// Why a mutant in a file no crate of the build read is NoCoverage.
const NOT_COMPILED: &str = "no test reaches this line: its file is not compiled in this build \
     (a `#[cfg(..)]` above its module leaves it out: a feature, or another platform)";

/// A mutant settled as NoCoverage for `reason`.
fn not_covered(planned: PlannedMutant, reason: String) -> crate::model::outcome::MutantResult {
    Outcome::settled(Status::NoCoverage, reason).for_mutant(planned)
}

/// The jobs once the schema holds: a switched mutant runs the tests that reached it, or is
/// NoCoverage when none did; the others build on their own.
fn switched_jobs(
    ctx: &Context,
    owned: Vec<Owned>,
    schema: Schema,
    steps: Vec<StepRecord>,
    build: Duration,
) -> Proven<Evidence, ()> {
    let Schema { switched, unviable, rewritten } = schema;
    let binaries_took = |package: &str| -> Duration {
        let tests: Duration = switched
            .binaries
            .iter()
            .filter(|binary| binary.package == package)
            .map(|binary| binary.duration)
            .sum();
        tests + switched.doctests_took.get(package).copied().unwrap_or_default()
    };
    let compiled = build::CompiledSources::read(&switched.cargo.target, &switched.cargo.root);
    let left_out = |planned: &PlannedMutant, package: &workspace::Package| {
        compiled.leave_out(&ctx.plan.files[planned.file].path, &package.dir)
    };
    let mut jobs = Vec::new();
    let mut settled = Vec::new();
    for Owned { planned, tested, package } in owned {
        if let Some((_, reason)) = unviable.iter().find(|(id, _)| *id == planned.id) {
            settled.push(Outcome::settled(Status::CompileError, reason.clone()).for_mutant(planned));
            continue;
        }
        if !switched.ids.contains(&planned.id) {
            if let Some(reason) = compiled_out(ctx, &planned, &package) {
                settled.push(not_covered(planned, reason));
                continue;
            }
            if left_out(&planned, &package) {
                settled.push(not_covered(planned, NOT_COMPILED.to_string()));
                continue;
            }
            let cost = tested.iter().map(|package| binaries_took(package)).sum();
            jobs.push(built_job(ctx, planned, tested, cost));
            continue;
        }
        let Some(reach) = switched.reach.get(&planned.id) else {
            let reason = compiled_out(ctx, &planned, &package)
                .or_else(|| left_out(&planned, &package).then(|| NOT_COMPILED.to_string()));
            settled.push(not_covered(planned, reason.unwrap_or_else(|| "no test reaches this line".into())));
            continue;
        };
        let mut cost: Duration = reach.tests.keys().map(|&index| switched.binaries[index].duration).sum();
        cost +=
            reach.doctests.iter().filter_map(|package| switched.doctests_took.get(package)).sum::<Duration>();
        jobs.push(Job::new(planned, switched.names(reach), mutant_timeout(ctx.options.timeout, cost), cost));
    }
    let baseline = switched.binaries.iter().map(|binary| binary.duration).sum::<Duration>()
        + switched.doctests_took.values().sum::<Duration>();
    let packages = switched.packages();
    Proven {
        jobs,
        settled,
        baseline,
        what: format!(
            "the tests of {} (recorded, with every mutant switched into one build)",
            packages.join(", ")
        ),
        reused: false,
        compile: Duration::ZERO,
        build,
        evidence: Evidence { build, switched: Some(Arc::new(switched)), rewritten },
        steps,
    }
}

/// What every worker shares: the first copy, and the schema.
struct Shared {
    base: PathBuf,
    base_target: PathBuf,
    /// Files to write back to their original text in a new copy.
    restore: Vec<(PathBuf, String)>,
    switched: Option<Arc<Switched>>,
    /// Held while the first target directory is copied or its doctests build, so that a copy
    /// never catches it half written.
    first_target: Mutex<()>,
}

/// A worker: switched mutants run in the shared schema build; the others build in its own
/// copy with its own target directory.
pub struct CargoWorker {
    cargo: Cargo,
    /// Whether its copy exists.
    ready: bool,
    shared: Arc<Shared>,
    /// The tests known to fail at random.
    flaky: Flaky,
    /// How many times each test that killed a mutant passed alone with the switch off.
    passed_unmutated: HashMap<String, u32>,
}

/// How many times a test that kills runs again alone, unmutated, in one worker.
const VERIFIED_AFTER: u32 = 5;

impl CargoWorker {
    /// Makes the worker's copy (with the original text of every file) and target directory.
    fn ensure_copy(&mut self) -> Result<()> {
        if self.ready {
            return Ok(());
        }
        worktree::duplicate(&self.shared.base, &self.cargo.root)?;
        for (path, source) in &self.shared.restore {
            worktree::replace_file(&self.cargo.root.join(path), source, Stamp::Now)?;
        }
        {
            let _held = self.shared.first_target.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            build::seed_target(&self.shared.base_target, &self.cargo.target)?;
        }
        self.ready = true;
        Ok(())
    }

    /// Builds the mutant's packages (failing: CompileError), then runs their tests.
    fn build_then_test(&mut self, plan: &Plan, job: &Job, log: &Path) -> Result<Outcome> {
        self.ensure_copy()?;
        let file = &plan.files[job.planned.file];
        let cargo = &self.cargo;
        let runs = with_mutant(&cargo.root, file, &job.planned, Stamp::Now, || -> Result<Vec<Finished>> {
            let built = cargo.build(&job.tests, cargo.build_timeout, log)?;
            if built.exit != Exit::Code(0) {
                return Ok(vec![built]);
            }
            let tested = cargo.test(&job.tests, job.timeout, log)?;
            Ok(vec![built, tested])
        })??;
        let mut outcome = read_runs(&runs, job, cargo.command.is_some())?;
        outcome.record = Some(RunRecord::of(How::BuildThenTest, &runs.iter().collect::<Vec<_>>()));
        Ok(outcome)
    }

    /// Switches the mutant on in the schema's executables and runs the tests that reached it,
    /// the fastest executable first, stopping at the first that fails; then the doctests that
    /// reached it.
    fn switched(
        &mut self,
        switched: &Switched,
        reach: &schema::Reach,
        job: &Job,
        log: &Path,
    ) -> Result<Outcome> {
        self.switched_as(switched, reach, job, &schema::mutant_switch(&job.planned), log)
    }

    /// `switched` with the switch set to `id` (`"0"`: no mutant, the original program).
    fn switched_as(
        &mut self,
        switched: &Switched,
        reach: &schema::Reach,
        job: &Job,
        id: &str,
        log: &Path,
    ) -> Result<Outcome> {
        let id = id.to_string();
        let mut runs: Vec<Finished> = Vec::new();
        if self.cargo.tool == TestTool::Nextest && !reach.tests.is_empty() {
            runs.extend(with_nextest(switched, reach, &id, job, log)?);
        }
        let mut order: Vec<(&usize, &Vec<String>)> = reach.tests.iter().collect();
        order.sort_by_key(|(index, _)| switched.binaries[**index].duration);
        // Unless nextest ran them, each executable runs its tests in one process.
        let by_libtest = if runs.is_empty() { order } else { Vec::new() };
        let mut failed_in = None;
        for (&index, tests) in by_libtest {
            let mut args = Vec::new();
            if !tests.is_empty() {
                args.push("--exact".to_string());
                args.extend(tests.iter().cloned());
            }
            let binary = &switched.binaries[index];
            let run = schema::binary_command(binary, &args, &[(MUTANT_VAR, &id)]).run(job.timeout, log)?;
            let passed = run.passed();
            runs.push(run);
            if !passed {
                failed_in = Some(index);
                break;
            }
        }
        if runs.iter().all(Finished::passed) {
            for package in &reach.doctests {
                let run = {
                    let _held =
                        self.shared.first_target.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    let mut command = switched.cargo.doc_tests(package);
                    command.env.push((MUTANT_VAR.to_string(), id.clone()));
                    command.run(job.timeout, log)?
                };
                let passed = run.passed();
                runs.push(run);
                if !passed {
                    break;
                }
            }
        }
        let mut outcome = read_runs(&runs, job, false)?;
        outcome.reason = libtest::without_moved_columns(&outcome.reason, &switched.moved_columns);
        outcome.covered_by = job.tests.clone();
        outcome.record = Some(RunRecord::of(How::Schema, &runs.iter().collect::<Vec<_>>()));
        if let (Some(index), Status::Killed, false) = (failed_in, outcome.status, id == UNMUTATED) {
            self.watch_for_flakiness(&switched.binaries[index], &outcome.killed_by, job.timeout, log)?;
        }
        Ok(outcome)
    }

    /// After a kill in `binary`, its failing `tests` run alone with the switch off, while they
    /// have not passed so `VERIFIED_AFTER` times in this worker (a run costs one process):
    /// tests that fail so, and then pass when run again, fail at random, and are flaky from
    /// then on (`flaky::confirm_kill` decides the kill).
    fn watch_for_flakiness(
        &mut self,
        binary: &schema::TestBinary,
        tests: &[String],
        timeout: Duration,
        log: &Path,
    ) -> Result<()> {
        let watched =
            tests.iter().any(|test| self.passed_unmutated.get(test).copied().unwrap_or(0) < VERIFIED_AFTER);
        if tests.is_empty() || !watched || tests.iter().all(|test| self.flaky.holds(test)) {
            return Ok(());
        }
        let args: Vec<String> = std::iter::once("--exact".to_string()).chain(tests.iter().cloned()).collect();
        let alone = schema::binary_command(binary, &args, &[]);
        for run in 1..=crate::run::flaky::RETRIES + 1 {
            let finished = alone.run(timeout, log)?;
            if finished.exit == Exit::Interrupted {
                return Err(Interrupted.into());
            }
            if finished.passed() {
                if run > 1 {
                    for test in tests {
                        self.flaky.seen(test, run, run - 1, &[]);
                    }
                }
                for test in tests {
                    *self.passed_unmutated.entry(test.clone()).or_default() += 1;
                }
                return Ok(());
            }
        }
        Ok(())
    }
}

/// `cargo nextest run` of the tests that reached the mutant, switched on; None when nextest
/// finds none of them (a harness it does not list), for libtest to run them instead.
fn with_nextest(
    switched: &Switched,
    reach: &schema::Reach,
    id: &str,
    job: &Job,
    log: &Path,
) -> Result<Option<Finished>> {
    /// nextest's exit status when its filter leaves no test to run.
    const NO_TESTS_RUN: i32 = 4;
    let mut args = vec!["nextest".to_string(), "run".to_string()];
    // Every package the schema built, so that cargo finds the build fresh.
    args.extend(switched.cargo.selection_args(&switched.packages()));
    args.extend(["--no-tests=fail".to_string(), "-E".to_string(), nextest_filter(switched, reach)]);
    let mut command = switched.cargo.invocation(&args);
    command.env.push((MUTANT_VAR.to_string(), id.to_string()));
    let run = command.run(job.timeout, log)?;
    Ok((run.exit != Exit::Code(NO_TESTS_RUN)).then_some(run))
}

/// A nextest filterset of the tests in `reach`: each test by its package and exact name, or
/// every test of a package where an executable's tests were not told apart.
fn nextest_filter(switched: &Switched, reach: &schema::Reach) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (&index, tests) in &reach.tests {
        let package = &switched.binaries[index].package;
        let part = if tests.is_empty() {
            format!("package(={package})")
        } else {
            let names: Vec<String> = tests.iter().map(|test| format!("test(={test})")).collect();
            format!("(package(={package}) & ({}))", names.join(" | "))
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join(" | ")
}

/// The verdict of a mutant's runs, read from the last (the first to fail, if one did), with
/// the failed tests of every run.
fn read_runs(runs: &[Finished], job: &Job, user_command: bool) -> Result<Outcome> {
    let last = runs.last().ok_or_else(|| anyhow!("a Rust mutant ran nothing"))?;
    if last.exit == Exit::Interrupted {
        return Err(Interrupted.into());
    }
    let run = Finished { duration: runs.iter().map(|run| run.duration).sum(), ..last.clone() };
    Ok(if user_command { outcome::read_command(&run, job.timeout) } else { libtest::read(&run, job.timeout) })
}

/// The switch's value that turns every mutant off.
const UNMUTATED: &str = "0";

impl CargoWorker {
    /// The mutant switched on in the schema's build, else built on its own.
    fn test_once(&mut self, plan: &Plan, job: &Job, log: &Path) -> Result<Outcome> {
        let shared = self.shared.clone();
        if let Some(switched) = &shared.switched {
            if let Some(reach) = switched.reach.get(&job.planned.id) {
                return self.switched(switched, reach, job, log);
            }
        }
        self.build_then_test(plan, job, log)
    }

    /// A timeout holds when the same tests, unmutated and run the same way, finish within a
    /// third of the limit; else the mutant runs again, once, with five times what they took
    /// (not passing within three times the limit unmutated, they leave its verdict unknown).
    fn confirm_timeout(
        &mut self,
        plan: &Plan,
        job: &Job,
        mut outcome: Outcome,
        log: &Path,
    ) -> Result<Outcome> {
        let limit = job.timeout;
        let within = Job { timeout: limit * 3, ..job.clone() };
        let shared = self.shared.clone();
        let reach = shared
            .switched
            .as_ref()
            .and_then(|switched| Some((switched, switched.reach.get(&job.planned.id)?)));
        let unmutated = match reach {
            Some((switched, reach)) => self.switched_as(switched, reach, &within, UNMUTATED, log)?,
            None => {
                self.ensure_copy()?;
                let run = self.cargo.test(&job.tests, within.timeout, log)?;
                read_runs(&[run], &within, self.cargo.command.is_some())?
            }
        };
        let took = unmutated.duration;
        if unmutated.status != Status::Survived {
            outcome.status = Status::RuntimeError;
            outcome.reason = format!(
                "the tests ran past {:.1} s with the mutant, and without it, run the same way, they {} too: the limit, not the mutant, stopped them; its verdict is unknown",
                limit.as_secs_f64(),
                match unmutated.status {
                    Status::Timeout => format!("did not finish within {:.1} s", within.timeout.as_secs_f64()),
                    _ => "failed".to_string(),
                }
            );
            return Ok(outcome);
        }
        if took * 3 <= limit {
            outcome.reason = format!(
                "{}; without the mutant, run the same way, the tests take {:.2} s",
                outcome.reason,
                took.as_secs_f64()
            );
            return Ok(outcome);
        }
        let raised = Job { timeout: took * 5, ..job.clone() };
        let mut again = self.test_once(plan, &raised, log)?;
        again.reason = format!(
            "{}; run again with a limit of {:.1} s: without the mutant, run the same way, the tests took {:.2} s just now, more than a third of the first limit ({:.1} s)",
            again.reason,
            raised.timeout.as_secs_f64(),
            took.as_secs_f64(),
            limit.as_secs_f64()
        );
        Ok(continued(outcome, again))
    }
}

impl Worker for CargoWorker {
    type Data = ();

    /// The mutant switched on in the schema's build when it is there, else built on its own;
    /// a kill by flaky tests alone is confirmed by running it again (`flaky::confirm_kill`),
    /// and a timeout by the same tests unmutated (`confirm_timeout`).
    fn test(&mut self, plan: &Plan, job: &Job, log: &Path) -> Result<Outcome> {
        let flaky = self.flaky.clone();
        let first = self.test_once(plan, job, log)?;
        let outcome = flaky::confirm_kill(&flaky, first, || self.test_once(plan, job, log))?;
        if outcome.status != Status::Timeout || outcome.memory_limit.is_some() {
            return Ok(outcome);
        }
        self.confirm_timeout(plan, job, outcome, log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_test_files_are_integration_tests_benches_and_examples() {
        for test in ["tests/it.rs", "crates/a/tests/x.rs", "benches/b.rs", "examples/e.rs"] {
            assert!(spec::is_test_file(Path::new(test)), "{test}");
        }
        for source in ["src/lib.rs", "crates/a/src/tests_support.rs", "src/test.rs"] {
            assert!(!spec::is_test_file(Path::new(source)), "{source}");
        }
    }
}
