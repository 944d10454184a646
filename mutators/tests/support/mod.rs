//! Test helpers: JSON text for python3's stdin, running one python3 script, rendering a table row's mutants.
// Each test binary compiles this module and uses only some of it.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

/// `text` as a JSON string literal.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Runs `python3 -c script` with `input` on stdin; returns its stdout, panicking on failure.
pub fn run_python(script: &str, input: &str) -> String {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed to check that mutants compile");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("python3 runs");
    writer.join().expect("writer thread").expect("python3 reads its stdin");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "python3 failed: {}\n{stdout}", String::from_utf8_lossy(&output.stderr));
    stdout
}

/// Whether a table row named `family` shows what it is about: its first word is the mutator
/// family, arid rule or equivalence rule of one of its mutants ("ignored by pragma": one is
/// ignored).
pub fn shows_family(family: &str, mutants: &[mutators::Mutant]) -> bool {
    let word = family.split(' ').next().unwrap_or_default();
    mutants.iter().any(|m| {
        m.mutator().name() == word
            || (word == "ignored" && m.ignored.is_some())
            || m.arid.is_some_and(|rule| rule.name == word)
            || m.likely_equivalent.is_some_and(|rule| rule.name == word)
    })
}

/// Every marker of `markers` put on some mutant of `mutants`, by name; the names of those
/// no mutant carries.
pub fn unused_markers(
    markers: &'static [mutators::catalog::Marker],
    mutants: &[mutators::Mutant],
) -> Vec<&'static str> {
    let used: Vec<&str> = mutants
        .iter()
        .flat_map(|m| m.arid.into_iter().chain(m.likely_equivalent))
        .map(|rule| rule.name)
        .collect();
    markers.iter().filter(|marker| !used.contains(&marker.name)).map(|marker| marker.name).collect()
}

/// A table row's source and its mutants, as its snapshot shows them.
pub fn render_mutants(source: &str, mutants: &[mutators::Mutant]) -> String {
    let one_line = |text: &str| format!("{text:?}");
    let mut out = source.to_string();
    out.push_str("----\n");
    for m in mutants {
        let ignored = m.ignored.as_deref().map(|r| format!("  (ignored: {r})")).unwrap_or_default();
        let arid = m.arid.map(|rule| format!("  (arid: {})", rule.name)).unwrap_or_default();
        let equivalent = m
            .likely_equivalent
            .map(|rule| format!("  (likely equivalent: {})", rule.name))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}:{:<3} {} → {}  {}: {}{ignored}{arid}{equivalent}\n",
            m.start.line,
            m.start.column,
            one_line(&m.original),
            one_line(&m.replacement),
            m.mutator().name(),
            m.description
        ));
    }
    out
}
