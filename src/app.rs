//! The program's glue: dispatch a parsed command line, print the reports, pick the exit status.

use std::io::Write;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use serde_json::json;

use crate::cli::{Cli, Command};
use crate::console::Console;
use crate::exit::Exit;
use crate::options::{Change, Options};
use crate::report::{self, Report};
use crate::run::{self, Interrupted, INTERRUPTED};

/// Runs one command line to its exit status; errors are printed here, as one sentence.
pub fn run(cli: Cli) -> Exit {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let swept = crate::scratch::sweep_stale();
    if swept > 0 {
        eprintln!("note: removed {swept} temporary directories left by an earlier run that was killed");
    }
    let directory = cli.directory.clone();
    let outcome = match cli.command {
        Command::Check(args) => Options::resolve(directory, &args).and_then(|options| check(&options)),
        Command::List(args) => list(directory, Change::from_args(&args.change), args.json),
        Command::Mutators => {
            println!("Python\n\n{}", mutators::catalog::render(mutators::catalog::PYTHON));
            print!("Rust\n\n{}", mutators::catalog::render(mutators::catalog::RUST));
            Ok(Exit::Clean)
        }
        Command::Demo => crate::demo::run(),
    };
    match outcome {
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

/// `mutdelta check`: prints the report and says whether any added line is not really tested.
pub fn check(options: &Options) -> Result<Exit> {
    let mut console = Console::new();
    let report = run::check(options, &mut std::io::stdin(), &mut |event| console.hear(event))?;
    print!("{}", report::text::render(&report));
    std::io::stdout().flush()?;
    console.finish(&report.timings);
    if let Some(path) = &options.json {
        write_json(&report, path)?;
    }
    Ok(if report.has_missed() { Exit::Survivors } else { Exit::Clean })
}

fn write_json(report: &Report, path: &std::path::Path) -> Result<()> {
    let text = serde_json::to_string_pretty(&report::json::render(report))?;
    std::fs::write(path, text + "\n")
        .with_context(|| format!("could not write the JSON report to {}", path.display()))
}

/// `mutdelta list`: the mutants `check` would run.
fn list(directory: Option<std::path::PathBuf>, change: Change, as_json: bool) -> Result<Exit> {
    let options =
        Options { directory: directory.unwrap_or_else(|| ".".into()), change, ..Options::for_listing() };
    let plan = run::plan(&options, &mut std::io::stdin())?;
    let mutants = plan.mutants();
    let mut out = std::io::stdout().lock();
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    if as_json {
        let items: Vec<_> = mutants
            .iter()
            .map(|planned| {
                let file = &plan.files[planned.file];
                let m = &planned.mutant;
                json!({
                    "id": planned.id.to_string(),
                    "path": file.path.display().to_string(),
                    "line": m.start.line,
                    "column": m.start.column,
                    "mutatorName": m.mutator,
                    "original": m.original,
                    "replacement": m.replacement,
                    "description": m.description,
                    "ignored": m.ignored,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&items)?)?;
    } else {
        for planned in &mutants {
            let file = &plan.files[planned.file];
            let m = &planned.mutant;
            let ignored =
                m.ignored.as_ref().map(|reason| format!(" [ignored: {reason}]")).unwrap_or_default();
            writeln!(
                out,
                "{} {}:{}:{}: {}{ignored}",
                planned.id,
                file.path.display(),
                m.start.line,
                m.start.column,
                m.description
            )?;
        }
        writeln!(out, "{} mutants on {} added executable lines", mutants.len(), plan.line_count())?;
    }
    Ok(Exit::Clean)
}
