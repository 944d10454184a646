//! `--junit FILE`: JUnit XML, a test case per mutant (a failure per survivor and per mutant no test runs) and per kill the change's test edits lose.

use std::fmt::Write;

use super::document::{Document, FileEntry, MutantEntry};
use crate::model::outcome::Status;

/// The report as a `<testsuites>` document: a suite per mutated file, and one for the kill-loss
/// audit when it lost kills.
pub fn render(document: &Document) -> String {
    // An interrupted check says so in every suite: the mutants missing from it did not run.
    let properties = match document.incomplete_note() {
        Some(note) => format!(
            "    <properties>\n      <property name=\"incomplete\" value=\"{}\"/>\n    </properties>\n",
            escape(&note)
        ),
        None => String::new(),
    };
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for (path, file) in &document.files {
        let suite = file_suite(path, file, &properties);
        tests += suite.tests;
        failures += suite.failures;
        errors += suite.errors;
        suites.push_str(&suite.xml);
    }
    if let Some(audit) = document.mutdelta.audit.as_ref().filter(|audit| !audit.lost_kills.is_empty()) {
        let mut cases = String::new();
        for lost in &audit.lost_kills {
            let at = format!("kill lost at {}:{}", lost.location.start.line, lost.location.start.column);
            let message = format!("kill lost: {}", lost.summary());
            let _ = write!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\">\n      <failure type=\"LostKill\" message=\"{}\">{}</failure>\n    </testcase>\n",
                escape(&lost.file),
                escape(&format!("{at}: {}", lost.description.as_deref().unwrap_or("mutant"))),
                escape(&message),
                escape_text(&lost.diff),
            );
        }
        let count = audit.lost_kills.len();
        tests += count;
        failures += count;
        let _ = write!(
            suites,
            "  <testsuite name=\"kill-loss audit\" tests=\"{count}\" failures=\"{count}\" errors=\"0\" skipped=\"0\">\n{properties}{cases}  </testsuite>\n"
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mutdelta\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{}\">\n{suites}</testsuites>\n",
        seconds(document.duration())
    )
}

struct Suite {
    xml: String,
    tests: usize,
    failures: usize,
    errors: usize,
}

fn file_suite(path: &str, file: &FileEntry, properties: &str) -> Suite {
    let (mut failures, mut errors, mut skipped, mut time) = (0, 0, 0, 0.0);
    let mut cases = String::new();
    for mutant in &file.mutants {
        let duration = mutant.duration.unwrap_or_default();
        time += duration;
        let name = format!(
            "mutant {} at {}:{}: {}",
            mutant.id,
            mutant.location.start.line,
            mutant.location.start.column,
            mutant.description()
        );
        let _ = write!(
            cases,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
            escape(path),
            escape(&name),
            seconds(duration)
        );
        match verdict(path, file, mutant) {
            None => cases.push_str("/>\n"),
            Some((element, message, body)) => {
                match element {
                    "failure" => failures += 1,
                    "error" => errors += 1,
                    _ => skipped += 1,
                }
                let _ = write!(
                    cases,
                    ">\n      <{element} type=\"{:?}\" message=\"{}\">{}</{element}>\n    </testcase>\n",
                    mutant.status,
                    escape(&message),
                    escape_text(&body)
                );
            }
        }
    }
    let tests = file.mutants.len();
    Suite {
        xml: format!(
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\" file=\"{}\">\n{properties}{cases}  </testsuite>\n",
            escape(path),
            seconds(time),
            escape(path),
        ),
        tests,
        failures,
        errors,
    }
}

/// The element a mutant's verdict becomes, its message and its text; None for a caught mutant
/// (Killed, Timeout), a passing test case.
fn verdict(path: &str, file: &FileEntry, mutant: &MutantEntry) -> Option<(&'static str, String, String)> {
    let reason = mutant.status_reason.as_deref().unwrap_or("");
    let diff = file.diff(path, mutant);
    match mutant.status {
        Status::Killed | Status::Timeout => None,
        Status::Survived => {
            let mut message = "Survived: no test failed with this mutant".to_string();
            if let Some(rule) = &mutant.likely_equivalent {
                let _ = write!(message, " (likely equivalent: {rule})");
            }
            if let Some(hint) = &mutant.hint {
                let _ = write!(message, "; hint: {hint}");
            }
            let tests: Vec<&str> = mutant.covered_by.iter().map(String::as_str).collect();
            Some(("failure", message, format!("{diff}ran under: {}\n", tests.join(", "))))
        }
        Status::NoCoverage => Some(("failure", "NoCoverage: no test runs this line".to_string(), diff)),
        Status::RuntimeError => Some(("error", format!("RuntimeError: the test run broke: {reason}"), diff)),
        // A mutant that does not build tests nothing: it is left out of the score, as skipped.
        Status::CompileError => Some((
            "skipped",
            format!("CompileError: the mutant does not compile, not counted: {reason}"),
            diff,
        )),
        Status::Ignored => Some(("skipped", format!("Ignored: {reason}"), String::new())),
    }
}

/// `12.345`: the schema's time pattern (no exponent, no grouping).
fn seconds(millis: f64) -> String {
    format!("{:.3}", millis / 1000.0)
}

/// Text for an element: as for an attribute, with line breaks and tabs written as they are.
fn escape_text(text: &str) -> String {
    escape(text).replace("&#10;", "\n").replace("&#9;", "\t")
}

/// Text for an attribute: markup escaped, line breaks kept, and the characters XML 1.0 cannot
/// hold replaced.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_characters_xml_cannot_hold_are_escaped() {
        assert_eq!(escape("a<b && c>\"d\"\n'e'"), "a&lt;b &amp;&amp; c&gt;&quot;d&quot;&#10;&apos;e&apos;");
        assert_eq!(escape("bell\u{7}"), "bell\u{FFFD}");
    }

    #[test]
    fn each_status_becomes_its_element() {
        let statuses =
            ["Killed", "Timeout", "Survived", "NoCoverage", "RuntimeError", "CompileError", "Ignored"];
        let mutants: Vec<serde_json::Value> = statuses
            .iter()
            .enumerate()
            .map(|(index, status)| {
                serde_json::json!({
                    "id": (index + 1).to_string(), "mutatorName": "Literal", "replacement": "2",
                    "description": "replace 1 with 2", "status": status, "statusReason": "why",
                    "location": { "start": { "line": 1, "column": 5 }, "end": { "line": 1, "column": 6 } },
                })
            })
            .collect();
        let document =
            serde_json::json!({ "files": { "a.py": { "source": "x = 1\n", "mutants": mutants } } });

        let xml = render(&serde_json::from_value(document).unwrap());

        let verdicts: Vec<&str> = xml
            .split("<testcase ")
            .skip(1)
            .map(|case| {
                let element =
                    ["failure", "error", "skipped"].into_iter().find(|e| case.contains(&format!("<{e} ")));
                element.unwrap_or("pass")
            })
            .collect();
        assert_eq!(verdicts, ["pass", "pass", "failure", "failure", "error", "skipped", "skipped"], "{xml}");
        assert!(xml.contains("tests=\"7\" failures=\"2\" errors=\"1\" skipped=\"2\""), "{xml}");
    }

    #[test]
    fn times_are_seconds_with_three_decimals() {
        assert_eq!(seconds(1234.5678), "1.235");
        assert_eq!(seconds(0.0), "0.000");
    }
}
