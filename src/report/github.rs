//! `--format github`: a GitHub Actions annotation (workflow command) per line with survivors, per line no test runs, and per kill the change's test edits lose.

use std::fmt::Write;

use super::document::{Document, MissedLine};
use crate::words::{count_of, some_tests};

/// One `::error …::…` line per annotated line of the report.
pub fn render(document: &Document) -> String {
    let mut out = String::new();
    if let Some(note) = document.incomplete_note() {
        let _ = writeln!(
            out,
            "::warning title={}::{}",
            escape_property("mutdelta: incomplete"),
            escape_data(&note)
        );
    }
    // Worst first: GitHub shows the first few annotations of a step.
    for line in document.worst_lines() {
        let _ = writeln!(out, "{}", missed(&line));
    }
    if let Some(audit) = &document.mutdelta.audit {
        for lost in &audit.lost_kills {
            let message = lost.summary();
            let _ = writeln!(
                out,
                "{}",
                command(
                    &lost.file,
                    lost.location.start.line,
                    lost.location.start.column,
                    "mutdelta: kill lost",
                    &message
                )
            );
        }
    }
    out
}

fn missed(line: &MissedLine) -> String {
    let (title, mut message) = if line.survived.is_empty() {
        (
            "mutdelta: no test runs this line".to_string(),
            format!(
                "{} not tested: no test runs this line",
                count_of(line.not_run.len(), "mutant", "mutants")
            ),
        )
    } else {
        let equivalent = line.survived.iter().all(|m| m.likely_equivalent.is_some());
        let title = format!(
            "mutdelta: {} survived{}",
            count_of(line.survived.len(), "mutant", "mutants"),
            if equivalent { " (likely equivalent)" } else { "" }
        );
        (title, "no test failed with the line changed:".to_string())
    };
    for mutant in line.reported() {
        let _ = write!(
            message,
            "\n  mutant {} at column {}: {}",
            mutant.id,
            mutant.location.start.column,
            mutant.description()
        );
        if let Some(hint) = &mutant.hint {
            let _ = write!(message, "\n    hint: {hint}");
        }
    }
    let tests = line.covered_by();
    if !tests.is_empty() {
        let _ = write!(message, "\nran under: {}", some_tests(&tests, 3));
    }
    command(line.path, line.line, line.column(), &title, &message)
}

/// `::error file=…,line=…,col=…,title=…::message`, escaped as GitHub's toolkit escapes them.
fn command(file: &str, line: usize, column: usize, title: &str, message: &str) -> String {
    format!(
        "::error file={},line={line},col={column},title={}::{}",
        escape_property(file),
        escape_property(title),
        escape_data(message)
    )
}

/// A command's message: `%`, carriage return and line feed are percent-encoded.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A command's property value: as its message, and `:` and `,` too, which end a property.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped_as_the_toolkit_escapes_them() {
        assert_eq!(escape_data("50% a:b,c\r\nnext"), "50%25 a:b,c%0D%0Anext");
        assert_eq!(escape_property("50% a:b,c\r\nnext"), "50%25 a%3Ab%2Cc%0D%0Anext");
        assert_eq!(
            command("dir,x/a:b.py", 3, 5, "t: 1", "m"),
            "::error file=dir%2Cx/a%3Ab.py,line=3,col=5,title=t%3A 1::m"
        );
    }
}
