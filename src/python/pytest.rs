//! Reading pytest's runs: which exit codes are the mutant's doing, and which tests failed.

use std::path::Path;
use std::time::Duration;

use crate::model::outcome::{Outcome, Status};
use crate::model::record::{Exit, Finished, RunRecord};
use crate::run::outcome::{last_line, read_common};

/// The verdict of a pytest run of `tests` in the copy at `root` (as the run imports from it):
/// 1 (tests failed) and 2 (collection or import failed) are the mutant's doing; so are 4 when
/// the named tests could not be collected or a conftest would not import, 5 (no tests
/// collected), since the unmutated run collected them, and 3 (pytest's internal error) or 4
/// (its usage error) when pytest could not start because of the project: a traceback passes
/// through its files, its error names one (a configuration file that pytest, importing the
/// project, could no longer read), or a plugin other than mutdelta's would not load. pytest
/// imports the project (a library pytest uses) or loads a plugin of the project's, and the
/// mutant made it fail as it started. Other codes mean the run itself broke.
pub fn read(run: &Finished, tests: &[String], timeout: Duration, root: &Path) -> Outcome {
    let mut outcome = read_common(run, timeout).unwrap_or_else(|| {
        let code = match run.exit {
            Exit::Code(code) => code,
            _ => unreachable!("read_common reads every other exit"),
        };
        match code {
            1 if !ran_tests(&run.tail) && passes_through(&run.tail, root) => Outcome::of_run(
                run,
                Status::Killed,
                format!("pytest could not start: {}", last_line(&run.tail)),
            ),
            1 | 2 | 5 => Outcome::of_run(run, Status::Killed, last_line(&run.tail)),
            4 if lost_tests(&run.tail) || conftest_broke(&run.tail) => Outcome::of_run(
                run,
                Status::Killed,
                format!("the tests could no longer be collected: {}", last_line(&run.tail)),
            ),
            3 | 4
                if passes_through(&run.tail, root)
                    || names_a_file(&run.tail, root)
                    || plugin_broke(&run.tail) =>
            {
                Outcome::of_run(
                    run,
                    Status::Killed,
                    format!("pytest could not start: {}", last_line(&run.tail)),
                )
            }
            _ => Outcome::of_run(
                run,
                Status::RuntimeError,
                format!("pytest exited with status {code}: {}", last_line(&run.tail)),
            ),
        }
    });
    outcome.covered_by = tests.to_vec();
    if outcome.status == Status::Killed {
        outcome.killed_by = failed_tests(&run.tail);
    }
    outcome
}

/// Whether the failed pytest run of `record` (its last command) stopped before any test ran:
/// the tests could not be collected (2), pytest's usage error (4), none collected (5), or it
/// could not start (1 with no count of tests run). Its internal error (3) may come later.
pub fn ran_no_test(record: &RunRecord) -> bool {
    match record.commands.last().map(|command| &command.exit) {
        Some(Exit::Code(2)) => record.tail.contains(" during collection"),
        Some(Exit::Code(4 | 5)) => true,
        Some(Exit::Code(1)) => !ran_tests(&record.tail),
        _ => false,
    }
}

/// Whether pytest got as far as its closing count of the tests: `1 failed, 7 passed in 0.08s`
/// (between `=` signs unless `-q`), each part a count and one of pytest's outcomes.
fn ran_tests(output: &str) -> bool {
    const OUTCOMES: [&str; 10] = [
        "failed",
        "passed",
        "error",
        "errors",
        "skipped",
        "deselected",
        "xfailed",
        "xpassed",
        "warning",
        "warnings",
    ];
    output.lines().any(|line| {
        let line = line.trim_matches(|c: char| c == '=' || c.is_whitespace());
        let Some((counts, took)) = line.split_once(" in ") else { return false };
        let counted = counts.split(", ").all(|part| {
            part.split_once(' ')
                .is_some_and(|(count, outcome)| count.parse::<u64>().is_ok() && OUTCOMES.contains(&outcome))
        });
        counted && took.split_once('s').is_some_and(|(seconds, _)| seconds.parse::<f64>().is_ok())
    })
}

/// Whether a traceback in `output` has a frame in a file under the directory `root`.
fn passes_through(output: &str, root: &Path) -> bool {
    let frame = format!("File \"{}/", root.display());
    output.lines().any(|line| line.contains(&frame))
}

/// Whether pytest's error (`ERROR: ...`) names a file under the directory `root`.
fn names_a_file(output: &str, root: &Path) -> bool {
    let file = format!("{}/", root.display());
    output.lines().any(|line| line.strip_prefix("ERROR: ").is_some_and(|error| error.contains(&file)))
}

/// Whether pytest says a plugin that is not mutdelta's raised as it was loaded (pytest 9
/// leaves the frames of pytest and pluggy out of the traceback it shows).
fn plugin_broke(output: &str) -> bool {
    output.lines().any(|line| {
        line.strip_prefix("Error while loading plugin \"").is_some_and(|name| !name.starts_with("mutdelta"))
    })
}

/// Whether pytest's usage error says the tests it was given were not found.
pub fn lost_tests(output: &str) -> bool {
    output.contains("found no collectors for") || output.contains("ERROR: not found:")
}

/// Whether pytest's usage error says a conftest did not import (pytest says "ImportError"
/// whatever the exception): the unmutated run loaded it, so the tests it serves could not be
/// collected.
pub fn conftest_broke(output: &str) -> bool {
    output.contains("ImportError while loading conftest")
}

/// How `test` failed, from pytest's short summary (`FAILED tests/test_x.py::test_y -
/// AssertionError: 1 != 2` is `AssertionError: 1 != 2`); none when the summary gives no reason.
pub fn failure_of<'a>(output: &'a str, test: &str) -> Option<&'a str> {
    output.lines().find_map(|line| {
        let rest = line.strip_prefix("FAILED ")?.strip_prefix(test)?;
        rest.strip_prefix(" - ")
    })
}

/// The tests that failed, from pytest's short summary
/// (`FAILED tests/test_x.py::test_y - AssertionError`).
fn failed_tests(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("FAILED ").or_else(|| line.strip_prefix("ERROR ")))
        .map(|rest| rest.split(" - ").next().unwrap_or(rest).trim().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_s_failure_is_read_from_pytest_short_summary() {
        let output =
            "FAILED tests/test_a.py::test_x - AssertionError: 1 != 2\nFAILED tests/test_a.py::test_xy\n";
        assert_eq!(failure_of(output, "tests/test_a.py::test_x"), Some("AssertionError: 1 != 2"));
        assert_eq!(failure_of(output, "tests/test_a.py::test_xy"), None, "no reason given");
        assert_eq!(failure_of(output, "tests/test_b.py::test_x"), None);
    }

    #[test]
    fn failed_tests_are_read_from_pytest_short_summary() {
        let output = "F.\nFAILED tests/test_a.py::test_x - AssertionError: 1 != 2\nERROR tests/test_b.py\n1 failed in 0.1s\n";
        assert_eq!(failed_tests(output), ["tests/test_a.py::test_x", "tests/test_b.py"]);
    }

    #[test]
    fn tests_failing_or_not_collecting_kill_and_other_exit_codes_are_runtime_errors() {
        let run = |code, tail: &str| Finished {
            exit: Exit::Code(code),
            duration: Duration::ZERO,
            tail: tail.into(),
            command: None,
        };
        let tests = vec!["tests/test_a.py::test_x".to_string()];
        let root = Path::new("/copy");
        let killed = read(
            &run(1, "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed\n"),
            &tests,
            Duration::ZERO,
            root,
        );
        assert_eq!((killed.status, killed.reason.as_str()), (Status::Killed, "1 failed"));
        // Exit 1 before any test ran: an exception raised through the project's code as pytest
        // started (a plugin of the project's, here), with no count of tests.
        let raised = "Traceback (most recent call last):\n  File \"/venv/bin/pytest\", line 8, in <module>\n  File \"/copy/src/pkg/plugin.py\", line 4, in pytest_configure\nLookupError: unknown encoding: x\n";
        let unstarted = read(&run(1, raised), &tests, Duration::ZERO, root);
        assert_eq!(
            (unstarted.status, unstarted.reason.as_str()),
            (Status::Killed, "pytest could not start: LookupError: unknown encoding: x")
        );
        // A test that failed with a traceback through the project: its count was printed.
        let failed =
            format!("{raised}FAILED tests/test_a.py::test_x - LookupError\n1 failed, 2 passed in 0.05s\n");
        let counted = read(&run(1, &failed), &tests, Duration::ZERO, root);
        assert_eq!(
            (counted.status, counted.reason.as_str()),
            (Status::Killed, "1 failed, 2 passed in 0.05s")
        );
        let verbose = "===== 1 failed, 1 warning in 0.12s =====\n";
        assert_eq!(
            read(&run(1, &format!("{raised}{verbose}")), &tests, Duration::ZERO, root).reason,
            verbose.trim()
        );
        assert_eq!(killed.killed_by, tests);
        assert_eq!(killed.covered_by, tests);
        assert_eq!(read(&run(2, "error"), &tests, Duration::ZERO, root).status, Status::Killed);
        let uncollectable = "ImportError while importing test module\nERROR: found no collectors for tests/test_a.py::test_x\n";
        assert_eq!(read(&run(4, uncollectable), &tests, Duration::ZERO, root).status, Status::Killed);
        // A mutant of what a conftest imports, breaking that import (pytest's words):
        let conftest = "ImportError while loading conftest '/copy/tests/conftest.py'.\ntests/conftest.py:1: in <module>\n    import pkg\nE   AttributeError: 'NoneType' object has no attribute 'attr'\n";
        let unloaded = read(&run(4, conftest), &tests, Duration::ZERO, root);
        assert_eq!(
            (unloaded.status, unloaded.reason.as_str()),
            (
                Status::Killed,
                "the tests could no longer be collected: E   AttributeError: 'NoneType' object has no attribute 'attr'"
            )
        );
        let broken = read(&run(4, "usage error"), &tests, Duration::ZERO, root);
        assert_eq!(
            (broken.status, broken.reason.as_str()),
            (Status::RuntimeError, "pytest exited with status 4: usage error")
        );
        assert!(broken.killed_by.is_empty());
        // pytest's internal error as it started, raised from a file of the project (a plugin
        // of the project's that calls the mutated code, or the mutated file itself), and one
        // raised from elsewhere alone (pytest, an installed plugin, a copy of the project
        // installed elsewhere, a directory beside the copy):
        let internal = |file: &str| {
            format!("INTERNALERROR> Traceback (most recent call last):\nINTERNALERROR>   File \"/venv/site-packages/_pytest/main.py\", line 283, in wrap_session\nINTERNALERROR>   File \"{file}\", line 12, in pytest_configure\nINTERNALERROR>     for line in marker_lines():\nINTERNALERROR> TypeError: 'NoneType' object is not iterable\n")
        };
        let unstarted = read(&run(3, &internal("/copy/src/pkg/testing.py")), &tests, Duration::ZERO, root);
        assert_eq!(
            (unstarted.status, unstarted.reason.as_str()),
            (
                Status::Killed,
                "pytest could not start: INTERNALERROR> TypeError: 'NoneType' object is not iterable"
            )
        );
        for elsewhere in
            ["/venv/site-packages/pkg/testing.py", "/copy-1/pkg/testing.py", "/support/mutdelta_collector.py"]
        {
            let broken = read(&run(3, &internal(elsewhere)), &tests, Duration::ZERO, root);
            assert_eq!(broken.status, Status::RuntimeError, "{elsewhere}");
        }
        // pytest 9's words when loading plugins failed (here: pluggy, which loads them, was
        // mutated), and when mutdelta's own plugin would not load:
        let plugins = "Error while loading plugin \"pytest11\".\nAttributeError: 'NoneType' object has no attribute 'append'\n";
        assert_eq!(read(&run(3, plugins), &tests, Duration::ZERO, root).status, Status::Killed);
        let ours =
            "Error while loading plugin \"mutdelta_collector\".\nImportError: cannot import name 'x'\n";
        assert_eq!(read(&run(3, ours), &tests, Duration::ZERO, root).status, Status::RuntimeError);
        // pytest's usage error on a configuration file of the project's, which pytest reads
        // with the project (iniconfig) mutated; and one on a file elsewhere:
        let config = |file: &str| format!("ERROR: {file}:7: unexpected value continuation\n");
        let unreadable = read(&run(4, &config("/copy/tox.ini")), &tests, Duration::ZERO, root);
        assert_eq!(
            (unreadable.status, unreadable.reason.as_str()),
            (Status::Killed, "pytest could not start: ERROR: /copy/tox.ini:7: unexpected value continuation")
        );
        let elsewhere = read(&run(4, &config("/copy-1/tox.ini")), &tests, Duration::ZERO, root);
        assert_eq!(elsewhere.status, Status::RuntimeError);
        // The copy named in pytest's header, not in its error:
        let usage = "rootdir: /copy/\nERROR: usage: pytest [options] [file_or_dir]\n";
        assert_eq!(read(&run(4, usage), &tests, Duration::ZERO, root).status, Status::RuntimeError);
    }

    #[test]
    fn pytest_s_closing_count_of_the_tests_is_told_from_other_lines() {
        for counted in [
            "1 failed, 7 passed in 0.08s",
            "==== 2 errors, 1 warning in 1.20s ====",
            "1 failed, 3 skipped, 2 deselected in 0.50s (0:00:00)",
            "1 xfailed, 1 xpassed, 1 error, 2 warnings in 3s",
        ] {
            assert!(ran_tests(&format!("Traceback (most recent call last):\n{counted}\n")), "{counted}");
        }
        for other in [
            "1 failed",
            "3 frames in 0.1s",
            "1 failed, many passed in 0.1s",
            "two failed in 0.1s",
            "1 failed in no time",
            "LookupError: unknown encoding: x",
            "  File \"/copy/pkg/plugin.py\", line 4, in pytest_configure",
        ] {
            assert!(!ran_tests(other), "{other}");
        }
    }

    #[test]
    fn a_run_that_never_got_to_a_test_is_told_from_one_whose_tests_failed() {
        let record = |code, tail: &str| RunRecord {
            how: crate::model::record::How::Fork,
            commands: vec![crate::model::record::CommandRecord::new(
                vec!["pytest".into()],
                "/copy".into(),
                &[],
                Exit::Code(code),
                Duration::ZERO,
            )],
            tail: tail.into(),
            fallback: None,
            split: None,
        };
        let collection = "ERROR tests/test_a.py - TypeError\n!!! Interrupted: 1 error during collection !!!\n1 error in 0.1s\n";
        assert!(ran_no_test(&record(2, collection)));
        // Exit 2 is also a run interrupted after tests ran (Ctrl-C, `pytest.exit`).
        assert!(!ran_no_test(&record(2, "!!! KeyboardInterrupt !!!\n1 passed in 3.0s\n")));
        assert!(ran_no_test(&record(4, "ERROR: found no collectors for tests/test_a.py::test_x\n")));
        assert!(ran_no_test(&record(5, "no tests ran in 0.01s\n")));
        assert!(ran_no_test(&record(1, "Traceback (most recent call last):\nLookupError: x\n")));
        assert!(!ran_no_test(&record(
            1,
            "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed in 0.1s\n"
        )));
        assert!(!ran_no_test(&record(3, "INTERNALERROR> KeyError\n")));
    }
}
