//! `check --shard K/N` and `merge`: the shards of a split, merged, are the unsharded check; every way the shards can fail to be one split is refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{
    check, fixture_repo, fixture_repo_at, markdown_to_html, mutdelta, read_report, read_valid_report, Run,
};

/// The `sharded` fixture checked whole and split in two and in three, once for every test here
/// run by one process (in the target directory, since a static is never dropped: a directory
/// per process, so that test runners that start a process per test do not share one; those
/// of processes that ended are removed).
struct Checked {
    repo: PathBuf,
    out: PathBuf,
    whole: Run,
    halves: Vec<Run>,
}

fn checked() -> &'static Checked {
    static CHECKED: OnceLock<Checked> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        for entry in std::fs::read_dir(&base).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ended =
                name.strip_prefix("shards-").is_some_and(|pid| !Path::new("/proc").join(pid).exists());
            if name == "shards" || ended {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let root = base.join(format!("shards-{}", std::process::id()));
        let (repo, out) = (root.join("repo"), root.join("reports"));
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        fixture_repo_at("sharded", "after", &repo);
        // Each job of a CI matrix starts from a fresh checkout: no shard reuses another's runs.
        let run = |name: &str, shard: Option<&str>| {
            let json = out.join(format!("{name}.json"));
            let mut args = vec!["--commit", "HEAD", "--no-cache", "--json", json.to_str().unwrap()];
            args.extend(shard.map(|shard| ["--shard", shard]).into_iter().flatten());
            check(&repo, &args)
        };
        let sarif = out.join("whole.sarif");
        let whole = check(
            &repo,
            &[
                "--commit",
                "HEAD",
                "--no-cache",
                "--json",
                out.join("whole.json").to_str().unwrap(),
                "--sarif",
                sarif.to_str().unwrap(),
            ],
        );
        let halves = vec![run("half-0", Some("0/2")), run("half-1", Some("1/2"))];
        for k in 0..3 {
            run(&format!("third-{k}"), Some(&format!("{k}/3")));
        }
        Checked { repo, out, whole, halves }
    })
}

impl Checked {
    fn report(&self, name: &str) -> PathBuf {
        self.out.join(format!("{name}.json"))
    }

    /// `mutdelta merge` of the named reports, writing `into` (and beside it the same as SARIF
    /// and HTML) when given.
    fn merge(&self, names: &[&str], into: Option<&Path>) -> Run {
        let mut args = vec!["merge".to_string()];
        args.extend(names.iter().map(|name| self.report(name).display().to_string()));
        if let Some(into) = into {
            for (option, extension) in [("--json", "json"), ("--sarif", "sarif"), ("--html", "html")] {
                args.extend([option.to_string(), into.with_extension(extension).display().to_string()]);
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        mutdelta(&self.repo, &args)
    }

    /// A copy of a report with `edit` applied, written beside the others as `name`.
    fn edited(&self, from: &str, name: &str, edit: impl FnOnce(&mut Value)) -> String {
        let mut report = read_report(self.report(from));
        edit(&mut report);
        std::fs::write(self.report(name), serde_json::to_string(&report).unwrap()).unwrap();
        name.to_string()
    }
}

/// A document with what legitimately differs between runs of the same plan taken out:
/// - `performance`, `mutdelta.duration`, each mutant's `duration` and the timing pytest prints
///   in a `statusReason`
///   ("1 failed in 0.09s"): how long things took;
/// - each mutant's `run` and the `steps` (the check's and its audit's): the commands that ran,
///   with the temporary copies' paths and durations, and per shard its own baselines;
/// - `mutdelta.scratch` and the merge's `mutdelta.shards`: each run's temporary directory;
/// - the order of `coveredBy`, which follows the tests' measured durations;
/// - a `statusReason`'s "; run again once the rest of the suite, begun beside, …": whether a
///   mutant's run met the rest of the suite still running beside it depends on when that run
///   ended, in each shard and unsharded alike (the run again decides the same verdict).
///
/// `killedBy` stays: in this fixture at most one test can kill each mutant, so the test that
/// fails first does not depend on the order the tests ran in (on a larger suite it can differ
/// between two unsharded runs as well).
fn comparable(mut report: Value) -> Value {
    report.as_object_mut().unwrap().remove("performance");
    for file in report["files"].as_object_mut().unwrap().values_mut() {
        for mutant in file["mutants"].as_array_mut().unwrap() {
            let mutant = mutant.as_object_mut().unwrap();
            mutant.remove("duration");
            mutant.remove("run");
            if let Some(Value::String(reason)) = mutant.get_mut("statusReason") {
                let first = reason.split("; run again once the rest of the suite, begun beside, ").next();
                *reason = without_pytest_timing(first.unwrap_or_default());
            }
            if let Some(Value::Array(tests)) = mutant.get_mut("coveredBy") {
                tests.sort_by_key(|test| test.to_string());
            }
        }
    }
    let section = report["mutdelta"].as_object_mut().unwrap();
    for key in ["steps", "scratch", "shards", "duration"] {
        section.remove(key);
    }
    if let Some(audit) = section.get_mut("audit").and_then(Value::as_object_mut) {
        audit.remove("steps");
        audit.remove("duration");
    }
    report
}

/// `1 failed in 0.09s; ...` as `1 failed in <time>; ...`: pytest's timings taken out.
fn without_pytest_timing(reason: &str) -> String {
    let words = reason.split(' ').map(|word| {
        let bare = word.trim_end_matches([';', ',']);
        let seconds = bare.strip_suffix('s').filter(|n| n.contains('.') && n.parse::<f64>().is_ok());
        match seconds {
            Some(_) => format!("<time>{}", &word[bare.len()..]),
            None => word.to_string(),
        }
    });
    words.collect::<Vec<_>>().join(" ")
}

fn statuses(report: &Value) -> BTreeSet<String> {
    mutant_ids_and(report, |m| m["status"].as_str().unwrap().to_string())
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

fn mutant_ids_and<T>(report: &Value, pick: impl Fn(&Value) -> T) -> Vec<(u64, T)> {
    report["files"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|file| file["mutants"].as_array().unwrap())
        .map(|m| (m["id"].as_str().unwrap().parse().unwrap(), pick(m)))
        .collect()
}

fn summary_lines(run: &Run) -> Vec<&str> {
    run.stdout
        .lines()
        .filter(|line| line.starts_with("mutation delta") || line.starts_with("kill-loss"))
        .collect()
}

#[test]
fn merged_shards_equal_the_unsharded_report() {
    let checked = checked();
    let whole = read_valid_report(&checked.report("whole"));
    let kinds = statuses(&whole);
    for kind in ["Killed", "Survived", "NoCoverage", "Ignored"] {
        assert!(kinds.contains(kind), "the fixture yields {kind}: {kinds:?}");
    }
    assert!(whole["mutdelta"]["audit"].is_object(), "the change edits a test, so the check audits it");

    for shards in [&["half-0", "half-1"][..], &["third-2", "third-0", "third-1"][..]] {
        let merged_path = checked.out.join(format!("merged-{}.json", shards.len()));
        let merge = checked.merge(shards, Some(&merged_path));
        assert_eq!(merge.code, checked.whole.code, "the merge exits as the unsharded check: {merge:?}");
        assert_eq!(summary_lines(&merge), summary_lines(&checked.whole), "{merge:?}");
        let merged = read_valid_report(&merged_path);
        assert_eq!(comparable(merged.clone()), comparable(whole.clone()), "{} shards", shards.len());
        let sarif = |path: PathBuf| read_report(path)["runs"][0]["results"].clone();
        assert_eq!(
            sarif(merged_path.with_extension("sarif")),
            sarif(checked.report("whole").with_extension("sarif")),
            "the merge writes the report files check writes, from the merged document"
        );
        let html = std::fs::read_to_string(merged_path.with_extension("html")).unwrap();
        assert!(html.contains("shipping.py") && html.contains("pricing.py"), "the page shows both files");
        let records: Vec<u64> = merged["mutdelta"]["shards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["index"].as_u64().unwrap())
            .collect();
        assert_eq!(records, (0..shards.len() as u64).collect::<Vec<_>>(), "a record per shard, in order");
    }

    // A verdict of the merged report reproduces like one of an unsharded report: the command
    // `show` prints leaves out the temporary paths of whichever shard ran it.
    let survivors = mutant_ids_and(&whole, |m| m["status"] == "Survived");
    let (survivor, _) = survivors.iter().find(|(_, survived)| *survived).unwrap();
    let merged = checked.out.join("merged-2.json");
    let shown = mutdelta(&checked.repo, &["show", merged.to_str().unwrap(), &survivor.to_string()]);
    assert_eq!(shown.code, 0, "{shown:?}");
    let reproduce = shown.stdout.lines().last().unwrap();
    assert!(reproduce.contains("PYTHONPATH=. "), "{shown:?}");
    // (Named by each shard's own temporary directory, not by the word `mutdelta-run-`: the
    // interpreter and the binary may live in another run's directory when mutdelta checks
    // itself.)
    for shard in ["half-0", "half-1"] {
        let scratch = read_report(checked.report(shard))["mutdelta"]["scratch"].as_str().unwrap().to_string();
        assert!(scratch.contains("mutdelta-run-"), "{scratch}");
        assert!(!reproduce.contains(&scratch), "{scratch} in {shown:?}");
    }
}

#[test]
fn merge_writes_the_markdown_summary_of_the_whole_check() {
    let checked = checked();
    let whole = read_report(checked.report("whole"));
    let count = |statuses: &[&str]| {
        let files = whole["files"].as_object().unwrap();
        let mutants = files.values().flat_map(|file| file["mutants"].as_array().unwrap());
        mutants.filter(|m| statuses.iter().any(|status| m["status"] == *status)).count()
    };
    let caught = count(&["Killed", "Timeout"]);
    let scored = caught + count(&["Survived", "NoCoverage"]);
    let mut missed: BTreeSet<String> = BTreeSet::new();
    for (path, file) in whole["files"].as_object().unwrap() {
        for m in file["mutants"].as_array().unwrap() {
            if m["status"] == "Survived" || m["status"] == "NoCoverage" {
                missed.insert(format!("<td><code>{path}:{}</code></td>", m["location"]["start"]["line"]));
            }
        }
    }

    let mut args = vec!["merge", "--format", "markdown"];
    let (half_0, half_1) = (checked.report("half-0"), checked.report("half-1"));
    args.extend([half_0.to_str().unwrap(), half_1.to_str().unwrap()]);
    let merge = mutdelta(&checked.repo, &args);

    assert_eq!(merge.code, checked.whole.code, "{merge:?}");
    let html = markdown_to_html(&merge.stdout);
    assert!(html.starts_with("<h2>mutdelta: the check fails</h2>"), "{html}");
    assert!(html.contains(&format!("<td>{caught} of {scored}</td>")), "{html}");
    let rows: BTreeSet<String> = html
        .lines()
        // The first cell of a row: a place, where the tests' cells name tests (`file::name`).
        .filter(|line| {
            line.starts_with("<td><code>") && line.ends_with("</code></td>") && !line.contains("::")
        })
        .map(str::to_string)
        .collect();
    assert_eq!(rows, missed, "a row per line of the whole check no test checks: {html}");
}

#[test]
fn each_shard_tests_its_share_of_the_mutants_and_the_audit_after_proving_its_own_baseline() {
    let checked = checked();
    let whole = read_report(checked.report("whole"));
    let mut seen = BTreeSet::new();
    let mut audit_tried = 0;
    for (k, run) in checked.halves.iter().enumerate() {
        let report = read_valid_report(&checked.report(&format!("half-{k}")));
        let section = &report["mutdelta"];
        assert_eq!(section["shard"], serde_json::json!({ "index": k, "count": 2 }));
        assert_eq!(section["plan"]["mutants"], 42, "{section}");
        assert!(section["state"].as_str().unwrap().starts_with("commit "), "{section}");
        let ids: Vec<u64> = mutant_ids_and(&report, |_| ()).into_iter().map(|(id, _)| id).collect();
        assert!((19..=23).contains(&ids.len()), "an even share of 42: {}", ids.len());
        assert!(ids.iter().all(|id| seen.insert(*id)), "no mutant in two shards");
        let steps: Vec<&str> =
            section["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
        assert!(steps.contains(&"baseline"), "shard {k} ran its own baseline: {steps:?}");
        let audit = &section["audit"];
        assert_eq!(audit["plan"], whole["mutdelta"]["audit"]["plan"], "each shard plans the whole audit");
        audit_tried += audit["mutants"].as_u64().unwrap();
        let line = summary_lines(run)[0];
        assert!(
            line.starts_with(&format!(
                "mutation delta, shard {k}/2 ({} of the plan's 42 mutants): ",
                ids.len()
            )),
            "{run:?}"
        );
    }
    assert_eq!(seen, (1..=42).collect(), "every mutant in one shard");
    assert_eq!(audit_tried, whole["mutdelta"]["audit"]["mutants"], "the audit's mutants are shared out too");

    let first_half = read_report(checked.report("half-0"));
    let elsewhere = mutant_ids_and(&first_half, |_| ())[0].0.to_string();
    let second_half = checked.report("half-1");
    refused(
        &mutdelta(&checked.repo, &["show", second_half.to_str().unwrap(), &elsewhere]),
        &format!("has no mutant {elsewhere}: it is the report of shard 1/2, which holds"),
    );
}

#[test]
fn list_shows_each_shards_share_and_the_shares_partition_the_plan() {
    let checked = checked();
    let list = |extra: &[&str]| {
        let mut args = vec!["list", "--commit", "HEAD", "--json"];
        args.extend_from_slice(extra);
        let run = mutdelta(&checked.repo, &args);
        assert_eq!(run.code, 0, "{run:?}");
        serde_json::from_str::<Value>(&run.stdout).unwrap()
    };
    let ids = |listed: &Value| -> Vec<String> {
        listed["mutants"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
    };
    let all = ids(&list(&[]));
    let mut joined = Vec::new();
    for k in 0..3 {
        let listed = list(&["--shard", &format!("{k}/3")]);
        assert_eq!(listed["shard"], serde_json::json!({ "index": k, "count": 3, "planned": 42 }));
        let share = ids(&listed);
        let tested: Vec<String> = mutant_ids_and(&read_report(checked.report(&format!("third-{k}"))), |_| ())
            .into_iter()
            .map(|(id, _)| id.to_string())
            .collect();
        let (mut share_sorted, mut tested_sorted) = (share.clone(), tested);
        share_sorted.sort();
        tested_sorted.sort();
        assert_eq!(share_sorted, tested_sorted, "list --shard {k}/3 shows what check --shard {k}/3 tests");
        joined.extend(share);
    }
    joined.sort_by_key(|id| id.parse::<u64>().unwrap());
    assert_eq!(joined, all, "the three shares are disjoint and cover the plan");

    let text = mutdelta(&checked.repo, &["list", "--commit", "HEAD", "--shard", "1/3"]);
    assert!(
        text.stdout
            .ends_with("14 of the plan's 42 mutants fall to shard 1/3 (16 added executable lines in all)\n"),
        "{text:?}"
    );
}

#[test]
fn a_shard_with_no_mutants_says_so_and_passes_as_that_shard() {
    let checked = checked();
    let json = checked.out.join("empty.json");
    let run =
        check(&checked.repo, &["--commit", "HEAD", "--shard", "45/50", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        summary_lines(&run)[0],
        "mutation delta, shard 45/50: none of the plan's 42 mutants fall to this shard; nothing to test here",
        "{run:?}"
    );
    let report = read_valid_report(&json);
    assert_eq!(report["mutdelta"]["shard"], serde_json::json!({ "index": 45, "count": 50 }));
    assert_eq!(mutant_ids_and(&report, |_| ()).len(), 0);
    assert_eq!(report["mutdelta"]["audit"]["mutants"], 0, "nor any of the audit's one mutant");
    assert!(summary_lines(&run)[1].starts_with("kill-loss audit, shard 45/50: 0 of 0 kills"), "{run:?}");
    assert_eq!(report["mutdelta"]["plan"], read_report(checked.report("half-0"))["mutdelta"]["plan"]);
}

/// Asserts that `run` exited 2 with one line saying `says`.
fn refused(run: &Run, says: &str) {
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "one sentence: {run:?}");
    assert!(run.stderr.contains(says), "{says:?} not in {run:?}");
}

#[test]
fn merge_refuses_reports_that_are_not_one_whole_split() {
    let checked = checked();
    refused(
        &checked.merge(&["half-0"], None),
        "shard 1/2 is missing: give the --json report of every shard, 0/2 to 1/2",
    );
    refused(&checked.merge(&["third-1"], None), "shards 0/3, 2/3 are missing");
    refused(
        &checked.merge(&["half-0", "half-1", "half-0"], None),
        "are both shard 0/2: give each shard's report once",
    );
    refused(&checked.merge(&["half-0", "third-1", "third-2"], None), "third-1.json is shard 1/3 but");
    refused(
        &checked.merge(&["whole", "half-1"], None),
        "whole.json is not a shard's report (it has no mutdelta.shard)",
    );

    let overlap = checked.edited("half-1", "overlap", |report| {
        let stolen = read_report(checked.report("half-0"))["files"]["shipping.py"]["mutants"][0].clone();
        report["files"]["shipping.py"]["mutants"].as_array_mut().unwrap().push(stolen);
    });
    refused(&checked.merge(&["half-0", &overlap], None), "is in both");
    refused(&checked.merge(&["half-0", &overlap], None), "the shards overlap, so they are not one split");

    let other_audit = checked.edited("half-1", "other-audit", |report| {
        report["mutdelta"]["audit"]["plan"]["digest"] = "0".repeat(40).into();
    });
    refused(&checked.merge(&["half-0", &other_audit], None), "mutated different code before the change");

    let garbled = checked.report("garbled");
    std::fs::write(&garbled, "{\"files\": ").unwrap();
    refused(&checked.merge(&["half-0", "garbled"], None), "garbled.json is not a mutdelta JSON report");
    refused(&checked.merge(&["half-0", "absent"], None), "could not read the shard report");
}

#[test]
fn merge_refuses_shards_of_another_state_plan_or_audit() {
    let checked = checked();
    // The working tree holds what HEAD holds, so `--base HEAD~1` plans the same mutants, but
    // it tests the working tree, not the commit.
    let worktree = checked.report("worktree-1");
    let run = check(
        &checked.repo,
        &["--base", "HEAD~1", "--no-audit", "--shard", "1/2", "--json", worktree.to_str().unwrap()],
    );
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    refused(&checked.merge(&["half-0", "worktree-1"], None), "worktree-1.json tested \"worktree\" but");

    let fewer = checked.report("one-per-line-1");
    let run = check(
        &checked.repo,
        &["--commit", "HEAD", "--one-per-line", "--shard", "1/2", "--json", fewer.to_str().unwrap()],
    );
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    refused(
        &checked.merge(&["half-0", "one-per-line-1"], None),
        "one-per-line-1.json planned other mutants than",
    );

    let unaudited = checked.report("no-audit-1");
    let run = check(
        &checked.repo,
        &["--commit", "HEAD", "--no-audit", "--shard", "1/2", "--json", unaudited.to_str().unwrap()],
    );
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    refused(
        &checked.merge(&["half-0", "no-audit-1"], None),
        "no-audit-1.json ran no kill-loss audit but other shards did",
    );
}

#[test]
fn bad_shard_arguments_are_refused_with_one_sentence() {
    let repo = fixture_repo("sharded");
    for (bad, says) in [
        ("3/3", "--shard 3/3 names no shard: shards are numbered from 0, so the last of 3 is 2/3"),
        ("a/2", "--shard a/2 is not two whole numbers K/N"),
        ("1/0", "--shard 1/0 splits into zero shards"),
        ("-1/2", "--shard -1/2 is not two whole numbers K/N"),
    ] {
        refused(&mutdelta(repo.path(), &["check", "--commit", "HEAD", "--shard", bad]), says);
        refused(&mutdelta(repo.path(), &["list", "--commit", "HEAD", "--shard", bad]), says);
    }
    refused(
        &mutdelta(repo.path(), &["audit-tests", "--commit", "HEAD", "--shard", "0/2"]),
        "audit-tests mutates no added lines to split over shards",
    );
}
