//! The mutation-testing-elements JSON report (schemaVersion 2), readable by Stryker's dashboard and HTML viewer.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::Value;

use super::document::{
    AuditSection, CommandEntry, Config, Document, FileEntry, FloorEntry, Framework, Incomplete, Location,
    LostEntry, MutantEntry, PassedOverLines, Performance, PlanEntry, Position, RunEntry, SampledEntry,
    Section, ShardPlace, Split, StepEntry, Thresholds,
};
use super::test_files::{self, Section as TestSection};
use crate::model::outcome::{MutantResult, Status};
use crate::model::plan::Language;
use crate::model::record::{CommandRecord, RunRecord, StepRecord};
use crate::model::report::Report;

/// The document as JSON data, every object's keys in alphabetical order (serde_json's map keeps
/// them so): the order of every report mutdelta has written, whatever the fields' order in
/// `Document`.
pub fn value(document: &Document) -> Value {
    serde_json::to_value(document).expect("a document's paths are UTF-8, as the plan read them")
}

/// The document as the JSON text `--json` writes (and `--out`'s `report.json`), a line of its own
/// at the end.
pub fn text(document: &Document) -> Result<String> {
    Ok(serde_json::to_string_pretty(&value(document))? + "\n")
}

/// The report as the typed document every rendering reads: made once per check.
pub fn document(report: &Report) -> Document {
    let t = &report.timings;
    let mut files: BTreeMap<String, FileEntry> = BTreeMap::new();
    for file in &report.plan.files {
        let entry = FileEntry {
            language: file.language.name.to_string(),
            source: file.source.clone(),
            mutants: Vec::new(),
        };
        files.insert(file.path.display().to_string(), entry);
    }
    let mut tests = TestSection::default();
    for result in &report.results {
        let planned = &report.plan.files[result.planned.file];
        if let Some(file) = files.get_mut(&planned.path.display().to_string()) {
            file.mutants.push(mutant(result, planned.language, &mut tests));
        }
    }
    Document {
        schema_version: "2".to_string(),
        thresholds: Thresholds { high: 80, low: 60 },
        files,
        test_files: Some(tests.files()),
        framework: Framework { name: "mutdelta".to_string(), version: env!("CARGO_PKG_VERSION").to_string() },
        config: Config { tests: report.tests.clone() },
        mutdelta: section(report),
        performance: Some(Performance {
            setup: millis(t.diff + t.generate + t.compile),
            initial_run: millis(t.baseline),
            mutation: millis(t.mutants),
        }),
    }
}

fn millis(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A mutant, its tests (by id) added to `tests`.
fn mutant(result: &MutantResult, language: Language, tests: &mut TestSection) -> MutantEntry {
    let mutant = &result.planned.mutant;
    let likely_equivalent = result.likely_equivalent().map(|rule| rule.name.to_string());
    let hint = match likely_equivalent {
        None if result.outcome.status == Status::Survived => super::hint::hint(mutant),
        _ => None,
    };
    let covered = &result.outcome.covered_by;
    let killed: Vec<String> = result
        .outcome
        .killed_by
        .iter()
        .map(|test| test_files::killer(language, test, covered).to_string())
        .collect();
    for test in covered.iter().chain(&killed) {
        tests.add(language, test);
    }
    MutantEntry {
        id: result.planned.id.to_string(),
        mutator_name: mutant.mutator().name().to_string(),
        replacement: Some(mutant.replacement.clone()),
        description: Some(mutant.description.clone()),
        location: location(mutant),
        status: result.outcome.status,
        status_reason: Some(result.outcome.reason.clone()),
        arid: mutant.arid.map(|rule| rule.name.to_string()),
        likely_equivalent,
        hint,
        covered_by: covered.clone(),
        killed_by: killed,
        duration: Some(millis(result.outcome.duration)),
        run: result.outcome.record.as_ref().map(run),
        reused: result.outcome.reused,
        flaky: result.outcome.flaky.clone(),
    }
}

/// Where a mutant's edit starts and ends, as the schema writes it.
fn location(mutant: &mutators::Mutant) -> Location {
    let at = |position: mutators::Position| Position { line: position.line, column: position.column };
    Location { start: at(mutant.start), end: at(mutant.end) }
}

/// Runs before any mutant (baselines, canaries), each with its step's name.
fn steps(steps: &[StepRecord]) -> Vec<StepEntry> {
    steps
        .iter()
        .map(|step| StepEntry { step: step.step.clone(), run: run(&step.record), shard: None })
        .collect()
}

/// The added lines of each file, by path as the report writes it.
fn by_path(lines: &BTreeMap<std::path::PathBuf, Vec<usize>>) -> BTreeMap<String, Vec<usize>> {
    lines.iter().map(|(path, lines)| (path.display().to_string(), lines.clone())).collect()
}

/// Where the check ran and the runs before any mutant: what `show` and `apply` read back; the
/// added lines of each mutated file and the whole check's wall time, which the HTML, JUnit,
/// SARIF and GitHub reports read beside the mutants.
fn section(report: &Report) -> Section {
    let plan = &report.plan;
    let origin = report.origin.as_ref();
    Section {
        version: env!("CARGO_PKG_VERSION").to_string(),
        added_lines: plan.added_lines().into_iter().map(|(path, lines)| (path, lines.to_vec())).collect(),
        duration: Some(millis(report.timings.wall)),
        steps: steps(&report.steps),
        audit: report.audit.as_ref().map(audit_section),
        repository: origin.map(|origin| origin.repository.clone()),
        state: origin.map(|origin| origin.state.to_text()),
        scratch: origin.map(|origin| origin.scratch.clone()),
        plan: Some(PlanEntry {
            mutants: plan.mutant_count(),
            digest: crate::shard::digest(plan, &report.tests),
        }),
        shard: plan
            .share
            .as_ref()
            .map(|share| ShardPlace { index: share.shard.index, count: share.shard.count }),
        shards: Vec::new(),
        // The mutants missing from `files` did not run; none of them has a verdict.
        incomplete: report.incomplete.map(|incomplete| Incomplete {
            reason: "interrupted".to_string(),
            not_run: report.not_run(),
            planned: incomplete.planned,
            undecided: incomplete.undecided,
            audit_cut_off: incomplete.audit_cut_off,
        }),
        reformatted: by_path(&plan.reformatted),
        not_made: plan.not_made.iter().map(|(rule, count)| (rule.to_string(), *count)).collect(),
        passed_over: PassedOverLines(
            plan.passed_over
                .iter()
                .filter(|group| !group.lines.is_empty())
                .map(|group| (group.key(), by_path(&group.lines)))
                .collect(),
        ),
        sampled: plan.sampled.as_ref().map(|sampled| SampledEntry {
            max_mutants: sampled.max,
            planned: sampled.planned,
            lines: sampled.lines,
            left_out: by_path(&sampled.left_out),
        }),
        flaky: report.flaky.clone(),
        floor: report
            .floor
            .iter()
            .map(|floor| FloorEntry {
                reason: floor.reason.clone(),
                tests: floor.tests,
                seconds: floor.seconds,
            })
            .collect(),
    }
}

/// The kill-loss audit: the edited tests, what they killed before the change, the kills lost.
fn audit_section(audit: &crate::model::audit::Audit) -> AuditSection {
    let lost = audit
        .lost
        .iter()
        .map(|lost| {
            let mutant = &lost.mutant;
            let path = lost.path.display().to_string();
            LostEntry {
                diff: super::diff::unified_diff(&path, &lost.source, &mutant.apply(&lost.source)),
                file: path,
                mutator_name: mutant.mutator().name().to_string(),
                replacement: Some(mutant.replacement.clone()),
                description: Some(mutant.description.clone()),
                location: location(mutant),
                killed_before: lost.killed_by.clone(),
                status_after: lost.after,
                covered_after: lost.ran_after.clone(),
            }
        })
        .collect();
    AuditSection {
        edited_tests: audit.edited.clone(),
        mutants: audit.tried,
        killed_before: audit.killed_before,
        lost_kills: lost,
        notes: audit.all_notes(),
        dropped: audit.dropped,
        unconfirmed: audit.unconfirmed,
        steps: steps(&audit.steps),
        plan: audit
            .plan
            .as_ref()
            .map(|(mutants, digest)| PlanEntry { mutants: *mutants, digest: digest.clone() }),
        unaudited: audit.unaudited,
        duration: audit.took.as_secs_f64(),
    }
}

/// How a mutant (or a step) ran: the commands in order.
pub fn run(record: &RunRecord) -> RunEntry {
    RunEntry {
        how: record.how.name().to_string(),
        commands: record.commands.iter().map(command).collect(),
        fallback: record.fallback.clone(),
        split: record.split.map(|(swap, tests)| Split { swap: millis(swap), tests: millis(tests) }),
    }
}

fn command(command: &CommandRecord) -> CommandEntry {
    CommandEntry {
        argv: command.argv.clone(),
        cwd: command.dir.clone(),
        env: command.env.iter().cloned().collect(),
        exit: command.exit.describe(),
        exit_code: match command.exit {
            crate::model::record::Exit::Code(code) => Some(code),
            _ => None,
        },
        duration: millis(command.duration),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use std::time::Duration;

    use super::{document, value};

    use crate::model::audit::{Audit, LostKill};
    use crate::model::outcome::{Outcome, Status};
    use crate::model::plan::{FilePlan, Plan, PlannedMutant, Shard, Share, State};
    use crate::model::record::{CommandRecord, Exit, How, RunRecord, StepRecord};
    use crate::model::report::{Incomplete, Origin, Report, Timings};

    fn record(how: How, fallback: Option<&str>, split: bool, exit: Exit) -> RunRecord {
        RunRecord {
            how,
            commands: vec![CommandRecord {
                argv: vec!["python".into(), "-m".into(), "pytest".into()],
                dir: PathBuf::from("/tmp/copy-1"),
                env: vec![("A".into(), "1".into()), ("B".into(), "x y".into())],
                exit,
                duration: Duration::from_millis(12),
            }],
            tail: "tail".into(),
            fallback: fallback.map(str::to_string),
            split: split.then_some((Duration::from_millis(3), Duration::from_millis(4))),
        }
    }

    fn report(variant: usize) -> Report {
        let source = "import logging\n\ndef fee(kg):\n    logging.info('x')\n    if kg is None:\n        return 0\n    if kg > 10:\n        return kg * 2 + 1\n    return kg - 1\n";
        let lines: Vec<usize> = (1..=9).collect();
        let found = mutators::python::mutate(source, &lines).unwrap();
        let file = FilePlan {
            path: "pkg/fee.py".into(),
            language: crate::python::spec::LANGUAGE,
            source: source.into(),
            lines: found.executable_lines,
            statements: found.statements,
            mutants: found.mutants,
        };
        let mut plan = Plan { files: vec![file], ..Plan::default() };
        if variant == 1 {
            plan.reformatted.insert("pkg/fee.py".into(), vec![3]);
            let lines = [("src/a.rs".into(), vec![1, 2])].into();
            plan.passed_over =
                vec![crate::model::plan::PassedOver { reason: &mutators::rust::UNSAFE, lines }];
            plan.not_made.insert("literal-fold", 2);
            plan.share = Some(Share { shard: Shard { index: 1, count: 3 }, ids: [1, 2].into(), planned: 9 });
        }
        let statuses = [
            Status::Killed,
            Status::Survived,
            Status::NoCoverage,
            Status::Timeout,
            Status::Ignored,
            Status::CompileError,
            Status::RuntimeError,
        ];
        let results = plan
            .all_mutants()
            .into_iter()
            .enumerate()
            .map(|(i, planned): (usize, PlannedMutant)| {
                let status = statuses[i % statuses.len()];
                let exit = match i % 3 {
                    0 => Exit::Code(1),
                    1 => Exit::Signal(9),
                    _ => Exit::TimedOut,
                };
                let outcome = Outcome {
                    status,
                    reason: format!("reason {i}"),
                    duration: Duration::from_micros(1234 * i as u64),
                    covered_by: if i % 2 == 0 {
                        vec!["tests/test_a.py::test_x".into(), "tests/test_b.py".into()]
                    } else {
                        vec![]
                    },
                    killed_by: if status == Status::Killed {
                        vec!["tests/test_a.py::test_x".into()]
                    } else {
                        vec![]
                    },
                    record: (i % 4 != 0)
                        .then(|| record(How::Swap, (i % 5 == 0).then_some("why"), i % 2 == 1, exit)),
                    reused: i % 6 == 0,
                    memory_limit: None,
                    flaky: if i == 1 { vec!["tests/test_a.py::test_x".into()] } else { Vec::new() },
                };
                outcome.for_mutant(planned)
            })
            .collect();
        let audit = Audit {
            edited: vec!["tests/test_a.py::test_x".into()],
            tried: 4,
            plan: (variant == 1).then(|| (4, "abc".to_string())),
            killed_before: 3,
            lost: vec![LostKill {
                path: "pkg/fee.py".into(),
                source: source.into(),
                mutant: plan.files[0].mutants[1].clone(),
                killed_by: vec!["t".into()],
                after: Status::Survived,
                ran_after: vec!["u".into()],
            }],
            notes: vec!["n".into()],
            dropped: 1,
            unconfirmed: 1,
            steps: vec![StepRecord {
                step: "baseline".into(),
                record: record(How::Fresh, None, false, Exit::Code(0)),
            }],
            unaudited: 7,
            took: Duration::from_millis(1500),
        };
        Report {
            plan,
            results,
            tests: vec!["tests/test_a.py".into()],
            baseline: Some(Duration::from_millis(5)),
            timings: Timings {
                diff: Duration::from_millis(1),
                generate: Duration::from_millis(2),
                compile: Duration::from_millis(3),
                build: Duration::ZERO,
                baseline: Duration::from_millis(4),
                mutants: Duration::from_millis(5),
                wall: Duration::from_millis(77),
                audit: Duration::from_millis(9),
                ..Timings::default()
            },
            steps: vec![StepRecord {
                step: "canary x".into(),
                record: record(
                    How::Fork,
                    Some("f"),
                    true,
                    Exit::MemoryLimit(crate::model::record::Bytes(5 << 30)),
                ),
            }],
            origin: (variant == 1).then(|| Origin {
                repository: "/r".into(),
                state: State::Index,
                scratch: "/s".into(),
            }),
            audit: (variant != 2).then_some(audit),
            audit_only: false,
            incomplete: (variant == 1).then_some(Incomplete {
                planned: 12,
                undecided: 2,
                audit_cut_off: false,
            }),
            flaky: match variant {
                1 => std::collections::BTreeMap::from([(
                    "tests/test_a.py::test_x".into(),
                    "failed 1 of 2 runs".into(),
                )]),
                _ => std::collections::BTreeMap::new(),
            },
            floor: match variant {
                1 => vec![crate::model::report::Floor {
                    reason: "module-level code of pkg/fee.py changed: its importers".into(),
                    tests: 3,
                    seconds: 1.25,
                }],
                _ => Vec::new(),
            },
        }
    }

    fn render(report: &Report) -> serde_json::Value {
        value(&document(report))
    }

    #[test]
    fn every_field_written_reads_back_into_the_same_document() {
        for variant in 0..3 {
            let written = render(&report(variant));
            let read: crate::report::document::Document = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(value(&read), written, "variant {variant}");
        }
    }

    #[test]
    fn the_gate_counts_from_the_document_what_the_report_holds() {
        for variant in 0..3 {
            let report = report(variant);
            let gate = crate::report::gate::of(&document(&report));
            let summary = gate.summary;
            let with = |status: Status| report.results.iter().filter(|r| r.outcome.status == status).count();
            assert_eq!((summary.mutants, summary.lines), (report.results.len(), report.plan.line_count()));
            assert_eq!(summary.caught, with(Status::Killed) + with(Status::Timeout));
            assert_eq!(summary.scored, summary.caught + with(Status::Survived) + with(Status::NoCoverage));
            assert_eq!(
                (summary.compile_errors, summary.runtime_errors, summary.ignored),
                (with(Status::CompileError), with(Status::RuntimeError), with(Status::Ignored))
            );
            let shard = report.plan.share.as_ref().map(|share| (share.shard, report.plan.mutant_count()));
            assert_eq!(summary.shard, shard, "variant {variant}");
            let lost = gate.audit.as_ref().map(|audit| (audit.tried, audit.killed_before, audit.lost));
            assert_eq!(
                lost,
                report.audit.as_ref().map(|audit| (audit.tried, audit.killed_before, audit.lost.len()))
            );
            let not_run = gate.incomplete.map(|incomplete| (incomplete.not_run, incomplete.planned));
            assert_eq!(not_run, report.incomplete.map(|incomplete| (report.not_run(), incomplete.planned)));
        }
    }

    #[test]
    fn optional_parts_are_written_only_when_the_check_has_them() {
        let full = render(&report(1));
        let bare = render(&report(2));
        let section = |document: &serde_json::Value, key: &str| document["mutdelta"].get(key).is_some();
        for key in [
            "incomplete",
            "shard",
            "reformatted",
            "notMade",
            "unsafeLines",
            "repository",
            "state",
            "scratch",
            "audit",
            "flaky",
            "floor",
        ] {
            assert!(section(&full, key), "{key} written when the check has it");
            assert!(!section(&bare, key), "{key} left out when the check has none");
        }
        assert!(full["mutdelta"]["audit"]["plan"].is_object());
        assert_eq!(full["mutdelta"]["audit"]["unaudited"], 7);
        assert_eq!(full["mutdelta"]["audit"]["duration"], 1.5);
        let mutants = |document: &serde_json::Value| {
            document["files"]["pkg/fee.py"]["mutants"].as_array().unwrap().clone()
        };
        let mutants = mutants(&full);
        assert!(mutants.iter().any(|m| m.get("reused") == Some(&serde_json::json!(true))));
        let flaky: Vec<&serde_json::Value> = mutants.iter().filter_map(|m| m.get("flaky")).collect();
        assert_eq!(
            flaky,
            [&serde_json::json!(["tests/test_a.py::test_x"])],
            "flaky only where a flaky test was run again"
        );
        assert!(
            mutants.iter().all(|m| m.get("reused") != Some(&serde_json::json!(false))),
            "reused only when true"
        );
        assert!(
            mutants.iter().any(|m| m.get("run").is_none()) && mutants.iter().any(|m| m.get("run").is_some())
        );
        assert!(mutants
            .iter()
            .all(|m| m.get("coveredBy").is_none_or(|tests| !tests.as_array().unwrap().is_empty())));
        let exit_codes: Vec<&serde_json::Value> =
            mutants.iter().filter_map(|m| m.get("run")).map(|run| &run["commands"][0]["exitCode"]).collect();
        assert!(
            exit_codes.contains(&&serde_json::json!(1)) && exit_codes.contains(&&serde_json::Value::Null),
            "a signal has a null exit code"
        );
    }
}
