//! The coverage runs: tests run once, unmutated, under mutdelta's pytest probe, which says which test executes which added statement; they are also the baselines.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::impact;
use super::interpreter::{self, Runner};
use crate::cache::{self, Cache};
use crate::model::plan::Plan;
use crate::model::record::{Exit, Finished};
use crate::process::Beside;

/// The probe plugin, written next to the worker script and loaded with `-p mutdelta_probe`.
pub const PROBE_SOURCE: &str = include_str!("probe.py");
pub const PROBE_MODULE: &str = "mutdelta_probe";
/// What coverage runs run with `python -m`: pytest, with the probe imported before it.
pub const PROBE_MAIN_SOURCE: &str = include_str!("probe_main.py");
pub const PROBE_MAIN_MODULE: &str = "mutdelta_probe_main";
/// The probe plugin's hooks.
pub const PROBE_HOOKS_SOURCE: &str = include_str!("probe_hooks.py");
pub const PROBE_HOOKS_MODULE: &str = "mutdelta_probe_hooks";
/// Keeps the modules compiled and the test modules pytest rewrites inside the copy, though
/// bytecode writing is off; installed by the coverage runs, warm workers and collectors.
pub const REWRITTEN_SOURCE: &str = include_str!("rewritten.py");
pub const REWRITTEN_MODULE: &str = "mutdelta_rewritten";
/// The `sitecustomize` that lets the probe watch the Python processes a test starts; alone in
/// its directory (`SUBPROCESSES`), first on the coverage runs' path.
pub const PROBE_CHILD_SOURCE: &str = include_str!("probe_child.py");
pub const SUBPROCESSES: &str = "subprocesses";

/// Writes the probe's modules into the `support` directory.
pub fn write_probe(support: &Path) -> Result<()> {
    std::fs::write(support.join(format!("{PROBE_MODULE}.py")), PROBE_SOURCE)?;
    std::fs::write(support.join(format!("{PROBE_MAIN_MODULE}.py")), PROBE_MAIN_SOURCE)?;
    std::fs::write(support.join(format!("{PROBE_HOOKS_MODULE}.py")), PROBE_HOOKS_SOURCE)?;
    std::fs::write(support.join(format!("{REWRITTEN_MODULE}.py")), REWRITTEN_SOURCE)?;
    std::fs::create_dir_all(support.join(SUBPROCESSES))?;
    std::fs::write(support.join(SUBPROCESSES).join("sitecustomize.py"), PROBE_CHILD_SOURCE)?;
    std::fs::write(support.join(format!("{}.py", impact::IMPACT_MODULE)), impact::IMPACT_SOURCE)?;
    Ok(())
}

/// The blocks of the project a recording run may reuse (`impact::ImpactMap::newest_blocks`).
const IMPACT_KNOWN: &str = "probe-impact-known.json";

/// No test ruled out (`Probe::ruled_out`).
pub static NONE_RULED_OUT: BTreeMap<String, String> = BTreeMap::new();

/// One test's measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestCoverage {
    pub id: String,
    pub duration: Duration,
    /// Its place in the order the run collected the tests (the order the suite runs them).
    #[serde(default)]
    pub order: usize,
    /// Target lines it executed, per file relative to the copy's root.
    pub lines: BTreeMap<PathBuf, BTreeSet<usize>>,
}

/// Which tests execute which added lines.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CoverageMap {
    pub tests: Vec<TestCoverage>,
    /// Target lines executed while the tests were collected (module-level code).
    pub collection: BTreeMap<PathBuf, BTreeSet<usize>>,
    /// Modules from outside the project that the tests imported: preloaded by warm workers.
    pub outside_modules: Vec<String>,
    /// Every module file the tests imported (real paths).
    pub module_files: Vec<PathBuf>,
    /// Target files the probe could not watch (imported before it, or by path): any of their
    /// lines may have run anywhere.
    pub untraced: BTreeSet<PathBuf>,
    /// Per file, the functions whose `def` line is watched, by that line: whether the function
    /// was called outside any test (at import, during collection).
    #[serde(default)]
    pub functions: BTreeMap<PathBuf, BTreeMap<usize, bool>>,
    /// The tests collected but left out (`Probe::deselect`).
    #[serde(default)]
    pub deselected: Vec<String>,
    /// What the test-impact map keeps of this run; not kept with it.
    #[serde(skip)]
    pub impact: Option<impact::Recorded>,
    /// A process of the run could not record it (another trace function took the probe's
    /// place): then no other process's record stands for the run.
    #[serde(skip)]
    pub impact_lost: bool,
    /// The tests that failed, each with how its failure looked (`probe_hooks.fingerprint`).
    #[serde(skip)]
    pub failed: BTreeMap<String, String>,
    /// The tests the project marks flaky.
    #[serde(default)]
    pub marked_flaky: Vec<String>,
    /// pytest-rerunfailures' `--reruns`, as the project's configuration sets it (0: none).
    #[serde(default)]
    pub reruns: u32,
}

#[derive(Deserialize)]
struct ProbeTest {
    duration: f64,
    order: usize,
    lines: BTreeMap<PathBuf, Vec<usize>>,
}

#[derive(Deserialize)]
struct ProbeOutput {
    tests: BTreeMap<String, ProbeTest>,
    collection: BTreeMap<PathBuf, Vec<usize>>,
    outside_modules: Vec<String>,
    module_files: Vec<PathBuf>,
    #[serde(default)]
    untraced: Vec<PathBuf>,
    #[serde(default)]
    functions: Vec<(PathBuf, usize, bool)>,
    #[serde(default)]
    impact: Option<impact::Recorded>,
    #[serde(default)]
    impact_lost: bool,
    #[serde(default)]
    deselected: Vec<String>,
    #[serde(default)]
    failed: BTreeMap<String, String>,
    #[serde(default)]
    marked_flaky: Vec<String>,
    #[serde(default)]
    reruns: u32,
}

/// One run of tests under the probe.
pub struct Probe<'a> {
    pub python: &'a Path,
    pub runner: &'a Runner,
    /// The copy the tests run in.
    pub root: &'a Path,
    /// mutdelta's helpers (the probe module).
    pub support: &'a Path,
    /// Where this run's own files go (what it watches, what it found): `support` unless
    /// another run may be under way beside it.
    pub files: &'a Path,
    /// The tests to run (empty: the suite as the project's configuration collects it).
    pub tests: &'a [String],
    /// The tests not to run: directories, files or node ids, as pytest's command line names
    /// them.
    pub deselect: &'a [String],
    /// The tests the test-impact map proved need not run, each with the digest of its
    /// parameters then: left out while they are the same.
    pub ruled_out: &'a BTreeMap<String, String>,
    /// The lines to watch, per file relative to `root`.
    pub targets: BTreeMap<PathBuf, Vec<usize>>,
}

/// Whether the test `id` is one that a run of `tests` (all, when empty) leaving out `deselect`
/// runs, as far as its node id tells (a selector names a directory, a file, or a node id with
/// what it holds and its parametrizations).
pub(super) fn selection_runs(tests: &[String], deselect: &[String], id: &str) -> bool {
    let named = |selectors: &[String]| {
        selectors.iter().any(|selector| {
            id.strip_prefix(selector.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', ':', '[']))
        })
    };
    (tests.is_empty() || named(tests)) && !named(deselect)
}

/// The lines the probe watches for `plan`: every line of the added lines' statements.
pub fn plan_targets(plan: &Plan) -> BTreeMap<PathBuf, Vec<usize>> {
    plan.files
        .iter()
        .filter(|file| file.language == super::spec::LANGUAGE)
        .map(|file| (file.path.clone(), file.statement_lines()))
        .collect()
}

/// What a measurement ran and learned.
#[derive(Debug)]
pub struct Measured {
    /// Every process, in order: the shards, then the whole selection in one process when a
    /// shard failed. The last one decides whether the tests passed.
    pub runs: Vec<Finished>,
    /// What the probe saw; none when the tests failed or collected nothing.
    pub map: Option<CoverageMap>,
    /// Wall time, from the first process's start to the last one's end.
    pub took: Duration,
    /// The map is an earlier run's, of the same files, interpreter and tests: nothing ran.
    pub reused: bool,
    /// The map is one this check measured before, for the same question: nothing ran again,
    /// and `took` is that measurement's.
    pub answered_before: bool,
    /// The tests that failed, then passed when run again: the measurement stands without them
    /// counting as failures.
    pub flaky: Vec<FoundFlaky>,
}

/// A test that failed and then passed on the same code, without any mutant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFlaky {
    pub test: String,
    /// Its runs (the first included), and how many failed.
    pub runs: u32,
    pub failures: u32,
    /// How its failures looked.
    pub fingerprints: Vec<String>,
}

impl Measured {
    /// The run that decides: the one process, the retry, the failed shard, or one that ran
    /// tests (a shard left without tests to run says nothing); none when the map was reused
    /// (only passing measurements are kept).
    pub fn decisive(&self) -> Option<&Finished> {
        let last = self.runs.last()?;
        Some(self.runs.iter().rev().find(|run| run.exit != Exit::Code(5)).unwrap_or(last))
    }
}

/// Measurements remembered between runs. A passing measurement is reused when the copy's
/// files, the interpreter and its installed packages, the environment, mutdelta's probe and
/// the question (tests, tests left out, lines watched) are all the same. Every test's duration
/// is kept too, so that the slow tests start first next time.
pub struct Memory {
    cache: Cache,
    /// What every key shares: all of the above but the question.
    shared: String,
    /// This run's last passing measurement, by its copy and question: a confined check's
    /// baseline asks what its `lines_run` asked, and is answered even when nothing is kept
    /// between runs (`--no-cache`).
    last: Mutex<Option<(Vec<u8>, CoverageMap, Duration)>>,
    /// Where the runs of the whole suite's collection record the test-impact map.
    pub impact: Option<impact::Store>,
}

/// The keys this check kept, by any of its memories (the audit's sides have their own), with
/// how long each measurement took: an answer read back from one of them was measured in this
/// check, not by an earlier run.
static KEPT_BY_THIS_CHECK: Mutex<BTreeMap<String, Duration>> = Mutex::new(BTreeMap::new());

/// Tests faster than this are not worth remembering: they never hold a shard up.
const REMEMBERED_DURATION: Duration = Duration::from_millis(100);
const DURATIONS: &str = "python/durations.json";
const PROBES: &str = "python/probe";
/// Coverage runs kept: a few changes' worth (each check keeps one or two).
const KEPT_PROBES: usize = 32;

impl Memory {
    /// `at`: the state under test, in words.
    pub fn new(cache: Cache, python: &Path, runner: &Runner, root: &Path, at: &str) -> Memory {
        let (Ok(interpreter), Ok(portable)) =
            (interpreter::fingerprint(python), interpreter::portable_fingerprint(python))
        else {
            return Memory::off();
        };
        let environment = impact_environment(&portable, runner);
        let impact = Some(impact::Store::new(cache.clone(), environment, at.to_string()));
        let files = if cache.is_on() { cache::tree_digest(root).ok() } else { None };
        let Some(files) = files else {
            return Memory { impact, ..Memory::off() };
        };
        let shared = cache::key(&[
            env!("CARGO_PKG_VERSION").as_bytes(),
            PROBE_SOURCE.as_bytes(),
            PROBE_MAIN_SOURCE.as_bytes(),
            PROBE_HOOKS_SOURCE.as_bytes(),
            PROBE_CHILD_SOURCE.as_bytes(),
            files.as_bytes(),
            interpreter.as_bytes(),
            format!("{runner:?}").as_bytes(),
            crate::cache::environment_fingerprint().as_bytes(),
        ]);
        Memory { cache, shared, last: Mutex::default(), impact }
    }

    /// A memory that reuses no earlier measurement and keeps none, but records the test-impact
    /// map into `store`.
    pub fn recording_only(store: impact::Store) -> Memory {
        Memory { impact: Some(store), ..Memory::off() }
    }

    pub fn off() -> Memory {
        Memory { cache: Cache::off(), shared: String::new(), last: Mutex::default(), impact: None }
    }

    /// The copy and the question, which this run's files do not change under.
    fn this_run(probe: &Probe) -> Option<Vec<u8>> {
        serde_json::to_vec(&(probe.root, probe.tests, probe.deselect, probe.ruled_out, &probe.targets)).ok()
    }

    fn key(&self, probe: &Probe) -> Result<String> {
        let question = serde_json::to_vec(&(probe.tests, probe.deselect, probe.ruled_out, &probe.targets))?;
        Ok(format!("{PROBES}/{}.json", cache::key(&[self.shared.as_bytes(), &question])))
    }

    /// Whether `probe`'s question has an answer kept: nothing would run.
    pub fn remembers(&self, probe: &Probe) -> bool {
        self.recall(probe).is_some()
    }

    /// The kept answer to `probe`'s question; else, when the test-impact map rules tests out
    /// of it, the answer to the same question asked with none ruled out (a run that ran more
    /// tests, whose map selects for each mutant every test that can reach it): a check after a
    /// check of the same content that recorded the map asks that way.
    /// The answer kept for `probe`'s question, and how long it took when this check measured it
    /// (none when an earlier run did).
    fn recall(&self, probe: &Probe) -> Option<(CoverageMap, Option<Duration>)> {
        self.recall_exactly(probe).or_else(|| {
            if probe.ruled_out.is_empty() {
                return None;
            }
            let whole = Probe { ruled_out: &NONE_RULED_OUT, targets: probe.targets.clone(), ..*probe };
            self.recall_exactly(&whole)
        })
    }

    fn recall_exactly(&self, probe: &Probe) -> Option<(CoverageMap, Option<Duration>)> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some((question, map, took)), Some(asked)) = (last.as_ref(), Memory::this_run(probe)) {
            if *question == asked {
                return Some((map.clone(), Some(*took)));
            }
        }
        let key = self.key(probe).ok()?;
        let map = serde_json::from_slice(&self.cache.read(&key)?).ok()?;
        Some((map, KEPT_BY_THIS_CHECK.lock().unwrap_or_else(|e| e.into_inner()).get(&key).copied()))
    }

    /// Keeps `map`, and its tests' durations over those kept (read again now: another
    /// measurement may have kept its own meanwhile).
    fn remember(&self, probe: &Probe, map: &CoverageMap, took: Duration) {
        // Held throughout: measurements that end together keep their durations one by one.
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(question) = Memory::this_run(probe) {
            *last = Some((question, map.clone(), took));
        }
        if let (Some(store), Some(recorded), true) = (&self.impact, &map.impact, probe.tests.is_empty()) {
            store.record(recorded);
        }
        if let (Ok(key), Ok(bytes)) = (self.key(probe), serde_json::to_vec(map)) {
            self.cache.write(&key, &bytes);
            KEPT_BY_THIS_CHECK.lock().unwrap_or_else(|e| e.into_inner()).insert(key.clone(), took);
            self.cache.keep_newest(PROBES, KEPT_PROBES);
        }
        let mut durations = self.durations();
        for test in &map.tests {
            if test.duration >= REMEMBERED_DURATION {
                durations.insert(test.id.clone(), test.duration.as_secs_f64());
            } else {
                durations.remove(&test.id);
            }
        }
        if let Ok(bytes) = serde_json::to_vec(&durations) {
            self.cache.write(DURATIONS, &bytes);
        }
    }

    fn durations(&self) -> BTreeMap<String, f64> {
        self.cache.read(DURATIONS).and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default()
    }
}

/// What a test-impact map must have been made under to be used: mutdelta and its probe, the
/// interpreter's version with its packages (`interpreter::portable_fingerprint`: a map is made
/// on one machine and used on others, where paths and the environment differ) and the runner;
/// not the files, which the map outlives.
pub fn impact_environment(interpreter: &str, runner: &Runner) -> String {
    cache::key(&[
        env!("CARGO_PKG_VERSION").as_bytes(),
        PROBE_SOURCE.as_bytes(),
        PROBE_HOOKS_SOURCE.as_bytes(),
        impact::IMPACT_SOURCE.as_bytes(),
        interpreter.as_bytes(),
        format!("{runner:?}").as_bytes(),
    ])
}

/// The tests to start before the others when `shards` processes share them: those known to
/// take at least an eighth of a shard's share of the known time, slowest first.
fn slow_first(durations: &BTreeMap<String, f64>, shards: usize) -> Vec<String> {
    let total: f64 = durations.values().sum();
    let threshold = total / (8 * shards.max(1)) as f64;
    let mut slow: Vec<(&String, f64)> =
        durations.iter().filter(|(_, &seconds)| seconds >= threshold).map(|(id, &s)| (id, s)).collect();
    slow.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    slow.into_iter().map(|(id, _)| id.clone()).collect()
}

/// Runs the probe's tests split over `shards` processes side by side (each collects every
/// test, then takes the next one nobody has taken, so the slow tests spread themselves), and
/// merges what they measured. The shards after the first start only if it is still running a
/// second later (at once when the kept durations say the tests take that long); fewer tests
/// named by node id than shards run in one process. A test that
/// fails in a shard may depend on a test that ran in another: then the selection runs again in
/// one process, and that run decides. `spreading` is called as the other shards start.
pub fn measure(
    probe: &Probe,
    memory: &Memory,
    shards: usize,
    timeout: Duration,
    log: &Path,
    spreading: &(dyn Fn() + Sync),
) -> Result<Measured> {
    let impact = records_in_checks(probe, memory);
    measure_as(probe, memory, shards, timeout, log, Manner { alongside: None, spreading, impact })
}

/// Whether a check's coverage run records what the test-impact map keeps: with a map kept, on
/// Python 3.12 and later. Before it the probe records through a trace function called as every
/// frame starts, which costs a suite that calls many functions several times its time
/// (more-itertools: 3.5 to 4 times): only `mutdelta map`, asked for, pays that.
fn records_in_checks(probe: &Probe, memory: &Memory) -> bool {
    let monitoring = interpreter::version(probe.python).is_ok_and(|version| version >= (3, 12));
    monitoring && memory.impact.as_ref().is_some_and(impact::Store::records)
}

/// `measure`, recording what the test-impact map keeps whether or not a map is kept (`map`
/// writes it to a file).
pub fn measure_recording(
    probe: &Probe,
    memory: &Memory,
    shards: usize,
    timeout: Duration,
    log: &Path,
) -> Result<Measured> {
    measure_as(
        probe,
        memory,
        shards,
        timeout,
        log,
        Manner { alongside: None, spreading: &|| {}, impact: true },
    )
}

/// A measurement begun beside other work before it is known to be needed (`Beside`): split
/// over processes, it runs in `at_first` of them (the cores the other work leaves) until
/// `spread` is set (the other work is over, and the measurement is waited for).
#[derive(Debug, Clone, Copy)]
pub struct Alongside<'a> {
    pub beside: Beside<'a>,
    pub at_first: usize,
    pub spread: &'a AtomicBool,
}

/// `measure`, begun beside other work (`Alongside`).
pub fn measure_beside(
    probe: &Probe,
    memory: &Memory,
    shards: usize,
    timeout: Duration,
    log: &Path,
    alongside: Alongside,
) -> Result<Measured> {
    let impact = records_in_checks(probe, memory);
    measure_as(
        probe,
        memory,
        shards,
        timeout,
        log,
        Manner { alongside: Some(alongside), spreading: &|| {}, impact },
    )
}

/// How a measurement runs: beside other work or not, what it calls as its shards spread,
/// whether it records what the test-impact map keeps.
struct Manner<'a> {
    alongside: Option<Alongside<'a>>,
    spreading: &'a (dyn Fn() + Sync),
    impact: bool,
}

fn measure_as(
    probe: &Probe,
    memory: &Memory,
    shards: usize,
    timeout: Duration,
    log: &Path,
    manner: Manner,
) -> Result<Measured> {
    let Manner { alongside, spreading, impact } = manner;
    let beside = alongside.map(|alongside| alongside.beside);
    let started = std::time::Instant::now();
    if let Some((map, measured_in_this_check)) = memory.recall(probe) {
        // An answer this check measured is no reuse of an earlier run's: it is said to have
        // taken as long as it did.
        return Ok(Measured {
            runs: Vec::new(),
            map: Some(map),
            took: measured_in_this_check.unwrap_or_else(|| started.elapsed()),
            reused: measured_in_this_check.is_none(),
            answered_before: measured_in_this_check.is_some(),
            flaky: Vec::new(),
        });
    }
    let real_root = probe.root.canonicalize()?;
    // Fewer tests named by node id than processes (an edited test or two): each process after
    // the first would only collect them again.
    let few = !probe.tests.is_empty()
        && probe.tests.len() < shards
        && probe.tests.iter().all(|test| test.contains("::"));
    let shards = if few { 1 } else { shards.max(1) };
    let others_after = write_probe_files(probe, memory, &real_root, shards, impact)?;
    let seed = hash_seed();
    let runs: Vec<(Finished, Option<CoverageMap>)> = if shards == 1 {
        vec![measure_one(probe, impact, &real_root, None, timeout, log, beside)?]
    } else {
        let sharded = Sharded {
            probe,
            impact,
            real_root: &real_root,
            timeout,
            log,
            alongside,
            spreading,
            others_after,
            seed,
        };
        sharded.run(shards)?
    };
    let again = Again { probe, impact, real_root: &real_root, timeout, log, beside };
    let Decided { runs, map, collected, flaky } = again.decide(shards, runs)?;
    if let (Some(map), true) = (&map, collected) {
        memory.remember(probe, map, started.elapsed());
    }
    let runs = runs.into_iter().map(|(run, _)| run).collect();
    Ok(Measured { runs, map, took: started.elapsed(), reused: false, answered_before: false, flaky })
}

/// What running a measurement's failed tests again found: each passed once.
struct Retried {
    /// The retries, the last of which passed.
    runs: Vec<(Finished, Option<CoverageMap>)>,
    /// The measurement's map, as if the flaky tests had passed the first time.
    map: CoverageMap,
    flaky: Vec<FoundFlaky>,
}

/// What a measurement runs again when its processes fail: the selection in one process, or
/// the failed tests alone.
struct Again<'a> {
    probe: &'a Probe<'a>,
    impact: bool,
    real_root: &'a Path,
    timeout: Duration,
    log: &'a Path,
    beside: Option<Beside<'a>>,
}

/// What a measurement's processes decide: all of them, in order (the deciding one last when it
/// failed), the map when they passed, whether they collected any test, the flaky tests.
struct Decided {
    runs: Vec<(Finished, Option<CoverageMap>)>,
    map: Option<CoverageMap>,
    collected: bool,
    flaky: Vec<FoundFlaky>,
}

impl Again<'_> {
    /// The runs that decide a measurement of `shards` processes (`runs`): theirs, or the
    /// selection again in one process when a shard failed (a test may lean on one another
    /// shard ran; the shards' runs stay as the record); then, when tests failed there, those
    /// tests again alone (`retry_failures`).
    fn decide(&self, shards: usize, mut runs: Vec<(Finished, Option<CoverageMap>)>) -> Result<Decided> {
        let nothing_collected = |run: &Finished| run.exit == Exit::Code(5);
        let fails = |(run, _): &(Finished, Option<CoverageMap>)| !run.passed() && !nothing_collected(run);
        let interrupted = runs.iter().any(|(run, _)| run.exit == Exit::Interrupted);
        let mut deciding = 0;
        if shards > 1 && !interrupted && runs.iter().any(fails) {
            for (_, map) in &mut runs {
                *map = None;
            }
            let Again { probe, impact, real_root, timeout, log, beside } = *self;
            runs.push(measure_one(probe, impact, real_root, None, timeout, log, beside)?);
            deciding = runs.len() - 1;
        }
        let mut flaky = Vec::new();
        if let Some(retried) = self.retry_failures(&runs[deciding..])? {
            flaky = retried.flaky;
            runs.extend(retried.runs);
            deciding = runs.len() - 1;
            if let Some((_, map)) = runs.last_mut() {
                *map = Some(retried.map);
            }
        }
        let collected = !runs[deciding..].iter().all(|(run, _)| nothing_collected(run));
        let map = match runs[deciding..].iter().position(fails) {
            // No test ran: what the collection did, when the probe could say (every test was
            // left out).
            None if !collected => {
                runs[deciding..].iter_mut().filter_map(|(_, map)| map.take()).reduce(CoverageMap::merge)
            }
            None => Some(
                runs[deciding..]
                    .iter_mut()
                    .filter_map(|(_, map)| map.take())
                    .fold(CoverageMap::default(), CoverageMap::merge),
            ),
            // The failed run decides (`Measured::decisive`: the last).
            Some(index) => {
                let decisive = runs.remove(deciding + index);
                runs.push(decisive);
                None
            }
        };
        Ok(Decided { runs, map, collected, flaky })
    }

    /// When the processes of a measurement (`runs`) failed only in tests (no error in
    /// collection, none stopped), runs the tests that failed again, alone, until each has passed
    /// once (at most `flaky::RETRIES` times): those are flaky, and the measurement stands with
    /// what their passing runs executed added to theirs. What the test-impact map would keep of
    /// them is dropped: a failed run may have stopped short of what the test executes. `None`
    /// when a test failed every time, or the failure was not the tests'.
    fn retry_failures(&self, runs: &[(Finished, Option<CoverageMap>)]) -> Result<Option<Retried>> {
        let Again { probe, real_root, timeout, log, beside, .. } = *self;
        let tests_failed = |(run, map): &(Finished, Option<CoverageMap>)| {
            run.exit == Exit::Code(1) && map.as_ref().is_some_and(|map| !map.failed.is_empty())
        };
        let quiet = |(run, _): &(Finished, Option<CoverageMap>)| run.passed() || run.exit == Exit::Code(5);
        if !runs.iter().any(tests_failed) || !runs.iter().all(|run| quiet(run) || tests_failed(run)) {
            return Ok(None);
        }
        let mut map =
            runs.iter().filter_map(|(_, map)| map.clone()).fold(CoverageMap::default(), CoverageMap::merge);
        let mut failing: BTreeMap<String, FoundFlaky> = std::mem::take(&mut map.failed)
            .into_iter()
            .map(|(test, fingerprint)| {
                let found =
                    FoundFlaky { test: test.clone(), runs: 1, failures: 1, fingerprints: vec![fingerprint] };
                (test, found)
            })
            .collect();
        let mut flaky = Vec::new();
        let mut retries = Vec::new();
        for _ in 0..crate::run::flaky::RETRIES {
            let tests: Vec<String> = failing.keys().cloned().collect();
            let again = Probe { tests: &tests, targets: probe.targets.clone(), ..*probe };
            let (run, retried) = measure_one(&again, false, real_root, None, timeout, log, beside)?;
            let Some(retried) = retried.filter(|_| run.passed() || run.exit == Exit::Code(1)) else {
                return Ok(None);
            };
            for found in failing.values_mut() {
                found.runs += 1;
            }
            for (test, fingerprint) in &retried.failed {
                if let Some(found) = failing.get_mut(test) {
                    found.failures += 1;
                    if !found.fingerprints.contains(fingerprint) {
                        found.fingerprints.push(fingerprint.clone());
                    }
                }
            }
            for passed in retried.tests.iter().filter(|test| !retried.failed.contains_key(&test.id)) {
                let Some(found) = failing.remove(&passed.id) else { continue };
                if let Some(mine) = map.tests.iter_mut().find(|test| test.id == passed.id) {
                    for (file, lines) in &passed.lines {
                        mine.lines.entry(file.clone()).or_default().extend(lines);
                    }
                } else {
                    map.tests.push(passed.clone());
                }
                if let Some(recorded) = &mut map.impact {
                    recorded.tests.remove(&passed.id);
                }
                flaky.push(found);
            }
            let done = failing.is_empty();
            retries.push((run, None));
            if done {
                return Ok(Some(Retried { runs: retries, map, flaky }));
            }
        }
        Ok(None)
    }
}

/// Writes what the probe reads (the lines to watch, the tests left out, the slow tests the
/// shards begin with; for a run that records the map, the blocks it read before) and clears the
/// queue; returns how long the shards after the first wait.
fn write_probe_files(
    probe: &Probe,
    memory: &Memory,
    real_root: &Path,
    shards: usize,
    impact: bool,
) -> Result<Duration> {
    let targets: BTreeMap<String, &Vec<usize>> = probe
        .targets
        .iter()
        .map(|(path, lines)| (real_root.join(path).display().to_string(), lines))
        .collect();
    std::fs::write(probe.files.join("probe-targets.json"), serde_json::to_vec(&targets)?)?;
    std::fs::write(probe.files.join("probe-deselect.json"), serde_json::to_vec(probe.deselect)?)?;
    std::fs::write(probe.files.join("probe-ruled-out.json"), serde_json::to_vec(probe.ruled_out)?)?;
    if impact {
        // The blocks the kept map read before: a run that records reads only changed files.
        let known = memory.impact.as_ref().and_then(impact::Store::load).map(|map| map.newest_blocks());
        std::fs::write(probe.files.join(IMPACT_KNOWN), serde_json::to_vec(&known.unwrap_or_default())?)?;
    }
    let _ = std::fs::remove_file(probe.files.join(QUEUE));
    let known: BTreeMap<String, f64> = memory
        .durations()
        .into_iter()
        .filter(|(id, _)| selection_runs(probe.tests, probe.deselect, id))
        .collect();
    let first = slow_first(&known, shards);
    std::fs::write(probe.files.join("probe-first.json"), serde_json::to_vec(&first)?)?;
    // Unless this run's tests are known to be slow, the other shards wait a while: a probe that is
    // over by then never pays for their interpreters and collections.
    let known_total: f64 = known.values().sum();
    Ok(if known_total >= SHARDS_AFTER.as_secs_f64() { Duration::ZERO } else { SHARDS_AFTER })
}

/// A measurement split over shards, each a pytest process taking tests from one queue.
struct Sharded<'a> {
    probe: &'a Probe<'a>,
    /// Whether it records what the test-impact map keeps.
    impact: bool,
    real_root: &'a Path,
    timeout: Duration,
    log: &'a Path,
    alongside: Option<Alongside<'a>>,
    spreading: &'a (dyn Fn() + Sync),
    /// How long the shards after the first wait for it to be over before they start.
    others_after: Duration,
    /// One `PYTHONHASHSEED` for all the shards.
    seed: u32,
}

impl Sharded<'_> {
    /// Each shard's run, in order of shard, leaving out those the first made needless.
    fn run(&self, shards: usize) -> Result<Vec<(Finished, Option<CoverageMap>)>> {
        let first_done = (Mutex::new(false), Condvar::new());
        std::thread::scope(|scope| {
            let running: Vec<_> = (0..shards)
                .map(|shard| {
                    let log = shard_log(self.log, shard);
                    let first_done = &first_done;
                    scope.spawn(move || self.shard(shard, &log, first_done))
                })
                .collect();
            running
                .into_iter()
                .map(|shard| shard.join().map_err(|_| anyhow::anyhow!("a coverage shard panicked"))?)
                .filter_map(Result::transpose)
                .collect::<Result<Vec<_>>>()
        })
    }

    /// Shard `shard`'s run: the first at once, each other one after `others_after` (beside other
    /// work, once its core is free); none when the first was over before.
    fn shard(
        &self,
        shard: usize,
        log: &Path,
        first_done: &(Mutex<bool>, Condvar),
    ) -> Result<Option<(Finished, Option<CoverageMap>)>> {
        let (probe, real_root, seed) = (self.probe, self.real_root, self.seed);
        let beside = self.alongside.map(|alongside| alongside.beside);
        if shard == 0 {
            let run =
                measure_one(probe, self.impact, real_root, Some((shard, seed)), self.timeout, log, beside);
            *first_done.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
            first_done.1.notify_all();
            return run.map(Some);
        }
        let done = first_done.0.lock().unwrap_or_else(|e| e.into_inner());
        let (mut done, _) = first_done
            .1
            .wait_timeout_while(done, self.others_after, |done| !*done)
            .unwrap_or_else(|e| e.into_inner());
        // Begun beside other work, they wait for the cores it leaves.
        let held =
            |alongside: Alongside| shard >= alongside.at_first && !alongside.spread.load(Ordering::SeqCst);
        while !*done && self.alongside.is_some_and(held) {
            done = first_done
                .1
                .wait_timeout(done, Duration::from_millis(25))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if *done {
            return Ok(None); // the first shard ran every test
        }
        drop(done);
        (self.spreading)();
        measure_one(probe, self.impact, real_root, Some((shard, seed)), self.timeout, log, beside).map(Some)
    }
}

/// `baseline.log` → `baseline-shard-1.log`.
fn shard_log(log: &Path, shard: usize) -> PathBuf {
    let stem = log.file_stem().unwrap_or_default().to_string_lossy();
    log.with_file_name(format!("{stem}-shard-{shard}.log"))
}

/// The file the shards take their tests from.
const QUEUE: &str = "probe-queue";
/// How long the other shards wait for the first before they start, when the tests are not
/// known to take longer: about what starting pytest and collecting costs a small project.
const SHARDS_AFTER: Duration = Duration::from_secs(1);

/// A `PYTHONHASHSEED` for the shards of one measurement, which must collect the tests in one
/// order: a project that parametrizes over a set collects in the order of its hashes. Another
/// each time, as a plain run of the suite would have.
fn hash_seed() -> u32 {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
    (nanos ^ std::process::id()) % 4_294_967_295 + 1
}

/// One process of a measurement: the whole selection, or one shard of it (its index, and the
/// hash seed the shards share unless the environment sets one).
fn measure_one(
    probe: &Probe,
    impact: bool,
    real_root: &Path,
    shard: Option<(usize, u32)>,
    timeout: Duration,
    log: &Path,
    beside: Option<Beside>,
) -> Result<(Finished, Option<CoverageMap>)> {
    let Probe { python, runner, root, support, files, tests, .. } = *probe;
    // Only a run that collects every test file records what the map keeps: what the
    // collection of the others does is part of every test's conditions.
    let record_impact = impact && tests.is_empty();
    let out_path = match shard {
        Some((index, _)) => files.join(format!("probe-out-{index}.json")),
        None => files.join("probe-out.json"),
    };
    let _ = std::fs::remove_file(&out_path);
    let plugin = ["-p".to_string(), PROBE_MODULE.to_string()];
    let mut command =
        interpreter::test_command(runner, python, root, Some(support), (PROBE_MAIN_MODULE, &plugin), tests);
    let file = |name: &str| files.join(name).display().to_string();
    for (name, value) in command.env.iter_mut() {
        if name == "PYTHONPATH" {
            let mut paths = vec![support.join(SUBPROCESSES)];
            paths.extend(std::env::split_paths(value.as_str()));
            *value = interpreter::join(&paths);
        }
    }
    command.env.push(("MUTDELTA_PROBE_TARGETS".into(), file("probe-targets.json")));
    command.env.push(("MUTDELTA_PROBE_DESELECT".into(), file("probe-deselect.json")));
    command.env.push(("MUTDELTA_PROBE_RULED_OUT".into(), file("probe-ruled-out.json")));
    command.env.push(("MUTDELTA_PROBE_OUT".into(), out_path.display().to_string()));
    if record_impact {
        command.env.push(("MUTDELTA_PROBE_IMPACT".into(), real_root.display().to_string()));
        command.env.push(("MUTDELTA_PROBE_IMPACT_KNOWN".into(), file(IMPACT_KNOWN)));
    }
    if let Some((_, seed)) = shard {
        command.env.push(("MUTDELTA_PROBE_QUEUE".into(), file(QUEUE)));
        command.env.push(("MUTDELTA_PROBE_FIRST".into(), file("probe-first.json")));
        if std::env::var_os("PYTHONHASHSEED").is_none() {
            command.env.push(("PYTHONHASHSEED".into(), seed.to_string()));
        }
    }
    let finished = match beside {
        Some(beside) => command.run_beside(timeout, log, beside)?,
        None => command.run(timeout, log)?,
    };
    // A run whose tests failed is read too: which failed, and how, tells a flaky test apart.
    let tests_failed = finished.exit == Exit::Code(1);
    if !finished.passed() && finished.exit != Exit::Code(5) && !tests_failed {
        return Ok((finished, None));
    }
    // With nothing collected, what the collection ran (every test left out) is still read.
    let text = match std::fs::read(&out_path) {
        Err(_) if finished.exit == Exit::Code(5) || tests_failed => return Ok((finished, None)),
        read => read.context("the coverage probe wrote nothing")?,
    };
    match read_probe_output(&text, real_root) {
        Err(_) if tests_failed => Ok((finished, None)),
        read => Ok((finished, Some(read?))),
    }
}

/// What the probe wrote, with paths relative to the copy's root `real_root`.
fn read_probe_output(text: &[u8], real_root: &Path) -> Result<CoverageMap> {
    let probe: ProbeOutput =
        serde_json::from_slice(text).context("the coverage probe wrote something unexpected")?;
    let relative = |path: PathBuf| path.strip_prefix(real_root).map(Path::to_path_buf).unwrap_or(path);
    let lines = |map: BTreeMap<PathBuf, Vec<usize>>| -> BTreeMap<PathBuf, BTreeSet<usize>> {
        map.into_iter().map(|(path, lines)| (relative(path), lines.into_iter().collect())).collect()
    };
    Ok(CoverageMap {
        tests: probe
            .tests
            .into_iter()
            .map(|(id, test)| TestCoverage {
                id,
                duration: Duration::from_secs_f64(test.duration.max(0.0)),
                order: test.order,
                lines: lines(test.lines),
            })
            .collect(),
        collection: lines(probe.collection),
        outside_modules: probe.outside_modules,
        module_files: probe.module_files,
        untraced: probe.untraced.into_iter().map(relative).collect(),
        functions: probe.functions.into_iter().fold(
            BTreeMap::new(),
            |mut functions, (path, line, called)| {
                functions.entry(relative(path)).or_insert_with(BTreeMap::new).insert(line, called);
                functions
            },
        ),
        impact: probe.impact,
        impact_lost: probe.impact_lost,
        deselected: probe.deselected,
        failed: probe.failed,
        marked_flaky: probe.marked_flaky,
        reruns: probe.reruns,
    })
}

impl CoverageMap {
    /// Both shards' findings: their tests (each ran in one shard only), and the union of the rest.
    fn merge(mut self, other: CoverageMap) -> CoverageMap {
        self.tests.extend(other.tests);
        for (file, lines) in other.collection {
            self.collection.entry(file).or_default().extend(lines);
        }
        union(&mut self.outside_modules, other.outside_modules);
        union(&mut self.module_files, other.module_files);
        self.untraced.extend(other.untraced);
        union(&mut self.deselected, other.deselected);
        union(&mut self.marked_flaky, other.marked_flaky);
        self.failed.extend(other.failed);
        self.reruns = self.reruns.max(other.reruns);
        self.impact_lost |= other.impact_lost;
        self.impact = match (self.impact, other.impact) {
            _ if self.impact_lost => None,
            (Some(mine), Some(theirs)) => Some(mine.merge(theirs)),
            (mine, theirs) => mine.or(theirs),
        };
        for (file, functions) in other.functions {
            let mine = self.functions.entry(file).or_default();
            for (line, called) in functions {
                *mine.entry(line).or_default() |= called;
            }
        }
        self
    }

    /// The tests that executed a line of `statement` in `file`, fastest first.
    pub fn tests_covering(&self, file: &Path, statement: &RangeInclusive<usize>) -> Vec<&TestCoverage> {
        let mut tests: Vec<&TestCoverage> =
            self.tests.iter().filter(|test| ran(test.lines.get(file), statement)).collect();
        tests.sort_by(|a, b| a.duration.cmp(&b.duration).then_with(|| a.id.cmp(&b.id)));
        tests
    }

    /// True when `line` of `file` is the `def` line of a function that was defined, but never
    /// called, outside the tests: its defaults were used by the tests' calls alone.
    pub fn defined_but_not_called_outside_tests(&self, file: &Path, line: usize) -> bool {
        !self.untraced.contains(file)
            && self.functions.get(file).and_then(|functions| functions.get(&line)) == Some(&false)
    }

    /// True when a line of `statement` in `file` ran outside any test: while the tests were
    /// collected, or when a conftest imported the project.
    pub fn ran_at_collection(&self, file: &Path, statement: &RangeInclusive<usize>) -> bool {
        self.untraced.contains(file) || ran(self.collection.get(file), statement)
    }
}

fn union<T: Ord>(mine: &mut Vec<T>, theirs: Vec<T>) {
    mine.extend(theirs);
    mine.sort();
    mine.dedup();
}

fn ran(lines: Option<&BTreeSet<usize>>, statement: &RangeInclusive<usize>) -> bool {
    lines.is_some_and(|lines| lines.range(statement.clone()).next().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_runs_the_tests_its_selectors_name_and_not_those_it_leaves_out() {
        let strings = |items: &[&str]| items.iter().map(|item| item.to_string()).collect::<Vec<_>>();
        let change = strings(&["tests/test_a.py", "tests/test_b.py::test_one"]);
        for (id, runs) in [
            ("tests/test_a.py::test_x", true),
            ("tests/test_a.py::TestK::test_y[1]", true),
            ("tests/test_b.py::test_one", true),
            ("tests/test_b.py::test_one[2]", true),
            ("tests/test_b.py::test_ones", false),
            ("tests/test_b.py::test_two", false),
            ("tests/test_a.pyx::test_x", false),
            ("tests/test_c.py::test_x", false),
        ] {
            assert_eq!(selection_runs(&change, &[], id), runs, "the change's tests: {id}");
            assert_eq!(selection_runs(&[], &change, id), !runs, "the rest of the suite: {id}");
        }
        let directory = strings(&["tests/unit"]);
        assert!(selection_runs(&directory, &[], "tests/unit/test_a.py::test_x"));
        assert!(!selection_runs(&directory, &[], "tests/units/test_a.py::test_x"));
        assert!(selection_runs(&[], &[], "docs/usage.rst::usage.rst"), "the whole suite runs every test");
    }

    #[test]
    fn slow_tests_start_first_slowest_first_and_the_rest_keep_their_place() {
        let durations: BTreeMap<String, f64> =
            [("a", 0.0625), ("b", 9.0), ("c", 0.9375), ("d", 1.0), ("e", 5.0)]
                .map(|(id, s)| (id.to_string(), s))
                .into();
        // 16 s known over 2 shards: a test of at least 16 / 16 s goes first, `d` exactly so;
        // `c` falls short (it would not under a ninth).
        assert_eq!(slow_first(&durations, 2), ["b", "e", "d"]);
        assert_eq!(slow_first(&durations, 1), ["b", "e"]);
        assert_eq!(slow_first(&durations, 0), ["b", "e"], "no shards count as one");
        assert!(slow_first(&BTreeMap::new(), 2).is_empty());
    }

    fn test(id: &str, lines: &[usize]) -> TestCoverage {
        TestCoverage {
            id: id.to_string(),
            duration: Duration::from_millis(10),
            order: 0,
            lines: BTreeMap::from([(PathBuf::from("pkg/a.py"), lines.iter().copied().collect())]),
        }
    }

    fn recorded(test: &str, collected: &str, spawned: bool) -> impact::Recorded {
        let reach = |name: &str| impact::Reach {
            blocks: BTreeSet::from([("pkg/a.py".to_string(), name.to_string())]),
            spawned,
            ..impact::Reach::default()
        };
        impact::Recorded {
            table: impact::Table::new(),
            tests: BTreeMap::from([(test.to_string(), reach("f"))]),
            collection: reach(collected),
            ..impact::Recorded::default()
        }
    }

    #[test]
    fn shards_merge_into_one_map_with_each_test_once() {
        let one = CoverageMap {
            tests: vec![test("t::a", &[3])],
            collection: BTreeMap::from([(PathBuf::from("pkg/a.py"), BTreeSet::from([1]))]),
            outside_modules: vec!["pytest".into(), "six".into()],
            module_files: vec!["/x/pkg/a.py".into()],
            untraced: BTreeSet::new(),
            functions: BTreeMap::new(),
            deselected: vec!["t::z".into()],
            impact: Some(recorded("t::a", "f", false)),
            impact_lost: false,
            failed: BTreeMap::new(),
            marked_flaky: vec!["t::a".into()],
            reruns: 0,
        };
        let two = CoverageMap {
            tests: vec![test("t::b", &[4])],
            collection: BTreeMap::from([(PathBuf::from("pkg/a.py"), BTreeSet::from([1, 2]))]),
            outside_modules: vec!["attr".into(), "pytest".into()],
            module_files: vec!["/x/pkg/a.py".into(), "/x/tests/t.py".into()],
            untraced: BTreeSet::from([PathBuf::from("pkg/b.py")]),
            functions: BTreeMap::from([(PathBuf::from("pkg/a.py"), BTreeMap::from([(2, true)]))]),
            deselected: vec!["t::y".into(), "t::z".into()],
            impact: Some(recorded("t::b", "g", true)),
            impact_lost: false,
            failed: BTreeMap::from([("t::b".to_string(), "AssertionError at t.py:3".to_string())]),
            marked_flaky: vec!["t::b".into()],
            reruns: 2,
        };
        let merged = CoverageMap::default().merge(one).merge(two);
        let ids: Vec<&str> = merged.tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["t::a", "t::b"]);
        assert_eq!(merged.collection[Path::new("pkg/a.py")], BTreeSet::from([1, 2]));
        assert_eq!(merged.outside_modules, ["attr", "pytest", "six"]);
        assert_eq!(merged.deselected, ["t::y", "t::z"]);
        assert_eq!(merged.marked_flaky, ["t::a", "t::b"]);
        assert_eq!(merged.failed.keys().collect::<Vec<_>>(), ["t::b"], "one shard's failure is the run's");
        assert_eq!(merged.reruns, 2);
        let impact = merged.impact.as_ref().unwrap();
        assert_eq!(impact.tests.keys().collect::<Vec<_>>(), ["t::a", "t::b"]);
        let collected: Vec<&str> = impact.collection.blocks.iter().map(|(_, name)| name.as_str()).collect();
        assert_eq!(collected, ["f", "g"]);
        assert!(impact.collection.spawned, "a process started by either shard's collection counts");
        assert_eq!(merged.module_files, [PathBuf::from("/x/pkg/a.py"), PathBuf::from("/x/tests/t.py")]);
        assert!(merged.ran_at_collection(Path::new("pkg/b.py"), &(1..=1)), "an untraced file of one shard");
        assert_eq!(merged.tests_covering(Path::new("pkg/a.py"), &(4..=4)).len(), 1);
    }

    #[test]
    fn a_shard_that_could_not_record_the_map_leaves_the_run_with_no_record() {
        let shard = |test: &str, lost: bool| CoverageMap {
            impact: (!lost).then(|| recorded(test, "f", false)),
            impact_lost: lost,
            ..CoverageMap::default()
        };
        for order in [[("t::a", false), ("t::b", true)], [("t::b", true), ("t::a", false)]] {
            let merged =
                order.iter().fold(CoverageMap::default(), |map, (test, lost)| map.merge(shard(test, *lost)));
            assert!(merged.impact.is_none() && merged.impact_lost, "{order:?}");
        }
        let whole = CoverageMap::default().merge(shard("t::a", false)).merge(shard("t::b", false));
        assert_eq!(whole.impact.unwrap().tests.len(), 2);
    }
}
