//! The test-impact map: per test, the blocks of the project it executed and the files it read, kept across commits, and the tests it proves cannot reach a change.
//!
//! A block is a function or method (its whole definition) or a file's skeleton (all the rest:
//! module-level code, class bodies, definitions' signatures), known by a fingerprint of its
//! syntax tree (`impact.py`). A coverage run of the suite as it collects (every test file
//! collected) records, per test, the blocks it started and what it read under the project. At a
//! later state, a test whose blocks are all unchanged, whose file is unchanged and whose reads
//! read the same executes what it executed then: unless one of its blocks holds an added line,
//! it cannot reach the change, and the rest of the suite need not run it. A recorded state is
//! not used at all when what runs outside the tests may differ: a skeleton changed (a definition
//! added, moved between files or removed, module-level code edited), a Python file added (but a
//! new test file that only defines tests) or removed, a file of fixtures shared between tests
//! changed, or the collection ran changed code, read a changed file or started a process. A
//! test that started a process is never ruled out: what the process ran is not recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::cache::{self, Cache};

pub const IMPACT_SOURCE: &str = include_str!("impact.py");
pub const IMPACT_MODULE: &str = "mutdelta_impact";
/// The name a file's skeleton goes by among its blocks.
pub const SKELETON: &str = "<module>";
/// Bumped whenever what a map holds, or what its fingerprints mean, changes.
const FORMAT: u32 = 1;
/// Recorded states kept in the map: each holds the blocks of the whole project.
const KEPT_STATES: usize = 6;

/// One file's blocks: its skeleton's fingerprint, and each function's (with its first and last
/// line), by qualified name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileBlocks {
    /// What runs at import other than bindings and functions that decorators only wrap.
    pub skeleton: String,
    /// Each module- or class-level assignment of one name, by qualified name.
    #[serde(default)]
    pub bindings: BTreeMap<String, String>,
    #[serde(default)]
    pub functions: BTreeMap<String, (String, usize, usize)>,
    /// It holds fixtures shared between tests (a conftest, a fixture scoped wider than a test):
    /// what they do runs once, for whichever test asks first.
    #[serde(default)]
    pub fixtures: bool,
    /// Its module-level code only binds names (imports, definitions, plain assignments).
    #[serde(default)]
    pub plain: bool,
    /// The modules its module-level code imports, by absolute name.
    #[serde(default)]
    pub imports: Vec<String>,
}

/// Every Python file of the project, by path relative to its root.
pub type Table = BTreeMap<String, FileBlocks>;

/// What one test (or the collection) executed and read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    /// Blocks, as (file, qualified name or `SKELETON`).
    #[serde(default)]
    pub blocks: BTreeSet<(String, String)>,
    /// Files read (a trailing `/`: directories listed) under the project, with their digests
    /// (none: not there at the end of the run).
    #[serde(default)]
    pub data: BTreeMap<String, Option<String>>,
    /// It started a process (or forked): what that ran is not recorded.
    #[serde(default)]
    pub spawned: bool,
    /// A digest of its parameters ("" for none; none when they could not be told apart): the
    /// probe leaves a test out only when they are the same now.
    #[serde(default)]
    pub params: Option<String>,
}

impl Reach {
    fn extend(&mut self, other: Reach) {
        self.blocks.extend(other.blocks);
        self.data.extend(other.data);
        self.spawned |= other.spawned;
    }
}

/// What one coverage run recorded: the project's blocks, each test's reach, the collection's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub table: Table,
    /// The digests of pytest's configuration files (none: not there).
    #[serde(default)]
    pub config: BTreeMap<String, Option<String>>,
    pub tests: BTreeMap<String, Reach>,
    pub collection: Reach,
}

impl Recorded {
    /// Two processes' records of one run (each ran some of the tests, both collected all).
    pub fn merge(mut self, other: Recorded) -> Recorded {
        if self.table.is_empty() {
            self.table = other.table;
            self.config = other.config;
        }
        self.tests.extend(other.tests);
        self.collection.extend(other.collection);
        self
    }
}

/// A state the map recorded tests at.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedState {
    /// The state under test then, in words (`commit <id>`, `worktree`).
    pub at: String,
    /// Its place among the states recorded (the newest highest).
    pub order: u64,
    pub table: Table,
    #[serde(default)]
    pub config: BTreeMap<String, Option<String>>,
    pub collection: Reach,
}

/// A test's record, at a state of the map.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub state: String,
    #[serde(flatten)]
    pub reach: Reach,
}

/// The map: per test, its newest record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImpactMap {
    pub format: u32,
    /// The interpreter with its packages, the environment, mutdelta and its probe: a map made
    /// under others is refused.
    pub environment: String,
    pub states: BTreeMap<String, RecordedState>,
    pub tests: BTreeMap<String, Entry>,
}

impl ImpactMap {
    pub fn new(environment: &str) -> ImpactMap {
        ImpactMap {
            format: FORMAT,
            environment: environment.to_string(),
            states: BTreeMap::new(),
            tests: BTreeMap::new(),
        }
    }

    /// Adds a run's records at the state `at`: each test it ran is recorded anew; the oldest
    /// states beyond those kept go, with the tests recorded at them.
    pub fn record(&mut self, at: &str, run: &Recorded) {
        let digest = serde_json::to_vec(&(&run.table, &run.config, &run.collection)).unwrap_or_default();
        let id = cache::key(&[&digest])[..16].to_string();
        let order = self.states.values().map(|state| state.order + 1).max().unwrap_or(0);
        let state = RecordedState {
            at: at.to_string(),
            order,
            table: run.table.clone(),
            config: run.config.clone(),
            collection: run.collection.clone(),
        };
        self.states.insert(id.clone(), state);
        for (test, reach) in &run.tests {
            self.tests.insert(test.clone(), Entry { state: id.clone(), reach: reach.clone() });
        }
        let used: BTreeSet<&String> = self.tests.values().map(|entry| &entry.state).collect();
        let mut kept: Vec<(u64, String)> = self
            .states
            .iter()
            .filter(|(id, _)| used.contains(id))
            .map(|(id, state)| (state.order, id.clone()))
            .collect();
        kept.sort_by(|a, b| b.cmp(a));
        let kept: BTreeSet<String> = kept.into_iter().take(KEPT_STATES).map(|(_, id)| id).collect();
        self.states.retain(|id, _| kept.contains(id));
        self.tests.retain(|_, entry| kept.contains(&entry.state));
    }

    /// Per file, the tests recorded running one of its functions or methods (a block other
    /// than its module-level code, which every test that imports the file ran, at import).
    pub fn users_of_files(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (test, entry) in &self.tests {
            for (file, block) in &entry.reach.blocks {
                if block != SKELETON {
                    out.entry(file.clone()).or_default().insert(test.clone());
                }
            }
        }
        out
    }

    /// Every file a recorded test or collection read: what `impact.py` digests now. A path
    /// that leaves the project (absolute, or through `..`; a map may come from elsewhere) is
    /// never read: it counts as changed.
    pub fn data_paths(&self) -> BTreeSet<String> {
        let tests = self.tests.values().flat_map(|entry| entry.reach.data.keys());
        let collections = self.states.values().flat_map(|state| state.collection.data.keys());
        tests.chain(collections).filter(|path| inside_project(path)).cloned().collect()
    }
}

/// Whether `path` names something under the project's root.
pub(super) fn inside_project(path: &str) -> bool {
    let path = Path::new(path.trim_end_matches('/'));
    path.is_relative() && path.components().all(|part| matches!(part, std::path::Component::Normal(_)))
}

/// The project now: its blocks, and the digests of the files the map says were read.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Now {
    pub table: Table,
    #[serde(default)]
    pub config: BTreeMap<String, Option<String>>,
    pub data: BTreeMap<String, Option<String>>,
}

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
}

/// The tests of `map` that cannot reach the lines `added` (per file relative to the root) of
/// the project as it is `now`. `is_test_file` tells the files a new test file may be.
pub fn rule_out(
    map: &ImpactMap,
    now: &Now,
    added: &BTreeMap<PathBuf, Vec<usize>>,
    is_test_file: &dyn Fn(&Path) -> bool,
) -> RuledOut {
    let mut reaching: BTreeSet<(String, String)> = BTreeSet::new();
    for (path, lines) in added {
        let path = path.to_string_lossy().into_owned();
        if let Some(blocks) = now.table.get(&path) {
            reaching.extend(lines.iter().map(|&line| (path.clone(), block_of(blocks, line))));
        }
    }
    let mut out = RuledOut::default();
    let mut usable: BTreeMap<&String, Changes> = BTreeMap::new();
    let mut states: Vec<(&String, &RecordedState)> = map.states.iter().collect();
    states.sort_by_key(|(_, state)| std::cmp::Reverse(state.order));
    for (id, state) in states {
        match changed_since(state, now, is_test_file) {
            Ok(changed) => {
                usable.insert(id, changed);
            }
            Err(why) => {
                out.unused.push(format!("the test-impact map's record of {} was not used: {why}", state.at))
            }
        }
    }
    for (test, entry) in &map.tests {
        let Some(changed) = usable.get(&entry.state) else { continue };
        let own_file = test.split("::").next().unwrap_or(test);
        let reach = &entry.reach;
        let touches = |block: &(String, String)| {
            changed.blocks.contains(block) || changed.grown.contains(&block.0) || reaching.contains(block)
        };
        let kept = reach.spawned
            || reach.blocks.iter().any(touches)
            || changed.blocks.iter().any(|(file, _)| file == own_file)
            || changed.grown.contains(own_file)
            || reach.data.iter().any(|(path, digest)| now.data.get(path) != Some(digest));
        if let (false, Some(params)) = (kept, &reach.params) {
            out.tests.insert(test.clone(), params.clone());
        }
    }
    // The states that decided, even when they ruled nothing out: the map was consulted. Two
    // records of one state (a first round's and a second's) are said once.
    let consulted: BTreeSet<&String> =
        map.tests.values().map(|entry| &entry.state).filter(|state| usable.contains_key(state)).collect();
    let at: BTreeSet<&String> = consulted.iter().map(|id| &map.states[*id].at).collect();
    out.at = at.into_iter().cloned().collect();
    out
}

/// What changed between a recorded state and now, where the state can be used.
#[derive(Debug, Default)]
struct Changes {
    /// Functions whose definition changed or went.
    blocks: BTreeSet<(String, String)>,
    /// Files that gained a function or a binding: code elsewhere reaches a new name only through
    /// a changed block, or by looking names up (`getattr`, `dir`) in that file's module or
    /// classes, which a test does only with some of the file's code run.
    grown: BTreeSet<String>,
}

/// What changed between `state` and `now`; an error saying why the state cannot be used at all.
fn changed_since(
    state: &RecordedState,
    now: &Now,
    is_test_file: &dyn Fn(&Path) -> bool,
) -> std::result::Result<Changes, String> {
    let mut changes = Changes::default();
    if let Some((name, _)) = state.config.iter().find(|(name, digest)| now.config.get(*name) != Some(digest))
    {
        return Err(format!("pytest's configuration file {name} changed"));
    }
    for (path, then) in &state.table {
        let Some(current) = now.table.get(path) else {
            if is_test_file(Path::new(path)) && then.plain && !then.fixtures {
                continue; // its tests are gone, and no other test ran what it bound
            }
            return Err(format!("{path} was removed"));
        };
        let binding = then.bindings.iter().find(|(name, digest)| current.bindings.get(*name) != Some(digest));
        if current.skeleton != then.skeleton || binding.is_some() {
            if is_test_file(Path::new(path))
                && then.plain
                && current.plain
                && imports_ran(current, state, now)
            {
                // A test file whose module-level code only binds names, importing only what the
                // collection imported already: what changed there reaches its own tests, and
                // those that ran its code, alone.
                changes.grown.insert(path.clone());
                continue;
            }
            return Err(match binding {
                Some((name, _)) if current.skeleton == then.skeleton => {
                    format!("{name} in {path} changed or went")
                }
                _ => {
                    format!("the module-level code, class headers or decorated definitions of {path} changed")
                }
            });
        }
        let before = changes.blocks.len();
        for (name, (fingerprint, _, _)) in &then.functions {
            if current.functions.get(name).map(|function| &function.0) != Some(fingerprint) {
                changes.blocks.insert((path.clone(), name.clone()));
            }
        }
        if changes.blocks.len() > before && (then.fixtures || current.fixtures) {
            return Err(format!("{path}, which holds fixtures shared between tests, changed"));
        }
        let grew = current.bindings.keys().any(|name| !then.bindings.contains_key(name))
            || current.functions.keys().any(|name| !then.functions.contains_key(name));
        if grew {
            changes.grown.insert(path.clone());
        }
    }
    for (path, current) in &now.table {
        let new_plain_test_file = is_test_file(Path::new(path)) && current.plain && !current.fixtures;
        if !(state.table.contains_key(path) || new_plain_test_file) {
            return Err(format!("{path} is new"));
        }
    }
    let collection = &state.collection;
    if collection.spawned {
        return Err("a process was started while the tests were collected".to_string());
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

/// Whether every project module `file` imports was imported while the tests were collected at
/// `state` (importing it again runs nothing).
fn imports_ran(file: &FileBlocks, state: &RecordedState, now: &Now) -> bool {
    file.imports.iter().all(|module| {
        let stem = module.replace('.', "/");
        let candidates = [format!("{stem}.py"), format!("{stem}/__init__.py")];
        let is =
            |path: &String| candidates.iter().any(|end| path == end || path.ends_with(&format!("/{end}")));
        now.table
            .keys()
            .filter(|path| is(path))
            .all(|path| state.collection.blocks.contains(&(path.clone(), SKELETON.to_string())))
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

/// Where maps are kept between checks, and under which environment they are recorded.
#[derive(Debug, Clone)]
pub struct Store {
    cache: Cache,
    environment: String,
    /// The state under test, in words: where this check's records are made.
    at: String,
}

impl Store {
    pub fn new(cache: Cache, environment: String, at: String) -> Store {
        Store { cache, environment, at }
    }

    fn name(&self) -> String {
        format!("python/impact/{}.json", &cache::key(&[self.environment.as_bytes()])[..16])
    }

    /// Whether runs record into it: there is a kept map.
    pub fn records(&self) -> bool {
        self.cache.is_on()
    }

    /// The map kept for this environment, if any.
    pub fn load(&self) -> Option<ImpactMap> {
        let map: ImpactMap = serde_json::from_slice(&self.cache.read(&self.name())?).ok()?;
        (map.format == FORMAT && map.environment == self.environment).then_some(map)
    }

    /// Records a run in the kept map (read again now: another run may have recorded meanwhile).
    pub fn record(&self, run: &Recorded) {
        if !self.records() {
            return;
        }
        let mut map = self.load().unwrap_or_else(|| ImpactMap::new(&self.environment));
        map.record(&self.at, run);
        if let Ok(bytes) = serde_json::to_vec(&map) {
            self.cache.write(&self.name(), &bytes);
        }
    }

    /// The map a check consults (`--impact-map`, `--no-impact-map`, else the kept one): none
    /// when there is none to consult, an error saying why one named was refused.
    pub fn chosen(
        &self,
        choice: &crate::options::ImpactMap,
    ) -> std::result::Result<Option<ImpactMap>, String> {
        match choice {
            crate::options::ImpactMap::Off => Ok(None),
            crate::options::ImpactMap::Kept => Ok(self.load()),
            crate::options::ImpactMap::File(path) => self.read_file(path).map(Some),
        }
    }

    /// A map file made elsewhere (`--impact-map`): refused, with a sentence saying why, when it
    /// is not one or was made under another environment.
    pub fn read_file(&self, path: &Path) -> std::result::Result<ImpactMap, String> {
        let bytes =
            std::fs::read(path).map_err(|err| format!("{} could not be read ({err})", path.display()))?;
        let map: ImpactMap = serde_json::from_slice(&bytes)
            .map_err(|_| format!("{} is not a mutdelta test-impact map", path.display()))?;
        if map.format != FORMAT {
            return Err(format!("{} was made by another version of mutdelta", path.display()));
        }
        if map.environment != self.environment {
            return Err(format!(
                "{} was made with another interpreter version, package set, pytest options or mutdelta version",
                path.display()
            ));
        }
        Ok(map)
    }

    pub fn environment(&self) -> &str {
        &self.environment
    }
}

/// The project at `root` now, as `impact.py` (in `support`) reads it with `python`, for `map`.
pub fn now(python: &Path, support: &Path, root: &Path, map: &ImpactMap) -> Result<Now> {
    let request = support.join("impact-request.json");
    let answer = support.join("impact-now.json");
    std::fs::write(&request, serde_json::to_vec(&map.data_paths())?)?;
    // What it prints (a warning the parser gives of the project's code) is no line of
    // mutdelta's own: said only when it fails.
    let output = std::process::Command::new(python)
        .arg("-I")
        .arg(support.join(format!("{IMPACT_MODULE}.py")))
        .arg(root)
        .arg(&request)
        .arg(&answer)
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .context("the interpreter could not read the project's blocks")?;
    anyhow::ensure!(
        output.status.success(),
        "reading the project's blocks failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(serde_json::from_slice(&std::fs::read(&answer)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(skeleton: &str, functions: &[(&str, &str, usize, usize)]) -> FileBlocks {
        FileBlocks {
            skeleton: skeleton.to_string(),
            bindings: BTreeMap::from([("LIMIT".to_string(), "l1".to_string())]),
            functions: functions
                .iter()
                .map(|(name, print, first, last)| (name.to_string(), (print.to_string(), *first, *last)))
                .collect(),
            fixtures: false,
            plain: true,
            imports: Vec::new(),
        }
    }

    fn reach(blocks: &[(&str, &str)]) -> Reach {
        Reach {
            blocks: blocks.iter().map(|(file, name)| (file.to_string(), name.to_string())).collect(),
            params: Some(String::new()),
            ..Reach::default()
        }
    }

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

    fn config() -> BTreeMap<String, Option<String>> {
        BTreeMap::from([
            ("pyproject.toml".to_string(), Some("p1".to_string())),
            ("tox.ini".to_string(), None),
        ])
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

    fn project() -> Table {
        let mut table = Table::new();
        table.insert(
            "pkg/a.py".into(),
            file("s-a", &[("f", "f1", 1, 5), ("g", "g1", 7, 9), ("g.<locals>.h", "h1", 8, 9)]),
        );
        table
            .insert("tests/test_a.py".into(), file("s-t", &[("test_f", "tf", 1, 2), ("test_g", "tg", 4, 5)]));
        table
    }

    fn recorded() -> ImpactMap {
        let mut map = ImpactMap::new("env");
        let mut tests = BTreeMap::new();
        tests.insert(
            "tests/test_a.py::test_f".to_string(),
            reach(&[("pkg/a.py", "f"), ("tests/test_a.py", "test_f")]),
        );
        tests.insert(
            "tests/test_a.py::test_g".to_string(),
            reach(&[("pkg/a.py", "g"), ("tests/test_a.py", "test_g")]),
        );
        tests.insert("tests/test_b.py::test_h".to_string(), reach(&[("pkg/a.py", "g.<locals>.h")]));
        map.record(
            "commit 1",
            &Recorded { table: project(), config: config(), tests, collection: Reach::default() },
        );
        map
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
    fn a_changed_skeleton_a_new_source_file_or_a_removed_file_leaves_the_record_unused() {
        let mut skeleton = project();
        skeleton.get_mut("pkg/a.py").unwrap().skeleton = "s-a2".into();
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

    #[test]
    fn a_changed_or_removed_binding_leaves_the_record_unused() {
        let mut changed = project();
        changed.get_mut("pkg/a.py").unwrap().bindings.insert("LIMIT".into(), "l2".into());
        let mut removed = project();
        removed.get_mut("pkg/a.py").unwrap().bindings.clear();
        for now in [changed, removed] {
            let out = rule(now, &[]);
            assert!(out.tests.is_empty());
            assert_eq!(
                out.unused,
                ["the test-impact map's record of commit 1 was not used: LIMIT in pkg/a.py changed or went"]
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

    #[test]
    fn a_changed_file_of_shared_fixtures_leaves_the_record_unused() {
        let mut map = recorded();
        let mut conftest = file("s-c", &[("db", "d1", 1, 3)]);
        conftest.fixtures = true;
        for state in map.states.values_mut() {
            state.table.insert("conftest.py".into(), conftest.clone());
        }
        let mut now = project();
        conftest.functions.get_mut("db").unwrap().0 = "d2".into();
        now.insert("conftest.py".into(), conftest);
        let out = rule_out_without_added(&map, now, &|_| true);
        assert!(out.tests.is_empty());
        assert_eq!(out.unused, ["the test-impact map's record of commit 1 was not used: conftest.py, which holds fixtures shared between tests, changed"]);
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
        map.record("commit 1", &Recorded { table: project(), config: config(), tests, collection });
        let mut stale = project();
        stale.get_mut("pkg/a.py").unwrap().skeleton = "old".into();
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
            state.table.get_mut("pkg/a.py").unwrap().skeleton = "older".into();
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
        stale.get_mut("pkg/a.py").unwrap().skeleton = "old".into();
        for (id, order, at) in [("a", 0, "commit 0"), ("b", 1, "commit 1")] {
            let state = RecordedState {
                at: at.into(),
                order,
                table: stale.clone(),
                config: config(),
                collection: Reach::default(),
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
    fn a_newer_record_replaces_a_test_s_older_one_and_states_no_test_needs_go() {
        let mut map = recorded();
        let mut table = project();
        table.get_mut("pkg/a.py").unwrap().skeleton = "s-a2".into();
        let tests = BTreeMap::from([
            ("tests/test_a.py::test_f".to_string(), reach(&[("pkg/a.py", "f")])),
            ("tests/test_a.py::test_g".to_string(), reach(&[("pkg/a.py", "g")])),
            ("tests/test_b.py::test_h".to_string(), reach(&[("pkg/a.py", "g")])),
        ]);
        map.record("commit 2", &Recorded { table, tests, ..Recorded::default() });
        assert_eq!(map.states.len(), 1);
        assert_eq!(map.states.values().next().unwrap().at, "commit 2");
        assert_eq!(map.tests["tests/test_b.py::test_h"].reach, reach(&[("pkg/a.py", "g")]));
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
}
