//! Turns the parsed command line into one resolved `Options` that the rest of the program sees.

use std::io::Read;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::choose::Choice;
use crate::cli::{ChangeArgs, CheckArgs, ChoiceArgs, FormatArg, ReportArgs, TestToolArg};

/// What to check: which change is mutated, and so which state is tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Staged,
    Commit(String),
    Base(String),
    /// A coverage gate's list of added lines, already read (from a file or standard input).
    Lines(String),
}

/// What runs a cargo package's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestTool {
    Cargo,
    Nextest,
}

/// Whether a check audits the change's edits to tests for lost kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditMode {
    /// When the change edits or deletes tests, beside the mutants of its added lines.
    WithTestEdits,
    /// Never (`--no-audit`).
    Off,
    /// The audit alone (`audit-tests`): the added lines are not mutated.
    Only,
}

/// The report files to write (none by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportFiles {
    /// `--json`: the mutation-testing-elements report.
    pub json: Option<PathBuf>,
    /// `--html`: the self-contained page.
    pub html: Option<PathBuf>,
    /// `--junit`: JUnit XML.
    pub junit: Option<PathBuf>,
    /// `--sarif`: SARIF 2.1.0.
    pub sarif: Option<PathBuf>,
}

impl ReportFiles {
    pub fn resolve(args: &ReportArgs) -> ReportFiles {
        ReportFiles {
            json: args.json.clone(),
            html: args.html.clone(),
            junit: args.junit.clone(),
            sarif: args.sarif.clone(),
        }
    }
}

/// How the terminal report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    /// The text, then a GitHub Actions annotation per line no test checks.
    Github,
}

/// Settings only the Python side reads.
#[derive(Debug, Clone)]
pub struct PythonSettings {
    /// `--python`: the interpreter that runs the tests (else found from the environment).
    pub interpreter: Option<PathBuf>,
    /// `--test`: more tests to run.
    pub extra_tests: Vec<String>,
    /// Fork each mutant's pytest run from a warm worker (else one process per mutant).
    pub fork: bool,
    /// Swap a mutant's code into a process that collected the tests, where it can be.
    pub swap: bool,
}

/// Settings only the Rust side reads.
#[derive(Debug, Clone)]
pub struct RustSettings {
    pub test_tool: TestTool,
}

/// Everything `check` needs, resolved.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to look for the repository.
    pub directory: PathBuf,
    pub target: Target,
    /// `--no-arid`, `--one-per-line`: which mutants run.
    pub choice: Choice,
    pub jobs: NonZeroUsize,
    /// `--test-cmd`: any shell command instead of the language's test tool; exit 0 means the
    /// mutant survived.
    pub test_cmd: Option<String>,
    /// `--timeout`: per mutant.
    pub timeout: Option<Duration>,
    /// `--json`, `--html`, `--junit`, `--sarif`: the report files to write.
    pub reports: ReportFiles,
    /// `--format`: how the terminal report is written.
    pub format: Format,
    /// `--out`: where to keep the run record.
    pub out: Option<PathBuf>,
    /// False with `--no-cache`: nothing is reused from, or kept for, another run.
    pub cache: bool,
    /// `--verbose`: every verdict printed as it lands.
    pub verbose: bool,
    /// `--quiet`: the summary lines alone.
    pub quiet: bool,
    pub audit: AuditMode,
    pub python: PythonSettings,
    pub rust: RustSettings,
}

impl Target {
    /// The change the arguments name; a line list is read here, `-` from `stdin`.
    pub fn resolve(args: &ChangeArgs, stdin: &mut dyn Read) -> Result<Target> {
        Ok(if let Some(rev) = &args.commit {
            Target::Commit(rev.clone())
        } else if let Some(rev) = &args.base {
            Target::Base(rev.clone())
        } else if let Some(path) = &args.lines {
            Target::Lines(read_line_list(path, stdin)?)
        } else {
            Target::Staged
        })
    }
}

impl Choice {
    pub fn resolve(args: &ChoiceArgs) -> Choice {
        Choice {
            arid: !args.no_arid,
            one_per_line: args.one_per_line,
            include_reformatted: args.include_reformatted,
        }
    }
}

fn read_line_list(path: &std::path::Path, stdin: &mut dyn Read) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        stdin.read_to_string(&mut text).context("could not read the line list from standard input")?;
        return Ok(text);
    }
    std::fs::read_to_string(path)
        .map_err(|err| anyhow!("could not read the line list {}: {err}", path.display()))
}

impl Options {
    pub fn resolve(directory: Option<PathBuf>, args: &CheckArgs, stdin: &mut dyn Read) -> Result<Options> {
        let jobs = match args.jobs {
            Some(0) => bail!("-j 0 would run nothing: give at least one job, e.g. -j 1"),
            Some(n) => NonZeroUsize::new(n).expect("checked above"),
            None => default_jobs(),
        };
        let timeout = match args.timeout {
            Some(seconds) if !(seconds.is_finite() && seconds > 0.0) => {
                bail!("--timeout {seconds} is not a positive number of seconds")
            }
            Some(seconds) => Some(Duration::from_secs_f64(seconds)),
            None => None,
        };
        if args.test_cmd.as_ref().is_some_and(|cmd| cmd.trim().is_empty()) {
            bail!("--test-cmd is empty: give the command that runs the tests");
        }
        Ok(Options {
            directory: directory.unwrap_or_else(|| PathBuf::from(".")),
            target: Target::resolve(&args.change, stdin)?,
            choice: Choice::resolve(&args.choice),
            jobs,
            test_cmd: args.test_cmd.clone(),
            timeout,
            reports: ReportFiles::resolve(&args.reports),
            format: match args.format {
                FormatArg::Text => Format::Text,
                FormatArg::Github => Format::Github,
            },
            out: args.out.clone(),
            cache: !args.no_cache,
            verbose: args.verbose,
            quiet: args.quiet,
            audit: if args.no_audit { AuditMode::Off } else { AuditMode::WithTestEdits },
            python: PythonSettings {
                interpreter: args.python.clone(),
                extra_tests: args.tests.clone(),
                fork: !args.no_fork,
                swap: !args.no_swap,
            },
            rust: RustSettings {
                test_tool: match args.test_tool {
                    TestToolArg::Cargo => TestTool::Cargo,
                    TestToolArg::Nextest => TestTool::Nextest,
                },
            },
        })
    }
}

impl Options {
    /// The options of `audit-tests`: those of `check`, for a change given as a revision or the
    /// staged change.
    pub fn resolve_audit(
        directory: Option<PathBuf>,
        args: &CheckArgs,
        stdin: &mut dyn Read,
    ) -> Result<Options> {
        if args.change.lines.is_some() {
            bail!("--lines names lines, not a change whose tests could be compared: give --commit REV, --base REV or --staged");
        }
        if args.no_audit {
            bail!("--no-audit leaves audit-tests nothing to do: use `mutdelta check` to mutate the added lines alone");
        }
        if args.test_cmd.is_some() {
            bail!("audit-tests runs the edited tests alone with pytest: leave out --test-cmd");
        }
        let mut options = Options::resolve(directory, args, stdin)?;
        options.audit = AuditMode::Only;
        Ok(options)
    }
}

/// One worker per core.
pub fn default_jobs() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}
