//! The terminal report: each mutant no test caught with its diff, then one summary line (the only user of `similar`).

use std::fmt::Write;

use similar::TextDiff;

use super::{AuditSummary, Gate, MutantResult, Report, Status, Summary};
use crate::audit::LostKill;

/// The whole report as the terminal shows it: the survivors, the kills the change loses, then
/// the survivors likely equivalent, apart from the others.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for note in &report.plan.notes {
        let _ = writeln!(out, "note: {note}");
    }
    if let Some(audit) = &report.audit {
        for note in &audit.all_notes() {
            let _ = writeln!(out, "note: {note}");
        }
    }
    let (likely_equivalent, others): (Vec<&MutantResult>, Vec<&MutantResult>) =
        report.results.iter().partition(|result| result.likely_equivalent().is_some());
    for result in others {
        render_result(&mut out, report, result);
    }
    if let Some(audit) = &report.audit {
        for lost in &audit.lost {
            render_lost(&mut out, lost);
        }
    }
    if !likely_equivalent.is_empty() {
        let _ = writeln!(
            out,
            "\nLikely equivalent (counted as survived; check by hand that the program really differs):"
        );
        for result in likely_equivalent {
            render_result(&mut out, report, result);
        }
    }
    if let Some(arid) = arid_note(report) {
        let _ = writeln!(out, "{arid}");
    }
    out.push_str(&summary(report));
    out
}

/// The summary lines alone: the mutation delta's, and the kill-loss audit's when it read
/// edited tests (what `--quiet` prints).
pub fn summary(report: &Report) -> String {
    summary_lines(&report.gate())
}

/// The summary lines of `gate`, from a report or read back from a JSON document.
pub fn summary_lines(gate: &Gate) -> String {
    let mut out = String::new();
    if !gate.audit_only {
        let _ = writeln!(out, "{}", delta_line(&gate.summary));
    }
    if let Some(audit) = gate.audit.as_ref().filter(|audit| gate.audit_only || !audit.edited.is_empty()) {
        let label = match gate.summary.shard {
            Some((shard, _)) => format!("kill-loss audit, shard {shard}"),
            None => "kill-loss audit".to_string(),
        };
        let _ = writeln!(out, "{label}: {}", audit_line(audit));
    }
    out
}

/// `[MUT-lost] pkg/invoice.py:14: replace * with / — killed by tests/t.py::test_total before
/// this change, survives after`, with the mutant's diff and what ran it after the change.
fn render_lost(out: &mut String, lost: &LostKill) {
    let after = match lost.after {
        Status::NoCoverage => "no test runs it after",
        _ => "survives after",
    };
    let _ = writeln!(
        out,
        "[MUT-lost] {}:{}: {} — killed by {} before this change, {after}",
        lost.path.display(),
        lost.mutant.line,
        lost.mutant.description,
        lost.killed_by.join(", "),
    );
    let path = lost.path.display().to_string();
    for line in unified_diff(&path, &lost.source, &lost.mutant.apply(&lost.source)).lines() {
        let _ = writeln!(out, "    {line}");
    }
    if !lost.ran_after.is_empty() {
        let _ = writeln!(out, "    ran after the change: {}", lost.ran_after.join(", "));
    }
}

/// `1 of 12 kills lost (2 edited tests; 30 mutants of the source they ran)`: the kill-loss
/// audit's line after its label.
fn audit_line(audit: &AuditSummary) -> String {
    if audit.edited.is_empty() {
        return "the change edits or deletes no test that existed before it".to_string();
    }
    format!(
        "{} of {} {} by the edited tests lost (edited or deleted: {}; {} {} of the source they ran)",
        audit.lost,
        audit.killed_before,
        plural(audit.killed_before, "kill", "kills"),
        crate::python::select::describe(&audit.edited),
        audit.tried,
        plural(audit.tried, "mutant", "mutants"),
    )
}

/// `note: 3 mutants on arid lines ignored (logging 2, print 1); --no-arid runs them`.
fn arid_note(report: &Report) -> Option<String> {
    let mut by_rule: Vec<(&str, usize)> = Vec::new();
    let arid = report.results.iter().filter(|r| r.outcome.status == Status::Ignored);
    for rule in arid.filter_map(|r| r.planned.mutant.arid) {
        match by_rule.iter_mut().find(|(name, _)| *name == rule.name) {
            Some((_, count)) => *count += 1,
            None => by_rule.push((rule.name, 1)),
        }
    }
    let total: usize = by_rule.iter().map(|(_, count)| count).sum();
    let rules: Vec<String> = by_rule.iter().map(|(name, count)| format!("{name} {count}")).collect();
    (total > 0).then(|| {
        format!(
            "note: {total} {} on arid lines ignored ({}); --no-arid runs them",
            plural(total, "mutant", "mutants"),
            rules.join(", ")
        )
    })
}

fn render_result(out: &mut String, report: &Report, result: &MutantResult) {
    let file = &report.plan.files[result.planned.file];
    let mutant = &result.planned.mutant;
    let place = format!("{}:{}", file.path.display(), mutant.line);
    let what = &mutant.description;
    match result.outcome.status {
        Status::Killed | Status::Ignored => return,
        Status::Survived => match result.likely_equivalent() {
            Some(rule) => {
                let _ = writeln!(out, "[MUT-survived] {place}: {what} (likely equivalent: {})", rule.name);
            }
            None => {
                let _ = writeln!(out, "[MUT-survived] {place}: {what}");
            }
        },
        Status::NoCoverage => {
            let _ = writeln!(out, "[MUT-nocoverage] {place}: {what}: no relevant test runs this line");
        }
        Status::Timeout => {
            let _ =
                writeln!(out, "[MUT-timeout] {place}: {what}: {}, counted as caught", result.outcome.reason);
            return;
        }
        Status::CompileError => {
            let _ = writeln!(
                out,
                "[MUT-unviable] {place}: {what}: does not compile, not counted ({})",
                result.outcome.reason
            );
            return;
        }
        Status::RuntimeError => {
            let _ =
                writeln!(out, "[MUT-error] {place}: {what}: the test run broke: {}", result.outcome.reason);
            return;
        }
    }
    let unified = unified_diff(&file.path.display().to_string(), &file.source, &mutant.apply(&file.source));
    for line in unified.lines() {
        let _ = writeln!(out, "    {line}");
    }
    if !result.outcome.killed_by.is_empty() || !result.outcome.covered_by.is_empty() {
        let _ = writeln!(out, "    ran under: {}", result.outcome.covered_by.join(", "));
    }
}

/// The mutant as a unified diff of `path`, one line of context.
pub fn unified_diff(path: &str, original: &str, mutated: &str) -> String {
    let diff = TextDiff::from_lines(original, mutated);
    diff.unified_diff().context_radius(1).header(&format!("a/{path}"), &format!("b/{path}")).to_string()
}

/// `mutation delta: 14 of 16 mutants caught on 9 new lines; 2 lines with survivors, 1 line no
/// test runs`.
pub fn summary_line(report: &Report) -> String {
    delta_line(&report.summary())
}

/// The mutation delta's line; a shard's says which shard and how much of the plan it holds.
fn delta_line(summary: &Summary) -> String {
    let label = match summary.shard {
        Some((shard, planned)) => {
            if summary.mutants == 0 && planned > 0 {
                return format!(
                    "mutation delta, shard {shard}: none of the plan's {planned} {} fall to this shard; nothing to test here",
                    plural(planned, "mutant", "mutants")
                );
            }
            format!("mutation delta, shard {shard} ({} of the plan's {planned} mutants)", summary.mutants)
        }
        None => "mutation delta".to_string(),
    };
    if summary.mutants == 0 {
        return format!("{label}: nothing to mutate: the change adds no executable Python or Rust lines");
    }
    let mut line = format!(
        "{label}: {} of {} mutants caught on {} new {}; {} {} with survivors",
        summary.caught,
        summary.scored,
        summary.lines,
        plural(summary.lines, "line", "lines"),
        summary.lines_with_survivors,
        plural(summary.lines_with_survivors, "line", "lines"),
    );
    if summary.lines_not_run > 0 {
        let _ = write!(
            line,
            ", {} {} no test runs",
            summary.lines_not_run,
            plural(summary.lines_not_run, "line", "lines")
        );
    }
    let mut uncounted = Vec::new();
    if summary.compile_errors > 0 {
        uncounted.push(format!("{} unviable", summary.compile_errors));
    }
    if summary.ignored > 0 {
        uncounted.push(format!("{} ignored", summary.ignored));
    }
    if summary.runtime_errors > 0 {
        uncounted.push(format!("{} broke the test run", summary.runtime_errors));
    }
    if !uncounted.is_empty() {
        let _ = write!(line, " ({} not counted)", uncounted.join(", "));
    }
    line
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}
