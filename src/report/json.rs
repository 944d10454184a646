//! The mutation-testing-elements JSON report (schemaVersion 2), readable by Stryker's dashboard and HTML viewer.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{MutantResult, Report};

/// The report as a mutation-testing-elements document.
pub fn render(report: &Report) -> Value {
    let t = &report.timings;
    let mut files: BTreeMap<String, Value> = BTreeMap::new();
    for file in &report.plan.files {
        files.insert(
            file.path.display().to_string(),
            json!({ "language": file.language.name(), "source": file.source, "mutants": [] }),
        );
    }
    for result in &report.results {
        let path = report.plan.files[result.planned.file].path.display().to_string();
        if let Some(Value::Array(mutants)) = files.get_mut(&path).and_then(|file| file.get_mut("mutants")) {
            mutants.push(mutant(result));
        }
    }
    json!({
        "schemaVersion": "2",
        "thresholds": { "high": 80, "low": 60 },
        "files": files,
        "framework": { "name": "mutdelta", "version": env!("CARGO_PKG_VERSION") },
        "config": { "tests": report.tests },
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

fn mutant(result: &MutantResult) -> Value {
    let mutant = &result.planned.mutant;
    let mut value = json!({
        "id": result.planned.id.to_string(),
        "mutatorName": mutant.mutator().name(),
        "replacement": mutant.replacement,
        "description": mutant.description,
        "location": {
            "start": { "line": mutant.start.line, "column": mutant.start.column },
            "end": { "line": mutant.end.line, "column": mutant.end.column },
        },
        "status": result.status,
        "statusReason": result.reason,
        "duration": millis(result.duration),
    });
    if !result.covered_by.is_empty() {
        value["coveredBy"] = json!(result.covered_by);
    }
    if !result.killed_by.is_empty() {
        value["killedBy"] = json!(result.killed_by);
    }
    value
}
