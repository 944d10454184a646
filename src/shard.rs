//! `--shard K/N`: which share of a plan's mutants one job of a CI matrix tests, computed from the plan alone so every job agrees without talking to the others.

use crate::model::plan::{Language, Plan, Shard, Share};

/// What a mutant is expected to cost, in units of a Python mutant's run (its language's
/// `mutant_cost`). Ignored mutants run nothing. Per-shard costs (the baseline of each language a
/// shard holds, its workers' start, the audit's coverage run) are left out: when a change's
/// mutants are of one language, the common case, every shard pays them alike. Keeping a file's
/// mutants together would save nothing: each mutant writes, builds or swaps its file alone.
fn cost(language: Language, ignored: bool) -> u64 {
    if ignored {
        0
    } else {
        language.mutant_cost
    }
}

/// Restricts `plan` to the mutants of `shard`.
pub fn restrict(plan: &mut Plan, shard: Shard) {
    let mutants = plan.all_mutants();
    let items: Vec<u64> =
        mutants.iter().map(|m| cost(plan.files[m.file].language, m.mutant.ignored.is_some())).collect();
    let owners = split(&items, shard.count);
    let ids =
        mutants.iter().zip(owners).filter(|(_, owner)| *owner == shard.index).map(|(m, _)| m.id).collect();
    plan.share = Some(Share { shard, ids, planned: plan.mutant_count() });
}

/// The shard of each item, given the items' costs: the most costly first (ties in item order),
/// each to the shard with the least cost so far (then the fewest items, then the lowest index).
/// Greedy longest-first keeps every shard within one item's cost of the others. Items that cost
/// nothing take turns, in item order, so they spread evenly too.
pub fn split(costs: &[u64], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..costs.len()).filter(|&item| costs[item] > 0).collect();
    order.sort_by_key(|&item| (std::cmp::Reverse(costs[item]), item));
    let mut loads = vec![(0u64, 0usize); count];
    let mut owners = vec![0; costs.len()];
    for item in order {
        let (shard, _) =
            loads.iter().enumerate().min_by_key(|(index, load)| (**load, *index)).expect("count >= 1");
        loads[shard].0 += costs[item];
        loads[shard].1 += 1;
        owners[item] = shard;
    }
    for (turn, item) in (0..costs.len()).filter(|&item| costs[item] == 0).enumerate() {
        owners[item] = turn % count;
    }
    owners
}

/// A digest of everything the split and the verdicts depend on: the files (path, language,
/// source, added lines), every mutant, the relevant tests and mutdelta's version. Shards agree
/// on it exactly when they planned the same run.
pub fn digest(plan: &Plan, tests: &[String]) -> String {
    let mut parts: Vec<Vec<u8>> = vec![env!("CARGO_PKG_VERSION").into()];
    for file in &plan.files {
        let lines: Vec<String> = file.lines.iter().map(usize::to_string).collect();
        parts.push(file.path.display().to_string().into());
        parts.push(file.language.name.into());
        parts.push(file.source.clone().into());
        parts.push(lines.join(",").into());
    }
    for planned in plan.all_mutants() {
        let m = &planned.mutant;
        parts.push(
            format!(
                "{} {} {}:{}-{}:{} {} {:?} {:?} {:?} {:?}",
                planned.id,
                planned.file,
                m.start.line,
                m.start.column,
                m.end.line,
                m.end.column,
                m.mutator().name(),
                m.replacement,
                m.description,
                m.ignored,
                m.arid.map(|rule| rule.name)
            )
            .into(),
        );
    }
    parts.extend(tests.iter().map(|test| test.clone().into_bytes()));
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    crate::cache::key(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn shard_arguments_are_k_of_n_counted_from_zero() {
        assert_eq!(Shard::parse("0/1").unwrap(), Shard { index: 0, count: 1 });
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });
        for (bad, says) in [
            ("3/3", "shards are numbered from 0, so the last of 3 is 2/3"),
            ("a/2", "not two whole numbers"),
            ("1/0", "splits into zero shards"),
            ("-1/2", "not two whole numbers"),
            ("1", "not of the form K/N"),
            ("1/2/3", "not two whole numbers"),
        ] {
            let err = Shard::parse(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
            assert!(err.starts_with(&format!("--shard {bad} ")), "{err}");
        }
    }

    fn loads(costs: &[u64], owners: &[usize], count: usize) -> Vec<(u64, usize)> {
        let mut loads = vec![(0, 0); count];
        for (cost, owner) in costs.iter().zip(owners) {
            loads[*owner].0 += cost;
            loads[*owner].1 += 1;
        }
        loads
    }

    #[test]
    fn every_item_goes_to_exactly_one_shard_and_the_shards_are_within_one_item_of_each_other() {
        // Python mutants (1), Rust mutants (20) and ignored ones (0), interleaved as plans are.
        let costs: Vec<u64> = (0..97u64).map(|i| [1, 1, 0, 20, 1, 0, 1][i as usize % 7]).collect();
        let total: u64 = costs.iter().sum();
        for count in 1..=8 {
            let owners = split(&costs, count);
            assert_eq!(owners.len(), costs.len(), "one owner per item");
            assert!(owners.iter().all(|&owner| owner < count));
            let loads = loads(&costs, &owners, count);
            assert_eq!(
                loads.iter().map(|(cost, _)| cost).sum::<u64>(),
                total,
                "nothing lost or counted twice"
            );
            let (most, least) =
                (loads.iter().map(|l| l.0).max().unwrap(), loads.iter().map(|l| l.0).min().unwrap());
            assert!(
                most - least <= 20,
                "{count} shards: costs {loads:?} differ by more than one Rust mutant"
            );
            let ignored: Vec<usize> =
                (0..costs.len()).filter(|&i| costs[i] == 0).fold(vec![0; count], |mut per, i| {
                    per[owners[i]] += 1;
                    per
                });
            let spread = ignored.iter().max().unwrap() - ignored.iter().min().unwrap();
            assert!(spread <= 1 || count == 1, "{count} shards: ignored mutants {ignored:?} bunch up");
        }
    }

    #[test]
    fn the_split_depends_on_the_costs_alone() {
        let costs = [1, 20, 1, 1, 0, 20, 1, 1, 1, 0, 1];
        assert_eq!(split(&costs, 3), split(&costs, 3));
        assert_eq!(split(&costs, 3), [2, 0, 2, 2, 0, 1, 2, 2, 2, 1, 2]);
    }

    /// A plan of one Python and one Rust file, every line added, arid mutants marked, a
    /// pragma's Ignored.
    fn plan() -> Plan {
        let python = "import logging\n\ndef fee(kg):\n    logging.info('fee')\n    if kg > 10:\n        return kg * 2 + 1  # mutdelta: skip priced elsewhere\n    return kg - 1\n";
        let rust = "pub fn fee(kg: u32) -> u32 {\n    if kg > 10 {\n        kg * 2 + 1\n    } else {\n        kg - 1\n    }\n}\n";
        let file = |path: &str, language: Language, source: &str| {
            let lines: Vec<usize> = (1..=source.lines().count()).collect();
            let found = (language.mutate)(source, &lines, false).unwrap();
            crate::model::plan::FilePlan {
                path: path.into(),
                language,
                source: source.into(),
                lines: found.executable_lines,
                statements: found.statements,
                mutants: crate::choose::apply(found.mutants, &crate::choose::Choice::default()),
            }
        };
        Plan {
            files: vec![
                file("fee.py", crate::python::spec::LANGUAGE, python),
                file("src/lib.rs", crate::cargo::spec::LANGUAGE, rust),
            ],
            ..Plan::default()
        }
    }

    #[test]
    fn shares_of_a_plan_partition_it_keep_its_numbers_and_balance_rust_against_python_mutants() {
        let whole = plan();
        let all: Vec<usize> = whole.mutants().iter().map(|m| m.id).collect();
        let rust = |m: &crate::model::plan::PlannedMutant| {
            whole.files[m.file].language == crate::cargo::spec::LANGUAGE
        };
        let rust_count = whole.mutants().iter().filter(|m| rust(m)).count();
        let ignored = whole.mutants().iter().filter(|m| m.mutant.ignored.is_some()).count();
        assert!(rust_count >= 6 && ignored >= 1 && all.len() > rust_count + ignored, "{all:?}");
        let count = 3;
        let mut seen = Vec::new();
        let mut per_shard = Vec::new();
        for index in 0..count {
            let mut plan = whole.clone();
            restrict(&mut plan, Shard { index, count });
            let share = plan.share.as_ref().unwrap();
            assert_eq!(share.planned, all.len());
            let mine = plan.mutants();
            assert_eq!(mine.iter().map(|m| m.id).collect::<BTreeSet<_>>(), share.ids);
            for m in &mine {
                let planned = whole.all_mutants().into_iter().find(|w| w.id == m.id).unwrap();
                assert_eq!(planned.mutant, m.mutant, "mutant {} keeps its number in a shard", m.id);
            }
            assert_eq!(plan.all_mutants().len(), all.len(), "the whole plan stays known");
            let paid = mine.iter().filter(|m| m.mutant.ignored.is_none());
            let (rust, python): (Vec<_>, Vec<_>) = paid.partition(|m| rust(m));
            per_shard.push((rust.len(), python.len()));
            seen.extend(mine.iter().map(|m| m.id));
        }
        seen.sort_unstable();
        assert_eq!(seen, all, "every mutant in exactly one shard");
        // (Rust, Python) mutants per shard: a Rust mutant weighs 20 Python ones, so the Python
        // mutants fill the shards with fewer Rust mutants rather than being dealt out evenly.
        let loads: Vec<usize> = per_shard.iter().map(|(rust, python)| 20 * rust + python).collect();
        assert!(loads.iter().max().unwrap() - loads.iter().min().unwrap() <= 20, "{per_shard:?}");
        for a in &per_shard {
            for b in &per_shard {
                assert!(a.0 <= b.0 || a.1 <= b.1, "more Rust mutants and more Python ones: {per_shard:?}");
            }
        }
        let rust: Vec<usize> = per_shard.iter().map(|(rust, _)| *rust).collect();
        assert!(rust.iter().max().unwrap() - rust.iter().min().unwrap() <= 1, "{per_shard:?}");
    }

    #[test]
    fn the_plan_digest_changes_with_the_mutants_and_the_tests_but_not_with_the_shard() {
        let whole = plan();
        let digest = digest(&whole, &[]);
        let mut sharded = whole.clone();
        restrict(&mut sharded, Shard { index: 1, count: 2 });
        assert_eq!(crate::shard::digest(&sharded, &[]), digest, "every shard computes the same digest");
        assert_ne!(crate::shard::digest(&whole, &["tests/test_fee.py".into()]), digest);
        let mut fewer = whole.clone();
        fewer.files[1].mutants.pop();
        assert_ne!(crate::shard::digest(&fewer, &[]), digest);
        let mut arid_run = whole.clone();
        for mutant in &mut arid_run.files[0].mutants {
            mutant.arid = None;
        }
        assert_ne!(crate::shard::digest(&arid_run, &[]), digest, "--no-arid plans another run");
    }

    #[test]
    fn more_shards_than_mutants_leaves_some_empty() {
        let owners = split(&[1, 1], 4);
        assert_eq!(owners, [0, 1]);
        assert_eq!(split(&[], 3), Vec::<usize>::new());
    }
}
