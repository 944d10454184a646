//! `--format markdown`: the verdict, the counts and each line no test checks, with its mutants, the tests that ran it and the survivors' diffs folded, for a job summary or a pull-request comment; every text taken from the repository escaped.

use std::fmt::Write;

use super::document::{Document, MissedLine};
use super::text;
use crate::report::gate::Gate;
use crate::words::{count_of, some_tests};

/// Survivors shown with their diffs; the rest are in the table and the JSON report.
const DIFFS_SHOWN: usize = 30;

/// The summary of the check `gate` counts, rendered from its `document`.
pub fn render(document: &Document, gate: &Gate) -> String {
    let mut out = String::new();
    let verdict = if gate.fails() { "fails" } else { "passes" };
    let _ = writeln!(out, "## mutdelta: the check {verdict}\n");
    if let Some(note) = document.incomplete_note() {
        let _ = writeln!(out, "**{}**\n", inline(&note));
    }
    for line in text::summary_lines(gate).lines() {
        let _ = writeln!(out, "{}  ", inline(line));
    }
    let summary = &gate.summary;
    if !gate.audit_only {
        let _ = writeln!(out, "\n| mutants caught | lines with survivors | lines no test runs |");
        let _ = writeln!(out, "| --- | --- | --- |");
        let _ = writeln!(
            out,
            "| {} of {} | {} of {} | {} of {} |",
            summary.caught,
            summary.scored,
            summary.lines_with_survivors,
            summary.lines,
            summary.lines_not_run,
            summary.lines
        );
    }
    let lines = document.worst_lines();
    if !lines.is_empty() {
        let _ = writeln!(out, "\n### Lines no test checks\n");
        let _ = writeln!(out, "| line | mutants | ran under |");
        let _ = writeln!(out, "| --- | --- | --- |");
        for line in &lines {
            let _ = writeln!(out, "{}", row(line));
        }
    }
    if let Some(audit) = document.mutdelta.audit.as_ref().filter(|audit| !audit.lost_kills.is_empty()) {
        let _ = writeln!(out, "\n### Kills the edited tests lose\n");
        let _ = writeln!(out, "| line | lost kill |");
        let _ = writeln!(out, "| --- | --- |");
        for lost in &audit.lost_kills {
            let place = format!("{}:{}", lost.file, lost.location.start.line);
            let _ = writeln!(out, "| {} | {} |", code(&place), inline(&lost.summary()));
        }
    }
    let survivors: Vec<_> = document
        .mutants()
        .filter(|(_, mutant)| mutant.status == crate::model::outcome::Status::Survived)
        .collect();
    if !survivors.is_empty() {
        let _ = writeln!(out, "\n### Survivors\n");
    }
    for (path, mutant) in survivors.iter().take(DIFFS_SHOWN) {
        let place = format!("{path}:{}:{}", mutant.line(), mutant.location.start.column);
        let _ = writeln!(
            out,
            "<details><summary>mutant {} at {}: {}</summary>\n",
            html(&mutant.id),
            html(&place),
            html(mutant.description())
        );
        let diff = document.files[*path].diff(path, mutant);
        let fence = "`".repeat(longest_run(&diff, '`').max(2) + 1);
        let _ = writeln!(out, "{fence}diff\n{}{fence}\n\n</details>\n", with_newline(&diff));
    }
    if survivors.len() > DIFFS_SHOWN {
        let _ = writeln!(
            out,
            "{} more not shown here: `mutdelta show REPORT ID` prints any mutant of the JSON report.",
            count_of(survivors.len() - DIFFS_SHOWN, "survivor", "survivors")
        );
    }
    out
}

/// One row of the lines table: where, the mutants no test caught, the tests that ran them.
fn row(line: &MissedLine) -> String {
    let place = format!("{}:{}", line.path, line.line);
    let mutants: Vec<String> = line
        .reported()
        .iter()
        .map(|m| {
            let hint = m.hint.as_deref().map(|hint| format!(" (hint: {})", inline(hint))).unwrap_or_default();
            format!(
                "mutant {} at column {}: {}{hint}",
                m.id,
                m.location.start.column,
                inline(m.description())
            )
        })
        .collect();
    let verdict = if line.survived.is_empty() {
        format!("{} no test runs", count_of(line.not_run.len(), "mutant", "mutants"))
    } else {
        format!("{} survived", count_of(line.survived.len(), "mutant", "mutants"))
    };
    let tests: Vec<String> = line.covered_by().iter().map(|test| code(test)).collect();
    let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
    let ran_under = if tests.is_empty() { "no test".to_string() } else { some_tests(&tests, 3) };
    format!("| {} | {verdict}: {} | {ran_under} |", code(&place), mutants.join("<br>"))
}

/// Text in a paragraph or a table cell, read as text: HTML's specials as entities, Markdown's
/// punctuation backslash-escaped (the pipe too, which would end a cell), line breaks as spaces.
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '.' | '!'
            | '|' | '~' | ':' | '@' | '"' | '\'' | '=' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A code span in a table cell: fenced by more backticks than any run inside it, padded so that
/// a backtick at either end stays inside; the pipe escaped as a table cell needs (the table reads
/// `\|` before the span does); line breaks as spaces.
pub fn code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    let fence = "`".repeat(longest_run(&text, '`') + 1);
    format!("{fence} {text} {fence}")
}

/// Text inside an HTML element (the `<summary>` of a folded diff), where Markdown is not read.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace(['\n', '\r'], " ")
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|other| other != c).map(str::len).max().unwrap_or(0)
}

fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_text_cannot_open_markup_or_end_a_cell() {
        assert_eq!(inline("a|b <script>x</script>"), "a\\|b &lt;script&gt;x&lt;/script&gt;");
        assert_eq!(inline("*x* `y`\n# z"), "\\*x\\* \\`y\\` \\# z");
        assert_eq!(inline("@someone [l](u)"), "\\@someone \\[l\\]\\(u\\)");
    }

    #[test]
    fn a_code_span_is_fenced_past_every_backtick_run_inside_it() {
        assert_eq!(code("a"), "` a `");
        assert_eq!(code("x``y`"), "``` x``y` ```");
        assert_eq!(code("a|b\nc"), "` a\\|b c `");
    }

    #[test]
    fn html_text_has_no_tags() {
        assert_eq!(
            html("</summary><b>\"x\"</b>\n&"),
            "&lt;/summary&gt;&lt;b&gt;&quot;x&quot;&lt;/b&gt; &amp;"
        );
    }
}
