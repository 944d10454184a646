//! Verdicts remembered between runs: a mutant's outcome is reused when everything it could depend on is the same — its file and every other file of the state under test (test modules it did not run aside), its tests, the toolchain, the environment and the settings.

use std::collections::BTreeMap;
use std::path::Path;

use crate::cache::{self, Cache, Entry};
use crate::model::outcome::{MutantResult, Outcome, Status};
use crate::model::plan::{Plan, PlannedMutant};
use crate::options::Options;
use crate::run::flaky::Flaky;
use crate::run::job::{Job, JobData};

const VERDICTS: &str = "verdicts";
/// Verdicts kept: enough for the mutants of many changes.
const KEPT_VERDICTS: usize = 20_000;

/// What a language tells the verdict memory: what its tests run on, and which files are test
/// modules (a changed test module invalidates only the verdicts whose tests it holds).
pub struct Scope {
    /// The interpreter or toolchain, its packages, the environment: any difference is a new run.
    pub identity: String,
    /// A file whose tests run only when a job names it (or names no tests: the whole suite).
    pub test_module: fn(&Path) -> bool,
}

/// The files of the state under test, read before any test ran in it, and where verdicts are
/// kept; it keeps nothing when the cache is off.
#[derive(Default)]
pub struct Verdicts {
    cache: Cache,
    files: Vec<Entry>,
    /// A digest of every file of `files`: the state, as what its runs see of a line is kept.
    state: String,
    /// What the runs are for beyond the check of a change (the kill-loss audit's runs before
    /// the change, against the edited tests only): part of every key, so that no verdict
    /// crosses from one purpose to another.
    purpose: String,
    /// The tests known to fail at random: a kept kill of theirs is decided again.
    flaky: Flaky,
}

/// The jobs split into verdicts reused and jobs left to run, with the key of each job left.
pub struct Recalled<D> {
    pub reused: Vec<MutantResult>,
    pub jobs: Vec<Job<D>>,
    keys: BTreeMap<usize, String>,
}

impl Verdicts {
    /// The memory for the state under test at `base` (to be called before any test runs there).
    pub fn open(cache: &Cache, base: &Path) -> Verdicts {
        match cache::manifest(base) {
            Ok(files) if cache.is_on() => {
                let lines: String = files.iter().map(|entry| entry.line.as_str()).collect();
                let state = cache::key(&[lines.as_bytes()]);
                Verdicts {
                    cache: cache.clone(),
                    files,
                    state,
                    purpose: String::new(),
                    flaky: Flaky::default(),
                }
            }
            _ => Verdicts::default(),
        }
    }

    /// The same memory, deciding again a kept kill whose failing test is now known to be
    /// among `flaky`.
    pub fn heeding(self, flaky: &Flaky) -> Verdicts {
        Verdicts { flaky: flaky.clone(), ..self }
    }

    /// The same memory, for runs made for `purpose` only.
    pub fn for_purpose(self, purpose: String) -> Verdicts {
        Verdicts { purpose, ..self }
    }

    /// Splits `jobs` into verdicts an earlier run reached on the same inputs and jobs to run;
    /// with no `scope` (a language that cannot say what its tests depend on) all run.
    pub fn recall<D: JobData>(
        &self,
        scope: Option<&Scope>,
        options: &Options,
        plan: &Plan,
        jobs: Vec<Job<D>>,
    ) -> Recalled<D> {
        let mut recalled = Recalled { reused: Vec::new(), jobs: Vec::new(), keys: BTreeMap::new() };
        let Some(scope) = scope.filter(|_| self.cache.is_on()) else {
            recalled.jobs = jobs;
            return recalled;
        };
        let settings = settings(options);
        for job in jobs {
            let key = self.key(scope, &settings, plan, &job);
            let earlier: Option<Outcome> = self
                .cache
                .read(&key)
                .and_then(|bytes| serde_json::from_slice::<Outcome>(&bytes).ok())
                .filter(|outcome| !outcome.killed_by.iter().any(|test| self.flaky.holds(test)));
            match earlier {
                Some(mut outcome) => {
                    outcome.reused = true;
                    recalled.reused.push(outcome.for_mutant(job.planned));
                }
                None => {
                    recalled.keys.insert(job.planned.id, key);
                    recalled.jobs.push(job);
                }
            }
        }
        recalled
    }

    /// Keeps the verdicts of `results` that a re-run would reach again: Killed, Survived and
    /// Timeout (a broken run is tried again next time, and so is a run stopped at the memory
    /// limit, which depends on the limit and the number of jobs, not on the tests alone), each
    /// decided cleanly: not one that ran a flaky test's failures again to decide.
    pub fn remember<D>(&self, recalled: &Recalled<D>, results: &[MutantResult]) {
        let mut kept = false;
        for result in results {
            // An arid line's survivor is kept as the Ignored it became.
            let arid_survivor =
                result.outcome.status == Status::Ignored && result.planned.mutant.arid.is_some();
            let keeps =
                (matches!(result.outcome.status, Status::Killed | Status::Survived | Status::Timeout)
                    || (arid_survivor && result.outcome.record.is_some()))
                    && result.outcome.memory_limit.is_none()
                    && result.outcome.flaky.is_empty();
            if let (true, Some(key)) = (keeps, recalled.keys.get(&result.planned.id)) {
                if let Ok(bytes) = serde_json::to_vec(&result.outcome) {
                    self.cache.write(key, &bytes);
                    kept = true;
                }
            }
        }
        if kept {
            self.cache.keep_newest(VERDICTS, KEPT_VERDICTS);
        }
    }

    /// The key of what the runs of this state see of `planned`'s line (`run::reach`): every
    /// file of the state, the statement, the language's identity, the settings and what the
    /// runs are for; none when nothing is kept.
    pub fn line_key(
        &self,
        scope: &Scope,
        options: &Options,
        plan: &Plan,
        planned: &PlannedMutant,
    ) -> Option<String> {
        self.line_key_under(scope, &settings(options), plan, planned)
    }

    fn line_key_under(
        &self,
        scope: &Scope,
        settings: &str,
        plan: &Plan,
        planned: &PlannedMutant,
    ) -> Option<String> {
        if !self.cache.is_on() || plan.carried.contains(&planned.id) {
            return None;
        }
        let file = &plan.files[planned.file];
        let line = format!("{} {:?}", file.path.display(), file.statement_of(planned.mutant.line));
        Some(cache::key(&[
            env!("CARGO_PKG_VERSION").as_bytes(),
            scope.identity.as_bytes(),
            settings.as_bytes(),
            self.purpose.as_bytes(),
            self.state.as_bytes(),
            line.as_bytes(),
        ]))
    }

    /// The key of `job`'s verdict: every file but the test modules its tests do not name, the
    /// mutant, its tests in both orders, those tried first and those left out, the language's
    /// identity and the settings.
    fn key<D: JobData>(&self, scope: &Scope, settings: &str, plan: &Plan, job: &Job<D>) -> String {
        let [in_suite_order, tried_first, left_out] = job.data.other_tests();
        let named = |path: &Path| {
            job.tests.is_empty()
                || job.tests.iter().chain(in_suite_order).any(|test| {
                    let file = test.split("::").next().unwrap_or(test).trim_end_matches('/');
                    path == Path::new(file) || path.starts_with(file)
                })
        };
        let mut files = String::new();
        for entry in &self.files {
            if !(scope.test_module)(&entry.path) || named(&entry.path) {
                files.push_str(&entry.line);
            }
        }
        let file = &plan.files[job.planned.file];
        let mutant = &job.planned.mutant;
        // The arid rule too: an arid line's survivor is kept as the Ignored it became.
        let what = format!(
            "{} {:?} {:?} {:?} {:?} {} {:?}",
            file.path.display(),
            mutant.span,
            mutant.original,
            mutant.replacement,
            mutant.mutator().name(),
            mutant.line,
            mutant.arid.map(|rule| rule.name)
        );
        let tests =
            serde_json::to_string(&(&job.tests, in_suite_order, tried_first, left_out)).unwrap_or_default();
        // A kill the audit carried is confirmed against the whole suite when it survives.
        let carried =
            if plan.carried.contains(&job.planned.id) { "carried by the kill-loss audit" } else { "" };
        let digest = cache::key(&[
            env!("CARGO_PKG_VERSION").as_bytes(),
            scope.identity.as_bytes(),
            settings.as_bytes(),
            self.purpose.as_bytes(),
            carried.as_bytes(),
            files.as_bytes(),
            what.as_bytes(),
            tests.as_bytes(),
        ]);
        format!("{VERDICTS}/{digest}.json")
    }
}

/// The settings that can change a verdict: the command, the timeout only when the user set it
/// (the measured one changes from run to run), and each language's part, asked of its settings
/// (`LanguageOptions::verdict_key`).
fn settings(options: &Options) -> String {
    format!("{:?} {:?} {}", options.test_cmd, options.timeout, options.languages.verdict_key())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_module_counts_only_for_the_jobs_that_name_it() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let root = dir.path().join("copy");
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("calc.py"), "def f(a):\n    return a + 1\n").unwrap();
        std::fs::write(root.join("tests/test_f.py"), "def test_f(): pass\n").unwrap();
        std::fs::write(root.join("tests/test_g.py"), "def test_g(): pass\n").unwrap();
        let cache = Cache::open(dir.path(), true);
        let plan = {
            let source = std::fs::read_to_string(root.join("calc.py")).unwrap();
            let mutants = mutators::python::mutate(&source, &[2]).unwrap().mutants;
            crate::model::plan::Plan {
                files: vec![crate::model::plan::FilePlan {
                    path: "calc.py".into(),
                    language: crate::python::spec::LANGUAGE,
                    source,
                    lines: vec![2],
                    statements: vec![2..=2],
                    mutants,
                }],
                ..Default::default()
            }
        };
        let scope = Scope { identity: "python 3".into(), test_module: crate::python::spec::is_test_module };
        let job = |tests: &[&str]| -> Job {
            let tests = tests.iter().map(|t| t.to_string()).collect();
            Job::new(
                plan.mutants().remove(0),
                tests,
                std::time::Duration::from_secs(1),
                std::time::Duration::ZERO,
            )
        };
        let keys = |root: &Path| {
            let verdicts = Verdicts::open(&cache, root);
            let f = verdicts.key(&scope, "", &plan, &job(&["tests/test_f.py::test_f"]));
            let suite = verdicts.key(&scope, "", &plan, &job(&[]));
            let dir = verdicts.key(&scope, "", &plan, &job(&["tests/"]));
            (f, suite, dir)
        };
        let (f, suite, dir) = keys(&root);
        std::fs::write(root.join("tests/test_g.py"), "def test_g(): assert 1\n").unwrap();
        let (f_after, suite_after, dir_after) = keys(&root);
        assert_eq!(f, f_after, "test_g.py does not hold the job's tests");
        assert_ne!(suite, suite_after, "the whole suite holds test_g.py");
        assert_ne!(dir, dir_after, "tests/ holds test_g.py");
        std::fs::write(root.join("calc.py"), "def f(a):\n    return a + 2\n").unwrap();
        assert_ne!(keys(&root).0, f, "any other file counts");
        let other = Scope { identity: "python 4".into(), ..scope };
        assert_ne!(
            Verdicts::open(&cache, &root).key(&other, "", &plan, &job(&["tests/test_f.py::test_f"])),
            keys(&root).0,
            "the interpreter counts"
        );
        let audit = Verdicts::open(&cache, &root).for_purpose("kill-loss audit before the change".into());
        assert_ne!(
            audit.key(&scope, "", &plan, &job(&["tests/test_f.py::test_f"])),
            keys(&root).0,
            "a verdict of the audit is not one of the check"
        );

        // What the runs of a state see of a line: one key for the mutants of one statement,
        // another as soon as any file of the state differs.
        let mutants = plan.mutants();
        let line = |root: &Path, planned: &PlannedMutant| {
            Verdicts::open(&cache, root).line_key_under(&scope, "", &plan, planned)
        };
        let first = line(&root, &mutants[0]).expect("kept");
        assert_eq!(line(&root, &mutants[1]), Some(first.clone()), "the same statement");
        std::fs::write(root.join("tests/test_g.py"), "def test_g(): assert 2\n").unwrap();
        assert_ne!(line(&root, &mutants[0]), Some(first), "a test module no job names counts too");
        assert_eq!(Verdicts::open(&Cache::off(), &root).line_key_under(&scope, "", &plan, &mutants[0]), None);
        let carried = crate::model::plan::Plan { carried: [mutants[0].id].into(), ..plan.clone() };
        assert_eq!(Verdicts::open(&cache, &root).line_key_under(&scope, "", &carried, &mutants[0]), None);
    }
}

#[cfg(test)]
mod settings_key {
    use std::num::NonZeroUsize;
    use std::time::Duration;

    use super::*;
    use crate::cargo::settings::{Features, RustSettings, TestTool};
    use crate::options::Languages;
    use crate::python::settings::{ImpactMap, PythonSettings};

    /// Options with the settings a verdict's key holds, as given.
    fn options(test_cmd: Option<&str>, timeout: Option<f64>, changed: bool) -> Options {
        Options {
            directory: ".".into(),
            target: crate::lines::Target::Staged,
            choice: Default::default(),
            jobs: NonZeroUsize::MIN,
            test_cmd: test_cmd.map(str::to_string),
            timeout: timeout.map(Duration::from_secs_f64),
            memory_limit: None,
            shard: None,
            reports: Default::default(),
            format: Default::default(),
            diffs: true,
            color: crate::paint::ColorChoice::Never,
            out: None,
            cache: true,
            verbose: false,
            quiet: false,
            allow_empty: false,
            audit: crate::options::AuditMode::WithTestEdits,
            audit_budget: None,
            flaky: Vec::new(),
            languages: Languages::new(vec![
                std::sync::Arc::new(PythonSettings {
                    interpreter: None,
                    extra_tests: Vec::new(),
                    fork: !changed,
                    swap: !changed,
                    confirm_survivors: false,
                    impact_map: ImpactMap::Kept,
                }),
                std::sync::Arc::new(RustSettings {
                    test_tool: if changed { TestTool::Nextest } else { TestTool::Cargo },
                    schema: !changed,
                    features: Features {
                        named: if changed { vec!["a".into(), "pkg/b".into()] } else { Vec::new() },
                        all: changed,
                        no_default: changed,
                    },
                }),
            ]),
            config: Default::default(),
        }
    }

    /// The settings' part of every key is the one earlier versions wrote, so that the verdicts
    /// they kept stay valid.
    #[test]
    fn the_settings_part_of_a_key_is_the_one_kept_verdicts_were_stored_under() {
        assert_eq!(
            settings(&options(None, None, false)),
            "None None true true Cargo true Features { named: [], all: false, no_default: false }"
        );
        assert_eq!(
            settings(&options(Some("make test"), Some(2.5), true)),
            "Some(\"make test\") Some(2.5s) false false Nextest false Features { named: [\"a\", \"pkg/b\"], all: true, no_default: true }"
        );
    }
}
