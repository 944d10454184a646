//! A mutation-testing-elements document read back into the counts of its summary lines and its exit status: what `merge` prints, whatever renders the document beside it.

use std::collections::BTreeSet;

use anyhow::{anyhow, Result};
use serde_json::Value;

use super::{AuditSummary, Gate, Interruption, Summary};
use crate::exit::Exit;
use crate::model::outcome::Status;

/// The summary counts of a document written by `check --json` (a shard's too) or `merge`.
pub fn read(document: &Value) -> Result<Gate> {
    let files = document["files"].as_object().ok_or_else(|| not_ours("it has no \"files\""))?;
    let section =
        document["mutdelta"].as_object().ok_or_else(|| not_ours("it has no \"mutdelta\" section"))?;
    let added = section
        .get("addedLines")
        .and_then(Value::as_object)
        .ok_or_else(|| not_ours("its \"mutdelta\" section has no \"addedLines\""))?;
    let mut summary = Summary {
        lines: added.values().filter_map(Value::as_array).map(Vec::len).sum(),
        ..Summary::default()
    };
    let mut survived = BTreeSet::new();
    let mut not_run = BTreeSet::new();
    for (path, file) in files {
        for mutant in
            file["mutants"].as_array().ok_or_else(|| not_ours(&format!("{path} has no mutant list")))?
        {
            let status: Status = serde_json::from_value(mutant["status"].clone())
                .map_err(|_| not_ours(&format!("a mutant of {path} has the status {}", mutant["status"])))?;
            let line = (path.as_str(), mutant["location"]["start"]["line"].as_u64().unwrap_or(0));
            summary.mutants += 1;
            summary.caught += usize::from(status.is_caught());
            summary.scored += usize::from(status.is_caught() || status.is_missed());
            match status {
                Status::Survived => {
                    survived.insert(line);
                }
                Status::NoCoverage => {
                    not_run.insert(line);
                }
                Status::CompileError => summary.compile_errors += 1,
                Status::RuntimeError => summary.runtime_errors += 1,
                Status::Ignored => summary.ignored += 1,
                Status::Killed | Status::Timeout => {}
            }
        }
    }
    let shard = &section.get("shard").cloned().unwrap_or_default();
    if let (Some(index), Some(count), Some(planned)) = (
        shard["index"].as_u64(),
        shard["count"].as_u64(),
        section.get("plan").and_then(|p| p["mutants"].as_u64()),
    ) {
        let shard = crate::model::plan::Shard { index: index as usize, count: count as usize };
        summary.shard = Some((shard, planned as usize));
    }
    summary.lines_with_survivors = survived.len();
    summary.lines_not_run = not_run.difference(&survived).count();
    let audit = section.get("audit").map(|audit| AuditSummary {
        edited: audit["editedTests"]
            .as_array()
            .map(|tests| tests.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default(),
        tried: count(&audit["mutants"]),
        killed_before: count(&audit["killedBefore"]),
        lost: audit["lostKills"].as_array().map_or(0, Vec::len),
    });
    let incomplete = section.get("incomplete").map(|incomplete| Interruption {
        not_run: count(&incomplete["notRun"]),
        planned: count(&incomplete["planned"]),
        undecided: count(&incomplete["undecided"]),
        audit_cut_off: incomplete["auditCutOff"].as_bool().unwrap_or(false),
    });
    Ok(Gate { summary, audit, audit_only: false, incomplete })
}

/// The exit status a check with these counts ends with.
pub fn exit(gate: &Gate) -> Exit {
    if gate.fails() {
        Exit::Survivors
    } else {
        Exit::Clean
    }
}

fn count(value: &Value) -> usize {
    value.as_u64().unwrap_or(0) as usize
}

fn not_ours(why: &str) -> anyhow::Error {
    anyhow!("not a report written by mutdelta's --json: {why}")
}
