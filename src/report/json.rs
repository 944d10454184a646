//! The mutation-testing-elements JSON report (schemaVersion 2), readable by Stryker's dashboard and HTML viewer.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::test_files::{self, Section as TestSection};
use crate::model::outcome::{MutantResult, Status};
use crate::model::plan::Language;
use crate::model::record::{CommandRecord, RunRecord, StepRecord};
use crate::model::report::Report;

/// The report as a mutation-testing-elements document.
pub fn render(report: &Report) -> Value {
    let t = &report.timings;
    let mut files: BTreeMap<String, Value> = BTreeMap::new();
    for file in &report.plan.files {
        files.insert(
            file.path.display().to_string(),
            json!({ "language": file.language.name, "source": file.source, "mutants": [] }),
        );
    }
    let mut tests = TestSection::default();
    for result in &report.results {
        let planned = &report.plan.files[result.planned.file];
        let path = planned.path.display().to_string();
        if let Some(Value::Array(mutants)) = files.get_mut(&path).and_then(|file| file.get_mut("mutants")) {
            mutants.push(mutant(result, planned.language, &mut tests));
        }
    }
    json!({
        "schemaVersion": "2",
        "thresholds": { "high": 80, "low": 60 },
        "files": files,
        "testFiles": tests.render(),
        "framework": { "name": "mutdelta", "version": env!("CARGO_PKG_VERSION") },
        "config": { "tests": report.tests },
        "mutdelta": origin(report),
        "performance": {
            "setup": millis(t.diff + t.generate + t.compile),
            "initialRun": millis(t.baseline),
            "mutation": millis(t.mutants),
        },
    })
}

fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A mutant, its tests (by id) added to `tests`.
fn mutant(result: &MutantResult, language: Language, tests: &mut TestSection) -> Value {
    let mutant = &result.planned.mutant;
    let mut value = json!({
        "id": result.planned.id.to_string(),
        "mutatorName": mutant.mutator().name(),
        "replacement": mutant.replacement,
        "description": mutant.description,
        "location": location(mutant),
        "status": result.outcome.status,
        "statusReason": result.outcome.reason,
        "duration": millis(result.outcome.duration),
    });
    // Also on a kill: the suite checks what the arid rule would have passed over.
    if let Some(rule) = mutant.arid {
        value["arid"] = json!(rule.name);
    }
    if let Some(rule) = result.likely_equivalent() {
        value["likelyEquivalent"] = json!(rule.name);
    } else if result.outcome.status == Status::Survived {
        if let Some(hint) = super::hint::hint(mutant) {
            value["hint"] = json!(hint);
        }
    }
    let covered = &result.outcome.covered_by;
    let killed: Vec<&str> =
        result.outcome.killed_by.iter().map(|test| test_files::killer(language, test, covered)).collect();
    for test in covered.iter().map(String::as_str).chain(killed.iter().copied()) {
        tests.add(language, test);
    }
    if !covered.is_empty() {
        value["coveredBy"] = json!(covered);
    }
    if !killed.is_empty() {
        value["killedBy"] = json!(killed);
    }
    if let Some(record) = &result.outcome.record {
        value["run"] = run(record);
    }
    if result.outcome.reused {
        // An earlier run reached this verdict on the same content; `run` is that run's.
        value["reused"] = json!(true);
    }
    value
}

/// Where a mutant's edit starts and ends, as the schema writes it.
fn location(mutant: &mutators::Mutant) -> Value {
    json!({
        "start": { "line": mutant.start.line, "column": mutant.start.column },
        "end": { "line": mutant.end.line, "column": mutant.end.column },
    })
}

/// Runs before any mutant (baselines, canaries), each with its step's name.
fn steps(steps: &[StepRecord]) -> Vec<Value> {
    steps
        .iter()
        .map(|step| {
            let mut value = run(&step.record);
            value["step"] = json!(step.step);
            value
        })
        .collect()
}

/// Where the check ran and the runs before any mutant: what `show` and `apply` read back.
fn origin(report: &Report) -> Value {
    // The added lines of each mutated file, and the whole check's wall time: what the HTML, JUnit,
    // SARIF and GitHub reports read beside the mutants.
    let mut value = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "addedLines": report.plan.added_lines(),
        "duration": millis(report.timings.wall),
        "steps": steps(&report.steps),
    });
    if let Some(audit) = &report.audit {
        value["audit"] = audit_section(audit);
    }
    if let Some(origin) = &report.origin {
        value["repository"] = json!(origin.repository);
        value["state"] = json!(origin.state.to_text());
        value["scratch"] = json!(origin.scratch);
    }
    value["plan"] = json!({
        "mutants": report.plan.mutant_count(),
        "digest": crate::shard::digest(&report.plan, &report.tests),
    });
    if let Some(share) = &report.plan.share {
        value["shard"] = json!({ "index": share.shard.index, "count": share.shard.count });
    }
    if let Some(incomplete) = &report.incomplete {
        // The mutants missing from `files` did not run; none of them has a verdict.
        value["incomplete"] = json!({
            "reason": "interrupted",
            "notRun": report.not_run(),
            "planned": incomplete.planned,
            "undecided": incomplete.undecided,
            "auditCutOff": incomplete.audit_cut_off,
        });
    }
    if !report.plan.reformatted.is_empty() {
        // Added lines passed over as reformatted or moved code, per file.
        value["reformatted"] = super::list::lines_by_path(&report.plan.reformatted);
    }
    if !report.plan.not_made.is_empty() {
        // Mutants an equivalence rule left unmade, by rule: the same program, never run.
        value["notMade"] = json!(report.plan.not_made);
    }
    if !report.plan.unsafe_lines.is_empty() {
        // Added executable lines left without a mutant for lying in `unsafe` code, per file.
        value["unsafeLines"] = super::list::lines_by_path(&report.plan.unsafe_lines);
    }
    value
}

/// The kill-loss audit: the edited tests, what they killed before the change, the kills lost.
fn audit_section(audit: &crate::model::audit::Audit) -> Value {
    let lost: Vec<Value> = audit
        .lost
        .iter()
        .map(|lost| {
            let mutant = &lost.mutant;
            json!({
                "file": lost.path,
                "mutatorName": mutant.mutator().name(),
                "replacement": mutant.replacement,
                "description": mutant.description,
                "location": location(mutant),
                "killedBefore": lost.killed_by,
                "statusAfter": lost.after,
                "coveredAfter": lost.ran_after,
                "diff": super::text::unified_diff(
                    &lost.path.display().to_string(),
                    &lost.source,
                    &mutant.apply(&lost.source),
                ),
            })
        })
        .collect();
    json!({
        "editedTests": audit.edited,
        "mutants": audit.tried,
        "killedBefore": audit.killed_before,
        "lostKills": lost,
        "notes": audit.all_notes(),
        "dropped": audit.dropped,
        "unconfirmed": audit.unconfirmed,
        "steps": steps(&audit.steps),
        "plan": audit.plan.as_ref().map(|(mutants, digest)| json!({ "mutants": mutants, "digest": digest })),
    })
}

/// How a mutant (or a step) ran: the commands in order.
pub fn run(record: &RunRecord) -> Value {
    let mut value = json!({ "how": record.how.name(), "commands": record.commands.iter().map(command).collect::<Vec<_>>() });
    if let Some(why) = &record.fallback {
        value["fallback"] = json!(why);
    }
    if let Some((swap, tests)) = record.split {
        value["split"] = json!({ "swap": millis(swap), "tests": millis(tests) });
    }
    value
}

fn command(command: &CommandRecord) -> Value {
    let env: serde_json::Map<String, Value> =
        command.env.iter().map(|(name, value)| (name.clone(), json!(value))).collect();
    let exit_code = match command.exit {
        crate::model::record::Exit::Code(code) => json!(code),
        _ => Value::Null,
    };
    json!({
        "argv": command.argv,
        "cwd": command.dir,
        "env": env,
        "exit": command.exit.describe(),
        "exitCode": exit_code,
        "duration": millis(command.duration),
    })
}
