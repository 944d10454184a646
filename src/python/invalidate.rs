//! Which tests a change invalidates: a test-impact map's records judged against the project now, the tests they prove cannot reach the change, and why the others could not be ruled out.

use crate::model::report::Floor;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::impact::{FileBlocks, ImpactMap, Now, Reach, RecordedState, SKELETON};

/// What the map proves for a change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuledOut {
    /// The tests that cannot reach an added line, with their parameters' digest: each is one
    /// only while its parameters are those recorded.
    pub tests: BTreeMap<String, String>,
    /// The recorded states they were proven from, in words.
    pub at: Vec<String>,
    /// Why a recorded state was not used, for each one that was not (or why the map was not).
    pub unused: Vec<String>,
    /// The recorded tests of a usable state the map could not rule out, by the first reason
    /// that holds for each, with what each took when it was recorded: the floor a check pays
    /// whatever its mutants.
    pub kept: BTreeMap<String, BTreeMap<String, f64>>,
    /// The tests the rest of the suite collects, every one ruled out, when a recorded state
    /// proves it collects no other (`rest_left_nothing`): the rest then need not start.
    pub nothing_left: Option<Vec<String>>,
}

impl RuledOut {
    /// One line per reason tests were kept, the costliest first (`N tests (S s recorded) could
    /// not be ruled out: why`), of the tests `counts` accepts (those of the run it describes).
    pub fn floor(&self, counts: &dyn Fn(&str) -> bool) -> Vec<String> {
        self.floor_by_reason(counts)
            .into_iter()
            .map(|Floor { reason, tests, seconds }| {
                let count = crate::words::count_of(tests, "test", "tests");
                format!("{count} ({seconds:.1} s recorded) could not be ruled out: {reason}")
            })
            .collect()
    }

    /// `floor`, as the report keeps it: per reason, the tests `counts` accepts and their
    /// recorded time, the costliest first.
    pub fn floor_by_reason(&self, counts: &dyn Fn(&str) -> bool) -> Vec<Floor> {
        let mut reasons: Vec<Floor> = self
            .kept
            .iter()
            .map(|(why, tests)| {
                let counted: Vec<f64> =
                    tests.iter().filter(|(test, _)| counts(test)).map(|(_, seconds)| *seconds).collect();
                Floor { reason: why.clone(), tests: counted.len(), seconds: counted.iter().sum() }
            })
            .filter(|floor| floor.tests > 0)
            .collect();
        reasons.sort_by(|a, b| {
            b.seconds.total_cmp(&a.seconds).then(b.tests.cmp(&a.tests)).then(a.reason.cmp(&b.reason))
        });
        reasons
    }
}

/// The tests of `map` that cannot reach the lines `added` (per file relative to the root) of
/// the project as it is `now`. `is_test_file` tells the files a new test file may be.
pub fn rule_out(
    map: &ImpactMap,
    now: &Now,
    added: &BTreeMap<PathBuf, Vec<usize>>,
    is_test_file: &dyn Fn(&Path) -> bool,
) -> RuledOut {
    judge(map, now, added, is_test_file, None)
}

/// `rule_out`, for a check whose first round runs the tests `first` names: with whether the
/// rest of the suite is left with nothing to run (`RuledOut::nothing_left`).
pub fn rule_out_for_rounds(
    map: &ImpactMap,
    now: &Now,
    added: &BTreeMap<PathBuf, Vec<usize>>,
    is_test_file: &dyn Fn(&Path) -> bool,
    first: &dyn Fn(&str) -> bool,
) -> RuledOut {
    judge(map, now, added, is_test_file, Some(first))
}

/// `rule_out`, and with `first`, `rule_out_for_rounds`.
fn judge(
    map: &ImpactMap,
    now: &Now,
    added: &BTreeMap<PathBuf, Vec<usize>>,
    is_test_file: &dyn Fn(&Path) -> bool,
    first: Option<&dyn Fn(&str) -> bool>,
) -> RuledOut {
    let reaching = reaching(now, added);
    let modules = Modules::of(now);
    let mut out = RuledOut::default();
    let mut usable: BTreeMap<&String, Changes> = BTreeMap::new();
    let mut states: Vec<(&String, &RecordedState)> = map.states.iter().collect();
    states.sort_by_key(|(_, state)| std::cmp::Reverse(state.order));
    for (id, state) in states {
        match changed_since(state, now, &modules, is_test_file) {
            Ok(mut changed) => {
                // Module-level code that changed, or holds a mutated line, runs at import: it
                // reaches the code that imports its module, whichever test ran then.
                let mut imported = changed.modules.clone();
                imported.extend(
                    reaching.iter().filter(|(_, block)| block == SKELETON).map(|(file, _)| file.clone()),
                );
                changed.importers = modules.importers(&imported, now);
                usable.insert(id, changed);
            }
            Err(why) => {
                out.unused.push(format!("the test-impact map's record of {} was not used: {why}", state.at))
            }
        }
    }
    for (test, entry) in &map.tests {
        let then = &map.states[&entry.state];
        // A test recorded at a state that could not be used is no floor: the note on that
        // record says why.
        let Some(changed) = usable.get(&entry.state) else { continue };
        let why = why_kept(test, &entry.reach, changed, &reaching, then, now);
        match why {
            Some(why) => {
                out.kept.entry(why).or_default().insert(test.clone(), entry.reach.seconds);
            }
            None => {
                let params = entry.reach.params.clone().expect("a test without parameters is kept");
                out.tests.insert(test.clone(), params);
            }
        }
    }
    // The states that decided, even when they ruled nothing out: the map was consulted. Two
    // records of one state (a first round's and a second's) are said once.
    let consulted: BTreeSet<&String> =
        map.tests.values().map(|entry| &entry.state).filter(|state| usable.contains_key(state)).collect();
    let at: BTreeSet<&String> = consulted.iter().map(|id| &map.states[*id].at).collect();
    out.at = at.into_iter().cloned().collect();
    if let Some(first) = first {
        let proven = Proven { map, now, usable: &usable, reaching: &reaching, is_test_file, first };
        out.nothing_left = rest_left_nothing(&proven, &out);
    }
    out
}

/// What `rest_left_nothing` judges from: the map, the project now, the recorded states that
/// can be used with what changed since each, the blocks holding an added line, and which tests
/// the first round runs.
struct Proven<'a> {
    map: &'a ImpactMap,
    now: &'a Now,
    usable: &'a BTreeMap<&'a String, Changes>,
    reaching: &'a BTreeSet<(String, String)>,
    is_test_file: &'a dyn Fn(&Path) -> bool,
    first: &'a dyn Fn(&str) -> bool,
}

/// The blocks holding a line of `added`, as the project is `now`.
fn reaching(now: &Now, added: &BTreeMap<PathBuf, Vec<usize>>) -> BTreeSet<(String, String)> {
    let mut reaching: BTreeSet<(String, String)> = BTreeSet::new();
    for (path, lines) in added {
        let path = path.to_string_lossy().into_owned();
        if let Some(blocks) = now.table.get(&path) {
            reaching.extend(lines.iter().map(|&line| (path.clone(), block_of(blocks, line))));
        }
    }
    reaching
}

/// The tests the rest of the suite (every test but those `first` names: the first round's)
/// collects now, when a state of `map` that recorded its collection proves that pytest would
/// collect those it collected then, and `ruled_out` holds every one of them: then the rest has
/// nothing to run. None when no state proves it, or a test would run.
///
/// A state proves the collection when its record of the collection is usable (`changed_since`:
/// nothing that ran while the tests were collected changed, nor anything it read, nor pytest's
/// configuration), every test file outside the first round's is the same file as then (a new
/// test or fixture parameter changes what is collected), no module the collection imported
/// gained a name or changed at module level (parameters drawn from a module's names), no line
/// the collection ran holds an added line, and each test it collected outside the first
/// round's lies in a test module (a doctest or a plugin's test may come with any file).
fn rest_left_nothing(judged: &Proven, ruled_out: &RuledOut) -> Option<Vec<String>> {
    let Proven { map, now, usable, reaching, is_test_file, first } = *judged;
    // Any usable state that proves it will do: each proves what pytest collects now.
    usable.iter().find_map(|(id, changes)| {
        let state = &map.states[*id];
        let collected = state.collected.as_ref()?;
        if !collects_as_then(state, now, changes, reaching, is_test_file, first) {
            return None;
        }
        let rest: Vec<String> = collected.iter().filter(|test| !first(test)).cloned().collect();
        let proven = |test: &String| {
            super::spec::is_test_module(Path::new(super::select::file_of(test)))
                && ruled_out.tests.contains_key(test)
        };
        rest.iter().all(proven).then_some(rest)
    })
}

/// Whether pytest collects now, outside the first round's files (`first`), what it collected
/// at `state`, which `changes` tells from now (`rest_left_nothing`).
fn collects_as_then(
    state: &RecordedState,
    now: &Now,
    changes: &Changes,
    reaching: &BTreeSet<(String, String)>,
    is_test_file: &dyn Fn(&Path) -> bool,
    first: &dyn Fn(&str) -> bool,
) -> bool {
    let digest =
        |table: &super::impact::Table, path: &String| table.get(path).map(|blocks| blocks.digest.clone());
    let test_files = state.table.keys().chain(now.table.keys()).filter(|path| is_test_file(Path::new(path)));
    let same_test_files = test_files.filter(|path| !first(path)).all(|path| {
        let then = digest(&state.table, path);
        then == digest(&now.table, path) && then.as_ref().is_none_or(|digest| !digest.is_empty())
    });
    let imported = |file: &String| state.collection.blocks.contains(&(file.clone(), SKELETON.to_string()));
    let reread = changes.grown.iter().chain(&changes.modules).any(imported);
    let ran_added = state.collection.blocks.iter().any(|block| reaching.contains(block));
    same_test_files && !reread && !ran_added
}

/// Why the test `test`, recorded with `reach` at `then`, may reach the change (`changed`, the
/// blocks holding an added line `reaching`); none when it cannot. A test is what it executed
/// (its own definition, the fixtures it used, the code they called), the files it read, and
/// the module- and class-level code of its file; in a test module, the definitions of the
/// file's other tests are no part of it.
fn why_kept(
    test: &str,
    reach: &Reach,
    changed: &Changes,
    reaching: &BTreeSet<(String, String)>,
    then: &RecordedState,
    now: &Now,
) -> Option<String> {
    let own_file = test.split("::").next().unwrap_or(test);
    if reach.spawned {
        return Some(format!("they started a process{}, and what it ran is not recorded", programs(reach)));
    }
    if reach.untraced {
        return Some(
            "what they ran was not all recorded (the trace function was dropped while they ran)".to_string(),
        );
    }
    if reach.params.is_none() {
        return Some("their parameters could not be told apart".to_string());
    }
    if let Some((file, _)) = reach.blocks.iter().find(|block| reaching.contains(*block)) {
        return Some(format!("they ran code of {file} that holds a mutated line"));
    }
    if let Some((file, _)) = reach.blocks.iter().find(|block| changed.blocks.contains(*block)) {
        return Some(format!("they ran code of {file} that the change edits or removes"));
    }
    if let Some((file, _)) = reach.blocks.iter().find(|(file, _)| changed.grown.contains(file)) {
        return Some(format!(
            "they ran code of {file}, which gained a definition or changed at module level"
        ));
    }
    let imported = reach.blocks.iter().find_map(|(file, _)| changed.importers.get(file));
    let conftest_imports = || {
        let conftests = changed.importers.iter().filter(|(file, _)| file.ends_with("conftest.py"));
        let mut reaching =
            conftests.filter(|(file, _)| fixture_scope(file).is_some_and(|scope| in_scope(own_file, &scope)));
        reaching.next().map(|(_, module)| module)
    };
    if let Some(module) = imported.or_else(|| changed.importers.get(own_file)).or_else(conftest_imports) {
        return Some(format!(
            "the module-level code of {module} changed or holds a mutated line, and they import it"
        ));
    }
    match own_definition(test, then) {
        Some(own) if changed.blocks.contains(&own) => {
            return Some(format!("their own definitions in {own_file} changed"));
        }
        Some(_) => {}
        // A test of no definition of its file (a doctest, an inherited or generated test):
        // any change of the file may be its.
        None if changed.blocks.iter().any(|(file, _)| file == own_file) => {
            return Some(format!("{own_file}, which holds them, changed"));
        }
        None => {}
    }
    if changed.grown.contains(own_file) {
        return Some(format!("{own_file}, which holds them, gained a definition or changed at module level"));
    }
    if let Some((scope, file)) = changed.scopes.iter().find(|(scope, _)| in_scope(own_file, scope)) {
        let whose = if scope.is_empty() { "every test".to_string() } else { format!("the tests of {scope}") };
        return Some(format!("{file}, whose fixtures reach {whose}, changed"));
    }
    if let Some((path, _)) = reach.data.iter().find(|(path, digest)| now.data.get(*path) != Some(digest)) {
        return Some(format!("{path}, which they read, changed"));
    }
    None
}

/// The programs the processes of `reach` ran, in words (` (git, sh)`), at most three named,
/// each of letters, digits and `._+-` only (a map file may be forged); nothing when none was
/// recorded.
fn programs(reach: &Reach) -> String {
    let plain = |name: &String| -> String {
        name.chars().filter(|c| c.is_ascii_alphanumeric() || "._+-".contains(*c)).take(40).collect()
    };
    let names: Vec<String> = reach.commands.iter().map(plain).filter(|name| !name.is_empty()).collect();
    match names.len() {
        0 => String::new(),
        1..=3 => format!(" ({})", names.join(", ")),
        more => format!(" ({} and {} more)", names[..3].join(", "), more - 3),
    }
}

/// The block of a test's own definition (`tests/t.py::Case::test_x[1]` is `Case.test_x` of
/// `tests/t.py`), when its file defined it as a test at the state it was recorded at.
fn own_definition(test: &str, then: &RecordedState) -> Option<(String, String)> {
    let (file, rest) = test.split_once("::")?;
    let name = rest.split('[').next()?.replace("::", ".");
    let defined = then.table.get(file)?.tests.contains(&name);
    defined.then(|| (file.to_string(), name))
}

/// Whether a test of `file` is in a fixture file's `scope`: a directory (`dir/`, or `` for the
/// root), or one test file.
fn in_scope(file: &str, scope: &str) -> bool {
    if scope.is_empty() || scope.ends_with('/') {
        file.starts_with(scope)
    } else {
        file == scope
    }
}

/// The tests whose fixtures a file of shared fixtures provides: a conftest's directory (`dir/`,
/// or `` at the root), a test module's own tests; none for another file (a plugin module's
/// fixtures reach every test that asks for them by name).
fn fixture_scope(path: &str) -> Option<String> {
    let file = Path::new(path);
    let name = file.file_name()?.to_str()?;
    if name == "conftest.py" {
        let directory = path.strip_suffix(name)?;
        return Some(directory.to_string());
    }
    super::spec::is_test_module(file).then(|| path.to_string())
}

/// Whether `name` is one of the test definitions of a file, or a function inside one.
fn is_test_definition(blocks: &FileBlocks, name: &str) -> bool {
    blocks.tests.iter().any(|test| name == test || name.starts_with(&format!("{test}.<locals>.")))
}

/// What changed between a recorded state and now, where the state can be used.
#[derive(Debug, Default)]
struct Changes {
    /// Functions whose definition changed or went.
    blocks: BTreeSet<(String, String)>,
    /// Files that gained a function (other than a test's definition) or a binding, or test
    /// files whose module-level code changed where it only binds names: code elsewhere reaches
    /// a new name only through a changed block, or by looking names up (`getattr`, `dir`) in
    /// that file's module or classes, which a test does only with some of the file's code run.
    grown: BTreeSet<String>,
    /// The scopes (`fixture_scope`) of the files of shared fixtures that changed otherwise
    /// than in a test's definition, each with that file: what a fixture shared between tests
    /// does is recorded for the first test that asks for it alone, and a new autouse fixture
    /// reaches tests that never ran the file's code.
    scopes: BTreeMap<String, String>,
    /// Files whose module-level code or bindings changed, importing nothing the collection had
    /// not imported: what they bind reaches the code that imports them.
    modules: BTreeSet<String>,
    /// The files that import one of `modules`, or a module whose module-level code holds a
    /// mutated line, each with the one it imports (`importers`).
    importers: BTreeMap<String, String>,
}

/// What changed between `state` and `now`; an error saying why the state cannot be used at all.
fn changed_since(
    state: &RecordedState,
    now: &Now,
    modules: &Modules,
    is_test_file: &dyn Fn(&Path) -> bool,
) -> std::result::Result<Changes, String> {
    let mut changes = Changes::default();
    if let Some((name, _)) = state.config.iter().find(|(name, digest)| now.config.get(*name) != Some(digest))
    {
        return Err(format!("pytest's configuration file {name} changed"));
    }
    for (path, then) in &state.table {
        let test_file = is_test_file(Path::new(path));
        match now.table.get(path) {
            Some(current) => changed_file(path, then, current, test_file, state, modules, &mut changes)?,
            None if test_file && then.plain && !then.fixtures => {} // its tests are gone, and no other test ran what it bound
            None => match (test_file && then.plain).then(|| fixture_scope(path)).flatten() {
                Some(scope) => {
                    changes.scopes.insert(scope, path.clone());
                }
                None => return Err(format!("{path} was removed")),
            },
        }
    }
    for (path, current) in now.table.iter().filter(|(path, _)| !state.table.contains_key(*path)) {
        // A new test file that only binds names reaches its own tests alone, but for the
        // fixtures it shares: a new conftest's reach its directory's tests.
        if !(is_test_file(Path::new(path)) && current.plain) {
            return Err(format!("{path} is new"));
        }
        if current.fixtures {
            let hook = current.functions.keys().any(|name| name.starts_with("pytest_"));
            match fixture_scope(path) {
                Some(scope) if !hook => {
                    changes.scopes.insert(scope, path.clone());
                }
                _ => return Err(format!("{path} is new")),
            }
        }
    }
    let collection = &state.collection;
    if collection.spawned {
        return Err(format!("a process{} was started while the tests were collected", programs(collection)));
    }
    if collection.untraced {
        return Err("what ran while the tests were collected was not all recorded".to_string());
    }
    // A file that grew is no matter here: the collection's code that reads its names (to
    // parametrize tests by them) changes only the tests' parameters, which the probe compares.
    if let Some((path, name)) = collection.blocks.iter().find(|block| changes.blocks.contains(*block)) {
        return Err(format!("{name} in {path}, which ran while the tests were collected, changed"));
    }
    if let Some((path, _)) = collection.data.iter().find(|(path, digest)| now.data.get(*path) != Some(digest))
    {
        return Err(format!("{path}, read while the tests were collected, changed"));
    }
    Ok(changes)
}

/// What changed in the file `path`, `then` and now (`current`), into `changes`; an error when
/// the change may reach tests no record can single out.
fn changed_file(
    path: &String,
    then: &FileBlocks,
    current: &FileBlocks,
    test_file: bool,
    state: &RecordedState,
    modules: &Modules,
    changes: &mut Changes,
) -> std::result::Result<(), String> {
    let mut other_than_tests = Vec::new();
    for (name, (fingerprint, _, _)) in &then.functions {
        if current.functions.get(name).map(|function| &function.0) != Some(fingerprint) {
            changes.blocks.insert((path.clone(), name.clone()));
            if !is_test_definition(then, name) {
                other_than_tests.push(name.as_str());
            }
        }
    }
    let added: Vec<&str> = current
        .functions
        .keys()
        .filter(|name| !then.functions.contains_key(*name) && !is_test_definition(current, name))
        .map(String::as_str)
        .collect();
    let grew = !added.is_empty() || current.bindings.keys().any(|name| !then.bindings.contains_key(name));
    let binding = then.bindings.iter().find(|(name, digest)| current.bindings.get(*name) != Some(digest));
    let skeleton = current.skeleton != then.skeleton;
    // Module-level code that only binds names, importing only what the collection imported
    // already: what changed there reaches the code that imports the file (its own tests, for
    // a test file), and the tests that ran its code, alone. A binding binds its one name
    // whatever its value; other module-level code must bind names only, before and after.
    let imports_nothing_new = imports_ran(current, state, modules);
    let binds_only = imports_nothing_new && (!skeleton || (then.plain && current.plain));
    if then.fixtures || current.fixtures {
        if !(skeleton || binding.is_some() || grew || !other_than_tests.is_empty()) {
            return Ok(());
        }
        let hook = other_than_tests.iter().chain(&added).find(|name| name.starts_with("pytest_"));
        return match (fixture_scope(path), hook) {
            (_, Some(hook)) => Err(format!("the pytest hook {hook} in {path} changed")),
            (Some(scope), None) if binds_only || !(skeleton || binding.is_some()) => {
                changes.scopes.insert(scope, path.clone());
                if skeleton || binding.is_some() {
                    changes.modules.insert(path.clone());
                }
                Ok(())
            }
            _ => Err(format!("{path}, which holds fixtures shared between tests, changed")),
        };
    }
    if skeleton || binding.is_some() {
        let test_module_runs_code = test_file && !(then.plain && current.plain);
        if !binds_only || test_module_runs_code {
            return Err(match binding {
                Some((name, _)) if !skeleton => format!("{name} in {path} changed or went"),
                _ => {
                    format!("the module-level code, class headers or decorated definitions of {path} changed")
                }
            });
        }
        changes.modules.insert(path.clone());
        changes.grown.insert(path.clone());
        return Ok(());
    }
    if grew {
        changes.grown.insert(path.clone());
    }
    Ok(())
}

/// The project's Python files by the dotted names an import finds them by: each tail of a
/// file's path (`src/pkg/mod.py` is `mod`, `pkg.mod` and `src.pkg.mod`; `pkg/__init__.py` is
/// `pkg`), whatever directory the tests import from.
struct Modules<'a> {
    files: BTreeMap<String, Vec<&'a String>>,
}

impl<'a> Modules<'a> {
    fn of(now: &'a Now) -> Modules<'a> {
        let mut files: BTreeMap<String, Vec<&'a String>> = BTreeMap::new();
        for path in now.table.keys() {
            let Some(stem) = path.strip_suffix(".py") else { continue };
            let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
            let parts: Vec<&str> = stem.split('/').collect();
            // A part with a dot in it is no package or module name: no tail reaches past it.
            let importable =
                parts.iter().rev().take_while(|part| !part.contains('.') && **part != "__init__");
            for depth in 1..=importable.count() {
                files.entry(parts[parts.len() - depth..].join(".")).or_default().push(path);
            }
        }
        Modules { files }
    }

    /// The files an import of `module` names (not its packages).
    fn files_of(&self, module: &str) -> &[&'a String] {
        self.files.get(module).map_or(&[], Vec::as_slice)
    }

    /// Per file, the changed module (`Changes::modules`) it imports, directly or through other
    /// files of the project (importing a module runs its packages too; a file that imports by a
    /// computed name imports them all): the files whose code may read what a changed module
    /// binds. Each changed module is its own.
    fn importers(&self, changed: &BTreeSet<String>, now: &'a Now) -> BTreeMap<String, String> {
        if changed.is_empty() {
            return BTreeMap::new();
        }
        let mut imported_by: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
        let mut everything: Vec<&String> = Vec::new();
        for (path, blocks) in &now.table {
            for module in &blocks.uses {
                if module == "*" {
                    everything.push(path);
                }
                let mut prefix = String::new();
                for part in module.split('.') {
                    prefix = if prefix.is_empty() { part.to_string() } else { format!("{prefix}.{part}") };
                    for file in self.files_of(&prefix) {
                        imported_by.entry(file).or_default().insert(path);
                    }
                }
            }
        }
        let mut out = BTreeMap::new();
        for module in changed {
            let mut pending = vec![module];
            pending.extend(everything.iter().copied());
            while let Some(file) = pending.pop() {
                if out.contains_key(file) {
                    continue;
                }
                out.insert(file.clone(), module.clone());
                pending.extend(imported_by.get(file).into_iter().flatten().copied());
            }
        }
        out
    }
}

/// Whether every project module `file` imports was imported while the tests were collected at
/// `state` (importing it again runs nothing).
fn imports_ran(file: &FileBlocks, state: &RecordedState, modules: &Modules) -> bool {
    file.imports.iter().all(|module| {
        let imported =
            |path: &&String| state.collection.blocks.contains(&((*path).clone(), SKELETON.to_string()));
        modules.files_of(module).iter().all(imported)
    })
}

/// The block of a file holding `line`: the innermost function around it, else the skeleton.
pub fn block_of(blocks: &FileBlocks, line: usize) -> String {
    blocks
        .functions
        .iter()
        .filter(|(_, (_, first, last))| (*first..=*last).contains(&line))
        .max_by_key(|(_, (_, first, _))| *first)
        .map_or_else(|| SKELETON.to_string(), |(name, _)| name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::impact::tests::*;
    use crate::python::impact::{Entry, Recorded, Table};

    /// `rule_out` of `map` at the project `table` (pytest's configuration unchanged, no data
    /// read), with no line added.
    fn rule_out_without_added(
        map: &ImpactMap,
        table: Table,
        is_test_file: &dyn Fn(&Path) -> bool,
    ) -> RuledOut {
        rule_out(map, &Now { table, config: config(), ..Now::default() }, &BTreeMap::new(), is_test_file)
    }

    fn names(out: &RuledOut) -> Vec<&str> {
        out.tests.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_changed_added_or_removed_pytest_configuration_file_leaves_the_record_unused() {
        for (name, digest) in
            [("pyproject.toml", Some("p2")), ("pyproject.toml", None), ("tox.ini", Some("t1"))]
        {
            let mut now = Now { table: project(), config: config(), ..Now::default() };
            now.config.insert(name.to_string(), digest.map(str::to_string));
            let out = rule_out(&recorded(), &now, &BTreeMap::new(), &|_| true);
            assert!(out.tests.is_empty(), "{name}");
            assert_eq!(
                out.unused,
                [format!("the test-impact map's record of commit 1 was not used: pytest's configuration file {name} changed")]
            );
        }
    }
    fn rule(now: Table, added: &[(&str, usize)]) -> RuledOut {
        let mut lines: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        for (path, line) in added {
            lines.entry(PathBuf::from(path)).or_default().push(*line);
        }
        let now = Now { table: now, config: config(), ..Now::default() };
        rule_out(&recorded(), &now, &lines, &|path| path.starts_with("tests"))
    }

    #[test]
    fn a_test_that_ran_a_changed_function_is_kept_and_one_that_did_not_is_ruled_out() {
        let mut now = project();
        now.get_mut("pkg/a.py").unwrap().functions.get_mut("f").unwrap().0 = "f2".into();
        let out = rule(now, &[("pkg/a.py", 3)]);
        assert_eq!(names(&out), ["tests/test_a.py::test_g", "tests/test_b.py::test_h"]);
        assert_eq!(out.at, ["commit 1"]);
        assert!(out.unused.is_empty());
        // A map that rules nothing out was consulted all the same, and says at which state.
        let mut all = project();
        all.get_mut("pkg/a.py").unwrap().functions.get_mut("g").unwrap().0 = "g2".into();
        all.get_mut("pkg/a.py").unwrap().functions.get_mut("f").unwrap().0 = "f2".into();
        all.get_mut("pkg/a.py").unwrap().functions.get_mut("g.<locals>.h").unwrap().0 = "h2".into();
        let none = rule(all, &[]);
        assert!(none.tests.is_empty());
        assert_eq!(none.at, ["commit 1"]);
    }

    #[test]
    fn an_added_line_in_a_block_unchanged_since_the_record_keeps_the_tests_that_ran_that_block() {
        // The map was recorded at the state under test itself: no block changed since.
        let out = rule(project(), &[("pkg/a.py", 9)]);
        assert_eq!(names(&out), ["tests/test_a.py::test_f", "tests/test_a.py::test_g"]);
    }

    #[test]
    fn a_test_whose_own_file_changed_is_kept() {
        let mut now = project();
        now.get_mut("tests/test_a.py").unwrap().functions.get_mut("test_g").unwrap().0 = "tg2".into();
        let out = rule(now, &[]);
        assert_eq!(names(&out), ["tests/test_b.py::test_h"]);
    }

    #[test]
    fn a_changed_skeleton_that_runs_code_a_new_source_file_or_a_removed_file_leaves_the_record_unused() {
        let mut skeleton = project();
        let a = skeleton.get_mut("pkg/a.py").unwrap();
        (a.skeleton, a.plain) = ("s-a2".into(), false);
        let mut added = project();
        added.insert("pkg/b.py".into(), file("s-b", &[]));
        let mut removed = project();
        removed.remove("pkg/a.py");
        for (now, why) in [
            (skeleton, "the module-level code, class headers or decorated definitions of pkg/a.py changed"),
            (added, "pkg/b.py is new"),
            (removed, "pkg/a.py was removed"),
        ] {
            let out = rule(now, &[]);
            assert!(out.tests.is_empty(), "{why}");
            assert_eq!(out.unused, [format!("the test-impact map's record of commit 1 was not used: {why}")]);
        }
    }

    /// `project()` with pkg/c.py (importing nothing), pkg/d.py (importing pkg.a) and
    /// tests/test_c.py (importing pkg.c), and a test of each kind: one whose own file imports
    /// pkg.a without running its code, one that ran only pkg/c.py, one that ran pkg/d.py.
    fn with_importers() -> (ImpactMap, Table) {
        let mut table = project();
        table.get_mut("tests/test_a.py").unwrap().uses = vec!["pkg.a".into()];
        table.insert("pkg/c.py".into(), file("s-c", &[("k", "k1", 1, 2)]));
        let mut d = file("s-d", &[("m", "m1", 3, 4)]);
        d.uses = vec!["pkg".into(), "pkg.a".into()];
        table.insert("pkg/d.py".into(), d);
        let mut test_c = file("s-tc", &[]);
        test_c.uses = vec!["pkg.c".into()];
        table.insert("tests/test_c.py".into(), test_c);
        let mut map = recorded();
        let tests = BTreeMap::from([
            ("tests/test_a.py::test_k".to_string(), reach(&[("pkg/c.py", "k")])),
            ("tests/test_c.py::test_c".to_string(), reach(&[("pkg/c.py", "k")])),
            ("tests/test_c.py::test_m".to_string(), reach(&[("pkg/d.py", "m")])),
        ]);
        let collection = reach(&[("pkg/c.py", SKELETON)]);
        map.record(
            "commit 1",
            &Recorded { table: table.clone(), config: config(), tests, collection, collected: None },
        );
        let record = map.tests["tests/test_a.py::test_k"].state.clone();
        for entry in map.tests.values_mut() {
            entry.state = record.clone();
        }
        map.states.retain(|id, _| *id == record);
        (map, table)
    }

    #[test]
    fn changed_module_level_code_or_a_binding_keeps_the_tests_that_import_its_module_and_no_other() {
        let (map, table) = with_importers();
        let mut binding = table.clone();
        binding.get_mut("pkg/a.py").unwrap().bindings.insert("LIMIT".into(), "l2".into());
        let mut removed = table.clone();
        removed.get_mut("pkg/a.py").unwrap().bindings.clear();
        let mut skeleton = table.clone();
        skeleton.get_mut("pkg/a.py").unwrap().skeleton = "s-a2".into();
        for now in [binding, removed, skeleton] {
            let out = rule_out_without_added(&map, now, &|path| path.starts_with("tests"));
            assert_eq!(names(&out), ["tests/test_c.py::test_c"]);
            assert!(out.unused.is_empty(), "{:?}", out.unused);
            let why = "the module-level code of pkg/a.py changed or holds a mutated line, and they import it";
            // test_k (its file imports pkg.a) and test_m (it ran pkg/d.py, which does); the
            // three others ran pkg/a.py's code.
            assert_eq!(out.kept[why].len(), 2, "{:?}", out.kept);
            assert_eq!(out.kept.values().map(BTreeMap::len).sum::<usize>(), 5);
        }
        // A file that imports by a computed name may import it.
        let mut dynamic = table.clone();
        dynamic.get_mut("pkg/c.py").unwrap().uses = vec!["*".into()];
        dynamic.get_mut("pkg/a.py").unwrap().skeleton = "s-a2".into();
        assert!(rule_out_without_added(&map, dynamic, &|path| path.starts_with("tests")).tests.is_empty());
    }

    #[test]
    fn a_mutated_module_level_line_keeps_the_tests_that_import_its_module_though_none_ran_it() {
        // Recorded at the state under test itself: the line ran at import, in the collection.
        let (map, table) = with_importers();
        let now = Now { table, config: config(), ..Now::default() };
        let added = BTreeMap::from([(PathBuf::from("pkg/a.py"), vec![6])]);
        let out = rule_out(&map, &now, &added, &|path| path.starts_with("tests"));
        assert_eq!(names(&out), ["tests/test_c.py::test_c"]);
        let why = "the module-level code of pkg/a.py changed or holds a mutated line, and they import it";
        assert_eq!(out.kept[why].len(), 5, "{:?}", out.kept);
    }

    #[test]
    fn a_file_is_found_by_every_dotted_tail_of_its_path_an_import_may_name() {
        let paths = ["src/pkg/mod.py", "src/pkg/__init__.py", "__init__.py", "a.b/c.py", "x/b.c.py"];
        let table: Table = paths.iter().map(|path| (path.to_string(), file("s", &[]))).collect();
        let now = Now { table, ..Now::default() };
        let modules = Modules::of(&now);
        let found = |module: &str| -> Vec<&str> {
            modules.files_of(module).iter().map(|path| path.as_str()).collect()
        };
        assert_eq!(found("pkg.mod"), ["src/pkg/mod.py"]);
        assert_eq!(found("src.pkg.mod"), ["src/pkg/mod.py"]);
        assert_eq!(found("mod"), ["src/pkg/mod.py"]);
        assert_eq!(found("pkg"), ["src/pkg/__init__.py"]);
        assert_eq!(found("c"), ["a.b/c.py"]);
        for unimportable in ["a.b.c", "b.c", "c.py", "__init__", ""] {
            assert!(found(unimportable).is_empty(), "{unimportable}");
        }
    }

    #[test]
    fn changed_module_level_code_that_imports_what_the_collection_did_not_leaves_the_record_unused() {
        let (map, table) = with_importers();
        for change in [
            |a: &mut FileBlocks| a.skeleton = "s-a2".into(),
            |a: &mut FileBlocks| {
                a.bindings.insert("LIMIT".into(), "l2".into());
            },
        ] {
            let mut now = table.clone();
            let a = now.get_mut("pkg/a.py").unwrap();
            change(a);
            a.imports = vec!["pkg.d".into()];
            let out = rule_out_without_added(&map, now, &|path| path.starts_with("tests"));
            assert!(out.tests.is_empty());
            assert_eq!(out.unused.len(), 1, "{:?}", out.unused);
            assert!(
                out.unused[0].ends_with("pkg/a.py changed")
                    || out.unused[0].ends_with("LIMIT in pkg/a.py changed or went"),
                "{:?}",
                out.unused
            );
        }
    }

    #[test]
    fn a_file_that_gains_a_function_or_a_binding_keeps_every_test_that_ran_any_of_its_code() {
        let mut table = project();
        table.insert("pkg/b.py".into(), file("s-b", &[("k", "k1", 1, 2)]));
        let mut map = recorded();
        for state in map.states.values_mut() {
            state.table = table.clone();
        }
        map.tests
            .get_mut("tests/test_b.py::test_h")
            .unwrap()
            .reach
            .blocks
            .insert(("pkg/b.py".into(), "k".into()));
        let rule = |now: Table| rule_out_without_added(&map, now, &|_| false);
        let mut function = table.clone();
        function.get_mut("pkg/b.py").unwrap().functions.insert("new".into(), ("n1".into(), 4, 5));
        let mut binding = table.clone();
        binding.get_mut("pkg/b.py").unwrap().bindings.insert("NEW".into(), "n1".into());
        for now in [function, binding] {
            assert_eq!(names(&rule(now)), ["tests/test_a.py::test_f", "tests/test_a.py::test_g"]);
        }
        assert_eq!(rule(table).tests.len(), 3);
    }

    #[test]
    fn a_test_file_whose_imports_or_marks_change_keeps_its_own_tests_unless_it_imports_what_the_collection_did_not(
    ) {
        let mut map = recorded();
        let state = map.states.values_mut().next().unwrap();
        state.collection.blocks.insert(("pkg/a.py".into(), SKELETON.into()));
        state.table.insert("pkg/b.py".into(), file("s-b", &[]));
        let mut now = state.table.clone();
        let edited = now.get_mut("tests/test_a.py").unwrap();
        edited.skeleton = "s-t2".into();
        edited.imports = vec!["pkg.a".into()];
        let out = rule_out_without_added(&map, now.clone(), &|path| path.starts_with("tests"));
        assert_eq!(names(&out), ["tests/test_b.py::test_h"]);
        now.get_mut("tests/test_a.py").unwrap().imports.push("pkg.b".into());
        let out = rule_out_without_added(&map, now.clone(), &|path| path.starts_with("tests"));
        assert!(out.tests.is_empty(), "pkg/b.py was not imported while the tests were collected");
        now.get_mut("tests/test_a.py").unwrap().imports.pop();
        now.get_mut("tests/test_a.py").unwrap().plain = false;
        let out = rule_out_without_added(&map, now, &|path| path.starts_with("tests"));
        assert!(out.tests.is_empty(), "module-level code that runs more than bindings");
    }

    #[test]
    fn a_new_test_file_that_only_defines_tests_leaves_the_record_usable_and_one_that_runs_code_does_not() {
        let mut plain = project();
        plain.insert("tests/test_new.py".into(), file("s-n", &[]));
        assert_eq!(rule(plain.clone(), &[]).tests.len(), 3);
        plain.get_mut("tests/test_new.py").unwrap().plain = false;
        assert!(rule(plain, &[]).tests.is_empty());
    }

    /// `recorded()` with a file of shared fixtures at `path` in its table, and the project now
    /// with `change` applied to that file.
    fn with_fixtures(path: &str, change: &dyn Fn(&mut FileBlocks)) -> (ImpactMap, Table) {
        let mut map = recorded();
        let mut fixtures = file("s-c", &[("db", "d1", 1, 3)]);
        fixtures.fixtures = true;
        for state in map.states.values_mut() {
            state.table.insert(path.into(), fixtures.clone());
        }
        let mut now = project();
        change(&mut fixtures);
        now.insert(path.into(), fixtures);
        (map, now)
    }

    #[test]
    fn a_changed_conftest_keeps_the_tests_of_its_directory_and_a_changed_hook_leaves_the_record_unused() {
        let edited = |blocks: &mut FileBlocks| blocks.functions.get_mut("db").unwrap().0 = "d2".into();
        let autouse = |blocks: &mut FileBlocks| {
            blocks.functions.insert("clean_env".into(), ("c1".into(), 5, 7));
        };
        let is_test = |path: &Path| path.starts_with("tests") || path.ends_with("conftest.py");
        for change in [&edited as &dyn Fn(&mut FileBlocks), &autouse] {
            // At the root, its fixtures reach every test; under tests/a/, none of these.
            let (map, now) = with_fixtures("conftest.py", change);
            let out = rule_out_without_added(&map, now, &is_test);
            assert!(out.tests.is_empty());
            assert!(out.unused.is_empty(), "{:?}", out.unused);
            assert_eq!(
                out.kept.keys().collect::<Vec<_>>(),
                ["conftest.py, whose fixtures reach every test, changed"]
            );
            assert_eq!(out.kept.values().map(BTreeMap::len).sum::<usize>(), 3);
            let (map, now) = with_fixtures("tests/a/conftest.py", change);
            assert_eq!(rule_out_without_added(&map, now, &is_test).tests.len(), 3);
        }
        let hook = |blocks: &mut FileBlocks| {
            blocks.functions.insert("pytest_collection_modifyitems".into(), ("p1".into(), 5, 7));
        };
        let (map, now) = with_fixtures("tests/a/conftest.py", &hook);
        let out = rule_out_without_added(&map, now, &is_test);
        assert!(out.tests.is_empty());
        assert_eq!(out.unused, ["the test-impact map's record of commit 1 was not used: the pytest hook pytest_collection_modifyitems in tests/a/conftest.py changed"]);
        // Shared fixtures in a module that is not a test's (a plugin): they reach any test.
        let (map, now) = with_fixtures("pkg/plugin.py", &edited);
        let out = rule_out_without_added(&map, now, &is_test);
        assert!(out.tests.is_empty());
        assert_eq!(out.unused, ["the test-impact map's record of commit 1 was not used: pkg/plugin.py, which holds fixtures shared between tests, changed"]);
    }

    /// `project()` with tests/test_a.py's two functions known as its tests' definitions.
    fn with_test_definitions() -> (ImpactMap, Table) {
        let mut map = recorded();
        for state in map.states.values_mut() {
            state.table.get_mut("tests/test_a.py").unwrap().tests = vec!["test_f".into(), "test_g".into()];
        }
        let mut now = project();
        now.get_mut("tests/test_a.py").unwrap().tests = vec!["test_f".into(), "test_g".into()];
        (map, now)
    }

    #[test]
    fn a_test_module_that_gains_edits_or_loses_tests_keeps_those_alone() {
        let (map, mut now) = with_test_definitions();
        let tests = now.get_mut("tests/test_a.py").unwrap();
        tests.functions.get_mut("test_g").unwrap().0 = "tg2".into();
        tests.functions.insert("test_new".into(), ("tn".into(), 7, 8));
        tests.functions.insert("test_new.<locals>.inner".into(), ("ti".into(), 8, 8));
        tests.tests.push("test_new".into());
        let is_test = |path: &Path| path.starts_with("tests");
        let out = rule_out_without_added(&map, now.clone(), &is_test);
        assert_eq!(names(&out), ["tests/test_a.py::test_f", "tests/test_b.py::test_h"]);
        assert_eq!(
            out.kept.keys().collect::<Vec<_>>(),
            ["they ran code of tests/test_a.py that the change edits or removes"]
        );
        // A test removed, or renamed: the file's other tests stay ruled out.
        let mut removed = now.clone();
        let tests = removed.get_mut("tests/test_a.py").unwrap();
        tests.functions.remove("test_g");
        tests.tests.retain(|name| name != "test_g");
        assert_eq!(
            names(&rule_out_without_added(&map, removed, &is_test)),
            ["tests/test_a.py::test_f", "tests/test_b.py::test_h"]
        );
        // A helper or a fixture added beside them may reach every test of the file.
        let mut fixture = now;
        fixture.get_mut("tests/test_a.py").unwrap().functions.insert("clean".into(), ("c".into(), 9, 9));
        let out = rule_out_without_added(&map, fixture, &is_test);
        assert_eq!(names(&out), ["tests/test_b.py::test_h"]);
        assert!(out.kept.contains_key(
            "they ran code of tests/test_a.py, which gained a definition or changed at module level"
        ));
    }

    #[test]
    fn a_test_whose_own_definition_changed_is_kept_though_it_never_ran_it() {
        // A skipped test runs none of its own code: its definition is its all the same.
        let (mut map, mut now) = with_test_definitions();
        map.tests
            .get_mut("tests/test_a.py::test_g")
            .unwrap()
            .reach
            .blocks
            .remove(&("tests/test_a.py".to_string(), "test_g".to_string()));
        now.get_mut("tests/test_a.py").unwrap().functions.get_mut("test_g").unwrap().0 = "tg2".into();
        let out = rule_out_without_added(&map, now, &|path| path.starts_with("tests"));
        assert_eq!(names(&out), ["tests/test_a.py::test_f", "tests/test_b.py::test_h"]);
        assert_eq!(out.kept.keys().collect::<Vec<_>>(), ["their own definitions in tests/test_a.py changed"]);
    }

    #[test]
    fn the_floor_says_each_reason_once_with_its_tests_and_their_recorded_time_costliest_first() {
        let mut out = RuledOut::default();
        let tests = |names: &[(&str, f64)]| names.iter().map(|(name, s)| (name.to_string(), *s)).collect();
        out.kept.insert("a conftest changed".into(), tests(&[("t/a.py::x", 0.25)]));
        let module: Vec<(String, f64)> =
            (0..1640).map(|n| (format!("t/b.py::t{n}"), 12.0 / 1640.0)).collect();
        out.kept.insert("b module changed".into(), module.into_iter().collect());
        out.kept.insert("c only in the first round".into(), tests(&[("t/first.py::y", 3.0)]));
        assert_eq!(
            out.floor(&|test| !test.starts_with("t/first.py")),
            [
                "1640 tests (12.0 s recorded) could not be ruled out: b module changed",
                "1 test (0.2 s recorded) could not be ruled out: a conftest changed",
            ]
        );
    }

    #[test]
    fn changed_code_or_data_of_the_collection_leaves_the_record_unused_and_a_test_s_own_data_keeps_it() {
        let mut map = recorded();
        let state = map.states.values_mut().next().unwrap();
        state.collection.data.insert("cases.json".into(), Some("c1".into()));
        map.tests
            .get_mut("tests/test_b.py::test_h")
            .unwrap()
            .reach
            .data
            .insert("h.txt".into(), Some("h1".into()));
        let data = |cases: &str, h: &str| {
            BTreeMap::from([
                ("cases.json".to_string(), Some(cases.to_string())),
                ("h.txt".to_string(), Some(h.to_string())),
            ])
        };
        let check = |data| {
            rule_out(&map, &Now { table: project(), data, config: config() }, &BTreeMap::new(), &|_| true)
        };
        assert_eq!(check(data("c1", "h1")).tests.len(), 3);
        assert_eq!(names(&check(data("c1", "h2"))), ["tests/test_a.py::test_f", "tests/test_a.py::test_g"]);
        let changed = check(data("c2", "h1"));
        assert!(changed.tests.is_empty());
        assert_eq!(
            changed.unused,
            ["the test-impact map's record of commit 1 was not used: cases.json, read while the tests were collected, changed"]
        );
        let mut map = recorded();
        map.states.values_mut().next().unwrap().collection.blocks.insert(("pkg/a.py".into(), "g".into()));
        let mut now = project();
        now.get_mut("pkg/a.py").unwrap().functions.get_mut("g").unwrap().0 = "g2".into();
        let out = rule_out_without_added(&map, now, &|_| true);
        assert!(out.tests.is_empty());
    }

    #[test]
    fn a_test_whose_parameters_could_not_be_told_apart_is_never_ruled_out_and_the_others_carry_theirs() {
        let mut map = recorded();
        map.tests.get_mut("tests/test_b.py::test_h").unwrap().reach.params = None;
        map.tests.get_mut("tests/test_a.py::test_f").unwrap().reach.params = Some("p1".into());
        let out = rule_out_without_added(&map, project(), &|_| true);
        assert_eq!(names(&out), ["tests/test_a.py::test_f", "tests/test_a.py::test_g"]);
        assert_eq!(out.tests["tests/test_a.py::test_f"], "p1");
    }

    #[test]
    fn a_process_started_while_the_tests_were_collected_leaves_the_record_unused() {
        let mut map = recorded();
        map.states.values_mut().next().unwrap().collection.spawned = true;
        let out = rule_out_without_added(&map, project(), &|_| true);
        assert!(out.tests.is_empty());
        assert_eq!(out.unused, ["the test-impact map's record of commit 1 was not used: a process was started while the tests were collected"]);
        // Named when the probe recorded which programs ran; a forged name is shown plain.
        let state = map.states.values_mut().next().unwrap();
        state.collection.commands = BTreeSet::from(["git".to_string(), "\u{1b}[31mevil\nname".to_string()]);
        let out = rule_out_without_added(&map, project(), &|_| true);
        assert_eq!(out.unused, ["the test-impact map's record of commit 1 was not used: a process (31mevilname, git) was started while the tests were collected"]);
    }

    #[test]
    fn a_removed_test_file_that_only_bound_names_leaves_the_record_usable_and_one_that_ran_code_does_not() {
        let mut now = project();
        now.remove("tests/test_a.py");
        let is_test = |path: &Path| path.starts_with("tests");
        let check = |map: &ImpactMap| rule_out_without_added(map, now.clone(), &is_test);
        assert_eq!(
            names(&check(&recorded())),
            ["tests/test_a.py::test_f", "tests/test_a.py::test_g", "tests/test_b.py::test_h"]
        );
        let mut map = recorded();
        map.states.values_mut().next().unwrap().table.get_mut("tests/test_a.py").unwrap().plain = false;
        let out = check(&map);
        assert!(out.tests.is_empty());
        assert_eq!(
            out.unused,
            ["the test-impact map's record of commit 1 was not used: tests/test_a.py was removed"]
        );
    }

    #[test]
    fn records_of_several_states_are_each_judged_newest_first_and_a_state_is_named_once() {
        let mut map = recorded();
        // A later record of the same commit (another run's collection) for test_h alone, and an
        // older one whose table no longer holds: test_f's record there is not used.
        let tests =
            BTreeMap::from([("tests/test_b.py::test_h".to_string(), reach(&[("pkg/a.py", "g.<locals>.h")]))]);
        let collection = reach(&[("pkg/a.py", SKELETON)]);
        map.record(
            "commit 1",
            &Recorded { table: project(), config: config(), tests, collection, collected: None },
        );
        let mut stale = project();
        let a = stale.get_mut("pkg/a.py").unwrap();
        (a.skeleton, a.plain) = ("old".into(), false);
        let old_tests =
            BTreeMap::from([("tests/test_a.py::test_f".to_string(), reach(&[("pkg/a.py", "f")]))]);
        map.record(
            "commit 0",
            &Recorded { table: stale, config: config(), tests: old_tests, ..Recorded::default() },
        );
        for state in map.states.values_mut() {
            if state.at == "commit 0" {
                state.order = 0; // the oldest
            } else {
                state.order += 1;
            }
        }
        let out = rule_out_without_added(&map, project(), &|path| path.starts_with("tests"));
        assert_eq!(names(&out), ["tests/test_a.py::test_g", "tests/test_b.py::test_h"]);
        assert_eq!(out.at, ["commit 1"]);
        assert_eq!(out.unused, ["the test-impact map's record of commit 0 was not used: the module-level code, class headers or decorated definitions of pkg/a.py changed"]);
        let mut both_stale = map.clone();
        for state in both_stale.states.values_mut() {
            let a = state.table.get_mut("pkg/a.py").unwrap();
            (a.skeleton, a.plain) = ("older".into(), false);
        }
        let out = rule_out_without_added(&both_stale, project(), &|path| path.starts_with("tests"));
        let said: Vec<&str> = out.unused.iter().map(|note| &note[..42]).collect();
        assert_eq!(
            said,
            [
                "the test-impact map's record of commit 1 w",
                "the test-impact map's record of commit 1 w",
                "the test-impact map's record of commit 0 w"
            ]
        );
    }

    #[test]
    fn the_notes_on_unused_records_come_newest_first() {
        let mut map = ImpactMap::new("env");
        let mut stale = project();
        let a = stale.get_mut("pkg/a.py").unwrap();
        (a.skeleton, a.plain) = ("old".into(), false);
        for (id, order, at) in [("a", 0, "commit 0"), ("b", 1, "commit 1")] {
            let state = RecordedState {
                at: at.into(),
                order,
                table: stale.clone(),
                config: config(),
                collection: Reach::default(),
                collected: None,
            };
            map.states.insert(id.into(), state);
            let entry = Entry { state: id.into(), reach: reach(&[("pkg/a.py", "f")]) };
            map.tests.insert(format!("tests/test_{id}.py::t"), entry);
        }
        let now = Now { table: project(), config: config(), ..Now::default() };
        let out = rule_out(&map, &now, &BTreeMap::new(), &|path| path.starts_with("tests"));
        let said: Vec<&str> = out.unused.iter().map(|note| &note[32..40]).collect();
        assert_eq!(said, ["commit 1", "commit 0"]);
    }

    #[test]
    fn a_test_that_started_a_process_is_never_ruled_out() {
        let mut map = recorded();
        map.tests.get_mut("tests/test_b.py::test_h").unwrap().reach.spawned = true;
        let out = rule_out_without_added(&map, project(), &|_| true);
        assert_eq!(names(&out), ["tests/test_a.py::test_f", "tests/test_a.py::test_g"]);
    }

    #[test]
    fn paths_that_leave_the_project_are_never_read_and_count_as_changed() {
        let mut map = recorded();
        let hostile = ["/etc/passwd", "../outside", "data/../../outside"];
        for (path, test) in hostile.iter().zip(map.tests.values_mut()) {
            test.reach.data.insert(path.to_string(), Some("d".into()));
        }
        map.tests.values_mut().next().unwrap().reach.data.insert("data/cases.json".into(), Some("d".into()));
        assert_eq!(map.data_paths(), BTreeSet::from(["data/cases.json".to_string()]));
        let now = Now {
            table: project(),
            config: config(),
            data: BTreeMap::from([("data/cases.json".to_string(), Some("d".to_string()))]),
        };
        assert!(rule_out(&map, &now, &BTreeMap::new(), &|_| true).tests.is_empty());
    }

    #[test]
    fn a_line_belongs_to_the_innermost_function_around_it_else_to_the_skeleton() {
        let blocks = &project()["pkg/a.py"];
        assert_eq!(block_of(blocks, 3), "f");
        assert_eq!(block_of(blocks, 7), "g");
        assert_eq!(block_of(blocks, 9), "g.<locals>.h");
        assert_eq!(block_of(blocks, 6), SKELETON);
    }

    /// A project whose files have digests, `tests/test_b.py` beside `project()`'s files, and a
    /// map of it whose one state recorded what the suite collected: `tests/test_a.py`'s tests
    /// (the first round's, in `left_nothing`) and `tests/test_b.py::test_h`, which ran
    /// `g.<locals>.h`; the collection imported `pkg/a.py` and `pkg/b.py`, and ran
    /// `collection_ran` too.
    fn collected_map(collection_ran: &[(&str, &str)], doctest: bool) -> (ImpactMap, Table) {
        let mut table = project();
        table.insert("tests/test_b.py".into(), file("s-tb", &[("test_h", "th", 1, 2)]));
        for (path, blocks) in table.iter_mut() {
            blocks.digest = format!("digest of {path}");
        }
        let mut tests =
            BTreeMap::from([("tests/test_b.py::test_h".to_string(), reach(&[("pkg/a.py", "g.<locals>.h")]))]);
        let mut collected: BTreeSet<String> =
            ["tests/test_a.py::test_f", "tests/test_a.py::test_g", "tests/test_b.py::test_h"]
                .map(String::from)
                .into();
        if doctest {
            tests.insert("pkg/a.py::pkg.a.f".to_string(), reach(&[]));
            collected.insert("pkg/a.py::pkg.a.f".to_string());
        }
        table.insert(
            "pkg/b.py".into(),
            FileBlocks { digest: "digest of pkg/b.py".into(), ..file("s-b", &[]) },
        );
        let mut ran = vec![("pkg/a.py", SKELETON), ("pkg/b.py", SKELETON)];
        ran.extend_from_slice(collection_ran);
        let collection = reach(&ran);
        let mut map = ImpactMap::new("env");
        let record = Recorded {
            table: table.clone(),
            config: config(),
            tests,
            collection,
            collected: Some(collected),
        };
        map.record("commit 1", &record);
        (map, table)
    }

    /// `rest_left_nothing` of `map` at `now`, with `added` lines, `tests/test_a.py` being the
    /// first round's.
    fn left_nothing(map: &ImpactMap, now: Table, added: &[(&str, usize)]) -> Option<Vec<String>> {
        let mut lines: BTreeMap<PathBuf, Vec<usize>> = BTreeMap::new();
        for (path, line) in added {
            lines.entry(PathBuf::from(path)).or_default().push(*line);
        }
        let now = Now { table: now, config: config(), ..Now::default() };
        let is_test_file = |path: &Path| path.starts_with("tests");
        let first = |test: &str| test.starts_with("tests/test_a.py");
        rule_out_for_rounds(map, &now, &lines, &is_test_file, &first).nothing_left
    }

    #[test]
    fn the_rest_has_nothing_to_run_when_its_test_files_are_unchanged_and_each_of_their_tests_is_ruled_out() {
        let (map, table) = collected_map(&[], false);
        // A guard added inside `f`, and a test edited in the first round's file.
        let mut now = table.clone();
        now.get_mut("pkg/a.py").unwrap().functions.get_mut("f").unwrap().0 = "f2".into();
        let test_a = now.get_mut("tests/test_a.py").unwrap();
        (test_a.digest, test_a.functions.get_mut("test_f").unwrap().0) = ("new".into(), "tf2".into());
        assert_eq!(
            left_nothing(&map, now.clone(), &[("pkg/a.py", 3)]),
            Some(vec!["tests/test_b.py::test_h".to_string()])
        );

        let mut reaches = now.clone();
        reaches.get_mut("pkg/a.py").unwrap().functions.get_mut("g.<locals>.h").unwrap().0 = "h2".into();
        let mut edited = now.clone();
        edited.get_mut("tests/test_b.py").unwrap().digest = "a test added".into();
        let mut new_file = now.clone();
        new_file.insert("tests/test_c.py".into(), FileBlocks { digest: "c".into(), ..file("s-tc", &[]) });
        let mut conftest = now.clone();
        conftest.insert("tests/conftest.py".into(), FileBlocks { digest: "c".into(), ..file("s-cf", &[]) });
        let mut grown = now.clone();
        grown.get_mut("pkg/b.py").unwrap().functions.insert("k".into(), ("k1".into(), 20, 22));
        for (now, why) in [
            (reaches, "test_h ran `g.<locals>.h`, which changed"),
            (edited, "test_b.py may collect another test now"),
            (new_file, "a test file the first round does not run is new"),
            (conftest, "a conftest may bring fixture parameters"),
            (grown, "the collection imported pkg/b.py, which gained a name it may parametrize by"),
        ] {
            assert_eq!(left_nothing(&map, now, &[("pkg/a.py", 3)]), None, "{why}");
        }
    }

    #[test]
    fn the_rest_is_not_proven_empty_by_a_collection_that_ran_the_change_a_doctest_or_an_older_map() {
        // Recorded at the state under test itself: `f` ran while the tests were collected.
        let (map, table) = collected_map(&[("pkg/a.py", "f")], false);
        assert_eq!(left_nothing(&map, table.clone(), &[("pkg/a.py", 3)]), None);
        assert!(left_nothing(&map, table.clone(), &[("pkg/a.py", 7)]).is_some(), "a line of g, outside h");
        // A doctest of a source module: a docstring's new example is a new test.
        let (map, table) = collected_map(&[], true);
        assert!(rule_out_without_added(&map, table.clone(), &|path| path.starts_with("tests"))
            .tests
            .contains_key("pkg/a.py::pkg.a.f"));
        assert_eq!(left_nothing(&map, table, &[]), None);
        // A map from before the collection was recorded.
        let (mut map, table) = collected_map(&[], false);
        map.states.values_mut().for_each(|state| state.collected = None);
        assert_eq!(left_nothing(&map, table, &[]), None);
    }
}
