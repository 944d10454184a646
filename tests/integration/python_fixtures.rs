//! The Python fixtures end to end: the mutants `list` shows for a change and the verdicts `check`
//! gives them, with the user's repository byte-identical afterwards.

use crate::common::{check, fixture_repo, read_valid_report, snapshot, statuses};

#[test]
fn raise_under_a_test_that_asserts_nothing_survives() {
    let repo = fixture_repo("model_client");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("[MUT-survived] model_client.py:15:9: delete statement"), "{run:?}");
    assert!(run.stdout.contains("-        raise RuntimeError("), "the survivor's diff is shown: {run:?}");
    assert!(run.stdout.contains("+        pass"), "{run:?}");
    let report = read_valid_report(&json);
    let verdicts = statuses(&report, "model_client.py");
    assert!(verdicts.iter().all(|(line, _)| [14, 15].contains(line)), "only added lines: {verdicts:?}");
    assert!(verdicts.iter().filter(|(line, _)| *line == 15).all(|(_, s)| s == "Survived"), "{verdicts:?}");
    assert!(verdicts.contains(&(14, "Killed".to_string())), "`==` -> `!=` breaks the old test: {verdicts:?}");
    let last = run.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("mutation delta: ") && last.ends_with("on 2 new lines; 2 lines with survivors"),
        "{last}"
    );
    assert_eq!(snapshot(repo.path()), before, "the repository is byte-identical afterwards");
}

#[test]
fn strong_tests_catch_every_mutant() {
    let repo = fixture_repo("strong_tests");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 0, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "grades.py");
    assert!(verdicts.len() >= 5, "{verdicts:?}");
    assert!(verdicts.iter().all(|(_, status)| status == "Killed"), "{verdicts:?}");
    assert!(!run.stdout.contains("[MUT-"), "{run:?}");
    assert_eq!(snapshot(repo.path()), before);
}

#[test]
fn line_whose_only_test_is_skipped_is_never_killed() {
    let repo = fixture_repo("skipped_test");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let before = snapshot(repo.path());

    let run = check(repo.path(), &["--commit", "HEAD", "--json", json.to_str().unwrap()]);

    assert_eq!(run.code, 1, "{run:?}");
    let verdicts = statuses(&read_valid_report(&json), "shipping.py");
    assert!(!verdicts.is_empty());
    assert!(
        verdicts.iter().all(|(_, s)| s == "Survived" || s == "NoCoverage"),
        "a skipped test catches nothing: {verdicts:?}"
    );
    assert!(
        run.stdout.contains("mutation delta: 0 of 11 mutants caught on 4 new lines; 0 lines with survivors, 3 lines no test runs"),
        "lines that no test runs are counted apart from lines with survivors: {run:?}"
    );
    assert_eq!(snapshot(repo.path()), before);
}

#[test]
fn list_prints_the_mutants_without_running_them() {
    let repo = fixture_repo("model_client");

    let run = crate::common::mutdelta(repo.path(), &["list", "--commit", "HEAD"]);

    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("model_client.py:15:9: delete statement"), "{run:?}");
    assert!(run.stdout.contains("model_client.py:14:20: replace == with !="), "{run:?}");
    assert!(run.stdout.lines().last().unwrap().ends_with("mutants on 2 added executable lines"), "{run:?}");
}
