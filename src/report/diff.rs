//! A mutant shown as a unified diff of its file, one line of context: what the terminal report, the JSON report's lost kills, `show` and the run record print.

use similar::TextDiff;

/// The mutant as a unified diff of `path`, one line of context.
pub fn unified_diff(path: &str, original: &str, mutated: &str) -> String {
    let diff = TextDiff::from_lines(original, mutated);
    diff.unified_diff().context_radius(1).header(&format!("a/{path}"), &format!("b/{path}")).to_string()
}
