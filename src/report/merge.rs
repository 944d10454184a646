//! `mutdelta merge`: the reports of every shard of one split, read as typed documents, joined into the document an unsharded check writes, once their fields prove them to be exactly that split.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Result};

use super::document::{
    AuditSection, Document, FileEntry, Performance, PlanEntry, ShardEntry, ShardPlace, StepEntry,
};
use super::test_files::{shown, Defined, TestEntry, TestFile};

/// The shards' documents joined into one, each named (by its file) in errors.
///
/// The result has the shape of an unsharded report: every file once with all its mutants in
/// id order; `performance` summed over the shards (machine time spent), `mutdelta.duration`
/// the longest shard's (the matrix's wall time, its jobs running side by side); `config` and the `mutdelta` section from shard 0 (the shards agree on them, the plan
/// digest proves it), with each shard's steps (baselines, canaries) in `steps` marked with
/// `"shard"`, the shards' kill-loss audits joined (`join_audits`), and in `shards` each shard's
/// own scratch directory and `performance`; no `shard` and no top-level `scratch`.
pub fn merge_named(documents: Vec<(String, Document)>) -> Result<Document> {
    if documents.is_empty() {
        bail!("nothing to merge: give the --json report of every shard");
    }
    let shards: Vec<ShardReport> = documents
        .into_iter()
        .map(|(name, document)| ShardReport::read(name, document))
        .collect::<Result<_>>()?;
    let first = &shards[0];
    for other in &shards[1..] {
        first.same_run(other)?;
    }
    let (count, planned) = (first.count, first.plan.mutants as u64);
    let mut by_index: BTreeMap<usize, ShardReport> = BTreeMap::new();
    for shard in shards {
        if let Some(earlier) = by_index.get(&shard.index) {
            bail!(
                "{} and {} are both shard {}/{count}: give each shard's report once",
                earlier.name,
                shard.name,
                shard.index
            );
        }
        by_index.insert(shard.index, shard);
    }
    let missing: Vec<String> = (0..count)
        .filter(|index| !by_index.contains_key(index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    match missing.as_slice() {
        [] => {}
        [one] => bail!(
            "shard {one} is missing: give the --json report of every shard, 0/{count} to {}/{count}",
            count - 1
        ),
        many => bail!(
            "shards {} are missing: give the --json report of every shard, 0/{count} to {}/{count}",
            many.join(", "),
            count - 1
        ),
    }
    let ordered: Vec<ShardReport> = by_index.into_values().collect();
    check_mutants(&ordered, planned)?;
    let audit = join_audits(&ordered)?;
    let tests = join_test_files(&ordered)?;
    let mut merged = join(ordered);
    if tests.is_some() {
        merged.test_files = tests;
    }
    merged.mutdelta.audit = audit;
    Ok(merged)
}

/// The shards' kill-loss audits as one: each shard audited its share of one audit plan (the
/// same edited tests, the same digest), so the counts add up, the lost kills join, each note is
/// kept once and the notes that count kills are said for the sums.
fn join_audits(shards: &[ShardReport]) -> Result<Option<AuditSection>> {
    let audits: Vec<(&ShardReport, Option<&AuditSection>)> =
        shards.iter().map(|shard| (shard, shard.document.mutdelta.audit.as_ref())).collect();
    let present = audits.iter().filter(|(_, audit)| audit.is_some()).count();
    if present == 0 {
        return Ok(None);
    }
    if present < audits.len() {
        let without: Vec<&str> =
            audits.iter().filter(|(_, a)| a.is_none()).map(|(s, _)| s.name.as_str()).collect();
        bail!(
            "{} ran no kill-loss audit but other shards did: run every shard with the same options",
            without.join(", ")
        );
    }
    let audits: Vec<(&ShardReport, &AuditSection)> =
        audits.into_iter().filter_map(|(shard, audit)| Some((shard, audit?))).collect();
    let (first, reference) = audits[0];
    let (mut tried, mut killed, mut dropped, mut unconfirmed) = (0, 0, 0, 0);
    let (mut unaudited, mut duration) = (0, 0.0f64);
    let (mut lost, mut notes, mut steps) = (Vec::new(), Vec::new(), Vec::new());
    for (shard, audit) in &audits {
        if audit.edited_tests != reference.edited_tests || audit.plan != reference.plan {
            bail!(
                "the kill-loss audits of {} and {} mutated different code before the change (a test that runs other code on each run?): run `mutdelta audit-tests` on its own, or the shards with --no-audit",
                first.name,
                shard.name
            );
        }
        tried += audit.mutants;
        killed += audit.killed_before;
        dropped += audit.dropped;
        unconfirmed += audit.unconfirmed;
        // Every shard leaves out the same mutants of the whole audit; their audits ran side by side.
        unaudited = audit.unaudited;
        duration = duration.max(audit.duration);
        lost.extend(audit.lost_kills.iter().cloned());
        // The notes that count this shard's kills are said again below for the sums.
        let counted = crate::model::audit::count_notes(audit.dropped, audit.killed_before, audit.unconfirmed);
        for note in &audit.notes {
            if !counted.contains(note) && !notes.contains(note) {
                notes.push(note.clone());
            }
        }
        steps.extend(audit.steps.iter().map(|step| StepEntry { shard: Some(shard.index), ..step.clone() }));
    }
    lost.sort_by(|a, b| {
        (&a.file, a.location.start.line, a.location.start.column).cmp(&(
            &b.file,
            b.location.start.line,
            b.location.start.column,
        ))
    });
    notes.extend(crate::model::audit::count_notes(dropped, killed, unconfirmed));
    Ok(Some(AuditSection {
        edited_tests: reference.edited_tests.clone(),
        mutants: tried,
        killed_before: killed,
        lost_kills: lost,
        notes,
        dropped,
        unconfirmed,
        steps,
        plan: reference.plan.clone(),
        unaudited,
        duration,
    }))
}

/// The shards' `testFiles` as one: a test's id is its name, so the same id in two shards is the
/// same test, which must be filed alike; every shard's mutants name only tests its section
/// defines. None when no shard has the section (reports of earlier versions).
fn join_test_files(shards: &[ShardReport]) -> Result<Option<BTreeMap<String, TestFile>>> {
    let present = shards.iter().filter(|shard| shard.document.test_files.is_some()).count();
    if present == 0 {
        return Ok(None);
    }
    let mut placed: BTreeMap<String, (String, TestEntry, &str)> = BTreeMap::new();
    for shard in shards {
        let document = &shard.document;
        let Some(files) = &document.test_files else {
            bail!(
                "{} has no testFiles but other shards do: write every shard's report with the same version of mutdelta",
                shard.name
            );
        };
        let defined = Defined::read(files).map_err(|err| anyhow!("{}: {err}", shard.name))?;
        for (path, mutant) in document.mutants() {
            defined
                .check(path, &mutant.id, mutant.covered_by.iter().chain(&mutant.killed_by))
                .map_err(|err| anyhow!("{}: {err}", shard.name))?;
        }
        for (id, (file, test)) in defined.by_id {
            match placed.get(id) {
                Some((other_file, other, other_shard)) if (other_file.as_str(), other) != (file, test) => {
                    bail!(
                        "{other_shard} and {} file test {} differently: they are not shards of one run",
                        shard.name,
                        shown(id)
                    )
                }
                Some(_) => {}
                None => {
                    placed.insert(id.to_string(), (file.to_string(), test.clone(), shard.name.as_str()));
                }
            }
        }
    }
    let mut by_file: BTreeMap<String, TestFile> = BTreeMap::new();
    for (id, (file, test, _)) in placed {
        by_file.entry(file).or_default().tests.push(TestEntry { id, name: test.name });
    }
    Ok(Some(by_file))
}

/// A shard's document, named, with what it says about its place in the split.
struct ShardReport {
    name: String,
    document: Document,
    index: usize,
    count: usize,
    plan: PlanEntry,
}

impl ShardReport {
    /// `document` as shard `name` of a split: refused unless it says which shard of how many it
    /// is and what the whole run planned, and ran to its end.
    fn read(name: String, document: Document) -> Result<ShardReport> {
        let section = &document.mutdelta;
        let Some(ShardPlace { index, count }) = section.shard else {
            bail!("{name} is not a shard's report (it has no mutdelta.shard): write each shard's with `mutdelta check --shard K/N --json FILE`");
        };
        let Some(plan) = section.plan.clone() else {
            bail!("{name} does not say what was planned (mutdelta.plan): write it again with this version of mutdelta");
        };
        if let Some(incomplete) = &section.incomplete {
            bail!("{name} is the report of an interrupted shard ({} of its mutants did not run): run shard {index}/{count} again", incomplete.not_run);
        }
        if index >= count {
            bail!("{name} claims shard {index}/{count}, which no split has: write it again with `mutdelta check --shard K/N`");
        }
        Ok(ShardReport { name, document, index, count, plan })
    }

    /// The state it tested, as JSON writes it (`null` when the report does not say).
    fn state(&self) -> String {
        serde_json::to_string(&self.document.mutdelta.state).expect("a string is JSON")
    }

    /// Refuses `other` unless it is a shard of the same run as `self`.
    fn same_run(&self, other: &ShardReport) -> Result<()> {
        if other.document.mutdelta.state != self.document.mutdelta.state {
            bail!(
                "{} tested {} but {} tested {}: merge the shards of one run on one state",
                other.name,
                other.state(),
                self.name,
                self.state()
            );
        }
        if other.count != self.count {
            bail!(
                "{} is shard {}/{} but {} is shard {}/{}: merge the shards of one split",
                other.name,
                other.index,
                other.count,
                self.name,
                self.index,
                self.count
            );
        }
        if other.plan != self.plan {
            bail!(
                "{} planned other mutants than {} (another change, other options or another mutdelta version): merge the shards of one run",
                other.name,
                self.name
            );
        }
        Ok(())
    }
}

/// How many of the mutants no shard holds an error names.
const ABSENT_NAMED: usize = 10;

/// Every planned mutant in exactly one shard.
fn check_mutants(shards: &[ShardReport], planned: u64) -> Result<()> {
    let mut owner: BTreeMap<u64, &str> = BTreeMap::new();
    for shard in shards {
        for (path, mutant) in shard.document.mutants() {
            let id = mutant
                .id
                .parse::<u64>()
                .map_err(|_| anyhow!("{} has a mutant of {path} without a numeric id", shard.name))?;
            if id == 0 || id > planned {
                bail!("{} has mutant {id}, but the plan has mutants 1 to {planned}", shard.name);
            }
            if let Some(other) = owner.insert(id, &shard.name) {
                bail!(
                    "mutant {id} is in both {other} and {}: the shards overlap, so they are not one split",
                    shard.name
                );
            }
        }
    }
    // Every id is within the plan and held once, so the count tells how many are absent; a
    // plan's claimed size is never walked, only its first absent ids named.
    let absent = planned - owner.len() as u64;
    let named: Vec<String> = (1..=planned)
        .filter(|id| !owner.contains_key(id))
        .take(ABSENT_NAMED)
        .map(|id| id.to_string())
        .collect();
    match absent {
        0 => {}
        1 => bail!("mutant {} of the plan is in no shard's report: the reports are incomplete", named[0]),
        n if n as usize <= ABSENT_NAMED => bail!(
            "mutants {} of the plan are in no shard's report: the reports are incomplete",
            named.join(", ")
        ),
        n => bail!(
            "{n} mutants of the plan are in no shard's report, {} among them: the reports are incomplete",
            named.join(", ")
        ),
    }
    Ok(())
}

/// The document of an unsharded check, from the shards (in index order) of a proven split.
fn join(shards: Vec<ShardReport>) -> Document {
    let mut files: BTreeMap<String, FileEntry> = BTreeMap::new();
    let mut performance: Option<Performance> = None;
    let mut steps = Vec::new();
    let mut records = Vec::new();
    let mut duration: f64 = 0.0;
    let mut flaky = BTreeMap::new();
    let mut floor = Vec::new();
    let mut first = None;
    for ShardReport { index, mut document, .. } in shards {
        for (path, file) in std::mem::take(&mut document.files) {
            let entry = files.entry(path).or_insert_with(|| file.clone_empty());
            entry.mutants.extend(file.mutants);
        }
        if let Some(took) = document.performance {
            let sum = performance.get_or_insert_with(Performance::default);
            sum.setup += took.setup;
            sum.initial_run += took.initial_run;
            sum.mutation += took.mutation;
        }
        let section = &mut document.mutdelta;
        // Each shard says what it saw of a flaky test; the first to name it speaks for all.
        for (test, known) in std::mem::take(&mut section.flaky) {
            flaky.entry(test).or_insert(known);
        }
        // Every shard consulted the same map for the same tests: one floor stands for all.
        if floor.is_empty() {
            floor = std::mem::take(&mut section.floor);
        }
        steps.extend(
            std::mem::take(&mut section.steps)
                .into_iter()
                .map(|step| StepEntry { shard: Some(index), ..step }),
        );
        duration = duration.max(section.duration.unwrap_or(0.0));
        records.push(ShardEntry {
            index,
            scratch: section.scratch.clone(),
            performance: document.performance,
            duration: section.duration,
        });
        first.get_or_insert(document);
    }
    let mut merged = first.expect("a split has a shard");
    for file in files.values_mut() {
        file.mutants.sort_by_key(|m| m.id.parse::<u64>().ok());
    }
    merged.files = files;
    merged.performance = performance;
    let section = &mut merged.mutdelta;
    section.flaky = flaky;
    section.floor = floor;
    section.shard = None;
    section.scratch = None;
    section.audit = None;
    section.steps = steps;
    section.duration = Some(duration);
    section.shards = records;
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The shards' documents merged, each named by its place ("report 2") in errors.
    fn merge(documents: &[Value]) -> Result<Document> {
        let named = documents
            .iter()
            .enumerate()
            .map(|(i, document)| {
                (format!("report {}", i + 1), serde_json::from_value(document.clone()).unwrap())
            })
            .collect();
        merge_named(named)
    }

    /// A shard's document of a two-file plan of four mutants: `statuses` by id.
    fn shard(index: usize, count: usize, statuses: &[(u64, &str, &str)]) -> Value {
        let mut files = json!({
            "a.py": { "language": "python", "source": "x = 1\n", "mutants": [] },
            "b.py": { "language": "python", "source": "y = 2\n", "mutants": [] },
        });
        for (id, path, status) in statuses {
            let mutant = json!({
                "id": id.to_string(), "mutatorName": "NumberLiteral", "replacement": "0",
                "location": { "start": { "line": 1, "column": 5 }, "end": { "line": 1, "column": 6 } },
                "status": status,
            });
            files[path]["mutants"].as_array_mut().unwrap().push(mutant);
        }
        json!({
            "schemaVersion": "2",
            "files": files,
            "performance": { "setup": 1.0, "initialRun": 10.0, "mutation": 5.0 },
            "mutdelta": {
                "state": "commit 0123", "scratch": format!("/tmp/run-{index}"),
                "steps": [{ "step": "baseline", "how": "fresh", "commands": [] }],
                "addedLines": { "a.py": [1], "b.py": [1] },
                "plan": { "mutants": 4, "digest": "d" },
                "shard": { "index": index, "count": count },
            },
        })
    }

    #[test]
    fn two_shards_join_into_one_document_whose_gate_counts_every_mutant() {
        let first = shard(0, 2, &[(1, "a.py", "Killed"), (4, "b.py", "Survived")]);
        let second = shard(1, 2, &[(2, "a.py", "NoCoverage"), (3, "b.py", "Killed")]);

        let merged = merge(&[second, first]).unwrap();
        let gate = crate::report::gate::of(&merged);
        let merged = crate::report::json::value(&merged);

        let ids = |path: &str| -> Vec<&str> {
            merged["files"][path]["mutants"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["id"].as_str().unwrap())
                .collect()
        };
        assert_eq!((ids("a.py"), ids("b.py")), (vec!["1", "2"], vec!["3", "4"]));
        assert_eq!(merged["performance"], json!({ "setup": 2.0, "initialRun": 20.0, "mutation": 10.0 }));
        let section = &merged["mutdelta"];
        assert!(section["shard"].is_null() && section["scratch"].is_null(), "{section}");
        assert_eq!(section["shards"][1]["scratch"], "/tmp/run-1");
        let steps: Vec<&Value> = section["steps"].as_array().unwrap().iter().map(|s| &s["shard"]).collect();
        assert_eq!(steps, [&json!(0), &json!(1)]);

        let summary = gate.summary;
        assert_eq!((summary.mutants, summary.caught, summary.scored, summary.lines), (4, 2, 4, 2));
        assert_eq!((summary.lines_with_survivors, summary.lines_not_run), (1, 1));
        assert_eq!(crate::report::gate::exit(&gate), crate::exit::Exit::Survivors);
    }

    #[test]
    fn errors_name_the_reports_by_their_place() {
        let first = shard(0, 2, &[(1, "a.py", "Killed"), (2, "a.py", "Killed")]);
        let second = shard(1, 2, &[(2, "a.py", "Killed"), (3, "b.py", "Killed"), (4, "b.py", "Killed")]);
        let err = merge(&[first.clone(), second]).unwrap_err().to_string();
        assert_eq!(
            err,
            "mutant 2 is in both report 1 and report 2: the shards overlap, so they are not one split"
        );
        let short = shard(1, 2, &[(3, "b.py", "Killed")]);
        let err = merge(&[first, short]).unwrap_err().to_string();
        assert_eq!(err, "mutant 4 of the plan is in no shard's report: the reports are incomplete");
    }

    #[test]
    fn the_shards_tests_are_joined_each_once_and_a_test_filed_differently_is_refused() {
        let with_tests = |index: usize, statuses: &[(u64, &str, &str)], tests: Value| {
            let mut document = shard(index, 2, statuses);
            for file in document["files"].as_object_mut().unwrap().values_mut() {
                for mutant in file["mutants"].as_array_mut().unwrap() {
                    mutant["coveredBy"] = json!(["t.py::a"]);
                }
            }
            document["testFiles"] = tests;
            document
        };
        let a = json!({ "t.py": { "tests": [{ "id": "t.py::a", "name": "a" }] } });
        let first = with_tests(0, &[(1, "a.py", "Killed"), (4, "b.py", "Survived")], a.clone());
        let mut second = with_tests(1, &[(2, "a.py", "Killed"), (3, "b.py", "Killed")], a.clone());
        second["files"]["a.py"]["mutants"][0]["killedBy"] = json!(["u.py::b"]);
        second["testFiles"]["u.py"] = json!({ "tests": [{ "id": "u.py::b", "name": "b" }] });

        let merged = merge(&[first.clone(), second.clone()]).unwrap();

        let defined = Defined::read(merged.test_files.as_ref().unwrap()).unwrap();
        for (path, mutant) in merged.mutants() {
            defined.check(path, &mutant.id, &mutant.covered_by).expect("every reference defined");
            defined.check(path, &mutant.id, &mutant.killed_by).expect("every reference defined");
        }
        assert_eq!(
            crate::report::json::value(&merged)["testFiles"],
            json!({
                "t.py": { "tests": [{ "id": "t.py::a", "name": "a" }] },
                "u.py": { "tests": [{ "id": "u.py::b", "name": "b" }] },
            })
        );

        let mut elsewhere = second.clone();
        elsewhere["testFiles"] = json!({
            "v.py": { "tests": [{ "id": "t.py::a", "name": "a" }] },
            "u.py": { "tests": [{ "id": "u.py::b", "name": "b" }] },
        });
        let err = merge(&[first.clone(), elsewhere]).unwrap_err().to_string();
        assert_eq!(
            err,
            "report 1 and report 2 file test \"t.py::a\" differently: they are not shards of one run"
        );

        let mut undefined = second.clone();
        undefined["testFiles"].as_object_mut().unwrap().remove("u.py");
        let err = merge(&[first.clone(), undefined]).unwrap_err().to_string();
        assert!(err.starts_with("report 2: mutant \"2\" of \"a.py\" names test \"u.py::b\", which"), "{err}");

        let mut without = second;
        without.as_object_mut().unwrap().remove("testFiles");
        let err = merge(&[first, without]).unwrap_err().to_string();
        assert!(err.starts_with("report 2 has no testFiles but other shards do"), "{err}");
    }
}
