//! The terminal report: each mutant no test caught with its diff, then one summary line (the only user of `similar`).

use std::fmt::Write;

use similar::TextDiff;

use super::{MutantResult, Report, Status};
use crate::audit::{Audit, LostKill};

/// The whole report as the terminal shows it: the survivors, the kills the change loses, then
/// the survivors likely equivalent, apart from the others.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for note in &report.plan.notes {
        let _ = writeln!(out, "note: {note}");
    }
    if let Some(audit) = &report.audit {
        for note in &audit.notes {
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
    let mut out = String::new();
    if !report.audit_only {
        let _ = writeln!(out, "{}", summary_line(report));
    }
    if let Some(audit) = report.audit.as_ref().filter(|audit| report.audit_only || !audit.edited.is_empty()) {
        let _ = writeln!(out, "{}", audit_line(audit));
    }
    if let Some(line) = interrupted_line(report) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `interrupted: 12 of 40 mutants did not run; the verdicts above are those reached`.
pub fn interrupted_line(report: &Report) -> Option<String> {
    let incomplete = report.incomplete?;
    let not_run = report.not_run();
    let mut line = format!(
        "interrupted: {not_run} of {} {} did not run; the verdicts above are those reached",
        incomplete.planned,
        plural(incomplete.planned, "mutant", "mutants")
    );
    if incomplete.audit_cut_off {
        line.push_str("; the kill-loss audit did not finish");
    }
    Some(line)
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

/// `kill-loss audit: 1 of 12 kills lost (2 edited tests; 30 mutants of the source they ran)`.
pub fn audit_line(audit: &Audit) -> String {
    if audit.edited.is_empty() {
        return "kill-loss audit: the change edits or deletes no test that existed before it".to_string();
    }
    format!(
        "kill-loss audit: {} of {} {} by the edited tests lost (edited or deleted: {}; {} {} of the source they ran)",
        audit.lost.len(),
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
    if report.results.is_empty() && report.incomplete.is_none() {
        return "mutation delta: nothing to mutate: the change adds no executable Python or Rust lines"
            .to_string();
    }
    let summary = report.summary();
    let mut line = format!(
        "mutation delta: {} of {} mutants caught on {} new {}; {} {} with survivors",
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
