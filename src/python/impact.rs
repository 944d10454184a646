//! The test-impact map: per test, the blocks of the project it executed and the files it read, kept across commits per environment; the project's blocks now.
//!
//! A block is a function or method (its whole definition) or a file's skeleton (all the rest:
//! module-level code, class bodies, definitions' signatures), known by a fingerprint of its
//! syntax tree (`impact.py`); in a test module, each test's definition is a block of its own,
//! decorators and all. A coverage run of the suite as it collects (every test file collected)
//! records, per test, the blocks it started, what it read under the project and what it took.
//! Which tests a later change invalidates is `invalidate`'s to judge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

use crate::cache::{self, Cache};

pub const IMPACT_SOURCE: &str = include_str!("impact.py");
pub const IMPACT_MODULE: &str = "mutdelta_impact";
/// The name a file's skeleton goes by among its blocks.
pub const SKELETON: &str = "<module>";
/// Bumped whenever what a map holds, or what its fingerprints mean, changes.
const FORMAT: u32 = 2;
/// Recorded states kept in the map: each holds the blocks of the whole project.
const KEPT_STATES: usize = 6;

/// One file's blocks: its skeleton's fingerprint, and each function's (with its first and last
/// line), by qualified name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileBlocks {
    /// A digest of the file's content: blocks read before are reused while it is the same.
    #[serde(default)]
    pub digest: String,
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
    /// The modules it imports anywhere, its functions included, by absolute name (`*`: one by a
    /// name it computes): whose names its code may read.
    #[serde(default)]
    pub uses: Vec<String>,
    /// In a test module, the qualified names of its tests' definitions: each its own test's
    /// alone.
    #[serde(default)]
    pub tests: Vec<String>,
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
    /// The programs those processes ran, by name (`fork` for a fork).
    #[serde(default)]
    pub commands: BTreeSet<String>,
    /// A digest of its parameters ("" for none; none when they could not be told apart): the
    /// probe leaves a test out only when they are the same now.
    #[serde(default)]
    pub params: Option<String>,
    /// What it ran was not all recorded (before Python 3.12, the trace function was dropped
    /// while it ran, as a RecursionError raised in it drops it).
    #[serde(default)]
    pub untraced: bool,
    /// What it took, in seconds, when it was recorded.
    #[serde(default)]
    pub seconds: f64,
}

impl Reach {
    fn extend(&mut self, other: Reach) {
        self.blocks.extend(other.blocks);
        self.data.extend(other.data);
        self.spawned |= other.spawned;
        self.commands.extend(other.commands);
        self.untraced |= other.untraced;
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
    /// Every test the run collected and would have run but for the tests it left out itself
    /// (none: not known, as from an older probe).
    #[serde(default)]
    pub collected: Option<BTreeSet<String>>,
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
        self.collected = match (self.collected, other.collected) {
            (Some(mut mine), Some(theirs)) => {
                mine.extend(theirs);
                Some(mine)
            }
            _ => None,
        };
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
    /// The tests the suite collected then (`Recorded::collected`).
    #[serde(default)]
    pub collected: Option<BTreeSet<String>>,
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
            collected: run.collected.clone(),
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

    /// Each file's blocks at the newest state that recorded it: what `impact.py` reuses for a
    /// file whose content is the same now, rather than read its syntax tree again.
    pub fn newest_blocks(&self) -> Table {
        let mut states: Vec<&RecordedState> = self.states.values().collect();
        states.sort_by_key(|state| std::cmp::Reverse(state.order));
        let mut out = Table::new();
        for state in states {
            for (path, blocks) in &state.table {
                if !blocks.digest.is_empty() {
                    out.entry(path.clone()).or_insert_with(|| blocks.clone());
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
        choice: &super::settings::ImpactMap,
    ) -> std::result::Result<Option<ImpactMap>, String> {
        match choice {
            super::settings::ImpactMap::Off => Ok(None),
            super::settings::ImpactMap::Kept => Ok(self.load()),
            super::settings::ImpactMap::File(path) => self.read_file(path).map(Some),
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
    let known = support.join("impact-known.json");
    std::fs::write(&request, serde_json::to_vec(&map.data_paths())?)?;
    std::fs::write(&known, serde_json::to_vec(&map.newest_blocks())?)?;
    // What it prints (a warning the parser gives of the project's code) is no line of
    // mutdelta's own: said only when it fails.
    let output = std::process::Command::new(python)
        .arg("-I")
        .arg(support.join(format!("{IMPACT_MODULE}.py")))
        .arg(root)
        .arg(&request)
        .arg(&answer)
        .arg(&known)
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
pub(super) mod tests {
    use super::*;

    pub(in crate::python) fn file(skeleton: &str, functions: &[(&str, &str, usize, usize)]) -> FileBlocks {
        FileBlocks {
            digest: String::new(),
            skeleton: skeleton.to_string(),
            bindings: BTreeMap::from([("LIMIT".to_string(), "l1".to_string())]),
            functions: functions
                .iter()
                .map(|(name, print, first, last)| (name.to_string(), (print.to_string(), *first, *last)))
                .collect(),
            fixtures: false,
            plain: true,
            imports: Vec::new(),
            uses: Vec::new(),
            tests: Vec::new(),
        }
    }

    pub(in crate::python) fn reach(blocks: &[(&str, &str)]) -> Reach {
        Reach {
            blocks: blocks.iter().map(|(file, name)| (file.to_string(), name.to_string())).collect(),
            params: Some(String::new()),
            ..Reach::default()
        }
    }

    pub(in crate::python) fn config() -> BTreeMap<String, Option<String>> {
        BTreeMap::from([
            ("pyproject.toml".to_string(), Some("p1".to_string())),
            ("tox.ini".to_string(), None),
        ])
    }

    pub(in crate::python) fn project() -> Table {
        let mut table = Table::new();
        table.insert(
            "pkg/a.py".into(),
            file("s-a", &[("f", "f1", 1, 5), ("g", "g1", 7, 9), ("g.<locals>.h", "h1", 8, 9)]),
        );
        table
            .insert("tests/test_a.py".into(), file("s-t", &[("test_f", "tf", 1, 2), ("test_g", "tg", 4, 5)]));
        table
    }

    pub(in crate::python) fn recorded() -> ImpactMap {
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
            &Recorded {
                table: project(),
                config: config(),
                tests,
                collection: Reach::default(),
                collected: None,
            },
        );
        map
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

    /// The blocks `impact.py` reads of one file `path` holding `source`, in a real interpreter.
    fn blocks_of(path: &str, source: &str) -> FileBlocks {
        let dir = tempfile::tempdir().unwrap();
        let (support, root) = (dir.path().join("support"), dir.path().join("root"));
        std::fs::create_dir_all(root.join(Path::new(path).parent().unwrap())).unwrap();
        std::fs::create_dir_all(&support).unwrap();
        std::fs::write(support.join(format!("{IMPACT_MODULE}.py")), IMPACT_SOURCE).unwrap();
        std::fs::write(root.join(path), source).unwrap();
        let now = now(Path::new("python3"), &support, &root, &ImpactMap::new("env")).unwrap();
        now.table[path].clone()
    }

    #[test]
    fn a_test_module_s_tests_are_blocks_of_their_own_however_decorated_and_its_fixtures_are_not() {
        let before = "import pytest\nfrom unittest import mock\n\n\n@mock.patch.dict('os.environ', {})\ndef test_a():\n    pass\n";
        let after = format!(
            "{before}\n\nclass TestB:\n    @mock.patch('os.getcwd')\n    def test_b(self, cwd):\n        pass\n"
        );
        let (then, now) = (blocks_of("tests/test_x.py", before), blocks_of("tests/test_x.py", &after));
        assert_eq!(then.tests, ["test_a"]);
        assert_eq!(now.tests, ["test_a", "TestB.test_b"]);
        assert!(then.plain && now.plain);
        // The new class's header is module-level code; its test's decorators are not.
        let only_test = format!("{before}\n\nclass TestB:\n    def test_b(self):\n        pass\n");
        assert_eq!(blocks_of("tests/test_x.py", &only_test).skeleton, now.skeleton);
        // A fixture named like a test, or a decorated test outside a test module, is no test.
        let fixture = "import pytest\n\n\n@pytest.fixture\ndef test_data():\n    return 1\n";
        assert!(blocks_of("tests/test_y.py", fixture).tests.is_empty());
        let helper = blocks_of("tests/helpers.py", before);
        assert!(helper.tests.is_empty() && !helper.plain);
    }
    #[test]
    fn blocks_a_map_read_before_are_reused_while_the_file_s_content_is_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let (support, root) = (dir.path().join("support"), dir.path().join("root"));
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::create_dir_all(&support).unwrap();
        std::fs::write(support.join(format!("{IMPACT_MODULE}.py")), IMPACT_SOURCE).unwrap();
        std::fs::write(root.join("pkg/a.py"), "def f():\n    return 1\n").unwrap();
        let read = |map: &ImpactMap| now(Path::new("python3"), &support, &root, map).unwrap().table;
        let first = read(&ImpactMap::new("env"));
        let mut known = first.clone();
        known.get_mut("pkg/a.py").unwrap().skeleton = "as read before".into();
        let mut map = ImpactMap::new("env");
        let tests = BTreeMap::from([("tests/test_a.py::test_f".to_string(), Reach::default())]);
        map.record("commit 1", &Recorded { table: known, tests, ..Recorded::default() });
        assert_eq!(read(&map)["pkg/a.py"].skeleton, "as read before");
        std::fs::write(root.join("pkg/a.py"), "def f():\n    return 2\n").unwrap();
        let again = read(&map);
        assert_eq!(again["pkg/a.py"].skeleton, first["pkg/a.py"].skeleton);
        assert_ne!(again["pkg/a.py"].digest, first["pkg/a.py"].digest);
    }
}
