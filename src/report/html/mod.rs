//! `--html FILE`: one self-contained page (inline style and script, a policy that forbids every load) drawn from the report's data: score, counts, each file's added lines with the survivors inline, worst first.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use serde_json::{json, Value};

use super::document::{Document, FileEntry, MutantEntry};
use crate::model::outcome::Status;

/// Lines of unchanged code shown around the added ones.
const CONTEXT: usize = 2;

/// No load of any kind; only the page's own inline style and script run.
const POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// The whole page. Everything from the report travels as inert JSON that the page's script
/// puts into the page as text, never as markup.
pub fn render(document: &Document) -> Result<String> {
    let data = embed(&serde_json::to_string(&view(document))?);
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>mutdelta report</title>\n<style>\n{}</style>\n</head>\n<body>\n\
         <main id=\"report\"><noscript>This report is drawn by its own script: open it with JavaScript on.</noscript></main>\n\
         <script type=\"application/json\" id=\"report-data\">{data}</script>\n<script>\n{}</script>\n</body>\n</html>\n",
        include_str!("page.css"),
        include_str!("page.js"),
    ))
}

/// JSON that cannot end the script element it sits in, nor be read as markup: `<`, `>` and `&`
/// written as escapes (JSON.parse reads them back as the same characters).
fn embed(json: &str) -> String {
    json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

/// What the page's script draws.
fn view(document: &Document) -> Value {
    let (caught, scored) = document.score();
    let missed = document.missed_lines();
    let statuses = [
        Status::Killed,
        Status::Survived,
        Status::NoCoverage,
        Status::Timeout,
        Status::CompileError,
        Status::RuntimeError,
        Status::Ignored,
    ];
    let mut files: Vec<(&String, &FileEntry)> = document.files.iter().collect();
    files.sort_by_key(|(path, _)| {
        let lines = document.missed_lines_of(path);
        let survived = lines.iter().filter(|line| !line.survived.is_empty()).count();
        (std::cmp::Reverse(survived), std::cmp::Reverse(lines.len()), path.as_str())
    });
    let added_total: usize = document.mutdelta.added_lines.values().map(Vec::len).sum();
    json!({
        "incomplete": document.incomplete_note(),
        "score": (scored > 0).then(|| format!("{:.1}%", 100.0 * caught as f64 / scored as f64)),
        "caught": caught,
        "scored": scored,
        "counts": statuses.iter().map(|s| json!([s, document.count(*s)])).collect::<Vec<_>>(),
        "seconds": format!("{:.2}", document.duration() / 1000.0),
        "addedLines": added_total,
        "linesWithSurvivors": missed.iter().filter(|line| !line.survived.is_empty()).count(),
        "linesNotRun": missed.iter().filter(|line| line.survived.is_empty()).count(),
        "worst": worst(document),
        "files": files.iter().map(|(path, file)| file_view(document, path, file)).collect::<Vec<_>>(),
        "tests": tests_view(document),
        "audit": document.mutdelta.audit.as_ref().map(|audit| json!({
            "editedTests": audit.edited_tests,
            "mutants": audit.mutants,
            "killedBefore": audit.killed_before,
            "lost": audit.lost_kills.iter().map(|lost| json!({
                "file": lost.file,
                "line": lost.location.start.line,
                "column": lost.location.start.column,
                "description": lost.description,
                "killedBefore": lost.killed_before,
                "statusAfter": lost.status_after,
                "coveredAfter": lost.covered_after,
                "diff": lost.diff,
            })).collect::<Vec<_>>(),
        })),
    })
}

/// The lines with survivors or no test running them, worst first.
fn worst(document: &Document) -> Vec<Value> {
    document
        .worst_lines()
        .iter()
        .map(|line| {
            json!({
                "file": line.path,
                "line": line.line,
                "survived": line.survived.len(),
                "notRun": line.not_run.len(),
                "description": line.reported().first().map(|m| m.description()),
            })
        })
        .collect()
}

/// Each test the mutants name, by name: the mutants it killed, the survivors it ran, how many
/// mutants it ran.
fn tests_view(document: &Document) -> Vec<Value> {
    #[derive(Default)]
    struct Seen {
        killed: Vec<Value>,
        survived: Vec<Value>,
        ran: usize,
    }
    let mut tests: BTreeMap<&str, Seen> = BTreeMap::new();
    for (path, mutant) in document.mutants() {
        let at = || json!({ "id": mutant.id, "file": path, "line": mutant.line(), "description": mutant.description() });
        for test in &mutant.covered_by {
            let seen = tests.entry(test).or_default();
            seen.ran += 1;
            if mutant.status == Status::Survived {
                seen.survived.push(at());
            }
        }
        for test in &mutant.killed_by {
            tests.entry(test).or_default().killed.push(at());
        }
    }
    tests
        .into_iter()
        .map(|(name, seen)| json!({ "name": name, "killed": seen.killed, "survived": seen.survived, "ran": seen.ran }))
        .collect()
}

fn file_view(document: &Document, path: &str, file: &FileEntry) -> Value {
    let mut by_line: BTreeMap<usize, Vec<&MutantEntry>> = BTreeMap::new();
    for mutant in &file.mutants {
        by_line.entry(mutant.line()).or_default().push(mutant);
    }
    let added: BTreeSet<usize> = match document.mutdelta.added_lines.get(path) {
        Some(lines) => lines.iter().copied().collect(),
        // A report without the added lines: the lines with mutants stand for them.
        None => by_line.keys().copied().collect(),
    };
    let source: Vec<&str> = file.source.lines().collect();
    let shown: BTreeSet<usize> = added
        .iter()
        .chain(by_line.keys())
        .flat_map(|&line| line.saturating_sub(CONTEXT).max(1)..=line + CONTEXT)
        .filter(|&line| line <= source.len())
        .collect();
    let mut rows = Vec::new();
    let mut next = 1;
    for &line in &shown {
        if line > next {
            rows.push(json!({ "gap": line - next }));
        }
        let mutants = by_line.get(&line).map(Vec::as_slice).unwrap_or_default();
        rows.push(json!({
            "n": line,
            "text": source[line - 1],
            "added": added.contains(&line),
            "mutants": mutants.iter().map(|m| mutant_view(path, file, m)).collect::<Vec<_>>(),
        }));
        next = line + 1;
    }
    if next <= source.len() && !shown.is_empty() {
        rows.push(json!({ "gap": source.len() + 1 - next }));
    }
    let missed = document.missed_lines_of(path);
    json!({
        "path": path,
        "mutants": file.mutants.len(),
        "caught": file.mutants.iter().filter(|m| m.status.is_caught()).count(),
        "linesWithSurvivors": missed.iter().filter(|line| !line.survived.is_empty()).count(),
        "linesNotRun": missed.iter().filter(|line| line.survived.is_empty()).count(),
        "rows": rows,
    })
}

fn mutant_view(path: &str, file: &FileEntry, mutant: &MutantEntry) -> Value {
    // A line no test runs needs no diff per mutant to be understood: those are listed one a line.
    let shown_in_full = matches!(mutant.status, Status::Survived | Status::RuntimeError);
    json!({
        "id": mutant.id,
        "status": mutant.status,
        "description": mutant.description(),
        "mutator": mutant.mutator_name,
        "column": mutant.location.start.column,
        "reason": mutant.status_reason,
        "likelyEquivalent": mutant.likely_equivalent,
        "hint": mutant.hint,
        "coveredBy": mutant.covered_by,
        "killedBy": mutant.killed_by,
        "diff": if shown_in_full { file.diff(path, mutant) } else { String::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_data_cannot_close_its_script_element() {
        let source = "x = '</script><script>alert(1)</script>' & 1\n";
        let document = json!({
            "files": { "a.py": { "source": source, "mutants": [] } },
            "mutdelta": { "addedLines": { "a.py": [1] } },
        });
        let page = render(&serde_json::from_value(document).unwrap()).unwrap();
        let data = page.split("id=\"report-data\">").nth(1).unwrap().split("</script>").next().unwrap();
        assert!(!data.contains('<') && !data.contains('&'), "{data}");
        let parsed: Value = serde_json::from_str(data).unwrap();
        assert_eq!(parsed["files"][0]["rows"][0]["text"], source.trim_end());
    }

    #[test]
    fn far_apart_added_lines_are_shown_with_the_unchanged_lines_between_counted() {
        let source: String = (1..=20).map(|n| format!("line{n}\n")).collect();
        let document = json!({
            "files": { "a.py": { "source": source, "mutants": [] } },
            "mutdelta": { "addedLines": { "a.py": [1, 10] } },
        });
        let view = view(&serde_json::from_value(document).unwrap());
        let rows: Vec<String> = view["files"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| match row.get("gap") {
                Some(gap) => format!("gap {gap}"),
                None => format!("{}{}", row["n"], if row["added"] == true { "+" } else { "" }),
            })
            .collect();
        assert_eq!(rows, ["1+", "2", "3", "gap 4", "8", "9", "10+", "11", "12", "gap 8"]);
    }
}
