//! `--sarif FILE`: SARIF 2.1.0 for code-scanning alerts, a result per line with survivors, per line no test runs, and per kill the change's test edits lose.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::document::{Document, MissedLine};
use crate::words::{count_of, some_tests};

/// The key of our own entry in each result's `partialFingerprints`. GitHub computes
/// `primaryLocationLineHash` itself, and upload-sarif warns when a log carries a value it would
/// not have computed, so that key is left to it.
const FINGERPRINT: &str = "mutdelta/v1";

/// The rules, in the order results index them: (id, name, short description, help).
const RULES: [(&str, &str, &str, &str); 3] = [
    (
        "MUT-survived",
        "SurvivingMutant",
        "An added line was changed and no test failed",
        "Some test runs this line, but no test fails when it is changed as the message shows: \
         add an assertion that tells the two apart, or `mutdelta show REPORT ID` for the command \
         that reproduces the verdict.",
    ),
    (
        "MUT-nocoverage",
        "LineNoTestRuns",
        "No test runs an added line",
        "No test of the suite executes this line: add a test that reaches it.",
    ),
    (
        "MUT-lost",
        "KillLost",
        "A mutant the edited tests killed before the change survives after it",
        "The change edits or deletes tests, and a mutant they killed before it is caught by no \
         test after it: the edit weakened what the tests check.",
    ),
];

/// The report as a SARIF log with one run.
pub fn render(document: &Document) -> Value {
    let mut fingerprints = Fingerprints::default();
    let mut results: Vec<Value> = document
        .missed_lines()
        .iter()
        .map(|line| {
            let text = document.files[line.path].source.lines().nth(line.line - 1).unwrap_or("");
            missed(line, fingerprints.next(RULES[missed_rule(line)].0, line.path, text))
        })
        .collect();
    if let Some(audit) = &document.mutdelta.audit {
        for lost in &audit.lost_kills {
            let message = format!("Kill lost: {}.", lost.summary());
            // The audit's files need not be in the document: the mutant's diff holds the line.
            let text = lost
                .diff
                .lines()
                .find(|line| line.starts_with('-') && !line.starts_with("---"))
                .map_or("", |line| &line[1..]);
            let fingerprint = fingerprints.next(RULES[2].0, &lost.file, text);
            results.push(result(
                2,
                &message,
                &lost.file,
                lost.location.start.line,
                lost.location.start.column,
                fingerprint,
            ));
        }
    }
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(id, name, short, help)| {
            json!({
                "id": id,
                "name": name,
                "shortDescription": { "text": short },
                "help": { "text": help },
                "defaultConfiguration": { "level": "error" },
                "properties": { "tags": ["tests", "mutation-testing"] },
            })
        })
        .collect();
    json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "mutdelta",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            } },
            "invocations": [invocation(document)],
            // Columns count characters, as the JSON report's do.
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Whether the check ran to its end; an interrupted one says how many mutants did not run.
fn invocation(document: &Document) -> Value {
    match document.incomplete_note() {
        Some(note) => json!({
            "executionSuccessful": false,
            "toolExecutionNotifications": [{ "level": "warning", "message": { "text": note } }],
        }),
        None => json!({ "executionSuccessful": true }),
    }
}

/// The index of the rule a missed line is reported under: survived, else no coverage.
fn missed_rule(line: &MissedLine) -> usize {
    usize::from(line.survived.is_empty())
}

fn missed(line: &MissedLine, fingerprint: String) -> Value {
    let mutants: Vec<String> = line
        .reported()
        .iter()
        .map(|m| {
            let hint = m.hint.as_deref().map(|hint| format!("; hint: {hint}")).unwrap_or_default();
            format!("{} (mutant {}, column {}{hint})", m.description(), m.id, m.location.start.column)
        })
        .collect();
    let rule = missed_rule(line);
    let message = if line.survived.is_empty() {
        format!(
            "No test runs this line: {} not tested: {}.",
            count_of(mutants.len(), "mutant", "mutants"),
            mutants.join("; ")
        )
    } else {
        let mut message = format!(
            "{} survived, no test failed with the line changed: {}.",
            count_of(mutants.len(), "mutant", "mutants"),
            mutants.join("; ")
        );
        let tests = line.covered_by();
        if !tests.is_empty() {
            message.push_str(&format!(" Ran under: {}.", some_tests(&tests, 3)));
        }
        message
    };
    result(rule, &message, line.path, line.line, line.column(), fingerprint)
}

fn result(rule: usize, message: &str, path: &str, line: usize, column: usize, fingerprint: String) -> Value {
    json!({
        "ruleId": RULES[rule].0,
        "ruleIndex": rule,
        "level": "error",
        "message": { "text": message },
        "partialFingerprints": { FINGERPRINT: fingerprint },
        "locations": [{ "physicalLocation": {
            "artifactLocation": { "uri": uri(path), "uriBaseId": "%SRCROOT%" },
            "region": { "startLine": line, "startColumn": column },
        } }],
    })
}

/// Fingerprints that follow a line's text, not its number: a result keeps its alert when lines
/// above it are added or removed. The rule, the path and the line's text without its indentation
/// are hashed, with how many results of the log came before with the same three, so that two
/// identical lines of a file stay two alerts.
#[derive(Default)]
struct Fingerprints {
    seen: HashMap<(String, String, String), usize>,
}

impl Fingerprints {
    fn next(&mut self, rule: &str, path: &str, text: &str) -> String {
        let text = text.trim();
        let seen = self.seen.entry((rule.to_string(), path.to_string(), text.to_string())).or_insert(0);
        let occurrence = seen.to_string();
        *seen += 1;
        let digest =
            crate::cache::key(&[rule.as_bytes(), path.as_bytes(), text.as_bytes(), occurrence.as_bytes()]);
        digest[..16].to_string()
    }
}

/// A repository-relative path as a relative URI reference: bytes outside the unreserved set and
/// `/` percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_no_test_runs_is_its_own_rule_and_a_line_with_a_survivor_is_reported_as_survived() {
        let mutant = |id: &str, line: usize, status: &str| {
            json!({
                "id": id, "mutatorName": "Literal", "replacement": "2", "description": "replace 1 with 2",
                "status": status,
                "location": { "start": { "line": line, "column": 5 }, "end": { "line": line, "column": 6 } },
            })
        };
        let document = json!({ "files": { "a.py": {
            "source": "x = 1\ny = 1\n",
            "mutants": [mutant("1", 1, "NoCoverage"), mutant("2", 2, "NoCoverage"), mutant("3", 2, "Survived")],
        } } });

        let log = render(&serde_json::from_value(document).unwrap());

        let results: Vec<(&str, u64)> = log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let line = &r["locations"][0]["physicalLocation"]["region"]["startLine"];
                (r["ruleId"].as_str().unwrap(), line.as_u64().unwrap())
            })
            .collect();
        assert_eq!(results, [("MUT-nocoverage", 1), ("MUT-survived", 2)]);
    }

    #[test]
    fn a_fingerprint_follows_the_line_s_text_not_its_number() {
        let document = |source: &str, line: usize| {
            json!({ "files": { "a.py": {
                "source": source,
                "mutants": [{
                    "id": "1", "mutatorName": "Literal", "replacement": "2", "status": "Survived",
                    "location": { "start": { "line": line, "column": 9 }, "end": { "line": line, "column": 10 } },
                }],
            } } })
        };
        let fingerprint = |document: Value| {
            let log = render(&serde_json::from_value(document).unwrap());
            log["runs"][0]["results"][0]["partialFingerprints"][FINGERPRINT].as_str().unwrap().to_string()
        };

        let before = fingerprint(document("def f():\n    x = 1\n", 2));
        let moved = fingerprint(document("import os\n\ndef f():\n        x = 1\n", 4));
        let other = fingerprint(document("def f():\n    y = 1\n", 2));

        assert_eq!(before, moved, "lines added above and a new indentation keep the alert");
        assert_ne!(before, other, "another line's text is another alert");
        assert_eq!(before.len(), 16);
    }

    #[test]
    fn identical_lines_of_a_file_have_distinct_fingerprints() {
        let mut fingerprints = Fingerprints::default();
        let first = fingerprints.next("MUT-survived", "a.py", "return None");
        let second = fingerprints.next("MUT-survived", "a.py", "  return None");
        assert_ne!(first, second);
        assert_ne!(first, Fingerprints::default().next("MUT-nocoverage", "a.py", "return None"));
        assert_eq!(first, Fingerprints::default().next("MUT-survived", "a.py", "return None"));
    }

    #[test]
    fn paths_become_relative_uris() {
        assert_eq!(uri("src/a b/ç.py"), "src/a%20b/%C3%A7.py");
        assert_eq!(uri("pkg/mod_1.py"), "pkg/mod_1.py");
    }
}
