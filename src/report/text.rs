//! The terminal report: each mutant no test caught with its diff, then one summary line (the only user of `similar`).

use std::collections::BTreeSet;
use std::fmt::Write;

use mutators::catalog::Mutator;

use super::diff::unified_diff;
use crate::model::audit::LostKill;
use crate::model::outcome::{MutantResult, Status};
use crate::model::report::Report;
use crate::report::gate::{AuditSummary, Gate, Summary};

/// The whole report as the terminal shows it: the survivors, the kills the change loses, then
/// the survivors likely equivalent, apart from the others; each survivor with its diff and
/// the tests that ran it when `diffs`, else its header line alone (`--diff none`); last the
/// summary lines of `gate`, the report's counts.
pub fn render(report: &Report, gate: &Gate, diffs: bool) -> String {
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
    for line in most_telling_first(by_line(&others)) {
        render_line(&mut out, report, &line, diffs);
    }
    if let Some(audit) = &report.audit {
        for lost in &audit.lost {
            render_lost(&mut out, lost, diffs);
        }
    }
    if !likely_equivalent.is_empty() {
        let _ = writeln!(
            out,
            "\nLikely equivalent (counted as survived; check by hand that the program really differs):"
        );
        for line in by_line(&likely_equivalent) {
            render_line(&mut out, report, &line, diffs);
        }
    }
    if let Some(arid) = arid_note(report) {
        let _ = writeln!(out, "{arid}");
    }
    if let Some(equivalent) = equivalent_note(report) {
        let _ = writeln!(out, "{equivalent}");
    }
    for (test, known) in &report.flaky {
        let _ = writeln!(
            out,
            "note: flaky test {test}: {known}; its failures under a mutant count as kills only when they happen again in every run"
        );
    }
    out.push_str(&summary_lines(gate));
    out
}

/// Lines with survivors of more families first (each family that survives is another kind of
/// test missing), then more survivors; else in report order.
fn most_telling_first(mut lines: Vec<Vec<&MutantResult>>) -> Vec<Vec<&MutantResult>> {
    lines.sort_by_key(|line| {
        let survivors = line.iter().filter(|r| r.outcome.status == Status::Survived);
        let families: BTreeSet<Mutator> = survivors.clone().map(|r| r.planned.mutant.mutator()).collect();
        (std::cmp::Reverse(families.len()), std::cmp::Reverse(survivors.count()))
    });
    lines
}

/// Results split into runs of one added line each, in report order.
fn by_line<'a>(results: &[&'a MutantResult]) -> Vec<Vec<&'a MutantResult>> {
    let mut lines: Vec<Vec<&MutantResult>> = Vec::new();
    for &result in results {
        let key = (result.planned.file, result.planned.mutant.line);
        match lines.last_mut() {
            Some(line) if (line[0].planned.file, line[0].planned.mutant.line) == key => line.push(result),
            _ => lines.push(vec![result]),
        }
    }
    lines
}

/// The summary lines of `gate` alone (what `--quiet` prints): the mutation delta's, and the
/// kill-loss audit's when it read edited tests.
pub fn summary_lines(gate: &Gate) -> String {
    let mut out = String::new();
    if !gate.audit_only {
        let _ = writeln!(out, "{}", delta_line(&gate.summary, gate.incomplete.is_some(), &gate.languages));
    }
    if let Some(audit) = gate.audit.as_ref().filter(|audit| gate.audit_only || !audit.edited.is_empty()) {
        let label = match gate.summary.shard {
            Some((shard, _)) => format!("kill-loss audit, shard {shard}"),
            None => "kill-loss audit".to_string(),
        };
        let _ = writeln!(out, "{label}: {}", audit_line(audit));
    }
    if let Some(line) = interrupted_line(gate) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `interrupted: 12 of 40 mutants did not run; the verdicts above are those reached`.
fn interrupted_line(gate: &Gate) -> Option<String> {
    let incomplete = gate.incomplete?;
    let not_run = incomplete.not_run;
    let undecided = match incomplete.undecided {
        0 => String::new(),
        count => format!(
            " ({count} of them ran and survived the tests run so far, but had not yet faced the rest of the suite)"
        ),
    };
    let mut line = format!(
        "interrupted: {not_run} of {} {} did not run{undecided}; the verdicts above are those reached",
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
fn render_lost(out: &mut String, lost: &LostKill, diffs: bool) {
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
    if !diffs {
        return;
    }
    let path = lost.path.display().to_string();
    for line in unified_diff(&path, &lost.source, &lost.mutant.apply(&lost.source)).lines() {
        let _ = writeln!(out, "    {}", within_a_screen(line));
    }
    if !lost.ran_after.is_empty() {
        let _ = writeln!(out, "    ran after the change: {}", shortened(&lost.ran_after, TESTS_SHOWN, ", "));
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
        crate::words::describe_tests(&audit.edited),
        audit.tried,
        plural(audit.tried, "mutant", "mutants"),
    )
}

/// `note: 3 mutants on arid lines ignored (logging 2, print 1): no test failed with them;
/// --no-arid counts them` (their kills count as any other); those no test runs are told apart.
fn arid_note(report: &Report) -> Option<String> {
    let mut by_rule: Vec<(&str, usize)> = Vec::new();
    // Ignored for its arid rule, not for compiling to code already tested.
    let arid: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.outcome.status == Status::Ignored && r.outcome.reason.starts_with("arid line: "))
        .collect();
    for rule in arid.iter().filter_map(|r| r.planned.mutant.arid) {
        match by_rule.iter_mut().find(|(name, _)| *name == rule.name) {
            Some((_, count)) => *count += 1,
            None => by_rule.push((rule.name, 1)),
        }
    }
    let total: usize = by_rule.iter().map(|(_, count)| count).sum();
    let rules: Vec<String> = by_rule.iter().map(|(name, count)| format!("{name} {count}")).collect();
    let unrun = arid.iter().filter(|r| r.outcome.covered_by.is_empty()).count();
    let why = match (total - unrun, unrun) {
        (_, 0) => "no test failed with them".to_string(),
        (0, _) => "no test runs them".to_string(),
        (ran, unrun) => format!("{ran} survived the tests that ran them, {unrun} no test runs"),
    };
    (total > 0).then(|| {
        format!(
            "note: {total} {} on arid lines ignored ({}): {why}; --no-arid counts them",
            plural(total, "mutant", "mutants"),
            rules.join(", ")
        )
    })
}

/// `note: 2 mutants not run: they compile to the code the original (1) or another mutant (1)
/// compiles to`: equivalent whatever the tests, Ignored.
fn equivalent_note(report: &Report) -> Option<String> {
    let reasons = report.results.iter().filter(|r| r.outcome.status == Status::Ignored);
    let reasons: Vec<&str> = reasons.filter_map(|r| r.outcome.reason.strip_prefix("equivalent: ")).collect();
    let original = reasons.iter().filter(|reason| reason.contains("the original compiles to")).count();
    let other = reasons.len() - original;
    (!reasons.is_empty()).then(|| {
        format!(
            "note: {} {} not run: {} to the code the original ({original}) or another mutant ({other}) compiles to",
            reasons.len(),
            plural(reasons.len(), "mutant", "mutants"),
            plural(reasons.len(), "it compiles", "they compile"),
        )
    })
}

/// How many of the tests that ran a survivor are named before "and N more".
const TESTS_SHOWN: usize = 3;

/// The mutants of one added line together: each survivor, timeout or broken run with its
/// column and (for survivors) its diff, then the tests that ran the line, once when the
/// line's survivors share them; NoCoverage mutants as one line for the line.
fn render_line(out: &mut String, report: &Report, results: &[&MutantResult], diffs: bool) {
    let survivors: Vec<&MutantResult> =
        results.iter().copied().filter(|r| r.outcome.status == Status::Survived).collect();
    let shared = survivors.windows(2).all(|pair| pair[0].outcome.covered_by == pair[1].outcome.covered_by);
    for result in results {
        render_result(out, report, result, !shared, diffs);
    }
    let not_run: Vec<&MutantResult> =
        results.iter().copied().filter(|r| r.outcome.status == Status::NoCoverage).collect();
    if let Some(first) = not_run.first() {
        let file = &report.plan.files[first.planned.file];
        let mutants: Vec<String> = not_run
            .iter()
            .map(|r| format!("{} {}", column(&r.planned.mutant), r.planned.mutant.description))
            .collect();
        // Why no test runs it, where that is known (a feature left off names the feature).
        let why = Some(first.outcome.reason.as_str())
            .filter(|reason| reason.starts_with("no test reaches this line: "))
            .map_or_else(
                || "no test runs this line".to_string(),
                |reason| reason.replacen("reaches", "runs", 1),
            );
        let _ = writeln!(
            out,
            "[MUT-nocoverage] {}:{}: {why} ({} {}: {})",
            file.path.display(),
            first.planned.mutant.line,
            not_run.len(),
            plural(not_run.len(), "mutant", "mutants"),
            shortened(&mutants, TESTS_SHOWN, "; "),
        );
    }
    if let Some(first) = survivors.first().filter(|_| shared && diffs) {
        // After the last survivor's diff, said to be all of theirs.
        let whose = match survivors.len() {
            1 => String::new(),
            n => format!("the {n} survivors of line {} ", first.planned.mutant.line),
        };
        ran_under(out, &whose, &first.outcome.covered_by);
    }
}

/// `    ran under: a, b, c and 52 more` (the JSON report lists them all), after `whose`.
fn ran_under(out: &mut String, whose: &str, tests: &[String]) {
    if !tests.is_empty() {
        let _ = writeln!(out, "    {whose}ran under: {}", shortened(tests, TESTS_SHOWN, ", "));
    }
}

/// The first `shown` items, then how many more there are.
fn shortened(items: &[String], shown: usize, separator: &str) -> String {
    let mut text = items.iter().take(shown).cloned().collect::<Vec<_>>().join(separator);
    if items.len() > shown {
        let _ = write!(text, " and {} more", items.len() - shown);
    }
    text
}

/// `15:9`: where on its line a mutant's edit starts.
fn column(mutant: &mutators::Mutant) -> String {
    if mutant.start.line == mutant.line {
        format!("{}:{}", mutant.line, mutant.start.column)
    } else {
        mutant.line.to_string()
    }
}

/// One mutant's header line, and when `diffs` a survivor's diff (with the tests that ran it
/// when `own_tests`: its line's survivors do not share them).
fn render_result(out: &mut String, report: &Report, result: &MutantResult, own_tests: bool, diffs: bool) {
    let file = &report.plan.files[result.planned.file];
    let mutant = &result.planned.mutant;
    let place = format!("{}:{}", file.path.display(), column(mutant));
    let what = &mutant.description;
    match result.outcome.status {
        Status::Killed | Status::Ignored | Status::NoCoverage => return,
        Status::Survived => match result.likely_equivalent() {
            Some(rule) => {
                let _ = writeln!(out, "[MUT-survived] {place}: {what} (likely equivalent: {})", rule.name);
            }
            None => {
                let _ = writeln!(out, "[MUT-survived] {place}: {what}");
            }
        },
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
    if !diffs {
        return;
    }
    if let Some(hint) = super::hint::hint(mutant).filter(|_| result.likely_equivalent().is_none()) {
        let _ = writeln!(out, "    hint: {hint}");
    }
    let unified = unified_diff(&file.path.display().to_string(), &file.source, &mutant.apply(&file.source));
    for line in unified.lines() {
        let _ = writeln!(out, "    {}", within_a_screen(line));
    }
    if own_tests {
        ran_under(out, "", &result.outcome.covered_by);
    }
}

/// The most characters of one diff line the terminal report shows.
const LONGEST_SHOWN: usize = 240;

/// A diff line as the terminal shows it: a line longer than `LONGEST_SHOWN` characters (a
/// minified file, a long literal) keeps its start and end, and says how much is left out; the
/// reports written to files keep it whole.
pub fn within_a_screen(line: &str) -> std::borrow::Cow<'_, str> {
    let count = line.chars().count();
    if count <= LONGEST_SHOWN {
        return line.into();
    }
    let (head, tail) = (LONGEST_SHOWN * 2 / 3, LONGEST_SHOWN / 3);
    let start: String = line.chars().take(head).collect();
    let end: String = line.chars().skip(count - tail).collect();
    format!("{start} … {} characters left out … {end}", count - head - tail).into()
}

/// The mutation delta's line; a shard's says which shard and how much of the plan it holds. An
/// interrupted check without verdicts is not one with nothing to mutate.
fn delta_line(summary: &Summary, interrupted: bool, languages: &[&str]) -> String {
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
    if summary.mutants == 0 && !interrupted {
        return format!("{label}: {}", extent(0, summary.lines, languages));
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

/// How many mutants a plan holds on how many added executable lines, in the words `list` and
/// `check` both use: `3 mutants on 2 added executable lines`, or `nothing to mutate: ...` when
/// the change adds no executable line.
pub fn extent(mutants: usize, lines: usize, languages: &[&str]) -> String {
    if lines == 0 {
        let of = if languages.is_empty() {
            String::new()
        } else {
            format!("{} ", crate::words::one_of(languages))
        };
        return format!("nothing to mutate: the change adds no executable {of}lines");
    }
    let extent = format!(
        "{mutants} {} on {lines} added executable {}",
        plural(mutants, "mutant", "mutants"),
        plural(lines, "line", "lines")
    );
    if mutants == 0 {
        // Lines such as a `...` body or `pass`: said, so that no one takes it for a fault.
        return format!("{extent} (no mutator applies to {})", plural(lines, "it", "them"));
    }
    extent
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_line_longer_than_a_screen_keeps_its_ends_and_counts_what_it_leaves_out() {
        assert_eq!(within_a_screen("-x = 1"), "-x = 1");
        let long = format!("+BIG = '{}'", "é".repeat(5_000_000));
        let shown = within_a_screen(&long);
        assert!(shown.starts_with("+BIG = 'éé") && shown.ends_with("éé'"), "{shown}");
        assert!(shown.contains(" … 4999769 characters left out … "), "{shown}");
        assert_eq!(shown.chars().count(), 240 + " … 4999769 characters left out … ".chars().count());
    }
    use crate::model::outcome::Outcome;
    use crate::model::plan::{FilePlan, Plan, PlannedMutant};

    const SOURCE: &str = "def total(a, b):\n    return a + b * 2\n\n\ndef unused(x):\n    return x - 1\n";

    /// A report of `SOURCE`'s mutants on lines 2 and 6, each with the status `status_of` gives
    /// and `tests` as the tests that ran it.
    fn report(status_of: impl Fn(usize, &mutators::Mutant) -> Status, tests: &[&str]) -> Report {
        let mutants = mutators::python::mutate(SOURCE, &[2, 6]).expect("mutants").mutants;
        let file = FilePlan {
            path: "calc.py".into(),
            language: crate::python::spec::LANGUAGE,
            source: SOURCE.to_string(),
            lines: vec![2, 6],
            statements: vec![2..=2, 6..=6],
            mutants: mutants.clone(),
        };
        let results = mutants
            .into_iter()
            .enumerate()
            .map(|(id, mutant)| {
                let mut outcome = Outcome::settled(status_of(id, &mutant), "");
                outcome.covered_by = tests.iter().map(|t| t.to_string()).collect();
                outcome.for_mutant(PlannedMutant { id, file: 0, mutant })
            })
            .collect();
        Report { plan: Plan { files: vec![file], ..Plan::default() }, results, ..Report::default() }
    }

    /// The terminal report of `report`, its summary counted from its document as a check counts it.
    fn rendered(report: &Report, diffs: bool) -> String {
        let gate = crate::report::gate::of(&crate::report::json::document(report));
        render(report, &gate, diffs)
    }

    #[test]
    fn survivors_of_one_line_show_their_columns_and_the_tests_that_ran_the_line_once() {
        let tests: Vec<String> = (1..=7).map(|n| format!("test_calc.py::test_{n}")).collect();
        let tests: Vec<&str> = tests.iter().map(String::as_str).collect();
        let report = report(|_, m| if m.line == 2 { Status::Survived } else { Status::Killed }, &tests);
        let text = rendered(&report, true);
        let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("[MUT-survived]")).collect();
        assert!(headers.len() >= 2, "{text}");
        assert!(headers.iter().any(|h| h.starts_with("[MUT-survived] calc.py:2:14: ")), "{text}");
        assert!(headers.iter().any(|h| h.starts_with("[MUT-survived] calc.py:2:18: ")), "{text}");
        let ran_under: Vec<&str> = text.lines().filter(|l| l.contains("ran under:")).collect();
        assert_eq!(
            ran_under,
            [format!(
                "    the {} survivors of line 2 ran under: test_calc.py::test_1, test_calc.py::test_2, test_calc.py::test_3 and 4 more",
                headers.len()
            )],
            "{text}"
        );
    }

    #[test]
    fn without_diffs_each_survivor_is_its_header_line_alone() {
        let tests = ["test_calc.py::test_1"];
        let report = report(|_, m| if m.line == 2 { Status::Survived } else { Status::Killed }, &tests);
        let full = rendered(&report, true);
        let compact = rendered(&report, false);
        let headers = |text: &str| -> Vec<String> {
            text.lines().filter(|l| l.starts_with("[MUT-")).map(str::to_string).collect()
        };
        assert!(!headers(&full).is_empty(), "{full}");
        assert_eq!(headers(&compact), headers(&full), "the same mutants, each on its line");
        assert!(full.contains("--- a/calc.py") && full.contains("ran under:"), "{full}");
        assert!(!compact.lines().any(|l| l.starts_with("    ")), "nothing under the headers: {compact}");
        assert_eq!(compact.lines().last(), full.lines().last(), "the same summary");
    }

    #[test]
    fn a_line_no_test_runs_is_one_line_without_a_diff() {
        let report = report(|_, m| if m.line == 6 { Status::NoCoverage } else { Status::Killed }, &[]);
        let text = rendered(&report, true);
        let not_run: Vec<&str> = text.lines().filter(|l| l.starts_with("[MUT-nocoverage]")).collect();
        assert_eq!(not_run.len(), 1, "{text}");
        assert!(not_run[0].starts_with("[MUT-nocoverage] calc.py:6: no test runs this line ("), "{text}");
        assert!(not_run[0].contains("; 6:14 replace - with +; "), "{text}");
        assert!(not_run[0].ends_with(" and 1 more)"), "{text}");
        assert!(!text.contains("--- a/calc.py"), "{text}");
    }

    #[test]
    fn survivors_of_one_line_with_different_tests_name_each_their_own() {
        let report = report(|_, m| if m.line == 2 { Status::Survived } else { Status::Killed }, &[]);
        let mut report = report;
        for (n, result) in report.results.iter_mut().enumerate() {
            result.outcome.covered_by = vec![format!("test_calc.py::test_{n}")];
        }
        let text = rendered(&report, true);
        let survivors = text.lines().filter(|l| l.starts_with("[MUT-survived]")).count();
        assert_eq!(text.lines().filter(|l| l.contains("ran under:")).count(), survivors, "{text}");
    }

    #[test]
    fn the_extent_of_a_plan_names_its_lines_also_without_mutants() {
        let two = ["Python", "Rust"];
        assert_eq!(extent(1, 1, &two), "1 mutant on 1 added executable line");
        assert_eq!(extent(0, 2, &two), "0 mutants on 2 added executable lines (no mutator applies to them)");
        assert_eq!(extent(0, 1, &two), "0 mutants on 1 added executable line (no mutator applies to it)");
        assert_eq!(
            extent(0, 0, &two),
            "nothing to mutate: the change adds no executable Python or Rust lines"
        );
        let summary = Summary { lines: 2, ..Summary::default() };
        assert_eq!(
            delta_line(&summary, false, &two),
            "mutation delta: 0 mutants on 2 added executable lines (no mutator applies to them)"
        );
        assert_eq!(
            delta_line(&Summary::default(), false, &two),
            "mutation delta: nothing to mutate: the change adds no executable Python or Rust lines"
        );
    }

    #[test]
    fn a_change_without_executable_lines_names_the_languages_looked_for() {
        assert_eq!(
            extent(0, 0, &["Python"]),
            "nothing to mutate: the change adds no executable Python lines"
        );
        assert_eq!(
            extent(0, 0, &["Python", "Rust", "Toy"]),
            "nothing to mutate: the change adds no executable Python, Rust or Toy lines"
        );
        assert_eq!(extent(0, 0, &[]), "nothing to mutate: the change adds no executable lines");
    }
}
