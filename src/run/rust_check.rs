//! The Rust side of a check: one baseline build of the owning packages, shared by every worker, then build-then-test per mutant.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::baseline::{mutant_timeout, BASELINE_LIMIT};
use super::cargo::{self, Cargo};
use super::pool::{self, Job, Judge, Worker};
use super::{Event, Places};
use crate::options::Options;
use crate::plan::{Plan, PlannedMutant};
use crate::report::{MutantResult, Timings};
use crate::worktree;

/// The Rust mutants: one baseline build of their packages, shared by every worker through a
/// copy of its target directory; then, per mutant, a build (failing: CompileError) and the
/// package's tests. Returns the results and the time the unmutated tests took.
pub fn check_rust(
    options: &Options,
    plan: &Plan,
    places: &Places,
    candidates: Vec<PlannedMutant>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<(Vec<MutantResult>, Duration)> {
    let Places { repo_root, base, scratch } = *places;
    let started = Instant::now();
    cargo::require_tool(options.test_tool)?;
    let workspace = cargo::workspace(base, repo_root)?;
    let packages = &workspace.packages;
    let mut owned = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for planned in candidates {
        let file = &plan.files[planned.file].path;
        let package = cargo::owner(packages, file).ok_or_else(|| {
            anyhow::anyhow!(
                "{} is not in any package of a cargo workspace: run mutdelta in the workspace that builds it",
                file.display()
            )
        })?;
        if !names.contains(&package.name) {
            names.push(package.name.clone());
        }
        owned.push((planned, package.name.clone()));
    }
    let logs = scratch.subdir("logs")?;
    let command = cargo::shell_command(&options.runner);
    let judge = if command.is_some() { Judge::Command } else { Judge::Cargo };
    let worker = |root: PathBuf, index: usize, build_timeout: Duration| Cargo {
        root,
        target: scratch.path().join(format!("target-{index}")),
        tool: options.test_tool,
        command: command.clone(),
        build_timeout,
    };
    let first = worker(base.to_path_buf(), 0, BASELINE_LIMIT);
    cargo::seed_from_user(&workspace.user_target, &first.target)?;
    let proven = cargo::prove(&first, &names, &logs.join("cargo-baseline.log"))?;
    let tests_took: Duration = proven.tests.values().sum();
    events(Event::BaselinePassed {
        duration: tests_took,
        what: format!("the tests of {}", names.join(", ")),
    });
    // A mutant rebuilds only the workspace's own crates; hanging there means something is wrong.
    let build_timeout = Duration::from_secs(120).max(proven.build * 3);
    let jobs: Vec<Job> = owned
        .into_iter()
        .map(|(planned, package)| {
            let cost = proven.tests[&package];
            Job { planned, tests: vec![package], timeout: mutant_timeout(options.timeout, cost), cost }
        })
        .collect();
    let count = options.jobs.get().min(jobs.len());
    let mut workers = vec![Worker {
        root: base.to_path_buf(),
        executor: Box::new(worker(base.to_path_buf(), 0, build_timeout)),
        judge,
    }];
    for index in 1..count {
        let root = scratch.path().join(format!("rust-copy-{index}"));
        worktree::duplicate(base, &root)?;
        cargo::seed_target(
            &scratch.path().join("target-0"),
            &scratch.path().join(format!("target-{index}")),
        )?;
        workers.push(Worker {
            root: root.clone(),
            executor: Box::new(worker(root, index, build_timeout)),
            judge,
        });
    }
    timings.baseline += started.elapsed();
    let started = Instant::now();
    events(Event::MutantsStarting { total: jobs.len(), workers: workers.len() });
    let results = pool::run_all(plan, workers, &logs, jobs, events)?;
    timings.mutants += started.elapsed();
    Ok((results, tests_took))
}
