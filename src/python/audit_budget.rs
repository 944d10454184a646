//! Which of the kill-loss audit's mutants it tries within its budget: those on code the fewest other tests ran before the change (by the test-impact map), one per line first.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::check::PythonCheck;
use super::{coverage, impact, invalidate};
use crate::model::audit::Audit;
use crate::model::plan::Plan;
use crate::run::language::Context;

/// Per file and line of `plan`, how many recorded tests other than `edited` (pytest selectors)
/// ran its block at the state of `ctx.base`, by the test-impact map: a kill there is less
/// likely to be lost, since another test may make it. Empty without a map.
pub(super) fn others_running(
    side: &PythonCheck,
    ctx: &Context,
    plan: &Plan,
    edited: &[String],
) -> BTreeMap<(PathBuf, usize), usize> {
    let Some(store) = &side.memory.impact else { return BTreeMap::new() };
    let Ok(Some(map)) = store.chosen(&super::settings::PythonSettings::of(ctx.options).impact_map) else {
        return BTreeMap::new();
    };
    let Ok(now) = impact::now(&side.python, &side.support, ctx.base, &map) else { return BTreeMap::new() };
    let unedited: Vec<&impact::Entry> = map
        .tests
        .iter()
        .filter(|(id, _)| coverage::selection_runs(&[], edited, id))
        .map(|(_, e)| e)
        .collect();
    let mut out = BTreeMap::new();
    for file in &plan.files {
        let path = file.path.to_string_lossy().into_owned();
        let Some(blocks) = now.table.get(&path) else { continue };
        for &line in &file.lines {
            let block = (path.clone(), invalidate::block_of(blocks, line));
            let count = unedited.iter().filter(|entry| entry.reach.blocks.contains(&block)).count();
            out.insert((file.path.clone(), line), count);
        }
    }
    out
}

/// Keeps at most `budget` of the audit plan's mutants (`within_budget`, ordered by
/// `others_running`), counting and saying in `audit` what it left.
pub(super) fn keep_within(
    budget: usize,
    side: &PythonCheck,
    ctx: &Context,
    plan: &mut Plan,
    audit: &mut Audit,
) {
    let others = others_running(side, ctx, plan, &audit.edited);
    let planned = plan.mutant_count();
    audit.unaudited = within_budget(plan, budget, &others);
    if audit.unaudited > 0 {
        let order = if others.is_empty() {
            "one per line first"
        } else {
            "those on code the fewest other tests ran before the change first (by the test-impact map), one per line first"
        };
        audit.notes.push(format!(
            "the audit tried {} of the {planned} mutants of the source the edited tests ran ({order}); {} were not audited: --audit-full tries them all",
            planned - audit.unaudited,
            audit.unaudited
        ));
    }
}

/// Keeps in `plan` at most `budget` of its mutants that run (those an equivalence rule set
/// aside stay, they cost nothing): first those whose line the fewest other tests ran (`others`;
/// a line it does not know counts as none), and of those the first of each line before the
/// second. Returns how many it left out. Every shard makes the same choice.
pub(super) fn within_budget(
    plan: &mut Plan,
    budget: usize,
    others: &BTreeMap<(PathBuf, usize), usize>,
) -> usize {
    let mut running: Vec<(usize, usize, usize, usize)> = Vec::new(); // (others, rank, file, index)
    for (file_index, file) in plan.files.iter().enumerate() {
        let mut per_line: BTreeMap<usize, usize> = BTreeMap::new();
        for (index, mutant) in file.mutants.iter().enumerate() {
            if mutant.ignored.is_some() {
                continue;
            }
            let line = mutant.line;
            let rank = per_line.entry(line).or_default();
            let count = others.get(&(file.path.clone(), line)).copied().unwrap_or(0);
            running.push((count, *rank, file_index, index));
            *rank += 1;
        }
    }
    if running.len() <= budget {
        return 0;
    }
    running.sort();
    let left_out = running.len() - budget;
    let mut dropped: Vec<(usize, usize)> =
        running[budget..].iter().map(|&(_, _, file, index)| (file, index)).collect();
    dropped.sort_by(|a, b| b.cmp(a));
    for (file, index) in dropped {
        plan.files[file].mutants.remove(index);
    }
    left_out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::plan::FilePlan;

    fn plan() -> Plan {
        let source = "def fee(kg):\n    if kg > 10:\n        return kg * 2 + 1\n    return kg - 1\n";
        let found = mutators::python::mutate(source, &[2, 3, 4]).unwrap();
        let file = FilePlan {
            path: "pkg/fee.py".into(),
            language: crate::python::spec::LANGUAGE,
            source: source.into(),
            lines: found.executable_lines,
            statements: found.statements,
            mutants: found.mutants,
        };
        Plan { files: vec![file], ..Plan::default() }
    }

    fn lines(plan: &Plan) -> Vec<usize> {
        plan.files[0].mutants.iter().filter(|m| m.ignored.is_none()).map(|m| m.line).collect()
    }

    #[test]
    fn within_its_budget_the_audit_takes_the_lines_fewest_other_tests_ran_one_mutant_per_line_first() {
        let whole = plan();
        let per_line = |line| lines(&whole).iter().filter(|&&l| l == line).count();
        assert!(per_line(2) >= 2 && per_line(3) >= 2 && per_line(4) >= 2, "{:?}", lines(&whole));
        let running = lines(&whole).len();

        let others =
            BTreeMap::from([((PathBuf::from("pkg/fee.py"), 2), 5), ((PathBuf::from("pkg/fee.py"), 3), 1)]);
        let mut budgeted = plan();
        assert_eq!(within_budget(&mut budgeted, 4, &others), running - 4);
        // Line 4 (no other test) before line 3 (one) before line 2 (five).
        let kept = lines(&budgeted);
        let on = |line| kept.iter().filter(|&&l| l == line).count();
        assert_eq!((on(4), on(3), on(2)), (per_line(4).min(4), 4 - per_line(4).min(4), 0), "{kept:?}");

        for room in [running, running + 5] {
            let mut roomy = plan();
            assert_eq!(within_budget(&mut roomy, room, &others), 0);
            assert_eq!(lines(&roomy), lines(&whole));
        }
    }

    #[test]
    fn a_mutant_an_equivalence_rule_set_aside_stays_and_costs_nothing() {
        let mut budgeted = plan();
        let running = lines(&budgeted).len();
        budgeted.files[0].mutants[0].ignored = Some("equivalent".into());
        let first = budgeted.files[0].mutants[0].clone();
        assert_eq!(within_budget(&mut budgeted, running - 1, &BTreeMap::new()), 0);
        assert_eq!(budgeted.files[0].mutants.len(), running);
        assert_eq!(budgeted.files[0].mutants[0].description, first.description);
    }

    #[test]
    fn without_a_map_each_line_gives_one_mutant_before_any_gives_two() {
        let mut budgeted = plan();
        within_budget(&mut budgeted, 3, &BTreeMap::new());
        let mut kept = lines(&budgeted);
        kept.sort();
        assert_eq!(kept, [2, 3, 4]);
    }
}
