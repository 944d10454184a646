//! Which tests a mutant of module-level code tries first: those whose files import its module by name, and those the test-impact map saw run a function of its file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::coverage::{self, CoverageMap, TestCoverage};
use super::job::{Fresh, PythonJob};
use super::{impact, select};
use crate::model::plan::Plan;
use crate::run::job::Job;

/// The dotted name of the module at `path` (relative to the project's root): `pkg/sub/mod.py`
/// is `pkg.sub.mod`, `pkg/__init__.py` is `pkg`. A source directory (`src/`) stays in: an
/// import names a suffix of it.
pub fn module_of(path: &Path) -> String {
    let mut parts: Vec<String> = path
        .with_extension("")
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() > 1 && parts.last().is_some_and(|last| last == "__init__") {
        parts.pop();
    }
    parts.join(".")
}

/// The modules `source` imports by name: `import a.b, c as d` gives `a.b` and `c`; `from a.b
/// import c, d as e` gives `a.b`, `a.b.c` and `a.b.d` (a name imported from a package may be
/// its module), its names also in parentheses over several lines or after a backslash. Read
/// line by line, not parsed: relative imports are left out, and this only orders the tests,
/// never chooses them.
pub fn imported_modules(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let name = |text: &str| text.split(" as ").next().unwrap_or("").trim().to_string();
    let dotted = |text: &str| {
        !text.is_empty()
            && text
                .split('.')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
    };
    let mut lines = source.lines().map(|line| line.split('#').next().unwrap_or("").trim());
    while let Some(line) = lines.next() {
        let mut statement = line.to_string();
        // An import's names go on until the parenthesis closes, or while a line ends in a
        // backslash; no other statement is read.
        let import = statement.starts_with("import ") || statement.starts_with("from ");
        let open = |text: &str| text.contains('(') && !text.contains(')');
        while import && (open(&statement) || statement.ends_with('\\')) {
            let Some(next) = lines.next() else { break };
            statement = format!("{} {next}", statement.trim_end_matches('\\'));
        }
        if let Some(names) = statement.strip_prefix("import ") {
            out.extend(names.split(',').map(name).filter(|module| dotted(module)));
        } else if let Some((module, names)) =
            statement.strip_prefix("from ").and_then(|rest| rest.split_once(" import "))
        {
            let module = module.trim();
            if !dotted(module) {
                continue;
            }
            out.insert(module.to_string());
            let names = names.replace(['(', ')'], " ");
            out.extend(names.split(',').map(name).filter(|n| dotted(n)).map(|n| format!("{module}.{n}")));
        }
    }
    out
}

/// Whether an import of `imported` names the module `module` (dotted, from the root): the whole
/// of it, or a suffix of whole parts (`semver.version` for `src.semver.version`). A one-part
/// name is a suffix only below a source directory (`src.tool`): `operator` is the standard
/// library's, not `toolz.curried.operator`.
pub fn names_module(imported: &str, module: &str) -> bool {
    if module == imported {
        return true;
    }
    let Some(above) = module.strip_suffix(imported).and_then(|rest| rest.strip_suffix('.')) else {
        return false;
    };
    imported.contains('.') || matches!(above, "src" | "lib")
}

/// A mutant whose line ran at import first tries, beside the tests that ran its line within
/// themselves, those `likely` names for its file: the likeliest to read what its module-level
/// line made. Only when they are at most half of what the mutant runs: a kill among them spares
/// the rest; without one its whole selection runs, as before.
pub fn try_likely_first(
    jobs: &mut [Job<PythonJob>],
    plan: &Plan,
    map: &CoverageMap,
    likely: &mut dyn FnMut(&Path, &str) -> bool,
) {
    let mut in_order: Vec<&TestCoverage> = map.tests.iter().collect();
    in_order.sort_by_key(|test| test.order);
    for job in jobs.iter_mut() {
        if job.data.fresh != Some(Fresh::AtImport) {
            continue;
        }
        let path = &plan.files[job.planned.file].path;
        let runs: Vec<&str> = in_order
            .iter()
            .map(|test| test.id.as_str())
            .filter(|id| coverage::selection_runs(&job.tests, &job.data.left_out, id))
            .collect();
        let already: BTreeSet<&str> = job.data.tried_first.iter().map(String::as_str).collect();
        let more: Vec<String> = runs
            .iter()
            .filter(|id| !already.contains(**id) && likely(path, id))
            .map(|id| id.to_string())
            .collect();
        if !more.is_empty() && (already.len() + more.len()) * 2 <= runs.len() {
            job.data.tried_first.extend(more);
        }
    }
}

/// `likely` for `try_likely_first`: a test whose file, in the copy at `root`, imports the
/// mutated module by name, or that `users` (the test-impact map's, per file) saw run one of
/// the file's functions. Each test file is read once; a test id naming a file outside the copy
/// (the project's tests name them) reads nothing.
pub fn importers_and_users<'a>(
    root: &'a Path,
    users: &'a BTreeMap<String, BTreeSet<String>>,
) -> impl FnMut(&Path, &str) -> bool + 'a {
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    move |mutated: &Path, test: &str| {
        let used = users.get(mutated.to_string_lossy().as_ref()).is_some_and(|tests| tests.contains(test));
        let file = select::file_of(test).to_string();
        let imported = imports.entry(file.clone()).or_insert_with(|| {
            let source = if impact::inside_project(&file) {
                std::fs::read_to_string(root.join(&file)).ok()
            } else {
                None
            };
            source.map(|source| imported_modules(&source)).unwrap_or_default()
        });
        let module = module_of(mutated);
        used || imported.iter().any(|name| names_module(name, &module))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_is_named_by_its_path_and_a_package_by_its_directory() {
        assert_eq!(module_of(Path::new("toolz/curried/operator.py")), "toolz.curried.operator");
        assert_eq!(module_of(Path::new("pkg/__init__.py")), "pkg");
        assert_eq!(module_of(Path::new("setup.py")), "setup");
    }

    #[test]
    fn imports_are_read_in_each_form_and_other_lines_are_not() {
        let source = "import toolz\nimport toolz.curried.operator as cop, os\nfrom semver.version import Version\n\
                      from toolz.curried import (take,\n    operator as cop)\nfrom . import sibling\n# import commented.out\n\
                      x = 'import not.this'\nfrom a import b as c  # why\nfrom p.q import r, \\\n    s\n\
                      call = f(\"(\"\nimport after.paren\n";
        let found = imported_modules(source);
        let expected = [
            "a",
            "a.b",
            "after.paren",
            "os",
            "p.q",
            "p.q.r",
            "p.q.s",
            "semver.version",
            "semver.version.Version",
            "toolz",
            "toolz.curried",
            "toolz.curried.operator",
            "toolz.curried.take",
        ];
        assert_eq!(found, expected.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>());
    }

    #[test]
    fn an_import_names_the_module_or_a_suffix_of_whole_parts() {
        assert!(names_module("semver.version", "src.semver.version"));
        assert!(names_module("toolz.curried.operator", "toolz.curried.operator"));
        assert!(!names_module("version", "src.semver.subversion"));
        assert!(!names_module("semver", "src.semver.version"), "the package is not its module");
        assert!(!names_module("operator", "toolz.curried.operator"), "the standard library's");
        assert!(names_module("tool", "src.tool"));
    }

    #[test]
    fn a_test_file_is_read_inside_the_copy_only() {
        let outside = tempfile::tempdir().unwrap();
        let copy = outside.path().join("copy");
        std::fs::create_dir_all(copy.join("tests")).unwrap();
        std::fs::write(copy.join("tests/test_a.py"), "import pkg.mod\n").unwrap();
        std::fs::write(outside.path().join("test_b.py"), "import pkg.mod\n").unwrap();
        let users = BTreeMap::new();
        let mut likely = importers_and_users(&copy, &users);
        let mutated = Path::new("pkg/mod.py");
        assert!(likely(mutated, "tests/test_a.py::test_one"));
        assert!(!likely(mutated, "../test_b.py::test_two"), "outside the copy");
        let absolute = format!("{}::test_two", outside.path().join("test_b.py").display());
        assert!(!likely(mutated, &absolute), "outside the copy");
    }

    fn job(id: usize, fresh: Option<Fresh>, tests: &[&str]) -> Job<PythonJob> {
        let mutant = mutators::python::mutate("LIMIT = 1\n", &[1]).expect("mutants").mutants[0].clone();
        let planned = crate::model::plan::PlannedMutant { id, file: 0, mutant };
        let tests: Vec<String> = tests.iter().map(|t| t.to_string()).collect();
        let data = PythonJob { fresh, ..PythonJob::default() };
        Job::new(planned, tests, std::time::Duration::from_secs(10), std::time::Duration::ZERO).with(data)
    }

    fn map(ids: &[&str]) -> CoverageMap {
        let tests = ids
            .iter()
            .enumerate()
            .map(|(order, id)| TestCoverage {
                id: id.to_string(),
                duration: std::time::Duration::ZERO,
                order,
                lines: BTreeMap::new(),
            })
            .collect();
        CoverageMap { tests, ..CoverageMap::default() }
    }

    #[test]
    fn a_mutant_run_at_import_tries_the_likely_tests_first_when_they_are_few() {
        let file = crate::model::plan::FilePlan {
            path: "pkg/ops.py".into(),
            language: super::super::spec::LANGUAGE,
            source: String::new(),
            lines: Vec::new(),
            statements: Vec::new(),
            mutants: Vec::new(),
        };
        let plan = Plan { files: vec![file], ..Plan::default() };
        let map = map(&["t/a.py::one", "t/b.py::two", "t/c.py::three", "t/d.py::four"]);
        let mut jobs = vec![
            job(1, Some(Fresh::AtImport), &[]),
            job(2, None, &[]),
            job(3, Some(Fresh::AtImport), &["t/b.py", "t/c.py"]),
        ];
        let mut likely = |_: &Path, test: &str| test.starts_with("t/c.py");
        try_likely_first(&mut jobs, &plan, &map, &mut likely);
        assert_eq!(jobs[0].data.tried_first, ["t/c.py::three"], "1 of the 4 tests it runs");
        assert!(jobs[1].data.tried_first.is_empty(), "swapped: its own tests ran the line");
        assert_eq!(jobs[2].data.tried_first, ["t/c.py::three"], "1 of the 2 it runs");
        let mut jobs = vec![job(1, Some(Fresh::AtImport), &[])];
        jobs[0].data.tried_first = vec!["t/a.py::one".to_string()];
        try_likely_first(&mut jobs, &plan, &map, &mut likely);
        assert_eq!(
            jobs[0].data.tried_first,
            ["t/a.py::one", "t/c.py::three"],
            "after those that ran its line"
        );
        let mut jobs = vec![job(1, Some(Fresh::AtImport), &[])];
        let mut most = |_: &Path, test: &str| !test.starts_with("t/d.py");
        try_likely_first(&mut jobs, &plan, &map, &mut most);
        assert!(jobs[0].data.tried_first.is_empty(), "not when they are most of what it runs");
    }
}
