//! The program's glue: dispatch a parsed command line, print the reports, pick the exit status.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command, MapArgs, MergeArgs};
use crate::config::{self, Provenance};
use crate::console::Console;
use crate::exit::Exit;
use crate::interrupt::{is_interruption, Interrupted, INTERRUPTED};
use crate::options::{Format, ListOptions, Options, ReportFiles};
use crate::report::document::Document;
use crate::report::gate::Gate;
use crate::{report, run};

/// The languages mutdelta checks, in the order a check runs them: the one list of them (a new
/// language is a folder beside `python/` and `cargo/` and a line here).
pub const LANGUAGES: &[run::plugin::Plugin] = &[crate::python::plugin::PLUGIN, crate::cargo::plugin::PLUGIN];

/// Each language's settings (its keys, its flags, their resolution), in the order of `LANGUAGES`.
fn settings() -> Vec<crate::options::SettingsOf> {
    LANGUAGES.iter().map(|plugin| plugin.settings).collect()
}

/// Runs one command line to its exit status; errors are printed here, as one sentence.
pub fn run(cli: Cli) -> Exit {
    if let Command::Watchdog = cli.command {
        return crate::watchdog::serve();
    }
    // First, while this is the only thread: every process the run starts inherits the mark.
    crate::watchdog::mark_this_run();
    let exit = dispatch(cli);
    // Everything the run started has ended; the watchdog makes sure, and exits.
    crate::watchdog::stop();
    exit
}

fn dispatch(cli: Cli) -> Exit {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let swept = crate::scratch::sweep_stale();
    if swept > 0 {
        eprintln!("note: removed {swept} temporary directories left by an earlier run that was killed");
    }
    if let Some(refused) = refuse_directory_where_unused(&cli) {
        eprintln!("error: {refused}");
        return Exit::Error;
    }
    match run_command(cli.command, cli.directory) {
        Ok(exit) => exit,
        Err(err) if err.is::<Interrupted>() || INTERRUPTED.load(Ordering::SeqCst) => {
            eprintln!("mutdelta: {}", Interrupted);
            Exit::Interrupted
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            Exit::Error
        }
    }
}

/// Runs `command` in the repository `-C` named (`cli_directory`; else the current directory).
fn run_command(command: Command, cli_directory: Option<PathBuf>) -> anyhow::Result<Exit> {
    let directory = cli_directory.clone().unwrap_or_else(|| ".".into());
    let stdin = &mut std::io::stdin();
    match command {
        Command::Check(args) if args.config.print_config => {
            Options::resolve(Some(directory), &args, &mut std::io::empty(), &settings())
                .map(|o| print_config(&o.config))
        }
        Command::Check(args) => {
            Options::resolve(Some(directory), &args, stdin, &settings()).and_then(|options| check(&options))
        }
        Command::AuditTests(args) if args.config.print_config => {
            Options::resolve_audit(Some(directory), &args, &mut std::io::empty(), &settings())
                .map(|o| print_config(&o.config))
        }
        Command::AuditTests(args) => Options::resolve_audit(Some(directory), &args, stdin, &settings())
            .and_then(|options| check(&options)),
        Command::List(args) if args.config.print_config => {
            ListOptions::resolve(directory, &args, &mut std::io::empty(), &settings())
                .map(|o| print_config(&o.config))
        }
        Command::List(args) => ListOptions::resolve(directory, &args, stdin, &settings())
            .and_then(|options| list(&options, args.json)),
        Command::Merge(args) => merge(&args),
        Command::Map(args) => impact_map(directory, &args),
        Command::Mutators => {
            print!("{}", catalog_text());
            Ok(Exit::Clean)
        }
        Command::Demo => demo(),
        Command::Show(args) => crate::reproduce::show(&args.report, &args.id).map(|text| {
            print!("{text}");
            Exit::Clean
        }),
        Command::Apply(args) => {
            let repository = cli_directory.as_deref();
            crate::reproduce::apply(&args.report, &args.id, args.to.as_deref(), repository).map(|dir| {
                if args.to.is_none() {
                    eprintln!("note: a new copy of the state under test with mutant {} in place; remove it when done", args.id);
                }
                println!("{}", dir.display());
                Exit::Clean
            })
        }
        Command::Watchdog => Ok(crate::watchdog::serve()),
        Command::Completions(args) => {
            clap_complete::generate(args.shell, &mut visible_command(), "mutdelta", &mut std::io::stdout());
            Ok(Exit::Clean)
        }
        Command::Man => man().map(|()| Exit::Clean),
        Command::Mcp => crate::mcp::serve(crate::lines::repository_root(&directory)?),
        Command::InstallHook(args) => {
            crate::hook::install(&directory, args.force, &args.check_options).map(|installed| {
                print!("{}", hook_text(&installed));
                Exit::Clean
            })
        }
    }
}

/// `-C` names the repository; a command that reads none refuses it rather than ignore it.
fn refuse_directory_where_unused(cli: &Cli) -> Option<String> {
    cli.directory.as_ref()?;
    let name = match &cli.command {
        Command::Mutators => "mutators",
        Command::Demo => "demo",
        Command::Show(_) => "show",
        Command::Merge(_) => "merge",
        Command::Map(_) => "map",
        Command::Completions(_) => "completions",
        Command::Man => "man",
        _ => return None,
    };
    Some(format!("-C names a repository, and `mutdelta {name}` reads none: leave -C out"))
}

/// The command line's definition without its hidden commands (the watchdog), which the
/// completion scripts would otherwise offer.
fn visible_command() -> clap::Command {
    let full = <Cli as clap::CommandFactory>::command();
    let visible: Vec<clap::Command> =
        full.get_subcommands().filter(|sub| !sub.is_hide_set()).cloned().collect();
    // Rebuilt from the visible commands: clap offers no way to take one out.
    let mut rebuilt = clap::Command::new("mutdelta").version(env!("CARGO_PKG_VERSION"));
    if let Some(about) = full.get_about() {
        rebuilt = rebuilt.about(about.clone());
    }
    rebuilt.args(full.get_arguments().cloned()).subcommands(visible)
}

/// `mutdelta man`: the manual pages of mutdelta and each of its commands, one roff document.
fn man() -> Result<()> {
    let mut command = <Cli as clap::CommandFactory>::command();
    command.build();
    let mut out = std::io::stdout().lock();
    manual_page(&command, &mut out)?;
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("mutdelta-{}", sub.get_name());
        manual_page(&sub.clone().name(name.clone()).display_name(name), &mut out)?;
    }
    Ok(())
}

/// One command's manual page as clap_mangen renders it, but for a synopsis that names each
/// option's value (`[-C DIR]`, where clap_mangen writes `[-C ]`).
fn manual_page(command: &clap::Command, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let page = clap_mangen::Man::new(command.clone());
    page.render_title(out)?;
    page.render_name_section(out)?;
    writeln!(out, ".SH SYNOPSIS\n{}", synopsis(command))?;
    page.render_description_section(out)?;
    if command.get_arguments().any(|arg| !arg.is_hide_set()) {
        page.render_options_section(out)?;
    }
    if command.has_subcommands() {
        page.render_subcommands_section(out)?;
    }
    if command.get_after_long_help().is_some() || command.get_after_help().is_some() {
        page.render_extra_section(out)?;
    }
    Ok(())
}

/// A command's synopsis line in roff: its options (each with its value's name), its positional
/// arguments and its subcommands.
fn synopsis(command: &clap::Command) -> String {
    let roff = |text: &str| text.replace('\\', "\\e").replace('-', "\\-");
    let mut line =
        vec![format!("\\fB{}\\fR", roff(command.get_display_name().unwrap_or(command.get_name())))];
    for arg in command.get_arguments().filter(|arg| !arg.is_hide_set()) {
        let name = match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("\\fB\\-{short}\\fR|\\fB{}\\fR", roff(&format!("--{long}"))),
            (Some(short), None) => format!("\\fB\\-{short}\\fR"),
            (None, Some(long)) => format!("\\fB{}\\fR", roff(&format!("--{long}"))),
            (None, None) => {
                let value = arg.get_value_names().map_or(arg.get_id().to_string(), |names| names.join(" "));
                line.push(format!("[\\fI{}\\fR]", roff(&value)));
                continue;
            }
        };
        let value = arg.get_action().takes_values().then(|| {
            let names = arg
                .get_value_names()
                .map_or(arg.get_id().to_string().to_uppercase(), |names| names.join(" "));
            format!(" \\fI{}\\fR", roff(&names))
        });
        let (open, close) = if arg.is_required_set() { ("", "") } else { ("[", "]") };
        line.push(format!("{open}{name}{}{close}", value.unwrap_or_default()));
    }
    if command.has_subcommands() {
        line.push("<\\fIcommand\\fR>".to_string());
    }
    line.join(" ")
}

/// `mutdelta check`: prints the report and says whether any added line is not really tested.
/// Interrupted after some verdicts, it reports those, marked incomplete, and exits 130.
fn check(options: &Options) -> Result<Exit> {
    if let Some(dir) = &options.out {
        report::out::check_destination(dir)?;
    }
    let step_summary = step_summary(options.format)?;
    if !options.quiet {
        for note in &options.config.notes {
            eprintln!("note: {note}");
        }
    }
    let mut console = Console::new(options.verbose, options.quiet, crate::console::interval_from_env()?);
    let report = match run::check(options, LANGUAGES, &mut |event| console.hear(event)) {
        Ok(report) => report,
        Err(err) => {
            console.settle();
            // A refusal is kept in the record too; an interrupted run leaves none.
            if let Some(dir) = options.out.as_deref().filter(|_| !is_interruption(&err)) {
                report::out::write_refused(dir, &format!("{err:#}"), options, LANGUAGES)?;
            }
            return Err(err);
        }
    };
    console.settle();
    // The report as the one document every rendering reads, and the counts it comes to.
    let document = report::json::document(&report);
    let gate =
        Gate { audit_only: report.audit_only, languages: language_names(), ..report::gate::of(&document) };
    let text = if options.quiet {
        report::text::summary_lines(&gate)
    } else {
        report::text::render(&report, &gate, options.diffs)
    };
    // A report written to standard output has it to itself: the terminal report goes to
    // standard error.
    let report_on_stdout = options.reports.to_stdout()?;
    let text = if options.color.enabled(!report_on_stdout) { crate::paint::paint(&text) } else { text };
    show(options.format, &text, &document, &gate, step_summary.as_deref(), report_on_stdout)?;
    console.finish(&report.timings);
    write_reports(&document, &options.reports)?;
    if let Some(dir) = &options.out {
        report::out::write(dir, &report, &document, &gate, options, LANGUAGES)?;
    }
    Ok(if report.incomplete.is_some() { Exit::Interrupted } else { report::gate::exit(&gate) })
}

/// Prints the terminal report `text` as `format` has it: alone, followed by the annotations, or
/// as a Markdown summary (appended to `step_summary` after the text when there is one).
fn show(
    format: Format,
    text: &str,
    document: &Document,
    gate: &Gate,
    step_summary: Option<&Path>,
    report_on_stdout: bool,
) -> Result<()> {
    // A report written to standard output has it to itself: the terminal text goes to
    // standard error.
    let mut out: Box<dyn Write> = if report_on_stdout {
        Box::new(std::io::stderr().lock())
    } else {
        Box::new(std::io::stdout().lock())
    };
    match format {
        Format::Text => out.write_all(text.as_bytes())?,
        Format::Github => {
            out.write_all(text.as_bytes())?;
            out.write_all(report::github::render(document).as_bytes())?;
        }
        Format::Markdown => {
            let markdown = report::markdown::render(document, gate);
            match step_summary {
                Some(path) => {
                    out.write_all(text.as_bytes())?;
                    let mut file = append_to(path)?;
                    file.write_all(markdown.as_bytes())
                        .with_context(|| format!("could not append the summary to {}", path.display()))?;
                }
                None => out.write_all(markdown.as_bytes())?,
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// With `--format markdown`, the file `GITHUB_STEP_SUMMARY` names, proven writable before the
/// check spends its time; None: the summary goes to standard output.
fn step_summary(format: Format) -> Result<Option<PathBuf>> {
    let path = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|path| !path.is_empty());
    let Some(path) = path.filter(|_| format == Format::Markdown).map(PathBuf::from) else {
        return Ok(None);
    };
    append_to(&path)?;
    Ok(Some(path))
}

/// `path` opened to append to, as GitHub has each step add to its job's summary.
fn append_to(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new().append(true).create(true).open(path).map_err(|err| {
        anyhow::anyhow!(
            "GITHUB_STEP_SUMMARY names {}, which cannot be appended to ({err}): point it at a writable file or unset it",
            path.display()
        )
    })
}

/// Writes each requested report file, all rendered from the mutation-testing-elements document
/// of a check, finished or cut short.
pub fn write_reports(document: &Document, files: &ReportFiles) -> Result<()> {
    let write = |path: &Option<PathBuf>, what: &str, render: &dyn Fn() -> Result<String>| -> Result<()> {
        let Some(path) = path else { return Ok(()) };
        write_whole(path, &render()?)
            .with_context(|| format!("could not write the {what} report to {}", path.display()))
    };
    write(&files.json, "JSON", &|| report::json::text(document))?;
    write(&files.html, "HTML", &|| report::html::render(document))?;
    write(&files.junit, "JUnit", &|| Ok(report::junit::render(document)))?;
    write(&files.sarif, "SARIF", &|| {
        Ok(serde_json::to_string_pretty(&report::sarif::render(document))? + "\n")
    })
}

/// Writes `text` to `path`, or to standard output for `-`.
fn write_whole(path: &Path, text: &str) -> Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(());
    }
    write_file(path, text)
}

/// Writes `text` to a new file beside `path`, then renames it over `path`: a reader (or a
/// second Ctrl-C) never sees half a report.
fn write_file(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    // Readable as a plain written file is, not private as a temporary file starts.
    file.as_file().set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path)?;
    Ok(())
}

/// `mutdelta map`: the suite of a commit run once, its test-impact map kept and written.
fn impact_map(directory: PathBuf, args: &MapArgs) -> Result<Exit> {
    let check = args.as_check()?;
    let options = Options::resolve(Some(directory), &check, &mut std::io::empty(), &settings())?;
    if args.config.print_config {
        return Ok(print_config(&options.config));
    }
    let built = crate::run::in_state(&options, crate::python::map::build)?;
    if let Some(output) = &args.output {
        write_whole(output, &serde_json::to_string(&built.map)?)?;
    }
    let kept = if built.kept { "kept in .git/mutdelta/" } else { "not kept (--no-cache)" };
    let written =
        args.output.as_ref().map(|path| format!("; written to {}", path.display())).unwrap_or_default();
    eprintln!(
        "test-impact map: {} recorded at {} in {:.1} s; {kept}{written}",
        crate::words::count_of(built.tests, "test", "tests"),
        built.at,
        built.took.as_secs_f64()
    );
    Ok(Exit::Clean)
}

/// `mutdelta merge`: the shards' reports joined, its summary lines, and the exit status the
/// unsharded check would have.
fn merge(args: &MergeArgs) -> Result<Exit> {
    let format = Format::resolve(args.format);
    let step_summary = step_summary(format)?;
    let mut documents = Vec::new();
    for path in &args.shards {
        let document: Document =
            report::input::read(path, "the shard report", "give the file a shard's --json wrote")?;
        documents.push((path.display().to_string(), document));
    }
    let merged = report::merge::merge_named(documents)?;
    let gate = Gate { languages: language_names(), ..report::gate::of(&merged) };
    let files = ReportFiles::resolve(&args.reports);
    let summary = report::text::summary_lines(&gate);
    show(format, &summary, &merged, &gate, step_summary.as_deref(), files.to_stdout()?)?;
    write_reports(&merged, &files)?;
    Ok(report::gate::exit(&gate))
}

/// `mutdelta mutators`: each language's operator table, then its arid-line rules, then the
/// likely-equivalence rules.
fn catalog_text() -> String {
    use mutators::catalog::{render, render_markers, EQUIVALENT};
    let arid = "mutants that lie wholly inside run; a kill counts, a survivor is Ignored with the rule's name; --no-arid counts it";
    let mut text = String::new();
    for plugin in LANGUAGES {
        text += &format!("{}\n\n{}\n", plugin.language.display, render(plugin.language.operators));
    }
    for plugin in LANGUAGES {
        let rules = render_markers(plugin.language.arid_rules);
        text += &format!("Arid lines, {} ({arid})\n\n{rules}\n", plugin.language.display);
    }
    text + &format!(
        "Likely-equivalent mutants (and, for Python, any mutant that compiles to the code the original \
         or another mutant compiles to: Ignored, not run)\n\n{}",
        render_markers(EQUIVALENT)
    )
}

/// `--print-config`: the resolved settings and where each came from.
fn print_config(provenance: &Provenance) -> Exit {
    print!("{}", config::render(provenance));
    Exit::Clean
}

/// The languages a check looks for, as a person reads their names.
fn language_names() -> Vec<&'static str> {
    LANGUAGES.iter().map(|plugin| plugin.language.display).collect()
}

/// `mutdelta list`: the mutants `check` would run.
fn list(options: &ListOptions, as_json: bool) -> Result<Exit> {
    let languages: Vec<_> = LANGUAGES.iter().map(|plugin| plugin.language).collect();
    let plan = run::plan(&options.directory, &options.target, &options.choice, options.shard, &languages)?;
    for note in options.config.notes.iter().chain(&plan.notes) {
        eprintln!("note: {note}");
    }
    let text = if as_json {
        serde_json::to_string_pretty(&report::list::render_json(&plan))? + "\n"
    } else {
        report::list::render_text(&plan, &language_names())
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    Ok(Exit::Clean)
}

/// What `install-hook` says it did.
fn hook_text(installed: &crate::hook::Installed) -> String {
    let mut text = format!(
        "wrote {}: each `git commit` now runs `{}` and stops when it exits non-zero; `git commit --no-verify` skips it\n",
        installed.path.display(),
        installed.command
    );
    if let Some(backup) = &installed.backup {
        text.push_str(&format!("the hook it replaced is kept as {}\n", backup.display()));
    }
    text
}

/// `mutdelta demo`: the check of a throwaway repository's last commit, between two explanations.
fn demo() -> Result<Exit> {
    let demo = crate::demo::prepare()?;
    print!("{}", demo.intro);
    let exit = check(&demo.options)?;
    if exit == Exit::Interrupted {
        return Ok(exit);
    }
    println!("{}", crate::demo::outro(exit));
    Ok(Exit::Clean)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn every_flag_a_language_says_it_reads_is_an_option_of_check() {
        let cli = crate::cli::Cli::command();
        let check = cli.find_subcommand("check").expect("check is a command");
        let options: Vec<String> =
            check.get_arguments().filter_map(|arg| arg.get_long()).map(|long| format!("--{long}")).collect();
        // A language may read no flag of its own; some language reads one, or this checks nothing.
        assert!(LANGUAGES.iter().any(|plugin| !plugin.settings.flags.is_empty()));
        for plugin in LANGUAGES {
            for flag in plugin.settings.flags {
                assert!(options.iter().any(|option| option == flag), "{flag} is no option of check");
            }
        }
    }

    #[test]
    fn every_language_owns_a_table_of_its_own_and_no_key_of_another() {
        let mut keys = Vec::new();
        for plugin in LANGUAGES {
            let file = plugin.settings.file;
            assert!(!crate::config::KEYS.contains(&file.table), "{}", file.table);
            for key in file.keys {
                assert!(!crate::config::KEYS.contains(&key.flat), "{} is the engine's", key.flat);
                assert!(!keys.contains(&key.flat), "{} is two languages'", key.flat);
                keys.push(key.flat);
            }
        }
    }
}
