//! Command-line definitions only: plain data parsed by clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "mutdelta",
    version,
    about = "Mutation-test the lines a change adds: which new lines would no test notice if they were wrong?"
)]
pub struct Cli {
    /// Run as if started in DIR (the repository to check), before a command that reads one:
    /// check, audit-tests, list, apply, install-hook.
    #[arg(short = 'C', value_name = "DIR")]
    pub directory: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Mutate the added lines, run the relevant tests against every mutant, report the survivors.
    Check(CheckArgs),
    /// Audit the change's edits to tests alone: mutate the source lines the tests it edits or
    /// deletes ran before it, and report each mutant they killed that no test kills after it.
    #[command(name = "audit-tests")]
    AuditTests(CheckArgs),
    /// Print the mutants `check` would run, without running anything.
    List(ListArgs),
    /// Print the mutation operator tables.
    Mutators,
    /// Build a throwaway repository from a bundled example and check its last commit.
    Demo,
    /// Print one mutant of a JSON report: where, its diff, its verdict and why, what ran, and a
    /// command that reproduces it.
    Show(ShowArgs),
    /// Join the --json reports of every shard of a `check --shard K/N` run into one report,
    /// print its summary, and exit as the unsharded check would.
    Merge(MergeArgs),
    /// Write one mutant of a JSON report into a new copy of the state it tested (printed), or
    /// into the checkout --to names.
    Apply(ApplyArgs),
    /// Write a git pre-commit hook that runs `mutdelta check --staged` before each commit and
    /// stops the commit when it exits non-zero.
    #[command(name = "install-hook")]
    InstallHook(InstallHookArgs),
    /// Run the whole Python test suite of a commit once and record its test-impact map: per
    /// test, the functions it ran and the files it read. Kept in .git/mutdelta/ (and written to
    /// --output for other machines), it lets later checks run only the tests that can reach
    /// their change. Needs Python 3.12 or later and pytest.
    Map(MapArgs),
    /// Internal: the watchdog a check starts, which kills what the check started and removes
    /// its temporary directory once the check ends, even by SIGKILL.
    #[command(name = "__watchdog", hide = true)]
    Watchdog,
    /// Print a shell completion script: `mutdelta completions bash > ~/.local/share/bash-completion/completions/mutdelta`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of mutdelta and its commands: `mutdelta man | man -l -`.
    Man,
    /// Serve the Model Context Protocol over standard input and output, for coding agents: the
    /// tools check, list, show and mutators, on the repository (-C or the current directory).
    Mcp,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell whose completion script to print.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct InstallHookArgs {
    /// Replace an existing pre-commit hook (one that mutdelta did not write is kept beside it as
    /// `pre-commit.bak`).
    #[arg(long)]
    pub force: bool,
    /// Options of `check` the hook passes on, after `--` (e.g. `-- --python .venv/bin/python
    /// -q`); relative paths are read from the repository's top directory, where git runs hooks.
    #[arg(last = true, value_name = "CHECK_OPTIONS")]
    pub check_options: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A report written by `check --json` (or `report.json` in an --out directory).
    pub report: PathBuf,
    /// The mutant's id in the report.
    pub id: String,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' reports, written by `check --shard K/N --json FILE`: one per shard, any order.
    #[arg(required = true, value_name = "REPORT")]
    pub shards: Vec<PathBuf>,
    /// The merged report's files, as `check` writes them.
    #[command(flatten)]
    pub reports: ReportArgs,
    /// How the summary is written, as `check --format` writes it.
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A report written by `check --json` (or `report.json` in an --out directory).
    pub report: PathBuf,
    /// The mutant's id in the report.
    pub id: String,
    /// Write into this checkout instead (its file must hold what the report tested).
    #[arg(long, value_name = "DIR")]
    pub to: Option<PathBuf>,
}

/// Which change to mutate: exactly one of these, or the staged change by default.
#[derive(Debug, Args, Default)]
#[group(multiple = false)]
#[command(next_help_heading = "What to check")]
pub struct ChangeArgs {
    /// The lines the index adds over HEAD (the default).
    #[arg(long)]
    pub staged: bool,
    /// The lines commit REV adds over its first parent; its tree is the state under test.
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// The lines the working tree adds over merge-base(REV, HEAD), untracked files included.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// A coverage gate's list of added executable lines (`path:LINE`, `path:START-END`, or a
    /// JSON object `{"path": [lines]}`); `-` reads standard input. The working tree is tested.
    #[arg(long, value_name = "FILE")]
    pub lines: Option<PathBuf>,
}

/// Which mutants are run.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Mutants")]
pub struct ChoiceArgs {
    /// Count the survivors of arid lines too (logging, print, assert, `__main__` guards, help
    /// texts, ...: `mutdelta mutators` lists the rules); by default they run, a kill counts and
    /// a survivor is Ignored.
    #[arg(long)]
    pub no_arid: bool,
    /// At most one mutant per added line: a deletion or forced condition before an operator
    /// swap before a literal change (see README).
    #[arg(long)]
    pub one_per_line: bool,
    /// Also mutate added lines that only reformat or move removed code (token-equal to removed
    /// lines, alone or as a run); by default they are passed over as old code.
    #[arg(long)]
    pub include_reformatted: bool,
    /// Mutate Rust `unsafe` blocks and `unsafe fn`s like other code; by default only the
    /// arithmetic of a bounds-checked index `a[i]` is, since a mutant elsewhere may cause
    /// undefined behaviour rather than a failing test.
    #[arg(long)]
    pub mutate_unsafe: bool,
    /// Test at most N mutants (default 5000; 0: no bound). A change with more is sampled: every
    /// line keeps one before any keeps two (the first as --one-per-line ranks them), and with
    /// more lines than N, one mutant on each of N lines spread evenly; the report names the
    /// lines left out.
    #[arg(long, value_name = "N")]
    pub max_mutants: Option<usize>,
    /// Make no mutant in files matching GLOB (`docs/**`, `*_pb2.py`); repeatable, beside the
    /// configuration's `exclude`.
    #[arg(long = "exclude", value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Make no mutant of the family NAME (`StringLiteral`, `ArithmeticOperator`, ...:
    /// `mutdelta mutators` lists them); repeatable, beside the configuration's `disable-mutators`.
    #[arg(long = "disable-mutator", value_name = "NAME")]
    pub disable_mutators: Vec<String>,
}

/// The configuration file: whether it is read, and a look at what it resolves to.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Configuration")]
pub struct ConfigArgs {
    /// Print the resolved settings and where each came from (cli, mutdelta.toml,
    /// pyproject.toml [tool.mutdelta], default), and run nothing.
    #[arg(long)]
    pub print_config: bool,
    /// Do not read mutdelta.toml nor pyproject.toml's [tool.mutdelta] table.
    #[arg(long)]
    pub no_config: bool,
}

#[derive(Debug, Args)]
pub struct MapArgs {
    /// The commit whose tree the suite runs on.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub commit: String,
    /// The Python interpreter that runs the tests (as for `check`).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Number of processes the suite is spread over; default: the number of cores.
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Also write the map to FILE (for `check --impact-map FILE` on another machine).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Keep nothing in .git/mutdelta/ (then --output is where the map goes).
    #[arg(long)]
    pub no_cache: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

impl MapArgs {
    /// The `check` arguments that run the same tests on the same state, for resolving the
    /// settings as `check` would (the configuration file included).
    pub fn as_check(&self) -> Result<CheckArgs, clap::Error> {
        use clap::{Args as _, FromArgMatches as _};
        let mut argv: Vec<std::ffi::OsString> =
            vec!["map".into(), "--commit".into(), self.commit.clone().into()];
        if let Some(python) = &self.python {
            argv.extend(["--python".into(), python.clone().into_os_string()]);
        }
        if let Some(jobs) = self.jobs {
            argv.extend(["--jobs".into(), jobs.to_string().into()]);
        }
        if self.no_cache {
            argv.push("--no-cache".into());
        }
        if self.config.no_config {
            argv.push("--no-config".into());
        }
        let matches = CheckArgs::augment_args(clap::Command::new("map")).try_get_matches_from(argv)?;
        CheckArgs::from_arg_matches(&matches)
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub choice: ChoiceArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Print the mutants as JSON.
    #[arg(long)]
    pub json: bool,
    /// Only the mutants shard K of N (0-based) would test.
    #[arg(long, value_name = "K/N", allow_hyphen_values = true)]
    pub shard: Option<String>,
}

const CHECK_EXAMPLES: &str = "\
Examples:
  mutdelta check                          the staged change, before a commit
  mutdelta check --commit HEAD            what the last commit added, on its tree
  mutdelta check --base origin/main       a branch: the working tree over its merge base
  mutdelta check --lines gate.txt         the lines a coverage gate lists (path:LINE)
  mutdelta check --json report.json --html report.html
  mutdelta check --shard 0/4 --json s0.json    one job of four; then merge s0.json ... s3.json
  mutdelta check -q --diff none           counts, and one line per survivor

Exit status: 0 every new line's mutants were caught, 1 a new line has a survivor (or no test
runs it, or the change loses a kill), 2 the check could not run, 130 interrupted.";

#[derive(Debug, Args)]
#[command(after_help = CHECK_EXAMPLES)]
pub struct CheckArgs {
    #[command(flatten)]
    pub change: ChangeArgs,
    /// Pass when a staged check finds nothing staged under CI (`CI` set, as GitHub Actions,
    /// GitLab CI and pre-commit.ci set it): by default that fails there (exit 2), since a gate
    /// that checks nothing is no gate.
    #[arg(long, help_heading = "What to check")]
    pub allow_empty: bool,
    /// The Python interpreter that runs the tests (a virtual environment's directory stands for
    /// its bin/python); default: $VIRTUAL_ENV's, else the repository's .venv, else python3.
    #[arg(long, value_name = "PATH", help_heading = "Which tests")]
    pub python: Option<PathBuf>,
    /// Also run this test file or pytest node id (repeatable).
    #[arg(long = "test", value_name = "PATH_OR_NODEID", help_heading = "Which tests")]
    pub tests: Vec<String>,
    /// Run this shell command instead of pytest or cargo; exit status 0 means the mutant survived.
    #[arg(long, value_name = "CMD", help_heading = "Which tests")]
    pub test_cmd: Option<String>,
    /// What runs the tests of a cargo package (Rust files); default: cargo.
    #[arg(long, value_enum, help_heading = "Which tests")]
    pub test_tool: Option<TestToolArg>,
    /// Cargo features to build and test the packages with (Rust files): names separated by
    /// commas or spaces, `package/feature` for a feature of one package; repeatable.
    #[arg(long, short = 'F', value_name = "FEATURES", help_heading = "Which tests")]
    pub features: Vec<String>,
    /// Build and test the packages with all their cargo features.
    #[arg(long, help_heading = "Which tests")]
    pub all_features: bool,
    /// Build and test the packages without their default cargo features.
    #[arg(long, help_heading = "Which tests")]
    pub no_default_features: bool,
    /// Run each Python survivor once more against the whole test suite, in its own order: a
    /// test that does not run the line may still fail on what it made (a memo, a registry
    /// filled by an earlier test). Costs a suite run per survivor.
    #[arg(long, help_heading = "Which tests")]
    pub confirm_survivors: bool,
    /// Skip the kill-loss audit that `check` runs when the change edits or deletes tests.
    #[arg(long, help_heading = "Which tests")]
    pub no_audit: bool,
    /// Audit every mutant of the source the edited tests ran before the change; by default the
    /// audit tries at most 50, those on code the fewest other tests ran (by the test-impact map)
    /// and one per line first, and the report says how many it left.
    #[arg(long, help_heading = "Which tests", conflicts_with = "audit_budget")]
    pub audit_full: bool,
    /// The most mutants the kill-loss audit tries (default 50).
    #[arg(long, value_name = "N", help_heading = "Which tests")]
    pub audit_budget: Option<usize>,
    /// A Python test-impact map made elsewhere (`mutdelta map --output FILE`, a nightly job's
    /// artifact), used instead of the one kept in .git/mutdelta/: the rest of the suite leaves
    /// out the tests it proves cannot reach the change. Refused, with a note, when it was made
    /// with another interpreter, package set or mutdelta version.
    #[arg(long, value_name = "FILE", help_heading = "Which tests", conflicts_with = "no_impact_map")]
    pub impact_map: Option<PathBuf>,
    /// Run the whole rest of the suite for Python survivors, whatever a test-impact map proves.
    #[arg(long, help_heading = "Which tests")]
    pub no_impact_map: bool,
    /// Number of parallel workers (each with its own temporary copy); default: the number of cores.
    #[arg(short = 'j', long = "jobs", value_name = "N", help_heading = "Speed")]
    pub jobs: Option<usize>,
    /// Seconds a mutant's tests may take; default max(10, 5 x what they took unmutated). Unset,
    /// a mutant swapped into a warm process first gets max(1, 10 x that): past it, it is a
    /// Timeout once its tests, unmutated, finish well within it.
    #[arg(long, value_name = "SECONDS", help_heading = "Speed")]
    pub timeout: Option<f64>,
    /// Memory a mutant's tests may hold (all their processes), as 4G, 512M or none; default:
    /// the machine's memory over (jobs + 1), at least 1G. A mutant stopped there is a Timeout.
    #[arg(long, value_name = "SIZE", help_heading = "Speed")]
    pub memory_limit: Option<String>,
    /// Test only shard K of N (0-based: 0/4 to 3/4) of the planned mutants, split evenly by
    /// expected cost and the same in every job; `mutdelta merge` joins the shards' --json reports.
    #[arg(long, value_name = "K/N", allow_hyphen_values = true, help_heading = "Speed")]
    pub shard: Option<String>,
    /// Run each mutant's tests in a new interpreter instead of forking a warm one.
    #[arg(long, help_heading = "Speed")]
    pub no_fork: bool,
    /// Import every Python mutant fresh (in a fork of the warm worker) instead of swapping its
    /// code into a process that collected the tests once.
    #[arg(long, help_heading = "Speed")]
    pub no_swap: bool,
    /// Build every Rust mutant of a package on its own instead of switching them all into one
    /// build (mutant schemata) and running each against the tests that reach it.
    #[arg(long, help_heading = "Speed")]
    pub no_schema: bool,
    /// Measure the tests and run every mutant afresh: do not reuse (or keep) the coverage runs
    /// and verdicts an earlier run of the same files, interpreter and tests reached, kept in
    /// the repository's git directory.
    #[arg(long, help_heading = "Speed")]
    pub no_cache: bool,
    #[command(flatten)]
    pub choice: ChoiceArgs,
    #[command(flatten)]
    pub reports: ReportArgs,
    /// How the terminal report is written: `github` adds a GitHub Actions annotation per line
    /// with survivors, per line no test runs and per kill lost, worst first; `markdown` writes a
    /// Markdown summary instead (appended to the file $GITHUB_STEP_SUMMARY names, when set,
    /// after the usual report).
    #[arg(long, value_enum, default_value = "text", help_heading = "Reports")]
    pub format: FormatArg,
    /// The survivors' diffs in the terminal report: `full`, or `none` for one line per mutant.
    #[arg(long, value_enum, default_value = "full", help_heading = "Reports")]
    pub diff: DiffArg,
    /// Colour the terminal report: `auto` on a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value = "auto", help_heading = "Reports")]
    pub color: ColorArg,
    /// Keep a record of the run in DIR: per mutant its diff, the commands that ran, their exit
    /// and output; the baseline's and canaries' too; the options and the whole report.
    #[arg(long, value_name = "DIR", help_heading = "Reports")]
    pub out: Option<PathBuf>,
    /// Print every mutant's verdict as it lands, with how it ran (swap, fork, fresh,
    /// build-then-test), why it did not swap, and what it took.
    #[arg(short = 'v', long, conflicts_with = "quiet", help_heading = "Reports")]
    pub verbose: bool,
    /// Print the summary lines alone, and nothing while the check runs; the exit status says
    /// the rest.
    #[arg(short = 'q', long, help_heading = "Reports")]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// The report files to write.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Reports")]
pub struct ReportArgs {
    /// Write a mutation-testing-elements JSON report to FILE (`-`: standard output, the
    /// terminal report then going to standard error).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML page to FILE: the score, and each file's added lines with the
    /// survivors inline, worst first.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write JUnit XML to FILE: a test case per mutant, a failure per survivor.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write SARIF 2.1.0 to FILE (GitHub code scanning): a result per line with survivors, per
    /// line no test runs and per kill lost.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

/// `--format`: how the terminal report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Text,
    Github,
    Markdown,
}

/// `--diff`: how much of each survivor the terminal report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffArg {
    Full,
    None,
}

/// `--color`: whether the terminal report is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

/// `--test-tool`: what runs a cargo package's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestToolArg {
    Cargo,
    Nextest,
}

/// Parses the process's command line (exits with clap's message on bad arguments).
pub fn parse() -> Cli {
    Cli::parse()
}

/// Parses `options` as the options of `mutdelta check`; the error is clap's first line.
pub fn parse_check_options(options: &[String]) -> Result<CheckArgs, String> {
    let argv = ["mutdelta", "check"].into_iter().map(String::from).chain(options.iter().cloned());
    match Cli::try_parse_from(argv) {
        Ok(Cli { command: Command::Check(args), .. }) => Ok(args),
        Ok(_) => unreachable!("the command line starts with `check`"),
        Err(err) => {
            let text = err.to_string();
            let first = text.lines().next().unwrap_or_default();
            Err(first.trim_start_matches("error: ").to_string())
        }
    }
}
