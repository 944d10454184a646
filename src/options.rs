//! Turns the parsed command line and the project's configuration file into one resolved `Options` that the rest of the program sees (command line over file over defaults).

use std::io::Read;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::choose::{Choice, GIVEN};
use crate::cli::{
    ChangeArgs, CheckArgs, ChoiceArgs, ColorArg, ConfigArgs, DiffArg, FormatArg, ListArgs, ReportArgs,
};
use crate::config::{self, is_seconds, Config, Provenance, Resolver};
pub use crate::lines::Target;
use crate::memory::{self, parse_limit};
use crate::model::plan::Shard;
use crate::model::record::Bytes;

mod language;

#[cfg(test)]
pub use language::resolved_for_tests;
pub use language::{LanguageOptions, Languages, SettingsOf};

/// The kill-loss audit's default budget, in mutants tried before the change.
pub const AUDIT_BUDGET: usize = 50;

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
    /// Whether a report goes to standard output (named `-`); refused for more than one, which
    /// would be one stream holding two documents.
    pub fn to_stdout(&self) -> Result<bool> {
        let named: Vec<&str> = [
            ("--json", &self.json),
            ("--html", &self.html),
            ("--junit", &self.junit),
            ("--sarif", &self.sarif),
        ]
        .into_iter()
        .filter(|(_, path)| path.as_deref() == Some(Path::new("-")))
        .map(|(option, _)| option)
        .collect();
        if named.len() > 1 {
            bail!(
                "{} all name standard output (-): one report can go there, the others to files",
                named.join(" and ")
            );
        }
        Ok(named.len() == 1)
    }

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
    /// A Markdown summary: appended to the file `GITHUB_STEP_SUMMARY` names after the text, else
    /// instead of it.
    Markdown,
}

impl Format {
    pub fn resolve(arg: FormatArg) -> Format {
        match arg {
            FormatArg::Text => Format::Text,
            FormatArg::Github => Format::Github,
            FormatArg::Markdown => Format::Markdown,
        }
    }
}

/// Everything `check` needs, resolved.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to look for the repository.
    pub directory: PathBuf,
    pub target: Target,
    /// `--no-arid`, `--one-per-line`, `exclude`, `disable-mutators`: which mutants run.
    pub choice: Choice,
    pub jobs: NonZeroUsize,
    /// `--test-cmd`: any shell command instead of the language's test tool; exit 0 means the
    /// mutant survived.
    pub test_cmd: Option<String>,
    /// `--timeout`: per mutant.
    pub timeout: Option<Duration>,
    /// `--memory-limit`: what a mutant's tests may hold; `None` is no limit.
    pub memory_limit: Option<Bytes>,
    /// `--shard`: test only this shard's share of the mutants.
    pub shard: Option<Shard>,
    /// `--json`, `--html`, `--junit`, `--sarif`: the report files to write.
    pub reports: ReportFiles,
    /// `--format`: how the terminal report is written.
    pub format: Format,
    /// `--diff`: survivors with their diffs and tests (else their header lines alone).
    pub diffs: bool,
    /// `--color`: whether the terminal report is coloured.
    pub color: crate::paint::ColorChoice,
    /// `--out`: where to keep the run record.
    pub out: Option<PathBuf>,
    /// False with `--no-cache`: nothing is reused from, or kept for, another run.
    pub cache: bool,
    /// `--verbose`: every verdict printed as it lands.
    pub verbose: bool,
    /// `--quiet`: the summary lines alone.
    pub quiet: bool,
    /// `--allow-empty`: nothing staged passes under CI too.
    pub allow_empty: bool,
    pub audit: AuditMode,
    /// The most mutants the kill-loss audit tries (`--audit-full`: none, all of them).
    pub audit_budget: Option<usize>,
    /// The configuration's `flaky`: tests known to fail at random (node ids, or prefixes).
    pub flaky: Vec<String>,
    /// Each language's own settings, resolved by the language (`SettingsOf`).
    pub languages: Languages,
    /// Where each setting came from (`--print-config`).
    pub config: Provenance,
}

/// What `list` needs, resolved as `check` resolves it.
#[derive(Debug, Clone)]
pub struct ListOptions {
    pub directory: PathBuf,
    pub target: Target,
    pub choice: Choice,
    /// `--shard`: only this shard's share of the mutants.
    pub shard: Option<Shard>,
    pub config: Provenance,
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
        } else if let Some((from, to)) = pre_commit_range() {
            Target::Range { from, to }
        } else {
            Target::Staged
        })
    }
}

/// Whether the pre-commit framework runs mutdelta: it sets `PRE_COMMIT=1` for every hook.
pub fn under_pre_commit() -> bool {
    std::env::var_os("PRE_COMMIT").is_some_and(|value| value == "1")
}

/// The range a run of the pre-commit framework checks (`pre-commit run --from-ref A --to-ref
/// B`, a pre-push hook, pre-commit.ci): a hook's `--staged` means "what pre-commit checks", and
/// there that is the range, not the index.
fn pre_commit_range() -> Option<(String, String)> {
    if !under_pre_commit() {
        return None;
    }
    let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    Some((variable("PRE_COMMIT_FROM_REF")?, variable("PRE_COMMIT_TO_REF")?))
}

impl Choice {
    fn resolve(args: &ChoiceArgs, config: &Config, settings: &mut Resolver) -> Result<Choice> {
        let no_arid = settings.flag("no-arid", args.no_arid, config.no_arid);
        let one_per_line = settings.flag("one-per-line", args.one_per_line, config.one_per_line);
        let include_reformatted =
            settings.flag("include-reformatted", args.include_reformatted, config.include_reformatted);
        let mutate_unsafe = settings.flag("mutate-unsafe", args.mutate_unsafe, config.mutate_unsafe);
        // Options on the command line come beside the configuration's, not instead of them.
        let from_cli = if args.exclude.is_empty() {
            None
        } else {
            let configured = config.exclude.clone().unwrap_or_default();
            Some(configured.with(&args.exclude, GIVEN).map_err(|(pattern, why)| {
                anyhow::anyhow!("--exclude {pattern:?} is not a glob ({why}): give a pattern such as 'docs/**' or '*_pb2.py'")
            })?)
        };
        let exclude =
            settings.value("exclude", from_cli, config.exclude.clone(), Default::default(), |exclude| {
                config::quoted_list(exclude.patterns())
            });
        let from_cli = if args.disable_mutators.is_empty() {
            None
        } else {
            let mut families = config.disable_mutators.clone().unwrap_or_default();
            for name in &args.disable_mutators {
                families.push(
                    config::mutator_family(name)
                        .map_err(|err| anyhow::anyhow!("--disable-mutator: {err}"))?,
                );
            }
            Some(families)
        };
        let disabled = settings.value(
            "disable-mutators",
            from_cli,
            config.disable_mutators.clone(),
            Vec::new(),
            |families| config::quoted_list(&families.iter().map(|f| f.name()).collect::<Vec<_>>()),
        );
        let max_mutants = settings.value(
            "max-mutants",
            args.max_mutants,
            config.max_mutants,
            crate::choose::DEFAULT_MAX_MUTANTS,
            |max| if *max == 0 { "0 (no bound)".to_string() } else { max.to_string() },
        );
        Ok(Choice {
            arid: !no_arid,
            max_mutants: (max_mutants > 0).then_some(max_mutants),
            one_per_line,
            include_reformatted,
            mutate_passed_over: mutate_unsafe,
            disabled: disabled.into_iter().collect(),
            exclude,
        })
    }
}

/// The configuration of the repository `directory` is in, unless `--no-config`; each of
/// `languages` reads its own keys.
fn load_config(directory: &std::path::Path, args: &ConfigArgs, languages: &[SettingsOf]) -> Result<Config> {
    let root = crate::lines::repository_root(directory)?;
    let tables: Vec<config::LanguageTable> = languages.iter().map(|language| language.file).collect();
    Config::load(&root, args.no_config, &tables)
}

impl ListOptions {
    /// The options of `list`; the configuration is checked whole, `languages`' keys included.
    pub fn resolve(
        directory: PathBuf,
        args: &ListArgs,
        stdin: &mut dyn Read,
        languages: &[SettingsOf],
    ) -> Result<ListOptions> {
        let config = load_config(&directory, &args.config, languages)?;
        let mut settings = Resolver::new(&config);
        let choice = Choice::resolve(&args.choice, &config, &mut settings)?;
        let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
        let target = Target::resolve(&args.change, stdin)?;
        Ok(ListOptions { directory, target, choice, shard, config: settings.finish() })
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
    /// The options of `check`, each of `languages` resolving its own settings.
    pub fn resolve(
        directory: Option<PathBuf>,
        args: &CheckArgs,
        stdin: &mut dyn Read,
        languages: &[SettingsOf],
    ) -> Result<Options> {
        let (cli_jobs, cli_timeout) = check_cli(args)?;
        let directory = directory.unwrap_or_else(|| PathBuf::from("."));
        let config = load_config(&directory, &args.config, languages)?;
        let mut settings = Resolver::new(&config);
        let test_cmd = resolve_test_cmd(args, &config, &mut settings, languages);
        let timeout = settings.value("timeout", cli_timeout.map(Some), config.timeout.map(Some), None, |t| {
            t.map_or("(not set: max(10, 5 x what the mutant's tests took unmutated))".into(), |t| {
                t.to_string()
            })
        });
        let jobs = settings.value("jobs", cli_jobs, config.jobs, default_jobs(), |n| n.to_string());
        let memory_limit = resolve_memory_limit(args, &config, &mut settings, jobs)?;
        let choice = Choice::resolve(&args.choice, &config, &mut settings)?;
        let own = languages
            .iter()
            .map(|language| {
                let file = config.languages.get(language.file.table).map(|file| &**file);
                (language.resolve)(args, file, &mut settings)
            })
            .collect::<Result<Vec<_>>>()?;
        let no_audit = settings.flag("no-audit", args.no_audit, config.no_audit);
        let flaky = settings
            .value("flaky", None, config.flaky.clone(), Vec::new(), |tests| config::quoted_list(tests));
        Ok(Options {
            directory,
            target: Target::resolve(&args.change, stdin)?,
            choice,
            jobs,
            test_cmd,
            timeout: timeout.map(Duration::from_secs_f64),
            memory_limit,
            shard: args.shard.as_deref().map(Shard::parse).transpose()?,
            reports: ReportFiles::resolve(&args.reports),
            format: Format::resolve(args.format),
            diffs: args.diff == DiffArg::Full,
            color: color_choice(args.color),
            out: args.out.clone(),
            cache: !args.no_cache,
            verbose: args.verbose,
            quiet: args.quiet,
            allow_empty: args.allow_empty,
            audit: if no_audit { AuditMode::Off } else { AuditMode::WithTestEdits },
            audit_budget: (!args.audit_full).then_some(args.audit_budget.unwrap_or(AUDIT_BUDGET)),
            flaky,
            languages: Languages::new(own),
            config: settings.finish(),
        })
    }
}

/// `-j`, `--timeout` and `--test-cmd` as `check` can use them, checked before the configuration
/// is read.
fn check_cli(args: &CheckArgs) -> Result<(Option<NonZeroUsize>, Option<f64>)> {
    let cli_jobs = match args.jobs {
        Some(0) => bail!("-j 0 would run nothing: give at least one job, e.g. -j 1"),
        Some(n) => NonZeroUsize::new(n),
        None => None,
    };
    let cli_timeout = match args.timeout {
        Some(seconds) if !is_seconds(seconds) => {
            bail!("--timeout {seconds} is not a positive number of seconds")
        }
        timeout => timeout,
    };
    if args.test_cmd.as_ref().is_some_and(|cmd| cmd.trim().is_empty()) {
        bail!("--test-cmd is empty: give the command that runs the tests");
    }
    Ok((cli_jobs, cli_timeout))
}

/// `test-cmd`: the shell command that replaces the languages' test tools, if any.
fn resolve_test_cmd(
    args: &CheckArgs,
    config: &Config,
    settings: &mut Resolver,
    languages: &[SettingsOf],
) -> Option<String> {
    let tools: Vec<&str> = languages.iter().map(|language| language.tests_run_by).collect();
    let unset = format!("(not set: {})", tools.join(", or "));
    settings.value(
        "test-cmd",
        args.test_cmd.clone().map(Some),
        config.test_cmd.clone().map(Some),
        None,
        |cmd| cmd.as_deref().map_or(unset.clone(), config::quoted),
    )
}

/// `memory-limit`: by default the machine's memory shared between the `jobs` workers.
fn resolve_memory_limit(
    args: &CheckArgs,
    config: &Config,
    settings: &mut Resolver,
    jobs: NonZeroUsize,
) -> Result<Option<Bytes>> {
    let cli_memory_limit = args
        .memory_limit
        .as_deref()
        .map(|text| parse_limit(text).map_err(|err| anyhow!("--memory-limit: {err}")))
        .transpose()?;
    Ok(settings.value(
        "memory-limit",
        cli_memory_limit,
        config.memory_limit,
        memory::default_limit(jobs.get()),
        |limit| limit.map_or("none".to_string(), |limit| limit.to_string()),
    ))
}

/// `--color` as the terminal report takes it.
fn color_choice(arg: ColorArg) -> crate::paint::ColorChoice {
    match arg {
        ColorArg::Auto => crate::paint::ColorChoice::Auto,
        ColorArg::Always => crate::paint::ColorChoice::Always,
        ColorArg::Never => crate::paint::ColorChoice::Never,
    }
}

impl Options {
    /// The options of `audit-tests`: those of `check`, for a change given as a revision or the
    /// staged change.
    pub fn resolve_audit(
        directory: Option<PathBuf>,
        args: &CheckArgs,
        stdin: &mut dyn Read,
        languages: &[SettingsOf],
    ) -> Result<Options> {
        if args.change.lines.is_some() {
            bail!("--lines names lines, not a change whose tests could be compared: give --commit REV, --base REV or --staged");
        }
        if args.no_audit {
            bail!("--no-audit leaves audit-tests nothing to do: use `mutdelta check` to mutate the added lines alone");
        }
        if args.shard.is_some() {
            bail!("audit-tests mutates no added lines to split over shards: leave out --shard");
        }
        let tool = languages.iter().find_map(|language| language.audit_runs_with).unwrap_or("its test tool");
        if args.test_cmd.is_some() {
            bail!("audit-tests runs the edited tests alone with {tool}: leave out --test-cmd");
        }
        let mut options = Options::resolve(directory, args, stdin, languages)?;
        // The configuration's `test-cmd` is for `check`: the audit runs the edited tests alone.
        if options.test_cmd.take().is_some() {
            options
                .config
                .set("test-cmd", &format!("(not used: audit-tests runs the edited tests with {tool})"));
        }
        options.audit = AuditMode::Only;
        Ok(options)
    }
}

/// One worker per core.
pub fn default_jobs() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}
