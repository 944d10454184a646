//! Bytecode kept in the copies though the user's environment turns writing it off: only inside the copy, only for the source it was made from, and verdicts as with writing on.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{fixture_repo_variant, hermetic, python, read_valid_report, Run};

const KEEPER: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/python/rewritten.py"));

/// Runs `code` with `python` in `copy`, bytecode writing off, the keeper installed first and
/// `path` searched too; its exit status.
fn run_in(copy: &Path, support: &Path, path: &Path, code: &str) -> std::process::Output {
    let script =
        format!("import sys\nimport mutdelta_rewritten\nmutdelta_rewritten.install()\nimport pytest\n{code}");
    Command::new(python())
        .args(["-c", &script])
        .current_dir(copy)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONPATH", std::env::join_paths([support, path]).unwrap())
        .output()
        .unwrap()
}

fn cached(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("__pycache__")) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn compiled_and_rewritten_modules_are_kept_in_the_copy_only_and_taken_only_for_their_own_source() {
    let tmp = tempfile::tempdir().unwrap();
    let (support, copy, outside) =
        (tmp.path().join("support"), tmp.path().join("copy"), tmp.path().join("outside"));
    for dir in [&support, &copy.join("pkg"), &copy.join("tests"), &outside] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(support.join("mutdelta_rewritten.py"), KEEPER).unwrap();
    std::fs::write(copy.join("pkg/__init__.py"), "").unwrap();
    let module = copy.join("pkg/mod.py");
    std::fs::write(&module, "VALUE = 1\n").unwrap();
    std::fs::write(copy.join("expected"), "1").unwrap();
    std::fs::write(
        copy.join("tests/test_mod.py"),
        "from pkg.mod import VALUE\n\ndef test_value():\n    assert VALUE == int(open('expected').read())\n",
    )
    .unwrap();
    std::fs::write(outside.join("outer.py"), "X = 1\n").unwrap();
    // A package of the copy whose cache directory leads out of it (as a hostile test could
    // leave it): nothing is written through it.
    std::fs::create_dir_all(copy.join("linked")).unwrap();
    std::fs::write(copy.join("linked/__init__.py"), "Y = 1\n").unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, copy.join("linked/__pycache__")).unwrap();
    std::fs::write(outside.join("test_outer.py"), "def test_outer():\n    assert True\n").unwrap();
    let tests =
        format!("['-q', '-p', 'no:cacheprovider', 'tests/test_mod.py', {:?}]", outside.join("test_outer.py"));

    let first =
        run_in(&copy, &support, &outside, &format!("import outer, linked\nsys.exit(pytest.main({tests}))"));
    assert!(first.status.success(), "{first:?}");
    let kept = cached(&copy.join("pkg"));
    assert!(kept.iter().any(|name| name.starts_with("mod.cpython-")), "{kept:?}");
    let rewritten = cached(&copy.join("tests"));
    assert!(
        rewritten.iter().any(|name| name.starts_with("test_mod.") && name.contains("-pytest-")),
        "{rewritten:?}"
    );
    assert_eq!(cached(&outside), Vec::<String>::new(), "nothing is written outside the copy");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nor through a link out of it");

    // The module changes to source of the same size and the same modification time (as a
    // mutant written within the same second would): its kept bytecode must not be taken.
    let stamp = std::fs::metadata(&module).unwrap().modified().unwrap();
    std::fs::write(&module, "VALUE = 2\n").unwrap();
    std::fs::File::options().write(true).open(&module).unwrap().set_modified(stamp).unwrap();
    std::fs::write(copy.join("expected"), "2").unwrap();
    // The test module, unchanged, is read as kept: rewriting it again would fail. The one
    // outside the copy was not kept: it is rewritten again.
    let second = run_in(
        &copy,
        &support,
        &outside,
        &format!(
            "from _pytest.assertion import rewrite\n\
             rewrite_test = rewrite._rewrite_test\n\
             def refuse(fn, config):\n    \
                 assert fn.name != 'test_mod.py', 'rewritten again'\n    \
                 return rewrite_test(fn, config)\n\
             rewrite._rewrite_test = refuse\n\
             sys.exit(pytest.main({tests}))"
        ),
    );
    assert!(second.status.success(), "{second:?}");
    assert_eq!(cached(&outside), Vec::<String>::new());
}

/// Each mutant's status, by file, line and replacement. (Which test is named as its killer
/// may differ from run to run when several fail on it: the fastest first is measured anew.)
fn verdicts(report: &Value) -> BTreeMap<String, Value> {
    let mut verdicts = BTreeMap::new();
    for (path, file) in report["files"].as_object().unwrap() {
        for mutant in file["mutants"].as_array().unwrap() {
            let key = format!("{path}:{}:{}", mutant["location"]["start"]["line"], mutant["replacement"]);
            verdicts.insert(key, mutant["status"].clone());
        }
    }
    verdicts
}

#[test]
fn with_bytecode_writing_off_the_verdicts_are_those_of_a_run_that_writes_it() {
    // Mutants swapped in, imported fresh, a lost kill of the audit, the rest of the suite.
    let fixtures = [
        ("early_collector", "after"),
        ("swap_pitfalls", "after"),
        ("kill_loss", "weakened"),
        ("tested_elsewhere", "after"),
    ];
    for (fixture, variant) in fixtures {
        let repo = fixture_repo_variant(fixture, variant);
        let mut runs = Vec::new();
        for off in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let out = tempfile::tempdir().unwrap();
            let json = out.path().join("r.json");
            let python = python();
            let mut command = hermetic(repo.path(), tmp.path());
            command
                .args([
                    "check",
                    "--python",
                    python.to_str().unwrap(),
                    "-j",
                    "2",
                    "--commit",
                    "HEAD",
                    "--no-cache",
                ])
                .args(["--json", json.to_str().unwrap()]);
            if off {
                command.env("PYTHONDONTWRITEBYTECODE", "1");
            }
            let run = Run::of(&command.output().unwrap());
            assert!(run.code == 0 || run.code == 1, "{fixture}: {run:?}");
            let report = read_valid_report(&json);
            let lost = report["mutdelta"]["audit"]["lostKills"].as_array().map_or(0, Vec::len);
            runs.push((run.code, verdicts(&report), lost));
        }
        assert!(!runs[0].1.is_empty() || runs[0].2 > 0, "{fixture}: nothing to compare");
        assert_eq!(runs[0], runs[1], "{fixture}");
    }
}
