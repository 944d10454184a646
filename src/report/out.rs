//! `--out DIR`: the run record on disk, per mutant its diff, its commands and the end of their output, beside the whole report.

use std::fs;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::document::Document;
use super::gate::Gate;
use super::{json as report_json, text};
use crate::lines::Target;
use crate::model::report::Report;
use crate::options::Options;
use crate::run::plugin::Plugin;

/// The file that marks a directory as a run record.
const MARKER: &str = "run.json";

/// Refuses, before anything runs, a directory that holds something other than an earlier record.
pub fn check_destination(dir: &Path) -> Result<()> {
    let Ok(mut entries) = fs::read_dir(dir) else {
        return Ok(()); // created when the record is written
    };
    if entries.next().is_some() && !dir.join(MARKER).is_file() {
        bail!(
            "--out {} already holds files that are not a mutdelta run record: name a new or empty directory",
            dir.display()
        );
    }
    Ok(())
}

/// Writes the record of `report` (its `document` as `report.json`, the summary lines of its
/// `gate`), replacing an earlier record in `dir`; each of `languages` gives its settings.
pub fn write(
    dir: &Path,
    report: &Report,
    document: &Document,
    gate: &Gate,
    options: &Options,
    languages: &[Plugin],
) -> Result<()> {
    clear_earlier_record(dir)?;
    let mutants = dir.join("mutants");
    fs::create_dir_all(&mutants)
        .with_context(|| format!("could not create the run record in {}", dir.display()))?;
    fs::write(dir.join("report.json"), report_json::text(document)?)?;
    write_mutants(&mutants, report)?;
    let steps: Vec<Value> = report
        .steps
        .iter()
        .map(|step| {
            let mut value = serde_json::to_value(report_json::run(&step.record))?;
            value["step"] = json!(step.step);
            value["outputTail"] = json!(step.record.tail);
            Ok(value)
        })
        .collect::<Result<_>>()?;
    let t = &report.timings;
    let run = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "repository": report.origin.as_ref().map(|origin| origin.repository.clone()),
        "state": report.origin.as_ref().map(|origin| origin.state.to_text()),
        "options": options_json(options, languages),
        "steps": steps,
        // What the run printed last: the delta's line (none after `audit-tests`), the audit's.
        "summary": text::summary_lines(gate).trim_end(),
        "timings": {
            "diff": t.diff.as_secs_f64(),
            "generate": t.generate.as_secs_f64(),
            "compile": t.compile.as_secs_f64(),
            "baseline": t.baseline.as_secs_f64(),
            "mutants": t.mutants.as_secs_f64(),
            "audit": t.audit.as_secs_f64(),
            "auditBaseline": t.audit_baseline.as_secs_f64(),
            "auditMutants": t.audit_mutants.as_secs_f64(),
            "wall": t.wall.as_secs_f64(),
        },
    });
    // Written last: a record with its marker is a complete one.
    fs::write(dir.join(MARKER), serde_json::to_string_pretty(&run)? + "\n")?;
    Ok(())
}

/// Writes the record of a check refused before it had a report (`refusal`: a baseline that
/// failed, with what ran, its first failure and the end of its output), replacing an earlier
/// record in `dir`: `run.json` holds the options and the refusal, and no `report.json` is left
/// to be taken for this run's.
pub fn write_refused(dir: &Path, refusal: &str, options: &Options, languages: &[Plugin]) -> Result<()> {
    clear_earlier_record(dir)?;
    fs::create_dir_all(dir)
        .with_context(|| format!("could not create the run record in {}", dir.display()))?;
    let run = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "options": options_json(options, languages),
        "refused": refusal,
    });
    fs::write(dir.join(MARKER), serde_json::to_string_pretty(&run)? + "\n")?;
    Ok(())
}

/// Removes what an earlier record in `dir` left, after `check_destination`.
fn clear_earlier_record(dir: &Path) -> Result<()> {
    check_destination(dir)?;
    for old in ["mutants", MARKER, "report.json"] {
        let path = dir.join(old);
        if path.is_dir() {
            fs::remove_dir_all(&path)?;
        } else if path.exists() {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Each mutant's own directory in `mutants`: its diff, its record (with its run, where it
/// ran) and the end of its output.
fn write_mutants(mutants: &Path, report: &Report) -> Result<()> {
    for result in &report.results {
        let file = &report.plan.files[result.planned.file];
        let mutant = &result.planned.mutant;
        let own = mutants.join(result.planned.id.to_string());
        fs::create_dir_all(&own)?;
        let path = file.path.display().to_string();
        fs::write(
            own.join("diff.patch"),
            super::diff::unified_diff(&path, &file.source, &mutant.apply(&file.source)),
        )?;
        let mut record = json!({
            "id": result.planned.id.to_string(),
            "path": path,
            "line": mutant.start.line,
            "column": mutant.start.column,
            "mutatorName": mutant.mutator().name(),
            "description": mutant.description,
            "status": result.outcome.status,
            "statusReason": result.outcome.reason,
            "duration": result.outcome.duration.as_secs_f64() * 1000.0,
            "coveredBy": result.outcome.covered_by,
            "killedBy": result.outcome.killed_by,
        });
        if let Some(run) = &result.outcome.record {
            record["run"] = serde_json::to_value(report_json::run(run))?;
            fs::write(own.join("output.log"), &run.tail)?;
        }
        fs::write(own.join("record.json"), serde_json::to_string_pretty(&record)? + "\n")?;
    }
    Ok(())
}

/// The options of the check, as resolved, with each language's settings under its name.
fn options_json(options: &Options, languages: &[Plugin]) -> Value {
    let target = match &options.target {
        Target::Staged => json!({ "staged": true }),
        Target::Commit(rev) => json!({ "commit": rev }),
        Target::Base(rev) => json!({ "base": rev }),
        Target::Range { from, to } => json!({ "from": from, "to": to }),
        Target::Lines(text) => json!({ "lines": text }),
    };
    let mut record = json!({
        "directory": options.directory,
        "target": target,
        "arid": options.choice.arid,
        "onePerLine": options.choice.one_per_line,
        "includeReformatted": options.choice.include_reformatted,
        "mutateUnsafe": options.choice.mutate_passed_over,
        "disableMutators": options.choice.disabled.iter().map(|family| family.name()).collect::<Vec<_>>(),
        "exclude": options.choice.exclude.patterns(),
        "jobs": options.jobs.get(),
        "testCmd": options.test_cmd,
        "timeout": options.timeout.map(|timeout| timeout.as_secs_f64()),
    });
    for plugin in languages {
        record[plugin.language.name] = (plugin.record)(options);
    }
    record
}
