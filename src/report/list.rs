//! `mutdelta list`: the planned mutants as text lines or JSON, without any verdict.

use serde_json::{json, Value};

use crate::model::plan::Plan;

/// One line per mutant (`ID path:LINE:COLUMN: description`) and a count, in the words of
/// `check`'s summary line (`text::extent`, which names the `languages` looked for when there is
/// no line).
pub fn render_text(plan: &Plan, languages: &[&str]) -> String {
    let mutants = plan.mutants();
    let mut out = String::new();
    for planned in &mutants {
        let file = &plan.files[planned.file];
        let m = &planned.mutant;
        let ignored = m.ignored.as_ref().map(|reason| format!(" [ignored: {reason}]")).unwrap_or_default();
        let arid = m.arid.map(|rule| format!(" [arid: {}]", rule.name)).unwrap_or_default();
        let equivalent = m
            .likely_equivalent
            .map(|rule| format!(" [likely equivalent if it survives: {}]", rule.name))
            .unwrap_or_default();
        out.push_str(&format!(
            "{} {}:{}:{}: {}{ignored}{arid}{equivalent}\n",
            planned.id,
            file.path.display(),
            m.start.line,
            m.start.column,
            m.description
        ));
    }
    match &plan.share {
        Some(share) => out.push_str(&format!(
            "{} of the plan's {} mutants fall to shard {} ({} added executable lines in all)\n",
            mutants.len(),
            share.planned,
            share.shard,
            plan.line_count()
        )),
        None => {
            out.push_str(&super::text::extent(mutants.len(), plan.line_count(), languages));
            out.push('\n');
        }
    }
    out
}

/// Line numbers by path, as a JSON object keyed by the paths as text (a path that is not UTF-8
/// shown lossily rather than failing the report).
pub fn lines_by_path(lines: &std::collections::BTreeMap<std::path::PathBuf, Vec<usize>>) -> Value {
    let map: serde_json::Map<String, Value> =
        lines.iter().map(|(path, lines)| (path.display().to_string(), json!(lines))).collect();
    Value::Object(map)
}

/// `{"mutants": [...], "addedLines": {"path": [lines]}, "reformatted": {..}, "unsafeLines": {..}}`: the
/// mutants, the added executable lines of each mutated file (as in the check's report), and
/// those passed over as reformatted or moved code or by a front end, under a key for each
/// reason its languages may give (`unsafeLines`); with `--shard`, `"shard": {"index", "count",
/// "planned"}` (the plan's mutants in all).
pub fn render_json(plan: &Plan) -> Value {
    let items: Vec<Value> = plan
        .mutants()
        .iter()
        .map(|planned| {
            let file = &plan.files[planned.file];
            let m = &planned.mutant;
            json!({
                "id": planned.id.to_string(),
                "path": file.path.display().to_string(),
                "line": m.start.line,
                "column": m.start.column,
                "mutatorName": m.mutator().name(),
                "original": m.original,
                "replacement": m.replacement,
                "description": m.description,
                "ignored": m.ignored,
                "arid": m.arid.map(|rule| rule.name),
                "likelyEquivalent": m.likely_equivalent.map(|rule| rule.name),
            })
        })
        .collect();
    let mut value = json!({
        "mutants": items,
        "addedLines": plan.added_lines(),
        "reformatted": lines_by_path(&plan.reformatted),
        "notMade": plan.not_made,
    });
    for group in &plan.passed_over {
        value[group.key()] = lines_by_path(&group.lines);
    }
    if let Some(sampled) = &plan.sampled {
        value["sampled"] = json!({
            "maxMutants": sampled.max,
            "planned": sampled.planned,
            "lines": sampled.lines,
            "leftOut": lines_by_path(&sampled.left_out),
        });
    }
    if let Some(share) = &plan.share {
        value["shard"] =
            json!({ "index": share.shard.index, "count": share.shard.count, "planned": share.planned });
    }
    value
}
