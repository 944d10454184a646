//! The verdicts on the Rust fixtures: real cargo builds and test runs in the temporary copies.

use serde_json::Value;

use crate::common::{
    check, fixture_repo, fixture_repo_variant, mutdelta, mutdelta_as, read_report, snapshot,
};

fn run_with_report(fixture: &str, extra: &[&str]) -> (crate::common::Run, Value) {
    run_in(&fixture_repo(fixture), extra)
}

/// `check --commit HEAD` in `repo` with `extra` options, and its JSON report (Null if none).
fn run_in(repo: &tempfile::TempDir, extra: &[&str]) -> (crate::common::Run, Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());
    let mut args = vec!["--commit", "HEAD", "--json", json.to_str().unwrap()];
    args.extend_from_slice(extra);

    let run = check(repo.path(), &args);

    assert_eq!(
        snapshot(repo.path()),
        before,
        "the repository (and its absent target/) is untouched: {run:?}"
    );
    let report = std::fs::read_to_string(&json).map(|text| serde_json::from_str(&text).unwrap());
    (run, report.unwrap_or(Value::Null))
}

/// (line, description, status) of every mutant of `file`.
fn verdicts(report: &Value, file: &str) -> Vec<(u64, String, String)> {
    report["files"][file]["mutants"]
        .as_array()
        .unwrap_or_else(|| panic!("no mutants for {file} in {report}"))
        .iter()
        .map(|m| {
            let line = m["location"]["start"]["line"].as_u64().unwrap();
            (line, m["description"].as_str().unwrap().to_string(), m["status"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn the_untested_side_of_a_new_condition_is_not_covered_the_tested_side_is_killed_and_unbuildable_mutants_do_not_count(
) {
    let (run, report) = run_with_report("rust_one_sided", &[]);

    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(report["files"]["src/lib.rs"]["language"], "rust");
    let verdicts = verdicts(&report, "src/lib.rs");
    // The only test weighs 5000 g: no test reaches the light side's `450`.
    let light_side: Vec<_> = verdicts.iter().filter(|(line, ..)| *line == 13).collect();
    assert!(!light_side.is_empty() && light_side.iter().all(|(.., s)| s == "NoCoverage"), "{verdicts:?}");
    assert!(verdicts.contains(&(11, "replace / with *".into(), "Killed".into())), "{verdicts:?}");
    assert!(verdicts.contains(&(10, "force condition to false".into(), "Killed".into())), "{verdicts:?}");
    assert!(
        verdicts.contains(&(10, "replace > with >=".into(), "Survived".into())),
        "boundary untested: {verdicts:?}"
    );
    assert!(run.stdout.contains("[MUT-nocoverage] src/lib.rs:13: no test runs this line"), "{run:?}");
    assert!(run.stdout.contains("[MUT-survived] src/lib.rs:10:14: replace > with >="), "{run:?}");
    // `grams / 0` is refused by rustc: CompileError, never Killed, left out of the score.
    assert!(verdicts.contains(&(11, "replace 10 with 0".into(), "CompileError".into())), "{verdicts:?}");
    assert!(run.stdout.contains("[MUT-unviable] src/lib.rs:11:17: replace 10 with 0"), "{run:?}");
    assert!(run.stdout.contains("(1 unviable not counted)"), "{run:?}");
}

#[test]
fn a_well_tested_parser_catches_every_mutant() {
    let (run, report) = run_with_report("rust_parser", &[]);

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = verdicts(&report, "src/lib.rs");
    assert!(verdicts.len() >= 5, "{verdicts:?}");
    assert!(verdicts.iter().all(|(.., status)| status == "Killed"), "{verdicts:?}");
    // `if key.is_empty() { return Err(..); }`: the early return deleted, the empty key accepted.
    assert!(verdicts.contains(&(15, "delete return statement".into(), "Killed".into())), "{verdicts:?}");
}

/// `list --commit HEAD` in `repo`: its JSON, and the last line of its text.
fn listed(repo: &std::path::Path) -> (Value, String) {
    let json = mutdelta(repo, &["list", "--commit", "HEAD", "--json"]);
    assert_eq!(json.code, 0, "{json:?}");
    let text = mutdelta(repo, &["list", "--commit", "HEAD"]);
    assert_eq!(text.code, 0, "{text:?}");
    (serde_json::from_str(&json.stdout).unwrap(), text.stdout.lines().last().unwrap_or_default().to_string())
}

#[test]
fn an_early_return_in_an_if_let_on_an_unsafe_read_and_break_and_continue_are_mutated_and_killed() {
    let repo = fixture_repo("rust_early_exit");

    let (run, report) = run_in(&repo, &[]);

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = verdicts(&report, "src/lib.rs");
    for (line, description) in [
        (19, "delete return statement"),
        (40, "delete continue statement"),
        (40, "replace continue with break"),
        (44, "delete break statement"),
        (44, "replace break with continue"),
    ] {
        assert!(
            verdicts.contains(&(line, description.into(), "Killed".into())),
            "{line} {description}: {verdicts:?}"
        );
    }
    assert!(verdicts.iter().all(|(.., status)| status == "Killed"), "{verdicts:?}");
    let (plan, last) = listed(repo.path());
    assert_eq!(plan["addedLines"], report["mutdelta"]["addedLines"], "{plan}");
    let lines = plan["addedLines"]["src/lib.rs"].as_array().unwrap().len();
    assert_eq!(last, format!("{} mutants on {lines} added executable lines", verdicts.len()));
    assert!(run.stdout.contains(&format!("caught on {lines} new lines")), "{run:?}");
}

#[test]
fn list_and_check_say_the_same_of_executable_lines_without_a_mutant() {
    // A `let` and a write in an `unsafe` block: two executable lines, no mutant.
    let repo = fixture_repo_variant("rust_early_exit", "unsafe_only");

    let (plan, last) = listed(repo.path());
    let (run, report) = run_in(&repo, &[]);

    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(plan["addedLines"], serde_json::json!({"src/lib.rs": [17, 19]}), "{plan}");
    assert_eq!(report["mutdelta"]["addedLines"], plan["addedLines"], "{report}");
    assert_eq!(last, "0 mutants on 2 added executable lines (no mutator applies to them)");
    assert!(run.stdout.contains(&format!("mutation delta: {last}\n")), "{run:?}");
    // The write is in an unsafe block, but no mutator would apply to it in safe code either:
    // it is not counted as passed over for being unsafe.
    assert_eq!(plan["unsafeLines"], serde_json::json!({}), "{plan}");
    assert!(!run.stdout.contains("`unsafe`"), "{run:?}");
}

#[test]
fn in_unsafe_code_only_bounds_checked_indexes_are_mutated_and_their_mutants_are_caught() {
    let repo = fixture_repo("rust_unsafe");

    let (run, report) = run_in(&repo, &[]);

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = verdicts(&report, "src/lib.rs");
    let in_block: Vec<(u64, String)> = verdicts
        .iter()
        .filter(|(line, ..)| (29..=30).contains(line))
        .map(|(line, description, _)| (*line, description.clone()))
        .collect();
    // `OFFSET + 0` → `OFFSET - 0` changes nothing and is not made; `pair * 2 + 1`, a pointer
    // offset, is not touched.
    let expected = [
        (29, "replace 0 with 1"),
        (30, "replace + with -"),
        (30, "replace 1 with 0"),
        (30, "replace 1 with 2"),
    ];
    assert_eq!(in_block, expected.map(|(line, text)| (line, text.to_string())), "{verdicts:?}");
    // Dividing by a literal 0 does not compile (rustc's unconditional-panic lint); all else is caught.
    let caught = |(_, description, status): &&(u64, String, String)| {
        status == "Killed" || (status == "CompileError" && description == "replace 100 with 0")
    };
    assert!(verdicts.iter().all(|verdict| caught(&verdict)), "{verdicts:?}");
    // `thousands_digit`'s read through a pointer offset gets no mutant, and the check says so.
    assert_eq!(report["mutdelta"]["unsafeLines"], serde_json::json!({"src/lib.rs": [37]}), "{report}");
    let note = "1 added executable line in `unsafe` code got no mutant: a mutant there could cause \
                undefined behaviour rather than a failing test (--mutate-unsafe mutates it anyway)";
    assert!(run.stdout.contains(&format!("note: {note}\n")), "{run:?}");

    let listed = mutdelta(repo.path(), &["list", "--commit", "HEAD", "--json", "--mutate-unsafe"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    let plan: Value = serde_json::from_str(&listed.stdout).unwrap();
    let on_30: Vec<&Value> = plan["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|mutant| mutant["line"] == 30)
        .map(|mutant| &mutant["description"])
        .collect();
    assert!(
        on_30.contains(&&Value::from("replace * with /")),
        "the pointer offset is mutated too: {on_30:?}"
    );
    assert_eq!(plan["unsafeLines"], serde_json::json!({}), "{plan}");
}

#[test]
fn code_behind_a_feature_is_tested_with_the_features_asked_for_and_else_said_to_be_compiled_out() {
    let repo = fixture_repo("rust_features");
    let statuses = |report: &Value| -> Vec<String> {
        verdicts(report, "src/lib.rs").into_iter().map(|(.., status)| status).collect()
    };

    // Without the feature no test can run `round_nearest`, on any path, and the reason says why.
    for options in [&[][..], &["--no-schema"], &["--test-tool", "nextest"]] {
        let (run, report) = run_in(&repo, options);
        assert_eq!(run.code, 1, "{options:?}: {run:?}");
        let mutants = report["files"]["src/lib.rs"]["mutants"].as_array().unwrap();
        assert!(mutants.len() > 5, "{report}");
        for mutant in mutants {
            assert_eq!(mutant["status"], "NoCoverage", "{options:?}: {mutant}");
            assert_eq!(
                mutant["statusReason"],
                "no test reaches this line: it is compiled only with feature `rounding`, which this check \
                 leaves off (--features rounding or --all-features turns it on)",
                "{options:?}"
            );
        }
        assert!(
            run.stdout.contains(": no test runs this line: it is compiled only with feature `rounding`, which this check leaves off"),
            "{options:?}: {run:?}"
        );
    }
    // With it, every mutant is caught (dividing by a literal 0 does not compile).
    for options in [
        &["--features", "rounding"][..],
        &["--all-features", "--no-schema"],
        &["-F", "featured/rounding", "--test-tool", "nextest"],
    ] {
        let (run, report) = run_in(&repo, options);
        assert_eq!(run.code, 0, "{options:?}: {run:?}");
        let statuses = statuses(&report);
        assert!(
            statuses.iter().filter(|status| *status == "Killed").count() >= 10,
            "{options:?}: {statuses:?}"
        );
        assert!(statuses.iter().all(|status| status == "Killed" || status == "CompileError"), "{statuses:?}");
    }
    // A feature the package lacks: cargo's refusal is said to be cargo's.
    let (run, _) = run_in(&repo, &["--features", "rounding,nope"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("error: cargo refused to build the tests before compiling anything, saying `the package 'featured' does not contain this feature: nope`"),
        "{run:?}"
    );
    let (run, _) = run_in(&repo, &["--features=--config=x"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("--features holds \"--config=x\", which is not a cargo feature name"),
        "{run:?}"
    );
}

#[test]
fn with_nextest_a_line_no_test_reaches_is_not_covered_and_nextest_runs_the_tests_that_reach_the_others() {
    let (run, report) = run_with_report("rust_one_sided", &["--test-tool", "nextest"]);

    assert_eq!(run.code, 1, "{run:?}");
    let verdicts = verdicts(&report, "src/lib.rs");
    let light_side: Vec<_> = verdicts.iter().filter(|(line, ..)| *line == 13).collect();
    assert!(!light_side.is_empty() && light_side.iter().all(|(.., s)| s == "NoCoverage"), "{verdicts:?}");
    assert!(verdicts.contains(&(11, "replace / with *".into(), "Killed".into())), "{verdicts:?}");
    assert!(verdicts.contains(&(10, "replace > with >=".into(), "Survived".into())), "{verdicts:?}");
    for mutant in report["files"]["src/lib.rs"]["mutants"].as_array().unwrap() {
        if mutant["status"] == "Killed" || mutant["status"] == "Survived" {
            // The schema's switch or a build of the mutant alone, then nextest.
            let commands = mutant["run"]["commands"].as_array().unwrap();
            let argv = &commands.last().unwrap()["argv"];
            assert_eq!(
                (&argv[0], &argv[1], &argv[2]),
                (&"cargo".into(), &"nextest".into(), &"run".into()),
                "{mutant}"
            );
        }
        if mutant["status"] == "Killed" {
            assert!(
                !mutant["killedBy"].as_array().unwrap().is_empty(),
                "nextest's FAIL lines name the tests: {mutant}"
            );
            let reason = mutant["statusReason"].as_str().unwrap();
            assert!(
                reason.starts_with("tests::heavy_parcels_pay_by_weight panicked at src/lib.rs:"),
                "{mutant}"
            );
        }
    }
}

#[test]
fn nextest_runs_the_tests_when_asked() {
    let (run, report) = run_with_report("rust_parser", &["--test-tool", "nextest"]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(verdicts(&report, "src/lib.rs").iter().all(|(.., status)| status == "Killed"), "{run:?}");
}

#[test]
fn in_a_workspace_the_tests_of_every_package_that_depends_on_the_mutated_one_run() {
    // core_math's new function is tested only in app, which depends on it; unrelated's only
    // test panics: had it run, the baseline would have failed with exit 2.
    for options in [&[][..], &["--no-schema"][..]] {
        let (run, report) = run_with_report("rust_workspace", options);

        assert_eq!(run.code, 0, "{options:?}: {run:?}");
        assert!(run.stderr.contains("baseline: the tests of core_math, app"), "{run:?}");
        let mutants = report["files"]["core_math/src/lib.rs"]["mutants"].as_array().unwrap();
        assert_eq!(mutants.len(), 5, "{options:?}");
        let how = if options.is_empty() { "schema" } else { "build-then-test" };
        // libtest names the failed test without its package; the schema's run names the test
        // of app that covered it, which is that test.
        let killer = if options.is_empty() { "app: tests::mean_of_values" } else { "tests::mean_of_values" };
        for mutant in mutants {
            assert_eq!(mutant["status"], "Killed", "{options:?}: {mutant}");
            assert_eq!(mutant["killedBy"], serde_json::json!([killer]), "{mutant}");
            assert_eq!(mutant["run"]["how"], how, "{mutant}");
        }
    }
}

#[test]
fn a_users_own_build_seeds_the_baseline_and_is_never_written() {
    let repo = fixture_repo("rust_workspace");
    crate::common::run_ok(
        std::process::Command::new("cargo").args(["test", "--no-run", "-q"]).current_dir(repo.path()),
    );
    assert!(repo.path().join("target/debug/.fingerprint").is_dir());
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(snapshot(repo.path()), before, "target/ included: read, never written");
    let report = read_report(&json);
    assert!(
        verdicts(&report, "core_math/src/lib.rs").iter().all(|(.., status)| status == "Killed"),
        "{run:?}"
    );
}

#[test]
fn a_crate_whose_dev_dependency_pulls_another_crate_of_its_name_is_built_and_checked() {
    // `-p digits` is ambiguous there: mutdelta names the package by its path in the copy.
    let (run, report) = run_with_report("rust_same_name", &[]);
    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = verdicts(&report, "src/lib.rs");
    assert!(verdicts.len() >= 8, "{verdicts:?}");
    let caught = |status: &str| status == "Killed" || status == "Timeout";
    assert!(verdicts.iter().all(|(_, _, status)| caught(status) || status == "CompileError"), "{verdicts:?}");
    assert!(verdicts.iter().any(|(_, _, status)| status == "Killed"), "{verdicts:?}");
}

#[test]
fn tests_run_without_panic_backtraces_while_library_backtraces_stay_as_the_user_set_them() {
    let repo = fixture_repo("rust_backtrace");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let args = ["check", "--commit", "HEAD", "-j", "2", "--json", json.to_str().unwrap()];

    let run = mutdelta_as(repo.path(), &args, "", &[("RUST_BACKTRACE", "1")]);

    // The suite asserts that library backtraces are captured: it passes unmutated.
    assert_eq!(run.code, 0, "{run:?}");
    let report = read_report(&json);
    let verdicts = verdicts(&report, "src/lib.rs");
    assert!(verdicts.len() >= 4 && verdicts.iter().all(|(.., status)| status == "Killed"), "{verdicts:?}");
    for mutant in report["files"]["src/lib.rs"]["mutants"].as_array().unwrap() {
        for command in mutant["run"]["commands"].as_array().unwrap() {
            assert_eq!(command["env"]["RUST_BACKTRACE"], "0", "{command}");
            assert_eq!(command["env"]["RUST_LIB_BACKTRACE"], "1", "{command}");
        }
    }

    // The schema is built once: without incremental state, and cargo's runs on it say the same.
    for step in report["mutdelta"]["steps"].as_array().unwrap() {
        for command in step["commands"].as_array().unwrap().iter().filter(|c| c["argv"][0] == "cargo") {
            assert_eq!(command["env"]["CARGO_INCREMENTAL"], "0", "{command}");
        }
    }

    // Without RUST_BACKTRACE the suite fails before any mutation, as it does for the user.
    let bare = mutdelta(repo.path(), &args);
    assert_eq!(bare.code, 2, "{bare:?}");
    assert!(bare.stderr.contains("library_backtraces_are_captured"), "{bare:?}");
}

#[test]
fn mutants_the_schema_shows_failing_on_their_own_values_are_settled_without_building_or_testing_again() {
    let (run, report) = run_with_report("rust_unviable", &[]);

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = verdicts(&report, "src/lib.rs");
    let expected = [
        (10, "replace body of `handle` with `Default::default()`", "CompileError"),
        (10, "replace body of `handle` with `Handle { fd: Default::default() }`", "CompileError"),
    ];
    assert_eq!(verdicts, expected.map(|(line, d, s)| (line, d.to_string(), s.to_string())), "{report}");
    for mutant in report["files"]["src/lib.rs"]["mutants"].as_array().unwrap() {
        assert!(mutant["statusReason"].as_str().unwrap().contains("error[E0277]"), "{mutant}");
    }
    // Only the schema's build ran: no build of the crate alone, no run of its tests.
    let steps: Vec<&str> =
        report["mutdelta"]["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert_eq!(steps, ["schema build 1"], "{report}");
    assert!(run.stderr.contains("baseline: not run: every mutant was settled without the tests"), "{run:?}");
}

#[test]
fn a_file_whose_module_a_cfg_leaves_out_is_not_covered_on_every_path_and_tested_with_the_feature() {
    let repo = fixture_repo("rust_cfg_module");

    for options in [&[][..], &["--no-schema"]] {
        let (run, report) = run_in(&repo, options);
        assert_eq!(run.code, 1, "{options:?}: {run:?}");
        let verdicts = verdicts(&report, "src/fast.rs");
        assert!(verdicts.len() >= 4, "{verdicts:?}");
        assert!(verdicts.iter().all(|(.., status)| status == "NoCoverage"), "{options:?}: {verdicts:?}");
    }
    for options in [&[][..], &["--no-schema"]] {
        let (_, report) = run_in(&repo, options);
        let mutants = report["files"]["src/fast.rs"]["mutants"].as_array().unwrap();
        let reasons: Vec<&str> = mutants.iter().map(|m| m["statusReason"].as_str().unwrap()).collect();
        assert!(
            reasons.iter().all(|reason| reason.contains("its file is not compiled in this build")),
            "{options:?}: {reasons:?}"
        );
    }

    let (run, report) = run_in(&repo, &["--features", "fast", "--no-schema"]);
    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = verdicts(&report, "src/fast.rs");
    assert!(verdicts.iter().all(|(.., status)| status == "Killed"), "{verdicts:?}");
}

/// A mutant that panics on its own line in the switched build (`x + 1` overflowing): the
/// panic's column there counts the schema's code, so the reason names the line alone; a panic
/// in the tests, on a line the schema left as it was, keeps its column.
#[test]
fn a_panic_on_a_switched_line_is_named_by_its_line_and_one_in_the_tests_by_its_column() {
    let manifest = "[package]\nname = \"below\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let tests = "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn below_the_top() {\n        assert_eq!(super::below(255), 254);\n    }\n}\n";
    let before = format!("pub fn below(x: u8) -> u8 {{\n    x\n}}\n{}", tests.replace("254", "255"));
    let after = format!("pub fn below(x: u8) -> u8 {{\n    x - 1\n}}\n{tests}");
    let repo = crate::common::repo_of(
        &[("Cargo.toml", manifest), ("src/lib.rs", &before)],
        &[("src/lib.rs", &after)],
    );
    let (run, report) = run_in(&repo, &[]);
    let mutants = report["files"]["src/lib.rs"]["mutants"].as_array().unwrap_or_else(|| panic!("{run:?}"));
    let reason = |replacement: &str| {
        let mutant =
            mutants.iter().find(|m| m["location"]["start"]["line"] == 2 && m["replacement"] == replacement);
        let mutant = mutant.unwrap_or_else(|| panic!("no `{replacement}` mutant: {mutants:?}"));
        assert_eq!(
            (&mutant["status"], &mutant["run"]["how"]),
            (&"Killed".into(), &"schema".into()),
            "{mutant}"
        );
        mutant["statusReason"].as_str().unwrap().to_string()
    };
    assert_eq!(reason("+"), "tests::below_the_top panicked at src/lib.rs:2 attempt to add with overflow");
    let in_the_test = reason("2");
    assert!(
        in_the_test.starts_with("tests::below_the_top panicked at src/lib.rs:9:9 assertion"),
        "{in_the_test}"
    );
}
