//! The Rust side of a check: one baseline build of the owning packages, shared by every worker, then build-then-test per mutant.

pub mod build;
pub mod libtest;
pub mod workspace;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Result};

use self::build::Cargo;
use crate::plan::{in_directory_named, Language, Plan, PlannedMutant};
use crate::run::language::{with_mutant, Context, Job, LanguageCheck, Proven, Started, Worker};
use crate::run::outcome::{self, Outcome};
use crate::run::process::{Exit, Finished};
use crate::run::record::{How, RunRecord, StepRecord};
use crate::run::require::{self, Subject};
use crate::run::timeouts::{build_timeout, mutant_timeout, BASELINE_LIMIT};
use crate::run::Interrupted;
use crate::worktree::{self, Stamp};

/// Test code, which is not mutated: integration tests, benches and examples. (Unit tests inside
/// `src/` are left alone by the mutator itself.)
pub fn is_test_file(path: &Path) -> bool {
    in_directory_named(path, &["tests", "benches", "examples"])
}

/// A check of Rust mutants in a cargo workspace.
pub struct CargoCheck {
    workspace: workspace::Workspace,
}

/// What the baseline build measured: each mutant's build may take a few times as long.
pub struct BaselineBuild(Duration);

impl CargoCheck {
    /// Checks that the test tool is there and reads the workspace's packages.
    pub fn new(ctx: &Context) -> Result<CargoCheck> {
        build::require_tool(ctx.options.rust.test_tool)?;
        Ok(CargoCheck { workspace: workspace::workspace(ctx.base, ctx.repo_root)? })
    }

    /// The worker with copy `root` and target directory number `index`.
    fn cargo(&self, ctx: &Context, root: PathBuf, index: usize, build_timeout: Duration) -> Cargo {
        Cargo {
            root,
            target: target_dir(ctx, index),
            tool: ctx.options.rust.test_tool,
            command: ctx.options.test_cmd.clone(),
            build_timeout,
        }
    }
}

/// A mutant and the package whose tests run against it.
struct Owned {
    planned: PlannedMutant,
    package: String,
}

fn target_dir(ctx: &Context, index: usize) -> PathBuf {
    ctx.scratch.path().join(format!("target-{index}"))
}

impl LanguageCheck for CargoCheck {
    type Evidence = BaselineBuild;
    type Worker = CargoWorker;
    const LANGUAGE: Language = Language::Rust;

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
            crate::python::interpreter::environment_fingerprint()
        );
        Some(crate::run::verdicts::Scope { identity, test_module: |_| false })
    }

    /// Builds every owning package once in the first copy (seeded from the user's build) and
    /// runs its tests; each mutant runs the tests of its package.
    fn prove(&self, ctx: &Context, candidates: Vec<PlannedMutant>) -> Result<Proven<BaselineBuild>> {
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
            if !names.contains(&package.name) {
                names.push(package.name.clone());
            }
            owned.push(Owned { planned, package: package.name.clone() });
        }
        let first = self.cargo(ctx, ctx.base.to_path_buf(), 0, BASELINE_LIMIT);
        build::seed_from_user(&self.workspace.user_target, &first.target)?;
        let log = ctx.logs.join("cargo-baseline.log");
        let built = first.build(&names, BASELINE_LIMIT, &log)?;
        require::passed(&built, Subject::CargoBuild, BASELINE_LIMIT)?;
        let mut steps =
            vec![StepRecord { step: "build".to_string(), record: RunRecord::of(How::Fresh, &[&built]) }];
        let mut tests_took = BTreeMap::new();
        for package in &names {
            let run = first.test(package, BASELINE_LIMIT, &log)?;
            require::passed(&run, Subject::CargoTests(package), BASELINE_LIMIT)?;
            tests_took.insert(package.clone(), run.duration);
            steps.push(StepRecord {
                step: format!("tests of {package}"),
                record: RunRecord::of(How::Fresh, &[&run]),
            });
        }
        let jobs = owned
            .into_iter()
            .map(|Owned { planned, package }| {
                let cost = tests_took[&package];
                Job {
                    planned,
                    tests: vec![package],
                    in_suite_order: Vec::new(),
                    timeout: mutant_timeout(ctx.options.timeout, cost),
                    fresh: false,
                    cost,
                }
            })
            .collect();
        Ok(Proven {
            jobs,
            settled: Vec::new(),
            baseline: tests_took.values().sum(),
            what: format!("the tests of {}", names.join(", ")),
            compile: Duration::ZERO,
            evidence: BaselineBuild(built.duration),
            steps,
        })
    }

    /// The first worker keeps the baseline's copy and build; every other gets a copy of both,
    /// so no worker builds the dependencies again.
    fn workers(
        &self,
        ctx: &Context,
        baseline: &BaselineBuild,
        count: usize,
        _jobs: &[Job],
    ) -> Result<Started<CargoWorker>> {
        let build_timeout = build_timeout(baseline.0);
        let mut workers =
            vec![CargoWorker { cargo: self.cargo(ctx, ctx.base.to_path_buf(), 0, build_timeout) }];
        for index in 1..count {
            let root = ctx.scratch.path().join(format!("rust-copy-{index}"));
            worktree::duplicate(ctx.base, &root)?;
            build::seed_target(&target_dir(ctx, 0), &target_dir(ctx, index))?;
            workers.push(CargoWorker { cargo: self.cargo(ctx, root, index, build_timeout) });
        }
        Ok(Started { workers, steps: Vec::new() })
    }

    /// Nothing to prove: a cargo worker builds what it tests in its own copy.
    fn prove_worker(
        &self,
        _ctx: &Context,
        _worker: &mut CargoWorker,
        _jobs: &[Job],
    ) -> Result<Vec<StepRecord>> {
        Ok(Vec::new())
    }
}

/// One copy with its own target directory.
pub struct CargoWorker {
    cargo: Cargo,
}

impl Worker for CargoWorker {
    /// Builds the mutant's package (failing: CompileError), then runs its tests.
    fn test(&mut self, plan: &Plan, job: &Job, log: &Path) -> Result<Outcome> {
        let file = &plan.files[job.planned.file];
        let cargo = &self.cargo;
        let runs = with_mutant(&cargo.root, file, &job.planned, Stamp::Now, || -> Result<Vec<Finished>> {
            let built = cargo.build(&job.tests, cargo.build_timeout, log)?;
            if built.exit != Exit::Code(0) {
                return Ok(vec![built]);
            }
            let package = job.tests.first().ok_or_else(|| anyhow!("a Rust mutant without a package"))?;
            let tested = cargo.test(package, job.timeout, log)?;
            Ok(vec![built, tested])
        })??;
        let last = runs.last().expect("the build always runs");
        if last.exit == Exit::Interrupted {
            return Err(Interrupted.into());
        }
        let run = Finished { duration: runs.iter().map(|run| run.duration).sum(), ..last.clone() };
        let mut outcome = match cargo.command {
            Some(_) => outcome::read_command(&run, job.timeout),
            None => libtest::read(&run, job.timeout),
        };
        outcome.record = Some(RunRecord::of(How::BuildThenTest, &runs.iter().collect::<Vec<_>>()));
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_test_files_are_integration_tests_benches_and_examples() {
        for test in ["tests/it.rs", "crates/a/tests/x.rs", "benches/b.rs", "examples/e.rs"] {
            assert!(is_test_file(Path::new(test)), "{test}");
        }
        for source in ["src/lib.rs", "crates/a/src/tests_support.rs", "src/test.rs"] {
            assert!(!is_test_file(Path::new(source)), "{source}");
        }
    }
}
