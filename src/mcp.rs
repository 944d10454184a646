//! `mutdelta mcp`: a Model Context Protocol server over stdio for coding agents, whose tools run this binary's own commands on the repository it serves and answer with structured results.
//!
//! Each tool call runs `mutdelta -C ROOT <command>` as a child process, as a user would: the
//! same configuration, the same copies, the same refusals. The server writes only the reports of
//! its checks, beside the verdict cache in the git directory (`.git/mutdelta/mcp/`, the newest
//! `REPORTS_KEPT`), so that the commands a result gives reproduce a verdict after the session;
//! it has no tool that writes into the checkout, and it refuses tests named outside the
//! repository.

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

use crate::exit::Exit;
use crate::model::outcome::Status;
use crate::report::document::{Document, MutantEntry};

/// How many check reports the server keeps in the git directory.
const REPORTS_KEPT: usize = 20;

/// How often a check's progress line comes, in seconds, for the notifications it becomes.
const PROGRESS_INTERVAL: &str = "2";

/// What to check or list: one change, as the command line names it.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeParams {
    /// `staged` (the default: the lines the index adds over HEAD), `commit` (the lines commit
    /// `rev` adds), `base` (the lines the working tree adds over merge-base(`rev`, HEAD)) or
    /// `lines` (the line list in `lines`).
    pub target: Option<String>,
    /// The revision of `commit` or `base`.
    pub rev: Option<String>,
    /// A coverage gate's list of added lines (`path:LINE` or `path:START-END`, one a line),
    /// for the `lines` target.
    pub lines: Option<String>,
    /// Globs of files to leave out, beside the configuration's `exclude`.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// At most this many mutants (0: no bound; default 5000).
    pub max_mutants: Option<u64>,
    /// One mutant a line, the most telling.
    #[serde(default)]
    pub one_per_line: bool,
}

/// A check: the change, and how to run its tests.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckParams {
    #[serde(flatten)]
    pub change: ChangeParams,
    /// The Python interpreter (or virtual environment) that runs the tests.
    pub python: Option<String>,
    /// Tests (paths or pytest node ids inside the repository) to run, instead of those found.
    #[serde(default)]
    pub tests: Vec<String>,
    /// Parallel copies (default: the number of cores).
    pub jobs: Option<u64>,
    /// Seconds a mutant's tests may run.
    pub timeout: Option<f64>,
}

/// One mutant of the last check's report.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ShowParams {
    /// The mutant's id, as the check's result names it.
    pub id: String,
}

/// The server: the repository it serves and the reports of its checks.
#[derive(Clone)]
pub struct Server {
    root: PathBuf,
    /// Where the reports of its checks are kept.
    reports: PathBuf,
    /// The last check's report, which `show` reads.
    last: Arc<Mutex<Option<PathBuf>>>,
}

/// `mutdelta mcp`: serves the repository at `root` over standard input and output until the
/// client closes them.
pub fn serve(root: PathBuf) -> Result<Exit> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let repository = crate::lines::open_repository(&root)?;
        let reports = repository.commondir().join("mutdelta").join("mcp");
        std::fs::create_dir_all(&reports).with_context(|| format!("could not make {}", reports.display()))?;
        let server = Server { root, reports, last: Arc::default() };
        let running =
            server.serve(rmcp::transport::stdio()).await.context("the MCP client did not start a session")?;
        running.waiting().await.context("the MCP session ended in an error")?;
        Ok(Exit::Clean)
    })
}

#[tool_router]
impl Server {
    /// Mutation-tests a change: each added line's mutants against the tests that run it.
    #[tool(
        description = "Mutation-test the lines a change adds (staged by default, a commit, a base, or a line list): which new lines would no test notice if they were wrong? Returns the verdict counts, each surviving mutant with its diff, a hint at the missing test, the tests that ran its line and a shell command that reproduces it, and the lines no test runs. Sends progress notifications when given a progress token."
    )]
    async fn check(
        &self,
        Parameters(params): Parameters<CheckParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let report = self.new_report();
        let mut args = vec!["check".to_string()];
        match change_args(&params.change).and_then(|change| Ok([change, check_args(&params)?].concat())) {
            Ok(more) => args.extend(more),
            Err(error) => return Ok(CallToolResult::structured_error(json!({"error": error}))),
        }
        args.extend(["--json".to_string(), report.display().to_string(), "--color".into(), "never".into()]);
        let ran = self.run(&args, params.change.lines.as_deref(), Some(&context)).await?;
        if ran.code == 2 || !report.exists() {
            return Ok(refused(&ran));
        }
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(report.clone());
        let document: Document =
            crate::report::input::read(&report, "the check's report", "run the check again")
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        Ok(CallToolResult::structured(checked(&document, &report, &ran)))
    }

    /// The mutants a check would run, without running anything.
    #[tool(description = "List the mutants a check of the change would run, without running any test.")]
    async fn list(&self, Parameters(params): Parameters<ChangeParams>) -> Result<CallToolResult, ErrorData> {
        let mut args = vec!["list".to_string()];
        match change_args(&params) {
            Ok(more) => args.extend(more),
            Err(error) => return Ok(CallToolResult::structured_error(json!({"error": error}))),
        }
        args.push("--json".to_string());
        let ran = self.run(&args, params.lines.as_deref(), None).await?;
        if ran.code != 0 {
            return Ok(refused(&ran));
        }
        let listed: Value = serde_json::from_str(&ran.stdout)
            .map_err(|err| ErrorData::internal_error(format!("list printed no JSON: {err}"), None))?;
        Ok(CallToolResult::structured(listed))
    }

    /// One mutant of the last check: where, its diff, its verdict and why, what ran, and the
    /// command that reproduces it.
    #[tool(
        description = "Show one mutant of the last check by its id: where it is, its diff, its verdict and why, what ran, and a shell command that reproduces the verdict."
    )]
    async fn show(&self, Parameters(params): Parameters<ShowParams>) -> Result<CallToolResult, ErrorData> {
        let Some(report) = self.last.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return Ok(CallToolResult::structured_error(
                json!({"error": "no check has run yet: call check first"}),
            ));
        };
        let shown = crate::reproduce::shown_each(&report, &[params.id.as_str()]);
        match shown.and_then(|mut shown| shown.pop().expect("one asked, one shown")) {
            Ok(shown) => Ok(CallToolResult::structured(
                json!({"id": params.id, "text": shown.text, "diff": shown.diff, "reproduce": shown.command}),
            )),
            Err(err) => Ok(CallToolResult::structured_error(json!({"error": err.to_string()}))),
        }
    }

    /// The mutation operators and the rules that leave mutants out.
    #[tool(
        description = "The mutation operators of each language, the arid-line rules and the equivalence rules."
    )]
    async fn mutators(&self) -> Result<CallToolResult, ErrorData> {
        let ran = self.run(&["mutators".to_string()], None, None).await?;
        Ok(CallToolResult::structured(json!({"text": ran.stdout})))
    }
}

#[tool_handler]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mutdelta", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "mutdelta mutation-tests the lines a change adds: call check (with target commit and rev HEAD for the last commit, or nothing for the staged change), read each survivor's diff and hint, strengthen the tests, and check again. A survivor means every test that runs the line passed with the line wrong.",
            )
    }
}

/// What a child run of this binary printed, and its exit status.
struct Ran {
    code: i32,
    stdout: String,
    /// Its standard error, line by line (progress, notes, the error of a refusal).
    stderr: Vec<String>,
}

impl Server {
    /// A new report's path, the oldest reports past `REPORTS_KEPT` removed.
    fn new_report(&self) -> PathBuf {
        let mut kept: Vec<PathBuf> = std::fs::read_dir(&self.reports)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|extension| extension == "json"))
            .collect();
        kept.sort();
        for old in kept.iter().rev().skip(REPORTS_KEPT - 1) {
            let _ = std::fs::remove_file(old);
        }
        let made = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        self.reports.join(format!("check-{:020}-{}.json", made.as_nanos(), std::process::id()))
    }

    /// Runs `mutdelta -C ROOT args` (with `stdin` on its standard input), each line of its
    /// standard error sent on as a progress notification when `context` holds a progress token;
    /// stopped (SIGTERM, so that it removes its copies) when the client cancels the call.
    async fn run(
        &self,
        args: &[String],
        stdin: Option<&str>,
        context: Option<&RequestContext<RoleServer>>,
    ) -> Result<Ran, ErrorData> {
        let exe = std::env::current_exe().map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        let mut child = tokio::process::Command::new(exe)
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .env("MUTDELTA_PROGRESS_INTERVAL", PROGRESS_INTERVAL)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| ErrorData::internal_error(format!("could not start mutdelta: {err}"), None))?;
        if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
            let _ = tokio::io::AsyncWriteExt::write_all(&mut input, text.as_bytes()).await;
        }
        let stdout = child.stdout.take().expect("piped");
        let reading = tokio::spawn(async move {
            let mut text = String::new();
            let _ =
                tokio::io::AsyncReadExt::read_to_string(&mut tokio::io::BufReader::new(stdout), &mut text)
                    .await;
            text
        });
        let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("piped")).lines();
        let token = context.and_then(|context| context.meta.get_progress_token());
        let mut stderr = Vec::new();
        loop {
            let line = match context {
                Some(context) => tokio::select! {
                    line = lines.next_line() => line,
                    () = context.ct.cancelled() => {
                        terminate(&mut child).await;
                        return Err(ErrorData::internal_error("the check was cancelled", None));
                    }
                },
                None => lines.next_line().await,
            };
            let Ok(Some(line)) = line else { break };
            if let (Some(token), Some(context)) = (&token, context) {
                notify(context, token, stderr.len() + 1, &line).await;
            }
            stderr.push(line);
        }
        let status = child.wait().await.map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
        let stdout = reading.await.unwrap_or_default();
        Ok(Ran { code: status.code().unwrap_or(130), stdout, stderr })
    }
}

/// Stops a child check as Ctrl-C would, so that it removes its copies, and waits for it.
async fn terminate(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on the pid of our own child, which we have not yet waited for.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
    let _ = child.wait().await;
}

async fn notify(context: &RequestContext<RoleServer>, token: &ProgressToken, count: usize, line: &str) {
    let progress = ProgressNotificationParam::new(token.clone(), count as f64).with_message(line);
    let _ = context.peer.notify_progress(progress).await;
}

/// The command-line options that name `change`; else why they cannot.
fn change_args(change: &ChangeParams) -> Result<Vec<String>, String> {
    let invalid = |message: String| message;
    let mut args = match (change.target.as_deref().unwrap_or("staged"), &change.rev, &change.lines) {
        ("staged", None, None) => vec!["--staged".to_string()],
        ("commit", Some(rev), None) => vec!["--commit".to_string(), rev.clone()],
        ("base", Some(rev), None) => vec!["--base".to_string(), rev.clone()],
        ("lines", None, Some(_)) => vec!["--lines".to_string(), "-".to_string()],
        (target @ ("commit" | "base"), None, _) => return Err(invalid(format!("target {target} needs rev"))),
        ("lines", _, None) => return Err(invalid("target lines needs lines".to_string())),
        (target, _, _) if !matches!(target, "staged" | "commit" | "base" | "lines") => {
            return Err(invalid(format!("target {target:?} is none of staged, commit, base, lines")));
        }
        (target, _, _) => {
            return Err(invalid(format!("target {target} takes only its own field (rev or lines)")))
        }
    };
    for glob in &change.exclude {
        args.extend(["--exclude".to_string(), glob.clone()]);
    }
    if let Some(max) = change.max_mutants {
        args.extend(["--max-mutants".to_string(), max.to_string()]);
    }
    if change.one_per_line {
        args.push("--one-per-line".to_string());
    }
    Ok(args)
}

/// The command-line options of how a check runs its tests; tests named outside the repository
/// are refused.
fn check_args(params: &CheckParams) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    if let Some(python) = &params.python {
        args.extend(["--python".to_string(), python.clone()]);
    }
    for test in &params.tests {
        let path = Path::new(test.split("::").next().unwrap_or(test));
        if path.is_absolute() || path.components().any(|part| part == Component::ParentDir) {
            return Err(format!(
                "test {test:?} lies outside the repository: name tests by their path inside it"
            ));
        }
        args.extend(["--test".to_string(), test.clone()]);
    }
    if let Some(jobs) = params.jobs {
        args.extend(["--jobs".to_string(), jobs.to_string()]);
    }
    if let Some(timeout) = params.timeout {
        args.extend(["--timeout".to_string(), timeout.to_string()]);
    }
    Ok(args)
}

/// A refused run as a tool error: its error sentence and exit status.
fn refused(ran: &Ran) -> CallToolResult {
    let error = ran.stderr.iter().find_map(|line| line.strip_prefix("error: ")).unwrap_or("mutdelta failed");
    CallToolResult::structured_error(json!({"error": error, "exitStatus": ran.code}))
}

/// A check's result: its exit status and summary, the verdicts counted, each survivor with its
/// evidence, the lines no test runs, and the notes. `document` is the check's report, read once
/// for all of it (the survivors' diffs and commands too).
fn checked(document: &Document, report: &Path, ran: &Ran) -> Value {
    let mut counts = serde_json::Map::new();
    let mut surviving: Vec<(&str, &MutantEntry)> = Vec::new();
    let mut uncovered = Vec::new();
    for (path, file) in &document.files {
        for mutant in &file.mutants {
            let status = serde_json::to_value(mutant.status).unwrap_or_default();
            let count = counts.entry(status.as_str().unwrap_or("").to_string()).or_insert(json!(0));
            *count = json!(count.as_u64().unwrap_or(0) + 1);
            match mutant.status {
                Status::Survived => surviving.push((path, mutant)),
                Status::NoCoverage => {
                    uncovered.push(json!({"id": mutant.id, "file": path, "line": mutant.location.start.line}))
                }
                _ => {}
            }
        }
    }
    let ids: Vec<&str> = surviving.iter().map(|(_, mutant)| mutant.id.as_str()).collect();
    let shown = crate::reproduce::shown_each_in(report, document, &ids);
    let survivors: Vec<Value> = surviving
        .iter()
        .zip(shown)
        .map(|(&(path, mutant), shown)| survivor(path, mutant, shown.ok()))
        .collect();
    let notes: Vec<&str> = ran.stderr.iter().filter_map(|line| line.strip_prefix("note: ")).collect();
    json!({
        "exitStatus": ran.code,
        "passed": ran.code == 0,
        "summary": ran.stdout.lines().rev().find(|line| line.starts_with("mutation delta")).unwrap_or(""),
        "counts": counts,
        "survivors": survivors,
        "noCoverage": uncovered,
        "notes": notes,
    })
}

/// A surviving mutant with what an agent needs to act on it (`shown`: its diff and command).
fn survivor(path: &str, mutant: &MutantEntry, shown: Option<crate::reproduce::Shown>) -> Value {
    // As the report writes it: no tests run is no `coveredBy` at all.
    let tests_run = (!mutant.covered_by.is_empty()).then_some(&mutant.covered_by);
    json!({
        "id": mutant.id,
        "file": path,
        "line": mutant.location.start.line,
        "column": mutant.location.start.column,
        "description": mutant.description,
        "mutator": mutant.mutator_name,
        "hint": mutant.hint,
        "likelyEquivalent": mutant.likely_equivalent,
        "testsRun": tests_run,
        "diff": shown.as_ref().map(|shown| shown.diff.clone()),
        "reproduce": shown.map(|shown| shown.command),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(target: &str, rev: Option<&str>, lines: Option<&str>) -> ChangeParams {
        ChangeParams {
            target: Some(target.to_string()),
            rev: rev.map(str::to_string),
            lines: lines.map(str::to_string),
            ..ChangeParams::default()
        }
    }

    #[test]
    fn each_target_becomes_its_option_and_a_target_without_its_field_is_refused() {
        assert_eq!(change_args(&ChangeParams::default()).unwrap(), ["--staged"]);
        assert_eq!(change_args(&change("commit", Some("HEAD~1"), None)).unwrap(), ["--commit", "HEAD~1"]);
        assert_eq!(change_args(&change("base", Some("main"), None)).unwrap(), ["--base", "main"]);
        assert_eq!(change_args(&change("lines", None, Some("a.py:3\n"))).unwrap(), ["--lines", "-"]);
        assert_eq!(change_args(&change("commit", None, None)).unwrap_err(), "target commit needs rev");
        assert_eq!(
            change_args(&change("lines", Some("HEAD"), None)).unwrap_err(),
            "target lines needs lines"
        );
        assert_eq!(
            change_args(&change("--commit=x", None, None)).unwrap_err(),
            "target \"--commit=x\" is none of staged, commit, base, lines"
        );
        let more = ChangeParams {
            exclude: vec!["docs/**".into()],
            max_mutants: Some(0),
            one_per_line: true,
            ..ChangeParams::default()
        };
        assert_eq!(
            change_args(&more).unwrap(),
            ["--staged", "--exclude", "docs/**", "--max-mutants", "0", "--one-per-line"]
        );
    }

    #[test]
    fn tests_named_outside_the_repository_are_refused() {
        let with = |tests: &[&str]| CheckParams {
            tests: tests.iter().map(|t| t.to_string()).collect(),
            ..CheckParams::default()
        };
        assert_eq!(
            check_args(&with(&["tests/test_a.py::test_x", "tests/test_b.py"])).unwrap(),
            ["--test", "tests/test_a.py::test_x", "--test", "tests/test_b.py"]
        );
        let run =
            CheckParams { python: Some(".venv".into()), jobs: Some(3), timeout: Some(2.5), ..with(&[]) };
        assert_eq!(check_args(&run).unwrap(), ["--python", ".venv", "--jobs", "3", "--timeout", "2.5"]);
        for outside in ["/etc/passwd", "../other/test_x.py", "tests/../../x.py::test_y"] {
            let refused = check_args(&with(&[outside])).unwrap_err();
            assert!(refused.contains("lies outside the repository"), "{outside}: {refused}");
        }
    }
}
