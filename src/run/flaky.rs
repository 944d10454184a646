//! Flaky tests: those seen failing and passing on the same code, those the project marks or the configuration names; kept in `.git/mutdelta/flaky.json`, and asked to fail again and again under a mutant before their failure counts as a kill.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::model::outcome::{continued, Outcome, Status};
use crate::model::record::{Finished, RunRecord};

const KEPT: &str = "flaky.json";
/// The most tests kept: a file of flaky tests is read on every check.
const KEPT_TESTS: usize = 2_000;
/// The chance a kill by a flaky test is its flakiness alone that a check accepts: it reruns the
/// mutant until a run passes or this little chance is left.
const ACCEPTED_CHANCE: f64 = 1e-4;
/// The seed every run of a check gives the randomness its suite asks for (pytest-randomly,
/// Hypothesis, proptest): the same in every run, so that verdicts do not depend on the draw.
pub const RANDOM_SEED: u32 = 1;
/// How many times tests that failed without any mutant run again, before the failure stands:
/// a test that fails one run in two passes in one of them but one time in 256.
pub const RETRIES: u32 = 8;
/// The most runs under one mutant that decide a flaky test's kill.
const MOST_RUNS: u32 = 24;

/// Why a test is held flaky.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    /// It failed, then passed, on the same code without any mutant.
    Seen,
    /// The project marks it (`@pytest.mark.flaky`, or reruns for every test).
    Marked,
    /// The configuration's `flaky` list names it.
    Configured,
}

/// What is known of one flaky test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Known {
    pub why: Why,
    /// Runs without any mutant, and how many of them failed.
    pub runs: u32,
    pub failures: u32,
    /// How its failures without a mutant looked: the exception's type, the message's shape
    /// and the line of the test's own file it failed at.
    pub fingerprints: BTreeSet<String>,
}

impl Known {
    /// Nothing seen yet.
    fn new(why: Why) -> Known {
        Known { why, runs: 0, failures: 0, fingerprints: BTreeSet::new() }
    }

    fn configured() -> Known {
        Known::new(Why::Configured)
    }

    /// How many runs in a row under a mutant must fail for the kill to hold: enough that its
    /// flakiness alone fails them all with less than `ACCEPTED_CHANCE`, reading its failure
    /// rate as seen (`failures + 1` of `runs + 2`, between a tenth and 0.8), or one half when
    /// nothing was seen.
    pub fn runs_to_kill(&self) -> u32 {
        let rate = if self.runs == 0 {
            0.5
        } else {
            (f64::from(self.failures) + 1.0) / (f64::from(self.runs) + 2.0)
        };
        let rate = rate.clamp(0.1, 0.8);
        // Less a hair, so that an exact power (0.1^3) is not rounded up by its floating error.
        let runs = (ACCEPTED_CHANCE.ln() / rate.ln() - 1e-9).ceil() as u32;
        runs.clamp(2, MOST_RUNS)
    }

    /// The test in words, a clause: why it is flaky, and what was seen.
    pub fn describe(&self) -> String {
        let seen = match self.why {
            Why::Seen => format!("it failed {} of {} runs without any mutant", self.failures, self.runs),
            Why::Marked => "the project marks it flaky".to_string(),
            Why::Configured => "the configuration names it flaky".to_string(),
        };
        match self.fingerprints.iter().next() {
            Some(fingerprint) => format!("{seen} ({fingerprint})"),
            None => seen,
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Kept {
    tests: BTreeMap<String, Known>,
}

#[derive(Debug, Default)]
struct State {
    kept: Kept,
    /// Named by the configuration: node ids or their prefixes (a file, a class).
    configured: Vec<String>,
    /// The tests this check found, or consulted and found flaky: the report names them.
    named: BTreeSet<String>,
    /// pytest-rerunfailures' `--reruns` as the project sets it: every failure must repeat.
    reruns: u32,
    /// The tests the project's runner retries by name (nextest's per-test overrides).
    retried: Vec<NamePattern>,
}

impl State {
    /// What is known of `test`, when it is flaky: what was seen, else why the configuration or
    /// the project's runner holds it so.
    fn lookup(&self, test: &str) -> Option<Known> {
        if let Some(known) = self.kept.tests.get(test) {
            return Some(known.clone());
        }
        if self.configured.iter().any(|name| names(name, test)) {
            return Some(Known::configured());
        }
        self.retried.iter().any(|pattern| pattern.matches(test)).then(|| Known::new(Why::Marked))
    }
}

/// Which tests a project's runner setting names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamePattern {
    /// This test alone.
    Exact(String),
    /// Every test whose name holds it.
    Contains(String),
}

impl NamePattern {
    pub fn matches(&self, test: &str) -> bool {
        match self {
            NamePattern::Exact(name) => test == name,
            NamePattern::Contains(part) => test.contains(part.as_str()),
        }
    }
}

/// The flaky tests of one repository: shared by a check's workers.
#[derive(Debug, Clone, Default)]
pub struct Flaky {
    state: Arc<Mutex<State>>,
    cache: Cache,
}

impl Flaky {
    /// What earlier checks of the repository found (none when the cache is off), and the
    /// configuration's `flaky` list.
    pub fn open(cache: &Cache, configured: &[String]) -> Flaky {
        let kept = cache
            .read(KEPT)
            .and_then(|bytes| serde_json::from_slice::<Kept>(&bytes).ok())
            .unwrap_or_default();
        let state = State { kept, configured: configured.to_vec(), ..State::default() };
        Flaky { state: Arc::new(Mutex::new(state)), cache: cache.clone() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What is known of `test`, when it is flaky; it is then named in the report.
    pub fn known(&self, test: &str) -> Option<Known> {
        let mut state = self.state();
        let known = state.lookup(test);
        if known.is_some() {
            state.named.insert(test.to_string());
        }
        known
    }

    /// The flaky test whose failures without a mutant look like `failure` of `test` (pytest's
    /// short summary of it: `Type: message`, or the bare message of an `assert`), with what is
    /// known of it: a flaky test of the same file, whose failure had the same exception type
    /// and message shape (numbers blotted out; a summary cut short with `...` compared as far as
    /// it goes). A steady test failing as a flaky one does (a helper they share, a server both
    /// wait on) may fail by the same luck.
    pub fn looks_like(&self, test: &str, failure: &str) -> Option<(String, Known)> {
        let file = test.split("::").next().unwrap_or(test);
        let file = file.rsplit('/').next().unwrap_or(file);
        let (kind, shape) = summary_shape(failure)?;
        let state = self.state();
        state.kept.tests.iter().find_map(|(flaky, known)| {
            let alike = known.fingerprints.iter().any(|fingerprint| {
                let Some((then_kind, then_shape, then_file)) = fingerprint_parts(fingerprint) else {
                    return false;
                };
                let shape_alike = match shape.strip_suffix("...") {
                    Some(cut) => !cut.is_empty() && then_shape.starts_with(cut),
                    None => then_shape == shape,
                };
                then_file == file && then_kind == kind && shape_alike
            });
            alike.then(|| (flaky.clone(), known.clone()))
        })
    }

    /// Whether `test` is flaky, without naming it.
    pub fn holds(&self, test: &str) -> bool {
        let state = self.state();
        state.kept.tests.contains_key(test)
            || state.configured.iter().any(|name| names(name, test))
            || state.retried.iter().any(|pattern| pattern.matches(test))
    }

    /// `test` ran `runs` times without any mutant and failed `failures` of them (at least one
    /// of each: it is flaky), its failures looking like `fingerprints`.
    pub fn seen(&self, test: &str, runs: u32, failures: u32, fingerprints: &[String]) {
        let mut state = self.state();
        let known = state.kept.tests.entry(test.to_string()).or_insert_with(|| Known::new(Why::Seen));
        known.why = known.why.min(Why::Seen);
        known.runs = known.runs.saturating_add(runs);
        known.failures = known.failures.saturating_add(failures);
        known.fingerprints.extend(fingerprints.iter().cloned());
        state.named.insert(test.to_string());
        self.save(&state);
    }

    /// The project marks `test` flaky; kept when it was not known.
    pub fn marked(&self, test: &str) {
        let mut state = self.state();
        if !state.kept.tests.contains_key(test) {
            state.kept.tests.insert(test.to_string(), Known::new(Why::Marked));
            self.save(&state);
        }
    }

    /// The project reruns every failing test `reruns` times (pytest-rerunfailures' `--reruns`,
    /// nextest's `retries`); a kill then needs that many more failing runs, at most as many
    /// as a flaky test's (`MOST_RUNS`).
    pub fn rerun_by_project(&self, reruns: u32) {
        let mut state = self.state();
        state.reruns = state.reruns.max(reruns.min(MOST_RUNS - 1));
    }

    /// The project's runner retries the tests `patterns` name (nextest's overrides): they are
    /// flaky, as marked ones are.
    pub fn retried_by_project(&self, patterns: Vec<NamePattern>) {
        self.state().retried.extend(patterns);
    }

    /// How many times the project reruns a failing test (0: never).
    pub fn reruns(&self) -> u32 {
        self.state().reruns
    }

    /// The flaky tests this check found or consulted, in words, by test.
    pub fn named(&self) -> BTreeMap<String, Known> {
        let state = self.state();
        state.named.iter().filter_map(|test| Some((test.clone(), state.lookup(test)?))).collect()
    }

    fn save(&self, state: &State) {
        let mut kept = Kept { tests: state.kept.tests.clone() };
        while kept.tests.len() > KEPT_TESTS {
            // Marked tests are marked again when next collected; seen ones are what the file is for.
            let marked =
                kept.tests.iter().find(|(_, known)| known.why != Why::Seen).map(|(test, _)| test.clone());
            let drop = marked.or_else(|| kept.tests.keys().next().cloned());
            if let Some(test) = drop {
                kept.tests.remove(&test);
            }
        }
        if let Ok(bytes) = serde_json::to_vec_pretty(&kept) {
            self.cache.write(KEPT, &bytes);
        }
    }
}

/// A run without any mutant whose `failed` tests (none: it did not fail in tests) failed it,
/// run again (`again`) until a run passes or `RETRIES` more have failed: when one passes, those
/// tests are flaky. Every run, the first included, and words for its step (empty when it ran
/// once).
pub fn run_failed_again(
    flaky: &Flaky,
    first: Finished,
    failed: &[String],
    mut again: impl FnMut() -> anyhow::Result<Finished>,
) -> anyhow::Result<(Vec<Finished>, String)> {
    let mut runs = vec![first];
    if !failed.is_empty() && !runs[0].passed() {
        for _ in 0..RETRIES {
            let run = again()?;
            let passed = run.passed();
            runs.push(run);
            if passed {
                let tries = runs.len() as u32;
                for test in failed {
                    flaky.seen(test, tries, tries - 1, &[]);
                }
                break;
            }
        }
    }
    let passed = runs.last().is_some_and(Finished::passed);
    let said = match runs.len() {
        1 => String::new(),
        tries if passed => format!("; run {tries} times: {} failed, then passed", failed.join(", ")),
        tries => format!("; run {tries} times: {} failed every time", failed.join(", ")),
    };
    Ok((runs, said))
}

/// A kill whose failing tests are all flaky (`first`), confirmed by running the mutant's tests
/// again (`again`) until a run passes or as many runs as the flakiest of them asks for
/// (`Known::runs_to_kill`) have all failed: one that passes is not a kill (every test passed
/// with the mutant, in that run: Survived); one a steady test fails is that run's verdict.
/// Any other verdict is returned as it is.
pub fn confirm_kill(
    flaky: &Flaky,
    first: Outcome,
    mut again: impl FnMut() -> anyhow::Result<Outcome>,
) -> anyhow::Result<Outcome> {
    let reruns = flaky.reruns();
    let all_flaky = |outcome: &Outcome| {
        outcome.status == Status::Killed
            && !outcome.killed_by.is_empty()
            && (reruns > 0 || outcome.killed_by.iter().all(|test| flaky.holds(test)))
    };
    if !all_flaky(&first) {
        return Ok(first);
    }
    let known: Vec<(String, Known)> =
        first.killed_by.iter().filter_map(|test| Some((test.clone(), flaky.known(test)?))).collect();
    let needed = known.iter().map(|(_, known)| known.runs_to_kill()).max().unwrap_or(1).max(reruns + 1);
    let mut said: Vec<String> =
        known.iter().map(|(test, known)| format!("{test}: {}", known.describe())).collect();
    if reruns > 0 {
        said.push(format!("the project reruns a failing test up to {reruns} times"));
    }
    let mut outcome = first;
    let mut names: Vec<String> = known.into_iter().map(|(test, _)| test).collect();
    for run in 2..=needed {
        let next = again()?;
        if !all_flaky(&next) {
            let decided = continued(outcome, next);
            let reason = match decided.status {
                Status::Survived => format!(
                    "not killed by flaky tests whose failures did not reproduce: with the mutant the tests passed in run {run} ({})",
                    said.join("; ")
                ),
                _ => decided.reason.clone(),
            };
            return Ok(Outcome { reason, flaky: names, ..decided });
        }
        for test in &next.killed_by {
            if !names.contains(test) {
                names.push(test.clone());
            }
        }
        // The first kill's reason stands, with every run's time and commands.
        outcome.duration += next.duration;
        outcome.record = RunRecord::joined(outcome.record.take(), next.record);
    }
    outcome.reason = format!(
        "{}; failed in all {needed} runs under the mutant (flaky: {})",
        outcome.reason,
        said.join("; ")
    );
    outcome.flaky = names;
    Ok(outcome)
}

/// Whether the configuration's `name` (a node id, or a prefix of one: a file, a directory
/// ending in `/`, a class) names `test`.
/// A failure as pytest's short summary gives it (`ValueError: bad 3`, `assert 1 == 2`,
/// `LookupError`), as the probe's fingerprint reads it: its exception type, and its message's
/// shape (numbers and addresses blotted out, at most 120 characters); none for nothing.
fn summary_shape(failure: &str) -> Option<(String, String)> {
    let failure = failure.trim();
    let is_type = |word: &str| {
        word.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
    };
    let (kind, message) = match failure.split_once(": ") {
        Some((kind, message)) if is_type(kind) => (kind.rsplit('.').next().unwrap_or(kind), message),
        _ if failure.starts_with("assert ") => ("AssertionError", failure),
        _ if is_type(failure) => (failure.rsplit('.').next().unwrap_or(failure), ""),
        _ => return None,
    };
    Some((kind.to_string(), blotted(message)))
}

/// `message` with its numbers and addresses as `#`, cut at 120 characters (`probe_hooks.fingerprint`).
fn blotted(message: &str) -> String {
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '0' && chars.peek() == Some(&'x') {
            let mut probe = chars.clone();
            probe.next();
            if probe.peek().is_some_and(char::is_ascii_hexdigit) {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    chars.next();
                }
                out.push('#');
                continue;
            }
        }
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            let mut probe = chars.clone();
            if probe.next() == Some('.') && probe.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
            out.push('#');
            continue;
        }
        out.push(c);
    }
    out.chars().take(120).collect()
}

/// A fingerprint's exception type, message shape and the test file it failed in
/// (`AssertionError: assert # == # at test_calc.py:19`); none when it names no file.
fn fingerprint_parts(fingerprint: &str) -> Option<(&str, &str, &str)> {
    let (failure, place) = fingerprint.rsplit_once(" at ")?;
    let file = place.rsplit_once(':')?.0;
    let (kind, shape) = failure.split_once(": ").unwrap_or((failure, ""));
    Some((kind, shape, file))
}

fn names(name: &str, test: &str) -> bool {
    test == name
        || (name.ends_with('/') && test.starts_with(name))
        || test.strip_prefix(name).is_some_and(|rest| rest.starts_with("::") || rest.starts_with('['))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(runs: u32, failures: u32) -> Known {
        Known { why: Why::Seen, runs, failures, fingerprints: BTreeSet::new() }
    }

    #[test]
    fn the_runs_a_kill_needs_leave_its_flakiness_alone_under_one_chance_in_ten_thousand() {
        // Failing one run in two: 0.5^14 < 1/10000 <= 0.5^13.
        assert_eq!(seen(0, 0).runs_to_kill(), 14);
        assert_eq!(seen(2, 1).runs_to_kill(), 14);
        // Rarely failing: fewer runs (0.1^4 is exactly the chance accepted); never one alone.
        assert_eq!(seen(98, 1).runs_to_kill(), 4);
        assert_eq!(seen(10_000, 0).runs_to_kill(), 4);
        // Failing nearly always: bounded.
        assert_eq!(seen(10, 10).runs_to_kill(), MOST_RUNS);
        for known in [seen(0, 0), seen(4, 1), seen(3, 3)] {
            let rate = ((f64::from(known.failures) + 1.0) / (f64::from(known.runs) + 2.0)).clamp(0.1, 0.8);
            let runs = known.runs_to_kill();
            assert!(runs == MOST_RUNS || rate.powi(runs as i32) <= ACCEPTED_CHANCE, "{known:?}");
        }
    }

    #[test]
    fn the_configuration_names_a_test_by_its_id_its_file_its_class_or_its_directory() {
        assert!(names("tests/test_a.py::test_x", "tests/test_a.py::test_x"));
        assert!(names("tests/test_a.py::test_x", "tests/test_a.py::test_x[1-2]"));
        assert!(names("tests/test_a.py", "tests/test_a.py::C::test_x"));
        assert!(names("tests/test_a.py::C", "tests/test_a.py::C::test_x"));
        assert!(names("tests/", "tests/test_a.py::test_x"));
        assert!(!names("tests/test_a.py::test_x", "tests/test_a.py::test_xy"));
        assert!(!names("tests/test_a", "tests/test_a.py::test_x"));
        assert!(!names("tests", "tests_other/test_a.py::test_x"));
    }

    #[test]
    fn what_a_check_sees_is_kept_for_the_next_and_added_to() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let cache = Cache::open(dir.path(), true);
        let flaky = Flaky::open(&cache, &[]);
        assert!(flaky.known("t.py::test_a").is_none());
        flaky.seen("t.py::test_a", 2, 1, &["AssertionError: # at t.py:3".to_string()]);
        let next = Flaky::open(&cache, &[]);
        assert!(next.named().is_empty(), "a test is named only by the check that meets it");
        assert_eq!(next.known("t.py::test_a").unwrap(), {
            let mut known = seen(2, 1);
            known.fingerprints.insert("AssertionError: # at t.py:3".to_string());
            known
        });
        next.seen("t.py::test_a", 3, 2, &[]);
        let known = Flaky::open(&cache, &[]).known("t.py::test_a").unwrap();
        assert_eq!((known.runs, known.failures), (5, 3));
        // Seen beats marked: the counts say how often it fails.
        next.marked("t.py::test_a");
        assert_eq!(Flaky::open(&cache, &[]).known("t.py::test_a").unwrap().why, Why::Seen);
        assert!(!Flaky::open(&Cache::off(), &[]).holds("t.py::test_a"), "the cache off keeps nothing");
    }

    #[test]
    fn a_hostile_file_of_flaky_tests_is_read_as_none() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let cache = Cache::open(dir.path(), true);
        for text in ["{\"tests\": 3}", "not json", "{\"tests\": {\"a\": {\"why\": \"other\"}}}"] {
            cache.write(KEPT, text.as_bytes());
            assert!(Flaky::open(&cache, &[]).named().is_empty());
            assert!(!Flaky::open(&cache, &[]).holds("a"));
        }
        // Counts at their limit add up without overflowing, and read as a test that always fails.
        let full = r#"{"tests": {"a": {"why": "seen", "runs": 4294967295, "failures": 4294967295, "fingerprints": []}}}"#;
        cache.write(KEPT, full.as_bytes());
        let flaky = Flaky::open(&cache, &[]);
        flaky.seen("a", 2, 1, &[]);
        assert_eq!(flaky.known("a").unwrap().runs_to_kill(), MOST_RUNS);
    }

    #[test]
    fn a_run_that_failed_in_tests_runs_again_until_it_passes_and_its_tests_are_then_flaky() {
        use crate::model::record::Exit;
        let finished = |code| Finished {
            exit: Exit::Code(code),
            duration: std::time::Duration::ZERO,
            tail: String::new(),
            command: None,
        };
        let failed = ["t::a".to_string()];
        let flaky = Flaky::open(&Cache::off(), &[]);
        let mut exits = vec![0, 101].into_iter();
        let (runs, said) =
            run_failed_again(&flaky, finished(101), &failed, || Ok(finished(exits.next_back().unwrap())))
                .unwrap();
        assert_eq!((runs.len(), said.as_str()), (3, "; run 3 times: t::a failed, then passed"));
        assert_eq!(flaky.known("t::a").map(|known| (known.runs, known.failures)), Some((3, 2)));

        let steady = Flaky::open(&Cache::off(), &[]);
        let (runs, said) = run_failed_again(&steady, finished(101), &failed, || Ok(finished(101))).unwrap();
        assert_eq!(runs.len() as u32, 1 + RETRIES, "failing every time, it is no flaky test");
        assert_eq!(said, "; run 9 times: t::a failed every time");
        assert!(!steady.holds("t::a"));

        let (runs, said) = run_failed_again(&steady, finished(2), &[], || panic!("not run again")).unwrap();
        assert_eq!((runs.len(), said.as_str()), (1, ""), "a failure not in tests stands at once");
    }

    #[test]
    fn a_configured_test_is_flaky_without_being_seen_and_named_once_consulted() {
        let flaky = Flaky::open(&Cache::off(), &["tests/test_net.py".to_string()]);
        assert!(flaky.holds("tests/test_net.py::test_fetch"));
        assert!(flaky.named().is_empty());
        assert_eq!(flaky.known("tests/test_net.py::test_fetch").unwrap().why, Why::Configured);
        assert_eq!(flaky.named().keys().collect::<Vec<_>>(), ["tests/test_net.py::test_fetch"]);
    }

    #[test]
    fn tests_the_project_s_runner_retries_are_marked_and_its_reruns_are_bounded() {
        let flaky = Flaky::open(&Cache::off(), &[]);
        flaky.retried_by_project(vec![
            NamePattern::Exact("tests::net".into()),
            NamePattern::Contains("io_".into()),
        ]);
        assert!(flaky.holds("tests::net") && flaky.holds("tests::io_read") && !flaky.holds("tests::net2"));
        assert_eq!(flaky.known("tests::io_read").unwrap().describe(), "the project marks it flaky");
        assert_eq!(flaky.named()["tests::io_read"].why, Why::Marked);
        // A hostile setting (nextest's `retries = 4294967295`) cannot make a kill run forever.
        flaky.rerun_by_project(u32::MAX);
        assert_eq!(flaky.reruns(), MOST_RUNS - 1);
        let killed = |tests: &[&str]| Outcome {
            killed_by: tests.iter().map(|test| test.to_string()).collect(),
            ..Outcome::settled(Status::Killed, "failed")
        };
        let mut runs = 1;
        let decided = confirm_kill(&flaky, killed(&["tests::steady"]), || {
            runs += 1;
            Ok(killed(&["tests::steady"]))
        })
        .unwrap();
        assert_eq!((decided.status, runs), (Status::Killed, MOST_RUNS), "every failure repeats the reruns");
        assert!(
            decided.reason.ends_with("(flaky: the project reruns a failing test up to 23 times)"),
            "{}",
            decided.reason
        );
    }

    #[test]
    fn a_failure_is_shaped_as_the_probe_shapes_a_flaky_one() {
        assert_eq!(
            summary_shape("ValueError: bad 3 at 0x1fA0"),
            Some(("ValueError".into(), "bad # at #".into()))
        );
        assert_eq!(
            summary_shape("assert 12.5 == 1.2.3"),
            Some(("AssertionError".into(), "assert # == #.#".into()))
        );
        assert_eq!(
            summary_shape("requests.exceptions.ConnectionError: port 80"),
            Some(("ConnectionError".into(), "port #".into()))
        );
        assert_eq!(summary_shape("LookupError"), Some(("LookupError".into(), String::new())));
        assert_eq!(summary_shape("a sentence, not a failure"), None);
        assert_eq!(blotted("0x 10x5 a0x1f"), "#x #x# a#");
        assert_eq!(blotted("0x1f then 2, ax1f"), "# then #, ax#f");
        assert_eq!(blotted(&"a".repeat(200)), "a".repeat(120), "cut as the probe cuts");
        assert_eq!(summary_shape("..."), None);
        assert_eq!(summary_shape("a..b: x"), None);
        assert_eq!(
            fingerprint_parts("AssertionError: cold start: # ms over at test_calc.py:19"),
            Some(("AssertionError", "cold start: # ms over", "test_calc.py"))
        );
        assert_eq!(
            fingerprint_parts("TimeoutError at test_net.py:4"),
            Some(("TimeoutError", "", "test_net.py"))
        );
        assert_eq!(fingerprint_parts("failed"), None);
    }

    #[test]
    fn a_steady_test_failing_as_a_flaky_test_of_its_file_does_looks_like_it() {
        let flaky = Flaky::open(&Cache::off(), &[]);
        flaky.seen(
            "tests/test_net.py::test_fetch",
            2,
            1,
            &["ConnectionError: port # refused at test_net.py:7".into()],
        );
        let alike = flaky.looks_like("tests/test_net.py::test_upload", "ConnectionError: port 8080 refused");
        assert_eq!(
            alike.map(|(test, known)| (test, known.failures)),
            Some(("tests/test_net.py::test_fetch".into(), 1))
        );
        let cut = flaky.looks_like("tests/test_net.py::test_upload", "ConnectionError: port 80...");
        assert!(cut.is_some(), "a summary cut short matches as far as it goes");
        for (test, failure) in [
            ("tests/test_net.py::test_upload", "ConnectionError: timed out"),
            ("tests/test_net.py::test_upload", "TypeError: port 80 refused"),
            ("tests/test_calc.py::test_add", "ConnectionError: port 80 refused"),
            ("tests/test_net.py::test_upload", "..."),
            ("tests/test_net.py::test_upload", "ConnectionError: ..."),
        ] {
            assert!(flaky.looks_like(test, failure).is_none(), "{test}: {failure}");
        }
        // A fingerprint that names no file of the test's is no likeness.
        let unplaced = Flaky::open(&Cache::off(), &[]);
        unplaced.seen("tests/test_io.py::test_read", 2, 1, &["OSError: disk full".into()]);
        assert!(unplaced.looks_like("tests/test_io.py::test_write", "OSError: disk full").is_none());
    }
}
