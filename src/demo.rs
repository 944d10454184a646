//! `mutdelta demo`: a throwaway repository built from the bundled model-client example, and the check of its last commit for `app` to run.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use git2::{Repository, Signature};

use crate::cargo::settings::{RustSettings, TestTool};
use crate::exit::Exit;
use crate::lines::Target;
use crate::options::{default_jobs, Languages, Options};
use crate::python::settings::{ImpactMap, PythonSettings};

/// The example project: (path, content before the change, content after it).
const EXAMPLE: &[(&str, &str, &str)] = &[
    (
        "model_client.py",
        include_str!("../fixtures/model_client/before/model_client.py"),
        include_str!("../fixtures/model_client/after/model_client.py"),
    ),
    (
        "tests/test_model_client.py",
        include_str!("../fixtures/model_client/before/tests/test_model_client.py"),
        include_str!("../fixtures/model_client/after/tests/test_model_client.py"),
    ),
];

/// The demo's repository (removed on drop) and the check to run on it.
pub struct Demo {
    _repository: tempfile::TempDir,
    pub options: Options,
    /// What to print before the check.
    pub intro: String,
}

/// Builds the throwaway repository and the options that check its last commit.
pub fn prepare() -> Result<Demo> {
    let dir = tempfile::Builder::new().prefix("mutdelta-demo-").tempdir()?;
    build_repository(dir.path())?;
    let mut intro = String::from(
        "demo: a repository whose last commit adds a `raise` for cut-off replies and a test\n      that runs it, catches every exception and asserts nothing.\n$ mutdelta check --commit HEAD\n\n",
    );
    let python = crate::python::interpreter::find_interpreter(None, dir.path())?.path;
    let test_cmd = if has_pytest(&python) {
        None
    } else {
        intro.push_str("(pytest is not installed, so the demo runs the tests with unittest)\n\n");
        Some(format!("{} -m unittest discover -s tests -q", python.display()))
    };
    let options = Options {
        directory: dir.path().to_path_buf(),
        target: Target::Commit("HEAD".to_string()),
        choice: Default::default(),
        jobs: default_jobs(),
        test_cmd,
        timeout: None,
        memory_limit: crate::memory::default_limit(default_jobs().get()),
        shard: None,
        reports: Default::default(),
        format: Default::default(),
        out: None,
        cache: true,
        verbose: false,
        quiet: false,
        allow_empty: false,
        diffs: true,
        color: crate::paint::ColorChoice::Auto,
        audit: crate::options::AuditMode::WithTestEdits,
        audit_budget: Some(crate::options::AUDIT_BUDGET),
        flaky: Vec::new(),
        // In the order of `app::LANGUAGES`.
        languages: Languages::new(vec![
            std::sync::Arc::new(PythonSettings {
                interpreter: Some(python),
                extra_tests: Vec::new(),
                fork: true,
                swap: true,
                confirm_survivors: false,
                impact_map: ImpactMap::Kept,
            }),
            std::sync::Arc::new(RustSettings {
                test_tool: TestTool::Cargo,
                schema: true,
                features: Default::default(),
            }),
        ]),
        config: Default::default(),
    };
    Ok(Demo { _repository: dir, options, intro })
}

/// What to print after the check, which exited with `exit`.
pub fn outro(exit: Exit) -> String {
    format!(
        "\nThe check exits {} on this change: the new lines ran under a test, but no test would notice them changed.",
        exit as i32
    )
}

fn has_pytest(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import pytest"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn build_repository(root: &Path) -> Result<()> {
    let repo = Repository::init(root).context("could not create the demo repository")?;
    let signature = Signature::now("mutdelta demo", "demo@example.invalid")?;
    let mut parent = None;
    for (message, after) in
        [("Add the model client", false), ("Refuse replies cut off at the token limit", true)]
    {
        for (path, before_text, after_text) in EXAMPLE {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().expect("example paths have a parent"))?;
            std::fs::write(&full, if after { after_text } else { before_text })?;
        }
        let mut index = repo.index()?;
        index.add_all(["*"], git2::IndexAddOption::DEFAULT, None)?;
        index.write()?;
        let tree = repo.find_tree(index.write_tree()?)?;
        let parents: Vec<git2::Commit> =
            parent.iter().map(|id| repo.find_commit(*id)).collect::<Result<_, _>>()?;
        let parent_refs: Vec<&git2::Commit> = parents.iter().collect();
        parent = Some(repo.commit(Some("HEAD"), &signature, &signature, message, &tree, &parent_refs)?);
    }
    Ok(())
}
