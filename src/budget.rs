//! A bound on the mutants of one check (`--max-mutants`): a giant change is sampled, every line kept represented while the bound allows, the lines left out named.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mutators::Mutant;

use crate::choose::rank;
use crate::model::plan::{Plan, Sampled};

/// Keeps at most `max` of `plan`'s mutants when it has more: round after round, the best-ranked
/// mutant not yet kept of each line (ranked as `--one-per-line` ranks them, then in source
/// order), so that every line has one before any has two. When the lines outnumber `max`, one
/// mutant on each of `max` lines spread evenly over the change (in file and line order). The
/// lines left without a mutant leave the plan's executable lines: no verdict is claimed for
/// them, and `Sampled` names them. Deterministic: every shard of a check keeps the same.
pub fn sample(plan: &mut Plan, max: usize) -> Option<Sampled> {
    let planned = plan.mutant_count();
    if planned <= max {
        return None;
    }
    // Per line with mutants, in file and line order: its mutants' indexes, best first.
    let mut lines: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (file, file_plan) in plan.files.iter().enumerate() {
        let mut by_line: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (index, mutant) in file_plan.mutants.iter().enumerate() {
            by_line.entry(mutant.line).or_default().push(index);
        }
        for (line, mut indexes) in by_line {
            indexes.sort_by_key(|&index| (rank(&file_plan.mutants[index]), index));
            lines.push((file, line, indexes));
        }
    }
    let line_count = lines.len();
    let spread = line_count.min(max);
    let chosen: Vec<usize> = (0..spread).map(|turn| turn * line_count / spread).collect();
    let mut kept: Vec<Vec<usize>> = vec![Vec::new(); plan.files.len()];
    // The chosen lines hold more than `max` mutants in all (every line, when they are no more
    // than `max`): each round keeps the next best of each line, until `max` are kept.
    let mut left = max;
    'rounds: for round in 0.. {
        for &chosen_line in &chosen {
            let (file, _, indexes) = &lines[chosen_line];
            if let Some(&index) = indexes.get(round) {
                kept[*file].push(index);
                left -= 1;
                if left == 0 {
                    break 'rounds;
                }
            }
        }
    }
    let mut left_out: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
    for (index, (file, line, _)) in lines.iter().enumerate() {
        if chosen.binary_search(&index).is_err() {
            left_out.entry(plan.files[*file].path.clone()).or_default().push(*line);
        }
    }
    for (file_plan, mut keep) in plan.files.iter_mut().zip(kept) {
        keep.sort_unstable();
        let mutants: Vec<Mutant> = std::mem::take(&mut file_plan.mutants);
        file_plan.mutants = mutants
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.binary_search(i).is_ok())
            .map(|(_, m)| m)
            .collect();
        if let Some(gone) = left_out.get(&file_plan.path) {
            let statements = std::mem::take(&mut file_plan.statements);
            let pairs = file_plan
                .lines
                .drain(..)
                .zip(statements)
                .filter(|(line, _)| gone.binary_search(line).is_err());
            (file_plan.lines, file_plan.statements) = pairs.unzip();
        }
    }
    Some(Sampled { max, planned, lines: line_count, left_out })
}

/// The note on a sampled plan: what the bound kept and how.
pub fn note(sampled: &Sampled, kept: usize) -> String {
    let words = crate::words::count_of;
    let left_out: usize = sampled.left_out.values().map(Vec::len).sum();
    let how = if left_out == 0 {
        "every line kept at least one (the first as --one-per-line ranks them)".to_string()
    } else {
        format!(
            "one on each of {} spread evenly over the change; the {} left without one are listed in the report",
            words(sampled.lines - left_out, "line", "lines"),
            words(left_out, "line", "lines")
        )
    };
    format!(
        "the change has {} on {}, over the bound of {} (--max-mutants): {kept} kept, {how}; raise --max-mutants, or set it to 0 for no bound, to test more",
        words(sampled.planned, "mutant", "mutants"),
        words(sampled.lines, "line", "lines"),
        sampled.max
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::plan::FilePlan;

    /// A plan of one Python file whose `count` lines each add two numbers: several mutants a line.
    fn plan_of(count: usize) -> Plan {
        let source: String = (0..count).map(|n| format!("x{n} = a + {n}\n")).collect();
        let lines: Vec<usize> = (1..=count).collect();
        let found = mutators::python::mutate(&source, &lines).unwrap();
        let file = FilePlan {
            path: "gen.py".into(),
            language: crate::python::spec::LANGUAGE,
            source,
            lines: found.executable_lines,
            statements: found.statements,
            mutants: found.mutants,
        };
        Plan { files: vec![file], ..Plan::default() }
    }

    fn mutant_lines(plan: &Plan) -> Vec<usize> {
        plan.files[0].mutants.iter().map(|mutant| mutant.line).collect()
    }

    #[test]
    fn a_plan_within_the_bound_is_left_whole() {
        let mut plan = plan_of(3);
        let whole = mutant_lines(&plan);
        assert_eq!(sample(&mut plan, whole.len()), None);
        assert_eq!(mutant_lines(&plan), whole);
    }

    #[test]
    fn every_line_keeps_its_best_mutant_before_any_keeps_two() {
        let mut plan = plan_of(4);
        let all = plan.files[0].mutants.clone();
        assert!(all.len() > 6, "several mutants a line: {}", all.len());
        let sampled = sample(&mut plan, 6).unwrap();
        assert_eq!(
            (sampled.max, sampled.planned, sampled.lines, sampled.left_out.len()),
            (6, all.len(), 4, 0)
        );
        let kept = &plan.files[0].mutants;
        assert_eq!(kept.len(), 6);
        for line in 1..=4 {
            let best = all.iter().filter(|m| m.line == line).min_by_key(|m| rank(m)).unwrap();
            assert!(kept.contains(best), "line {line} keeps its best-ranked mutant");
        }
        assert_eq!(
            mutant_lines(&plan),
            [1, 1, 2, 2, 3, 4],
            "the second round reaches lines 1 and 2 first, in source order"
        );
        assert_eq!(plan.files[0].lines, [1, 2, 3, 4]);
    }

    #[test]
    fn the_best_ranked_mutant_is_kept_first_whatever_its_place_and_a_line_with_fewer_is_passed_in_later_rounds(
    ) {
        let mut plan = plan_of(3);
        // Line 1 keeps a single mutant; the others' deletions are ignored (a pragma), so their
        // best-ranked mutants come after them in source order.
        let mutants = std::mem::take(&mut plan.files[0].mutants);
        let first_of_line_1 = mutants.iter().position(|m| m.line == 1).unwrap();
        plan.files[0].mutants = mutants
            .into_iter()
            .enumerate()
            .filter(|(index, m)| m.line != 1 || *index == first_of_line_1)
            .map(|(_, mut m)| {
                if m.line != 1 && m.mutator() == mutators::catalog::Mutator::StatementDeletion {
                    m.ignored = Some("no mutate".to_string());
                }
                m
            })
            .collect();
        let all = plan.files[0].mutants.clone();
        let on = |line: usize| all.iter().filter(|m| m.line == line).count();
        assert!(on(1) == 1 && on(2) > 3 && on(3) > 3, "{all:?}");
        sample(&mut plan, 5).unwrap();
        let kept = &plan.files[0].mutants;
        assert_eq!(mutant_lines(&plan), [1, 2, 2, 3, 3], "line 1 has no second mutant to give");
        for line in [2, 3] {
            let best = all.iter().filter(|m| m.line == line).min_by_key(|m| rank(m)).unwrap();
            assert!(
                best.ignored.is_none() && kept.contains(best),
                "line {line} keeps its best-ranked mutant"
            );
            let ignored = all.iter().find(|m| m.line == line && m.ignored.is_some()).unwrap();
            assert!(!kept.contains(ignored), "an ignored mutant ranks last");
        }
    }

    #[test]
    fn with_more_lines_than_the_bound_one_mutant_each_on_lines_spread_evenly_and_the_rest_named() {
        let mut plan = plan_of(10);
        let sampled = sample(&mut plan, 3).unwrap();
        assert_eq!(mutant_lines(&plan), [1, 4, 7]);
        assert_eq!(plan.files[0].lines, [1, 4, 7], "the lines left out get no verdict");
        assert_eq!(plan.files[0].statements, [1..=1, 4..=4, 7..=7]);
        assert_eq!(sampled.left_out, BTreeMap::from([(PathBuf::from("gen.py"), vec![2, 3, 5, 6, 8, 9, 10])]));
        let note = note(&sampled, plan.mutant_count());
        assert!(
            note.contains("over the bound of 3 (--max-mutants): 3 kept, one on each of 3 lines spread evenly over the change; the 7 lines left without one are listed in the report"),
            "{note}"
        );
    }
}
