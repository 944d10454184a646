//! The words users read, kept as snapshots (insta): the terminal report, the Markdown summary and
//! `show` of a real check, so that a change of wording is reviewed, not accidental.

use std::path::Path;

use crate::common::{check, fixture_repo, mutdelta, read_report};

/// The model client's tests, whose order in a list varies from run to run.
const TESTS: [&str; 2] = [
    "tests/test_model_client.py::ParseReplyTest::test_text_is_kept",
    "tests/test_model_client.py::ParseReplyTest::test_cut_off_reply",
];

/// `text` with what differs from run to run written as a placeholder: the repository's, the
/// report's and the run's temporary directories, the interpreter, the tests' names (whose
/// order varies), `PATH`, and every duration.
fn steady(text: &str, repo: &Path, out: &Path) -> String {
    let python = crate::common::python();
    let text = text
        .replace(env!("CARGO_BIN_EXE_mutdelta"), "[mutdelta]")
        .replace(&out.display().to_string(), "[out]")
        .replace(&repo.display().to_string(), "[repo]")
        .replace(&python.display().to_string(), "[python]");
    // The order the tests of a line ran in follows the durations measured as the check ran.
    let text = TESTS.iter().fold(text, |text, test| text.replace(test, "[test]"));
    let text = replace_spans(&text, "mutdelta-run-", |c| matches!(c, ' ' | '=' | ':'), |c| c == '/', "[run]");
    // Which worker's copy ran a mutant depends on which came free first.
    let text = numbered(&text, "[run]/copy-");
    let lines = text.split('\n').map(|line| {
        let words = line.split(' ').map(|word| if word.starts_with("PATH=") { "PATH=[path]" } else { word });
        words.collect::<Vec<_>>().join(" ")
    });
    without_durations(&lines.collect::<Vec<_>>().join("\n"))
}

/// `text` with the digits after each `marker` written as `[n]`.
fn numbered(text: &str, marker: &str) -> String {
    let mut parts = text.split(marker);
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        out.push_str(marker);
        out.push_str("[n]");
        out.push_str(part.trim_start_matches(|c: char| c.is_ascii_digit()));
    }
    out
}

/// `text` with each span around `marker`, from after the last character `opens` before it to
/// the first character `closes` after it, written as `placeholder`.
fn replace_spans(
    text: &str,
    marker: &str,
    opens: fn(char) -> bool,
    closes: fn(char) -> bool,
    placeholder: &str,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let start = rest[..at].rfind(opens).map_or(0, |open| open + 1);
        let after = at + marker.len();
        let end = rest[after..].find(closes).map_or(rest.len(), |close| after + close);
        out.push_str(&rest[..start]);
        out.push_str(placeholder);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every number followed by ` ms`, ` s`, `ms` or `s` (a duration) written as `[time]`.
fn without_durations(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let number_end = from.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(from.len());
        let after = &from[number_end..];
        let previous_is_word = before.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
        let unit = ["ms", " ms", "s", " s"]
            .into_iter()
            .filter(|unit| after.starts_with(unit))
            .find(|unit| !after[unit.len()..].starts_with(|c: char| c.is_alphanumeric()));
        match unit {
            Some(unit) if !previous_is_word => {
                out.push_str("[time]");
                rest = &after[unit.len()..];
            }
            _ => {
                out.push_str(&from[..number_end]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn durations_and_paths_are_steadied_and_nothing_else() {
    let (repo, out) = (Path::new("/work/r"), Path::new("/tmp/o"));
    assert_eq!(
        steady("in /work/r/a.py: 12 ms, 1.5 s, 3s; 2 mutants, test_2s, v1.2 at /tmp/o/x", repo, out),
        "in [repo]/a.py: [time], [time], [time]; 2 mutants, test_2s, v1.2 at [out]/x"
    );
    assert_eq!(
        steady("in /s/mutdelta-run-1-2-x/copy-1: PATH=/a:/b PYTHONPATH=/s/mutdelta-run-1-2-x/copy-1:/s/mutdelta-run-1-2-x/support", repo, out),
        "in [run]/copy-[n]: PATH=[path] PYTHONPATH=[run]/copy-[n]:[run]/support"
    );
}

#[test]
fn the_text_report_the_markdown_summary_and_show_read_as_their_snapshots() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let steady = |text: &str| steady(text, repo.path(), out.path());

    let text = check(
        repo.path(),
        &["--commit", "HEAD", "--no-cache", "--color", "never", "--json", json.to_str().unwrap()],
    );
    assert_eq!(text.code, 1, "{text:?}");
    insta::assert_snapshot!("text_report", steady(&text.stdout));

    let markdown = check(repo.path(), &["--commit", "HEAD", "--no-cache", "--format", "markdown"]);
    assert_eq!(markdown.code, 1, "{markdown:?}");
    insta::assert_snapshot!("markdown_summary", steady(&markdown.stdout));

    let report = read_report(&json);
    let mutants = report["files"]["model_client.py"]["mutants"].as_array().unwrap();
    // A survivor's: a kill's record may hold a second run, when the kill was made beside the rest
    // of the suite on a busy machine (`second_round`), which is tested apart.
    let survivor = mutants.iter().find(|m| m["status"] == "Survived").unwrap();
    let shown = mutdelta(repo.path(), &["show", json.to_str().unwrap(), survivor["id"].as_str().unwrap()]);
    assert_eq!(shown.code, 0, "{shown:?}");
    insta::assert_snapshot!("show_survived", steady(&shown.stdout));
}
