//! The GitHub Action (`action.yml`): its steps run as GitHub's runner runs a composite action
//! (`action_runner.py`) on a pull request's checkout, and the README's workflows checked by
//! actionlint against the action's inputs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{action_tools, copy_tree, git, git_command, python, python_at, FIXTURES};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A test that kills every mutant of model_client's new raise.
const KILLING_TEST: &str = "\n    def test_cut_off_reply_raises(self):\n        with self.assertRaisesRegex(RuntimeError, \"MAX_TOKENS\"):\n            parse_reply({\"content\": \"partial\", \"stop_reason\": \"max_tokens\"})\n";

/// A bare `origin` whose `base` branch holds model_client's `before/` and whose `feature`
/// branch adds the raise and a test that runs it and asserts nothing, as a pull request would.
struct PullRequest {
    dir: tempfile::TempDir,
}

impl PullRequest {
    fn new(base: &str) -> PullRequest {
        PullRequest::of("model_client", "after", base)
    }

    /// A pull request whose `base` branch holds `fixture`'s `before/` and whose `feature`
    /// branch writes its `variant/` over it.
    fn of(fixture: &str, variant: &str, base: &str) -> PullRequest {
        let dir = tempfile::Builder::new().prefix("pull-request-").tempdir().unwrap();
        let author = dir.path().join("author");
        std::fs::create_dir(&author).unwrap();
        git(&author, &["init", "-q", "-b", base]);
        copy_tree(&Path::new(FIXTURES).join(fixture).join("before"), &author);
        git(&author, &["add", "-A"]);
        git(&author, &["commit", "-q", "-m", "before"]);
        git(&author, &["checkout", "-q", "-b", "feature"]);
        copy_tree(&Path::new(FIXTURES).join(fixture).join(variant), &author);
        git(&author, &["add", "-A"]);
        git(&author, &["commit", "-q", "-m", "cut-off replies"]);
        git(dir.path(), &["init", "-q", "--bare", "origin.git"]);
        git(&author, &["push", "-q", "../origin.git", &format!("refs/heads/{base}"), "refs/heads/feature"]);
        PullRequest { dir }
    }

    fn origin(&self) -> String {
        format!("file://{}", self.dir.path().join("origin.git").display())
    }

    /// The pull request's branch checked out into `name`, with `clone_args` (a depth, say).
    fn checkout(&self, name: &str, clone_args: &[&str]) -> PathBuf {
        self.checkout_branch("feature", name, clone_args)
    }

    /// `branch` checked out into `name`, with `clone_args`.
    fn checkout_branch(&self, branch: &str, name: &str, clone_args: &[&str]) -> PathBuf {
        let origin = self.origin();
        let mut args = vec!["clone", "-q", "--branch", branch];
        args.extend(clone_args);
        args.extend([origin.as_str(), name]);
        git(self.dir.path(), &args);
        self.dir.path().join(name)
    }
}

/// What one run of the action did: its status, its log, its outputs.
pub(crate) struct ActionRun {
    pub(crate) status: i64,
    pub(crate) log: String,
    pub(crate) outputs: serde_json::Value,
    summary: String,
    /// The runner's temporary directory, kept while the run is looked at (an executable the
    /// install step downloaded lies there).
    pub(crate) runner_temp: tempfile::TempDir,
}

/// The action, run by `action_runner.py` in `workspace` with the inputs in `with` (the binary
/// under test as its `mutdelta` input unless `with` names one), as a `pull_request` job whose
/// base branch is `base_ref`.
fn run_action(workspace: &Path, base_ref: &str, with: serde_json::Value) -> ActionRun {
    let mut with = with.as_object().unwrap().clone();
    with.entry("mutdelta")
        .or_insert_with(|| assert_cmd::cargo::cargo_bin!("mutdelta").to_str().unwrap().into());
    run_action_with_env(workspace, base_ref, serde_json::Value::Object(with), &[])
}

/// The action, run as `run_action` runs it but with `with` as given and the variables `env` set
/// (those GitHub's runner sets for an action, say) over the test's own.
pub(crate) fn run_action_with_env(
    workspace: &Path,
    base_ref: &str,
    with: serde_json::Value,
    env: &[(&str, &str)],
) -> ActionRun {
    let runner_temp = tempfile::Builder::new().prefix("runner-temp-").tempdir().unwrap();
    let outputs_file = runner_temp.path().join("outputs.json");
    let summary_file = runner_temp.path().join("step-summary.md");
    std::fs::write(&summary_file, "").unwrap();
    let git_env = git_command(workspace);
    let output: Output = Command::new(action_tools().join("python"))
        .arg(Path::new(ROOT).join("tests/integration/action_runner.py"))
        .arg(ROOT)
        .arg(with.to_string())
        .arg(&outputs_file)
        .current_dir(workspace)
        .envs(git_env.get_envs().filter_map(|(name, value)| Some((name, value?))))
        .env("CI", "true")
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_BASE_REF", base_ref)
        .env("GITHUB_HEAD_REF", "feature")
        .env("GITHUB_WORKSPACE", workspace)
        .env("GITHUB_STEP_SUMMARY", &summary_file)
        .env("RUNNER_TEMP", runner_temp.path())
        .env_remove("VIRTUAL_ENV")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let log =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let recorded: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&outputs_file).unwrap_or_else(|err| panic!("no outputs ({err}): {log}")),
    )
    .unwrap();
    assert_eq!(Some(recorded["status"].as_i64().unwrap()), output.status.code().map(i64::from), "{log}");
    ActionRun {
        status: recorded["status"].as_i64().unwrap(),
        log,
        outputs: recorded["outputs"].clone(),
        summary: std::fs::read_to_string(&summary_file).unwrap(),
        runner_temp,
    }
}

fn interpreter() -> String {
    python().to_str().unwrap().to_string()
}

#[test]
fn a_pull_requests_untested_line_fails_the_action_with_annotations_and_a_tested_one_passes() {
    let pull_request = PullRequest::new("main");
    let workspace = pull_request.checkout("workspace", &[]);

    let run = run_action(
        &workspace,
        "main",
        serde_json::json!({"python": interpreter(), "json": "mutdelta.json", "html": "mutdelta.html"}),
    );

    assert_eq!(run.status, 1, "the survivor fails the step: {}", run.log);
    assert!(
        run.log.contains("mutdelta check --format github --base origin/main --python"),
        "the pull request's base branch is the base: {}",
        run.log
    );
    assert!(
        run.log.contains("::error file=model_client.py,line=15,col=9,title=mutdelta%3A"),
        "an annotation on the untested raise: {}",
        run.log
    );
    assert_eq!(run.outputs["exit-code"], "1", "{}", run.log);
    assert_eq!(run.outputs["json"], "mutdelta.json", "{}", run.log);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(workspace.join("mutdelta.json")).unwrap()).unwrap();
    let statuses: Vec<&str> = report["files"]["model_client.py"]["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mutant| mutant["status"].as_str().unwrap())
        .collect();
    assert!(statuses.contains(&"Survived"), "{statuses:?}");
    assert!(workspace.join("mutdelta.html").is_file(), "the html input writes the page");

    // The pull request's next commit tests the raise: every mutant of it is caught.
    let tests = workspace.join("tests/test_model_client.py");
    let mut source = std::fs::read_to_string(&tests).unwrap();
    source.push_str(KILLING_TEST);
    std::fs::write(&tests, source).unwrap();
    git(&workspace, &["commit", "-q", "-am", "test the raise"]);
    std::fs::remove_file(workspace.join("mutdelta.json")).unwrap();

    let run =
        run_action(&workspace, "main", serde_json::json!({"python": interpreter(), "json": "mutdelta.json"}));

    assert_eq!(run.status, 0, "{}", run.log);
    assert_eq!(run.outputs["exit-code"], "0", "{}", run.log);
    assert!(!run.log.contains("::error"), "{}", run.log);
}

#[test]
fn a_shallow_checkout_fetches_the_base_branch_it_lacks() {
    let pull_request = PullRequest::new("main");
    let workspace = pull_request.checkout("shallow", &["--depth", "1", "--single-branch"]);
    assert!(!git_command(&workspace)
        .args(["rev-parse", "--verify", "-q", "origin/main"])
        .status()
        .unwrap()
        .success());

    let run = run_action(&workspace, "main", serde_json::json!({"python": interpreter()}));

    assert_eq!(run.status, 1, "{}", run.log);
    assert!(run.log.contains("::error file=model_client.py,line=15,col=9"), "{}", run.log);
    let shallow = git(&workspace, &["rev-parse", "--is-shallow-repository"]);
    assert_eq!(String::from_utf8_lossy(&shallow.stdout).trim(), "false", "deepened for the merge base");
}

#[test]
fn shards_pass_with_their_survivors_and_the_merge_of_their_reports_fails_the_check() {
    let pull_request = PullRequest::new("main");
    let workspace = pull_request.checkout("workspace", &[]);

    let mut shard_statuses = Vec::new();
    for shard in ["0/2", "1/2"] {
        let run =
            run_action(&workspace, "main", serde_json::json!({"python": interpreter(), "shard": shard}));
        assert_eq!(run.status, 0, "a shard leaves the verdict to the merge: {}", run.log);
        let number = &shard[..1];
        assert_eq!(run.outputs["json"], format!("mutdelta-shard-{number}.json"), "{}", run.log);
        assert!(workspace.join(format!("mutdelta-shard-{number}.json")).is_file());
        shard_statuses.push(run.outputs["exit-code"].as_str().unwrap().to_string());
    }
    assert!(shard_statuses.contains(&"1".to_string()), "a shard held the survivor: {shard_statuses:?}");

    let merged = run_action(
        &workspace,
        "main",
        serde_json::json!({"command": "merge", "format": "markdown", "json": "merged.json"}),
    );

    assert_eq!(merged.status, 1, "the merge fails the check: {}", merged.log);
    assert_eq!(merged.outputs["exit-code"], "1");
    assert!(
        merged.log.contains(
            "mutdelta merge --format markdown mutdelta-shard-0.json mutdelta-shard-1.json --json merged.json"
        ),
        "{}",
        merged.log
    );
    assert!(
        merged.summary.contains("model_client.py:15"),
        "the merged summary reaches the job's summary page: {}",
        merged.summary
    );
    assert!(workspace.join("merged.json").is_file());
}

#[test]
fn a_hostile_base_branch_name_is_one_argument_and_never_runs() {
    let base = "main$(touch${IFS}pwned)`touch${IFS}pwned2`";
    let pull_request = PullRequest::new(base);
    let workspace = pull_request.checkout("workspace", &["--depth", "1", "--single-branch"]);

    let run = run_action(&workspace, base, serde_json::json!({"python": interpreter()}));

    assert_eq!(run.status, 1, "the branch is checked against like any other: {}", run.log);
    assert!(run.log.contains("::error file=model_client.py,line=15"), "{}", run.log);
    for dir in [pull_request.dir.path(), workspace.as_path(), Path::new(ROOT)] {
        assert!(
            !dir.join("pwned").exists() && !dir.join("pwned2").exists(),
            "nothing ran in {}",
            dir.display()
        );
    }
}

#[test]
fn bad_inputs_are_an_error_annotation_each() {
    let pull_request = PullRequest::new("main");
    let workspace = pull_request.checkout("workspace", &[]);
    let cases = [
        (
            serde_json::json!({"mutdelta": "no/such/mutdelta"}),
            "the mutdelta input names no/such/mutdelta, which is no file",
        ),
        (serde_json::json!({"shard": "first"}), "the shard input is first: write K/N"),
        (
            serde_json::json!({"command": "chek"}),
            "the command input is chek: it is check, merge, map or install",
        ),
        (
            serde_json::json!({"command": "merge", "reports": "none-*.json"}),
            "no shard report matches none-*.json",
        ),
        (
            serde_json::json!({"command": "map", "shard": "0/2"}),
            "the shard input is for check: a map records the whole suite in one job",
        ),
        (
            serde_json::json!({"command": "map", "json": "map.json"}),
            "the json, html and sarif inputs are for check and merge: a map writes only the impact-map file",
        ),
    ];
    for (with, said) in cases {
        let run = run_action(&workspace, "main", with.clone());
        assert_eq!(run.status, 2, "{with}: {}", run.log);
        assert!(run.log.contains(&format!("::error title=mutdelta action::{said}")), "{with}: {}", run.log);
    }
}

/// The nightly job of the README records the base branch's test-impact map (`command: map`); a
/// pull request's check given that file (`impact-map`) leaves out the tests it rules out, and
/// reaches the verdicts of a check without it. A hostile file name is one argument: the check
/// notes that it could not read it and runs the whole suite.
#[test]
fn a_map_the_nightly_job_made_of_the_base_branch_rules_tests_out_of_a_pull_requests_check() {
    let python = python_at("3.12").to_str().unwrap().to_string();
    let pull_request = PullRequest::of("impact_map", "body", "main");
    let nightly = pull_request.checkout_branch("main", "nightly", &[]);
    let base = String::from_utf8(git_command(&nightly).args(["rev-parse", "HEAD"]).output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();

    let mapped = run_action(&nightly, "", serde_json::json!({"command": "map", "python": python}));

    assert_eq!(mapped.status, 0, "{}", mapped.log);
    assert_eq!(mapped.outputs["impact-map"], "mutdelta-impact-map.json", "{}", mapped.log);
    assert!(mapped.log.contains(&format!("6 tests recorded at commit {base}")), "{}", mapped.log);
    let map = nightly.join("mutdelta-impact-map.json");
    let workspace = pull_request.checkout("workspace", &[]);
    let with_map = |impact_map: &str| {
        let run = run_action(
            &workspace,
            "main",
            serde_json::json!({"python": python, "impact-map": impact_map, "format": "text"}),
        );
        assert_eq!(run.status, 1, "the guard's `if False` survives either way: {}", run.log);
        run
    };
    let used = with_map(map.to_str().unwrap());
    assert!(
        used.log.contains(&format!("the test-impact map recorded at commit {base} ruled out 4 tests")),
        "{}",
        used.log
    );
    let hostile = "map$(touch${IFS}pwned)`touch${IFS}pwned2`.json";
    let refused = with_map(hostile);
    assert!(refused.log.contains(&format!("{hostile} could not be read")), "{}", refused.log);
    assert!(!refused.log.contains("ruled out"), "{}", refused.log);
    let summary =
        |log: &str| log.lines().find(|line| line.starts_with("mutation delta:")).map(str::to_string);
    assert!(summary(&used.log).is_some(), "{}", used.log);
    assert_eq!(summary(&used.log), summary(&refused.log), "the same summary with the map as without it");
    for dir in [pull_request.dir.path(), workspace.as_path(), nightly.as_path(), Path::new(ROOT)] {
        assert!(
            !dir.join("pwned").exists() && !dir.join("pwned2").exists(),
            "nothing ran in {}",
            dir.display()
        );
    }
}

/// The README's workflows that use the action, with its `uses:` pointed at a copy of this
/// repository's action (actionlint then reads its inputs, and shellcheck its run steps), and the
/// release workflow.
#[test]
fn actionlint_accepts_the_readmes_workflows_against_the_actions_inputs_and_refuses_an_unknown_input() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let workflows: Vec<String> = readme
        .split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter(|block| block.contains("uses: your-org/mutdelta@"))
        .map(|block| {
            block
                .lines()
                .map(|line| match line.split_once("uses: your-org/mutdelta@") {
                    Some((indent, _)) => format!("{indent}uses: ./"),
                    None => line.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    assert!(workflows.len() >= 2, "the README shows the action in a gate and in a sharded matrix");
    let refs: Vec<&str> = readme
        .split("uses: your-org/mutdelta@")
        .skip(1)
        .map(|rest| rest.split(|c: char| c.is_whitespace() || c == '`' || c == ',').next().unwrap())
        .collect();
    let release = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert!(
        refs.iter().all(|each| *each == release),
        "the README's workflows use the action at this version's release, whose executable it downloads: {refs:?}"
    );
    let repo = tempfile::Builder::new().prefix("actionlint-").tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    std::fs::copy(Path::new(ROOT).join("action.yml"), repo.path().join("action.yml")).unwrap();
    std::fs::create_dir_all(repo.path().join(".github/workflows")).unwrap();
    for (number, workflow) in workflows.iter().enumerate() {
        std::fs::write(repo.path().join(format!(".github/workflows/readme-{number}.yml")), workflow).unwrap();
    }
    // And this repository's own workflows: the release's.
    let own = Path::new(ROOT).join(".github/workflows/release.yml");
    std::fs::copy(&own, repo.path().join(".github/workflows/release.yml")).unwrap();
    let tools = action_tools();
    let path = format!("{}:{}", tools.display(), std::env::var("PATH").unwrap());
    let lint = || {
        Command::new(tools.join("actionlint")).current_dir(repo.path()).env("PATH", &path).output().unwrap()
    };

    let clean = lint();
    assert!(
        clean.status.success(),
        "{}{}",
        String::from_utf8_lossy(&clean.stdout),
        String::from_utf8_lossy(&clean.stderr)
    );

    let wrong = workflows[0].replacen(
        "uses: ./\n        with:\n",
        "uses: ./\n        with:\n          sharding: 0/4\n",
        1,
    );
    assert_ne!(wrong, workflows[0]);
    std::fs::write(repo.path().join(".github/workflows/readme-0.yml"), wrong).unwrap();
    let refused = lint();
    let said = String::from_utf8_lossy(&refused.stdout);
    assert!(
        !refused.status.success() && said.contains("input \"sharding\" is not defined in action"),
        "{said}"
    );

    let script = Path::new(ROOT).join("scripts/action");
    let shellcheck = Command::new(tools.join("shellcheck")).arg(&script).output().unwrap();
    assert!(shellcheck.status.success(), "{}", String::from_utf8_lossy(&shellcheck.stdout));
}
