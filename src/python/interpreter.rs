//! The interpreter that runs the tests, their environment in a copy, and the command line of one test run.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context, Result};

use crate::interrupt::{Interrupted, INTERRUPTED};
use crate::process::{DieWithParent, TestCommand};

/// How the tests are run for each mutant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// `python -m pytest -x -q -p no:cacheprovider <options> <tests>`.
    Pytest { options: Vec<String> },
    /// Any shell command (`--test-cmd`); exit status 0 means the mutant survived.
    Shell(String),
}

impl Runner {
    /// The user's command, else pytest; pytest-cov (which the project's `addopts` may switch on)
    /// is switched off: it fights the probe's tracer and costs time in every run.
    ///
    /// pytest's rootdir is pinned to the copy (`--rootdir=.`, each run's working directory)
    /// when a directory above the copies in `scratch` holds a file pytest takes for a project's
    /// root: it would otherwise root the node ids there, outside the copy.
    ///
    /// The randomness the suite asks for is seeded alike in every run, unmutated and mutated
    /// (`flaky::RANDOM_SEED`): pytest-randomly's order and `random`'s state, Hypothesis's examples;
    /// unless the project's configuration in `root` (or `PYTEST_ADDOPTS`) turns the plugin off.
    pub fn new(test_cmd: Option<&str>, python: &Path, scratch: &Path, root: &Path) -> Runner {
        if let Some(command) = test_cmd {
            return Runner::Shell(command.to_string());
        }
        let mut options = Vec::new();
        if has_module(python, "pytest_cov") {
            options.push("--no-cov".to_string());
        }
        for (module, plugin, option) in SEEDED {
            if has_module(python, module) && !turned_off(root, plugin) {
                options.push(format!("{option}={}", crate::run::flaky::RANDOM_SEED));
            }
        }
        if project_root_above(scratch) {
            options.push("--rootdir=.".to_string());
        }
        Runner::Pytest { options }
    }

    pub fn is_pytest(&self) -> bool {
        matches!(self, Runner::Pytest { .. })
    }
}

/// The plugins that draw at random, seeded in every run: the module that holds each, its name
/// for pytest's `-p no:NAME`, and its seed option.
const SEEDED: [(&str, &str, &str); 2] = [
    ("pytest_randomly", "randomly", "--randomly-seed"),
    ("hypothesis", "hypothesispytest", "--hypothesis-seed"),
];

/// The variables of mutdelta's own environment that change what pytest runs, which a run's
/// record carries so that the command `show` prints runs the same tests.
pub const INHERITED: &[&str] = &["PYTEST_ADDOPTS", "PYTEST_PLUGINS"];

/// Whether the project turns `plugin` off (`no:NAME`, as `-p` takes it, in a pytest configuration
/// file at `root` or in `PYTEST_ADDOPTS`): its option would then be unknown to pytest.
fn turned_off(root: &Path, plugin: &str) -> bool {
    const CONFIGURATIONS: &[&str] = &["pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"];
    let off = |text: &str| text.contains(&format!("no:{plugin}"));
    let addopts = std::env::var("PYTEST_ADDOPTS").unwrap_or_default();
    off(&addopts)
        || CONFIGURATIONS
            .iter()
            .any(|name| std::fs::read_to_string(root.join(name)).is_ok_and(|text| off(&text)))
}

/// Whether `dir` or a directory above it holds a file by which pytest finds a rootdir.
fn project_root_above(dir: &Path) -> bool {
    const ROOT_FILES: &[&str] =
        &["pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "setup.py"];
    dir.ancestors().any(|dir| ROOT_FILES.iter().any(|name| dir.join(name).is_file()))
}

/// What one run of an interpreter says about itself: its major version, whether pytest and
/// pytest-cov are importable, and its fingerprint. Asked once per interpreter and run of
/// mutdelta: each start of Python costs tens of milliseconds.
#[derive(Debug)]
struct Description {
    major: String,
    minor: u32,
    pytest: bool,
    pytest_cov: bool,
    /// pytest-randomly and Hypothesis are importable.
    randomly: bool,
    hypothesis: bool,
    /// `None` when it could not list what it imports from.
    fingerprint: Option<String>,
}

fn describe(python: &Path) -> Option<Arc<Description>> {
    const SCRIPT: &str = r#"
import importlib.util, os, sys
print(sys.version_info[0], sys.version_info[1])
print(int(importlib.util.find_spec("pytest") is not None))
print(int(importlib.util.find_spec("pytest_cov") is not None))
print(int(importlib.util.find_spec("pytest_randomly") is not None), int(importlib.util.find_spec("hypothesis") is not None))
lines = [f"{sys.executable} {sys.version}"]
try:
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            for name in sorted(os.listdir(entry)):
                if name.endswith((".dist-info", ".egg-info", ".egg-link")):
                    lines.append(f"{entry} {name}")
                elif name.endswith(".pth"):
                    with open(os.path.join(entry, name), "rb") as pth:
                        lines.append(f"{entry} {name} {pth.read()}")
except OSError:
    lines = None
print("fingerprint" if lines is not None else "no fingerprint")
print("\n".join(lines or []))
"#;
    static DESCRIBED: Mutex<BTreeMap<PathBuf, Arc<Description>>> = Mutex::new(BTreeMap::new());
    let mut described = DESCRIBED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(description) = described.get(python) {
        return Some(description.clone());
    }
    let output =
        Command::new(python).args(["-c", SCRIPT]).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut lines = text.splitn(6, '\n');
    let (major, minor) = lines.next()?.trim().split_once(' ')?;
    let (major, minor) = (major.to_string(), minor.parse().ok()?);
    let pytest = lines.next()? == "1";
    let pytest_cov = lines.next()? == "1";
    let (randomly, hypothesis) = lines.next()?.split_once(' ')?;
    let (randomly, hypothesis) = (randomly == "1", hypothesis == "1");
    let fingerprint = (lines.next()? == "fingerprint").then(|| lines.next().unwrap_or("").to_string());
    let description =
        Arc::new(Description { major, minor, pytest, pytest_cov, randomly, hypothesis, fingerprint });
    described.insert(python.to_path_buf(), description.clone());
    Some(description)
}

/// What `python` is wherever it is installed: its version and the names (with versions) of
/// the distributions it imports from, without the paths where they lie or where it runs; what a
/// test-impact map made on another machine must share.
pub fn portable_fingerprint(python: &Path) -> Result<String> {
    Ok(portable(&fingerprint(python)?))
}

/// A fingerprint (`describe`'s) without its paths.
fn portable(fingerprint: &str) -> String {
    let mut lines = fingerprint.lines();
    let version = lines.next().and_then(|line| line.split_once(' ')).map_or("", |(_, version)| version);
    let mut names: Vec<&str> = lines.filter_map(|line| line.split(' ').nth(1)).collect();
    names.sort_unstable();
    names.dedup();
    format!("{version}\n{}", names.join("\n"))
}

/// `python`'s version, as (major, minor).
pub fn version(python: &Path) -> Result<(u32, u32)> {
    let description =
        describe(python).ok_or_else(|| anyhow!("{} could not describe itself", python.display()))?;
    Ok((description.major.parse().unwrap_or(0), description.minor))
}

/// Whether `python` can import `module` (pytest, pytest_cov, pytest_randomly, hypothesis).
fn has_module(python: &Path, module: &str) -> bool {
    describe(python).is_some_and(|description| match module {
        "pytest" => description.pytest,
        "pytest_cov" => description.pytest_cov,
        "pytest_randomly" => description.randomly,
        "hypothesis" => description.hypothesis,
        _ => false,
    })
}

/// The interpreter the tests run with, and why it was chosen when that is not plain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// Said beside the baseline's tests: set when a hook of the pre-commit framework skipped
    /// the hook's own environment for this one.
    pub why: Option<String>,
}

/// Picks the interpreter: `--python`, else `$VIRTUAL_ENV/bin/python`, else `.venv/bin/python` in
/// the repository, else `python3`; and checks that it is Python 3. Under the pre-commit
/// framework `$VIRTUAL_ENV` is the hook's own environment (mutdelta's wheel alone), so it is
/// passed over for the project's (`under_pre_commit`).
pub fn find_interpreter(explicit: Option<&Path>, repo_root: &Path) -> Result<Found> {
    let (candidate, why) = if let Some(path) = explicit {
        let path = &venv_interpreter(path)?;
        // Tests run in temporary copies: a relative path must not change its meaning there.
        // (Not canonicalised: a venv's python is a symlink that must keep its venv.)
        let path =
            if path.components().count() > 1 { std::path::absolute(path)? } else { path.to_path_buf() };
        (path, None)
    } else if let Some(hook_env) = pre_commit_environment() {
        let (path, why) = under_pre_commit(repo_root, &hook_env, &search_path());
        (path, Some(why))
    } else if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        (PathBuf::from(venv).join("bin/python"), None)
    } else if repo_root.join(".venv/bin/python").exists() {
        (repo_root.join(".venv/bin/python"), None)
    } else {
        (PathBuf::from("python3"), None)
    };
    match describe(&candidate) {
        Some(description) if description.major == "3" => Ok(Found { path: candidate, why }),
        _ => bail!(
            "{} is not a working Python 3 interpreter: pass one with --python PATH",
            candidate.display()
        ),
    }
}

/// The hook environment the pre-commit framework runs mutdelta in, when it does: it sets
/// `PRE_COMMIT=1` for every hook and `VIRTUAL_ENV` to a Python hook's own environment.
fn pre_commit_environment() -> Option<PathBuf> {
    if !crate::options::under_pre_commit() {
        return None;
    }
    Some(
        std::env::var_os("VIRTUAL_ENV")
            .filter(|venv| !venv.is_empty())
            .map(PathBuf::from)
            .unwrap_or_default(),
    )
}

/// The directories of `PATH`.
fn search_path() -> Vec<PathBuf> {
    std::env::var_os("PATH").map(|path| std::env::split_paths(&path).collect()).unwrap_or_default()
}

/// The project's interpreter when pre-commit's hook environment `hook_env` is active: the
/// repository's `.venv` or `venv`, else the first `python3` or `python` on `path` outside the
/// hook environment that has pytest, else the first outside it at all; and why, in words.
fn under_pre_commit(repo_root: &Path, hook_env: &Path, path: &[PathBuf]) -> (PathBuf, String) {
    for venv in [".venv", "venv"] {
        let python = repo_root.join(venv).join("bin/python");
        if python.exists() {
            let why = format!("the project's {venv}, not pre-commit's hook environment");
            return (python, why);
        }
    }
    let outside = |dir: &&PathBuf| hook_env.as_os_str().is_empty() || !dir.starts_with(hook_env);
    let on_path: Vec<PathBuf> = path
        .iter()
        .filter(outside)
        .flat_map(|dir| ["python3", "python"].map(|name| dir.join(name)))
        .filter(|python| python.is_file())
        .collect();
    if let Some(python) = on_path.iter().find(|python| has_module(python, "pytest")) {
        let why = "the first Python on PATH with pytest, not pre-commit's hook environment (the project has no .venv)";
        return (python.clone(), why.to_string());
    }
    let python = on_path.into_iter().next().unwrap_or_else(|| PathBuf::from("python3"));
    (python, "the first Python on PATH outside pre-commit's hook environment".to_string())
}

/// Runs one of mutdelta's helper scripts in `python` with `input` on its standard input, and
/// returns what it printed; `what` names it in errors.
pub fn run_script(python: &Path, script: &str, what: &str, input: &[u8]) -> Result<Vec<u8>> {
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .die_with_parent()
        .spawn()
        .with_context(|| format!("could not start {}", python.display()))?;
    let input = input.to_vec();
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Written and read beside the wait: a script that answers while it reads never blocks on a
    // full pipe, and the wait looks for an interrupt (a long compile check of a giant change
    // must not hold up Ctrl-C or SIGTERM).
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut out).map(|_| out)
    });
    let errors = std::thread::spawn(move || {
        let mut err = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut err).map(|_| err)
    });
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Interrupted.into());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = writer.join().map_err(|_| anyhow!("{what}'s writer panicked"))?;
    let stdout = reader.join().map_err(|_| anyhow!("{what}'s reader panicked"))??;
    let stderr = errors.join().map_err(|_| anyhow!("{what}'s reader panicked"))??;
    if !status.success() {
        bail!("{what} failed in {}: {}", python.display(), String::from_utf8_lossy(&stderr).trim());
    }
    Ok(stdout)
}

/// `--python DIR`: a virtual environment's directory stands for its interpreter.
fn venv_interpreter(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let inside = path.join("bin/python");
    if inside.exists() {
        return Ok(inside);
    }
    bail!(
        "--python {} is a directory with no bin/python in it: give the interpreter itself, or a virtual environment's directory",
        path.display()
    )
}

/// pytest must be importable by `python` when it runs the tests.
pub fn require_pytest(python: &Path) -> Result<()> {
    if has_module(python, "pytest") {
        return Ok(());
    }
    if pre_commit_environment().is_some() {
        bail!(
            "pytest is not installed for {python}, the interpreter mutdelta found outside pre-commit's hook environment: name the project's interpreter in .pre-commit-config.yaml (`args: [--python, .venv/bin/python]`) or install pytest there",
            python = python.display()
        );
    }
    bail!(
        "pytest is not installed for {python}, the interpreter mutdelta found: install it there (`{python} -m pip install pytest`) or pass the project's interpreter with --python",
        python = python.display()
    )
}

/// The environment of every test process in the copy at `root`: the copy (and its `src/`) first
/// on `PYTHONPATH`, then `support` (mutdelta's own Python helpers), then the user's.
pub fn environment(python: &Path, root: &Path, support: Option<&Path>) -> Vec<(String, String)> {
    let mut python_path = vec![root.to_path_buf()];
    if root.join("src").is_dir() {
        python_path.push(root.join("src"));
    }
    python_path.extend(support.map(Path::to_path_buf));
    if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|v| !v.is_empty()) {
        python_path.extend(std::env::split_paths(&existing));
    }
    let mut path = Vec::new();
    if let Some(bin) = python.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        // A shell test command that says `python` means the interpreter mutdelta was given.
        path.push(bin.to_path_buf());
    }
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    // Bytecode is cached as usual (in the copies' __pycache__): `worktree::replace_file` gives
    // every mutant a fresh mtime, so it never meets its original's bytecode. With writing off,
    // mutdelta's helpers keep it in the copy themselves (`rewritten.py`), hash-checked.
    vec![("PYTHONPATH".to_string(), join(&python_path)), ("PATH".to_string(), join(&path))]
}

/// `paths` as one search path (`PYTHONPATH`, `PATH`).
pub fn join(paths: &[PathBuf]) -> String {
    std::env::join_paths(paths).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

/// pytest's arguments for one run: stop at the first failure, quiet, no cache written.
pub fn pytest_args(options: &[String], tests: &[String]) -> Vec<String> {
    let mut args: Vec<String> =
        ["-x", "-q", "-p", "no:cacheprovider"].iter().map(|s| s.to_string()).collect();
    args.extend(options.iter().cloned());
    args.extend(tests.iter().cloned());
    args
}

/// The command that runs `tests` (empty: the whole suite) in the copy at `root`; under pytest,
/// `python -m MAIN` (`pytest`, or a module that loads something first and then runs pytest),
/// with `extra` before pytest's own arguments.
pub fn test_command(
    runner: &Runner,
    python: &Path,
    root: &Path,
    support: Option<&Path>,
    (main, extra): (&str, &[String]),
    tests: &[String],
) -> TestCommand {
    let env = environment(python, root, support);
    match runner {
        Runner::Pytest { options } => {
            let mut args = vec!["-m".to_string(), main.to_string()];
            args.extend(extra.iter().cloned());
            args.extend(pytest_args(options, tests));
            TestCommand { program: python.to_path_buf(), args, dir: root.to_path_buf(), env }
        }
        Runner::Shell(cmd) => TestCommand {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".to_string(), cmd.clone()],
            dir: root.to_path_buf(),
            env,
        },
    }
}

/// What makes one interpreter's test runs differ from another's: its executable and version,
/// and the packages installed where it imports from (their metadata folders name the
/// versions; `.pth` files are read whole).
pub fn fingerprint(python: &Path) -> Result<String> {
    describe(python)
        .and_then(|description| description.fingerprint.clone())
        .ok_or_else(|| anyhow!("{} could not describe itself", python.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_portable_fingerprint_keeps_the_version_and_the_distributions_not_where_they_lie() {
        let here = "/home/a/.venv/bin/python 3.12.4 (main)\n/home/a/.venv/lib/site-packages attrs-24.1.dist-info\n/home/a/.venv/lib/site-packages x.pth b'/home/a/src'\n";
        let there = "/runner/venv/bin/python 3.12.4 (main)\n/runner/venv/lib/site-packages x.pth b'/runner/src'\n/runner/venv/lib/site-packages attrs-24.1.dist-info\n";
        assert_eq!(portable(here), portable(there));
        assert_eq!(portable(here), "3.12.4 (main)\nattrs-24.1.dist-info\nx.pth");
        let other = there.replace("attrs-24.1", "attrs-24.2");
        assert_ne!(portable(here), portable(&other));
        assert_ne!(portable(here), portable(&here.replace("3.12.4", "3.12.5")));
    }

    fn executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn under_pre_commit_the_projects_venv_comes_before_the_hook_environment() {
        let repo = tempfile::tempdir().unwrap();
        let hook = tempfile::tempdir().unwrap();
        executable(&hook.path().join("bin/python3"));
        executable(&repo.path().join("venv/bin/python"));
        let path = [hook.path().join("bin")];
        let (chosen, why) = under_pre_commit(repo.path(), hook.path(), &path);
        assert_eq!(chosen, repo.path().join("venv/bin/python"));
        assert_eq!(why, "the project's venv, not pre-commit's hook environment");
        executable(&repo.path().join(".venv/bin/python"));
        let (chosen, _) = under_pre_commit(repo.path(), hook.path(), &path);
        assert_eq!(chosen, repo.path().join(".venv/bin/python"), ".venv first");
    }

    #[test]
    fn under_pre_commit_without_a_venv_the_hook_environments_pythons_on_path_are_passed_over() {
        let repo = tempfile::tempdir().unwrap();
        let hook = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        executable(&hook.path().join("bin/python3"));
        executable(&hook.path().join("bin/python"));
        executable(&elsewhere.path().join("python"));
        let path = [hook.path().join("bin"), PathBuf::from("/nonexistent"), elsewhere.path().to_path_buf()];
        // Neither has pytest (they are no Pythons at all): the first outside the hook's is taken.
        let (chosen, why) = under_pre_commit(repo.path(), hook.path(), &path);
        assert_eq!(chosen, elsewhere.path().join("python"));
        assert_eq!(why, "the first Python on PATH outside pre-commit's hook environment");
    }
}
