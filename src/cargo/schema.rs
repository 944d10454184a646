//! Mutant schemata for cargo: every mutant of the change switched into one build, the tests that reach each recorded once, each mutant run against those tests alone.
//!
//! The copy's files are rewritten by `mutators::rust::schema` and built once. A build error is
//! blamed on the site that holds it (else on its function, else on its file); those mutants leave
//! the schema for a build of their own, and the rest is built again, a few rounds at most. The
//! built test executables then run once with the switch off and every site recording which test
//! reached it: that run must pass (it is the baseline), and a canary must fail (the switch is
//! live). Doctests are recorded per package: any doctest of a package that reached a site runs
//! for that site's mutants.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use mutators::rust::schema::{self as switch, Schema};
use serde::Deserialize;

use super::build::Cargo;
use super::libtest;
use super::refusal::CargoRun;
use super::workspace::Package;
use crate::interrupt::Interrupted;
use crate::model::plan::{Plan, PlannedMutant};
use crate::model::record::{Exit, Finished, How, RunRecord, StepRecord};
use crate::process::TestCommand;
use crate::run::flaky::{self, Flaky};
use crate::run::require;
use crate::worktree::{self, Stamp};

/// How many times the schema is built, each time without the mutants the last build blamed.
const ROUNDS: usize = 4;

/// A test executable the schema build made.
#[derive(Debug, Clone)]
pub struct TestBinary {
    pub package: String,
    pub path: PathBuf,
    /// Where cargo would run it: its package's directory in the copy.
    pub dir: PathBuf,
    pub env: Vec<(String, String)>,
    /// What the recording run took.
    pub duration: Duration,
    /// Its tests, as `--list` names them (empty: not a libtest harness).
    pub tests: Vec<String>,
}

/// The tests that reached one site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// By executable (index into `Switched::binaries`): the tests, or none for all of them (a
    /// site reached outside any named test thread, or an executable without libtest).
    pub tests: BTreeMap<usize, Vec<String>>,
    /// Packages whose doctests reached it.
    pub doctests: Vec<String>,
}

impl Reach {
    pub fn is_empty(&self) -> bool {
        self.tests.is_empty() && self.doctests.is_empty()
    }
}

/// A schema that built, passed with the switch off, and failed on the canary.
pub struct Switched {
    pub binaries: Vec<TestBinary>,
    /// By mutant id: the tests that reach it.
    pub reach: HashMap<usize, Reach>,
    /// How long each package's doctests took unmutated.
    pub doctests_took: BTreeMap<String, Duration>,
    /// The mutants switched in (those absent from `reach` no test reached).
    pub ids: HashSet<usize>,
    /// Cargo in the copy that holds the schema, for its doctests.
    pub cargo: Cargo,
    /// The lines of each switched file (by its path in the repository) whose text the schema
    /// changed: a panic's column there is the schema's, not the source's.
    pub moved_columns: Vec<(PathBuf, BTreeSet<usize>)>,
}

impl Switched {
    /// The packages of its executables, each once, in their order.
    pub fn packages(&self) -> Vec<&str> {
        let mut packages: Vec<&str> = Vec::new();
        for binary in &self.binaries {
            if !packages.contains(&binary.package.as_str()) {
                packages.push(&binary.package);
            }
        }
        packages
    }

    /// The tests of `reach`, by name: `package: test`, or the executable's name for all of
    /// its tests, and `package: doctests`.
    pub fn names(&self, reach: &Reach) -> Vec<String> {
        let mut names = Vec::new();
        for (&index, tests) in &reach.tests {
            let binary = &self.binaries[index];
            if tests.is_empty() {
                let file = binary.path.file_name().unwrap_or_default().to_string_lossy();
                names.push(format!("{}: every test of {file}", binary.package));
            }
            names.extend(tests.iter().map(|test| format!("{}: {test}", binary.package)));
        }
        names.extend(reach.doctests.iter().map(|package| format!("{package}: doctests")));
        names
    }
}

/// The value of the switch's variable that turns `planned` on.
pub fn mutant_switch(planned: &PlannedMutant) -> String {
    switch_id(planned).to_string()
}

/// What trying the schema came to.
pub struct Attempt {
    /// `None`: no mutant could be switched, every one is built on its own.
    pub switched: Option<Switched>,
    /// The files rewritten in the copy (the originals must be written back into any copy
    /// that builds a mutant on its own).
    pub rewritten: Vec<usize>,
    pub steps: Vec<StepRecord>,
    pub build: Duration,
    /// Body replacements whose value does not implement what the function's return type needs
    /// (`Default::default()` where it has no default), with the compiler's words: CompileError,
    /// whether or not a schema was left to switch the others.
    pub unviable: Vec<(usize, String)>,
}

/// The id a mutant has in the schema: never 0 (the original) nor the canary.
fn switch_id(planned: &PlannedMutant) -> u32 {
    planned.id as u32 + 1
}

/// Whether the schema can hold the mutant: its code runs in the tests, not in the compiler
/// (proc-macro crates) nor while building (build scripts).
pub fn can_switch(plan: &Plan, planned: &PlannedMutant, package: &Package) -> bool {
    let file = &plan.files[planned.file].path;
    !package.proc_macro && package.build_script.as_deref() != Some(file.as_path())
}

/// Rewrites `mutants`' files in `cargo.root` as a schema, builds the tests of `tested`, and
/// records what reaches each mutant. Mutants left out of it are absent from `reach`.
pub fn attempt(
    plan: &Plan,
    cargo: &Cargo,
    tested: &[String],
    mutants: &[&PlannedMutant],
    jobs: usize,
    log: &Path,
    flaky: &Flaky,
) -> Result<Attempt> {
    let mut by_file: BTreeMap<usize, Vec<&PlannedMutant>> = BTreeMap::new();
    for planned in mutants {
        by_file.entry(planned.file).or_default().push(planned);
    }
    let mut dropped: Vec<u32> = Vec::new();
    let mut steps = Vec::new();
    let mut build_time = Duration::ZERO;
    let mut rewritten = Vec::new();
    let mut unviable = Vec::new();
    for round in 1..=ROUNDS {
        let schemas = write_schemas(plan, &cargo.root, &by_file, &dropped, &mut rewritten)?;
        if schemas.is_empty() {
            break;
        }
        crate::run::event::set_stage(Some("building, every mutant switched into one build"));
        let built = build(cargo, tested, log)?;
        build_time += built.run.duration;
        steps.push(StepRecord {
            step: format!("schema build {round}"),
            record: RunRecord::of(How::Schema, &[&built.run]),
        });
        if built.run.exit == Exit::Interrupted {
            return Err(Interrupted.into());
        }
        if built.run.passed() {
            let switched: Vec<u32> = schemas.values().flat_map(|s| s.switched.iter().copied()).collect();
            let recording = Recording { jobs, flaky };
            crate::run::event::set_stage(Some("running the tests, recording which reach each mutant"));
            let mut switched = record(cargo, tested, built.artifacts, &switched, recording, &mut steps, log)?;
            if let Some(switched) = switched.as_mut() {
                switched.moved_columns = moved_columns(plan, &schemas);
            }
            return Ok(Attempt { switched, rewritten, steps, build: build_time, unviable });
        }
        unviable.extend(unviable_bodies(&built.errors, &cargo.root, plan, &schemas, mutants));
        let blamed = blame(&built.errors, &cargo.root, plan, &schemas);
        if blamed.is_empty() {
            break; // an error the schema cannot explain: build every mutant on its own
        }
        dropped.extend(blamed);
    }
    for &file in &rewritten {
        worktree::replace_file(
            &cargo.root.join(&plan.files[file].path),
            &plan.files[file].source,
            Stamp::Now,
        )?;
    }
    // The body replacements seen failing on their own values stay settled: building each of
    // them alone would fail the same way.
    Ok(Attempt { switched: None, rewritten: Vec::new(), steps, build: build_time, unviable })
}

/// The lines of each file of `schemas` whose text its schema changed (every line keeps its
/// number).
fn moved_columns(plan: &Plan, schemas: &BTreeMap<usize, Schema>) -> Vec<(PathBuf, BTreeSet<usize>)> {
    schemas
        .iter()
        .map(|(&file, schema)| {
            let original = plan.files[file].source.lines();
            let changed = schema.text.lines().zip(original).enumerate().filter(|(_, (new, old))| new != old);
            (plan.files[file].path.clone(), changed.map(|(index, _)| index + 1).collect())
        })
        .collect()
}

/// Writes into the copy at `root` the schema of each file's mutants (`by_file`) but those
/// `dropped`; a file whose schema would switch nothing is written back as it was. Each file
/// written is noted in `rewritten`. The schemas that switch something, by file.
fn write_schemas(
    plan: &Plan,
    root: &Path,
    by_file: &BTreeMap<usize, Vec<&PlannedMutant>>,
    dropped: &[u32],
    rewritten: &mut Vec<usize>,
) -> Result<BTreeMap<usize, Schema>> {
    let mut schemas = BTreeMap::new();
    for (&file, planned) in by_file {
        let numbered: Vec<(u32, &mutators::Mutant)> = planned
            .iter()
            .map(|p| (switch_id(p), &p.mutant))
            .filter(|(id, _)| !dropped.contains(id))
            .collect();
        let source = &plan.files[file].source;
        let text = match switch::render(source, &numbered) {
            Ok(schema) if !schema.switched.is_empty() => {
                let text = schema.text.clone();
                schemas.insert(file, schema);
                text
            }
            _ => source.clone(),
        };
        worktree::replace_file(&root.join(&plan.files[file].path), &text, Stamp::Now)?;
        if !rewritten.contains(&file) {
            rewritten.push(file);
        }
    }
    Ok(schemas)
}

/// The ids blamed for `errors`: for each, the sites its spans (or the macro calls they come
/// from) lie in, else what `Schema::blame` says of its first span in a rewritten file. None
/// when an error lies outside every rewritten file.
fn blame(errors: &[Diagnostic], root: &Path, plan: &Plan, schemas: &BTreeMap<usize, Schema>) -> Vec<u32> {
    let mut blamed = Vec::new();
    for error in errors {
        let in_schema: Vec<(&Schema, usize)> = error
            .all_spans()
            .into_iter()
            .filter_map(|span| {
                let path = root.join(&span.file_name);
                let file =
                    schemas.keys().find(|&&file| same_file(&root.join(&plan.files[file].path), &path))?;
                Some((&schemas[file], span.byte_start))
            })
            .collect();
        let sites: Vec<Vec<u32>> =
            in_schema.iter().filter_map(|(schema, offset)| schema.site_at(*offset)).collect();
        match (sites.is_empty(), in_schema.first()) {
            (false, _) => blamed.extend(sites.into_iter().flatten()),
            (true, Some((schema, offset))) => blamed.extend(schema.blame(*offset)),
            (true, None) => return Vec::new(),
        }
    }
    blamed.sort_unstable();
    blamed.dedup();
    blamed
}

/// The body replacements whose own value an error of kind E0277 (a trait bound not satisfied)
/// is about: in the schema a body's value is checked against the function's return type, as it
/// is in a build of the mutant alone, so it fails there the same way.
fn unviable_bodies(
    errors: &[Diagnostic],
    root: &Path,
    plan: &Plan,
    schemas: &BTreeMap<usize, Schema>,
    mutants: &[&PlannedMutant],
) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for error in errors.iter().filter(|e| e.code.as_ref().is_some_and(|code| code.code == "E0277")) {
        for span in error.spans.iter().filter(|span| span.is_primary) {
            let path = root.join(&span.file_name);
            let Some(file) = schemas.keys().find(|&&f| same_file(&root.join(&plan.files[f].path), &path))
            else {
                continue;
            };
            let Some(id) = schemas[file].own_code_at(span.byte_start) else { continue };
            let body = mutants.iter().find(|planned| {
                switch_id(planned) == id
                    && planned.mutant.mutator() == mutators::catalog::Mutator::FunctionBody
            });
            if let Some(planned) = body {
                found.push((planned.id, format!("does not build: error[E0277]: {}", error.message)));
            }
        }
    }
    found
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || a.canonicalize().ok().is_some_and(|a| b.canonicalize().ok() == Some(a))
}

/// A compiler error, as `--message-format=json` gives it.
#[derive(Debug, Deserialize)]
struct Diagnostic {
    level: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Option<Code>,
    #[serde(default)]
    spans: Vec<Span>,
    #[serde(default)]
    children: Vec<Diagnostic>,
}

#[derive(Debug, Deserialize)]
struct Code {
    code: String,
}

#[derive(Debug, Deserialize)]
struct Span {
    file_name: String,
    byte_start: usize,
    #[serde(default)]
    is_primary: bool,
    #[serde(default)]
    expansion: Option<Box<Expansion>>,
}

#[derive(Debug, Deserialize)]
struct Expansion {
    span: Span,
}

impl Diagnostic {
    /// Every span of the error and its notes, with the call sites of the macros they are in.
    fn all_spans(&self) -> Vec<&Span> {
        let mut spans = Vec::new();
        for span in self.spans.iter().chain(self.children.iter().flat_map(|child| &child.spans)) {
            let mut at = Some(span);
            while let Some(span) = at {
                spans.push(span);
                at = span.expansion.as_ref().map(|expansion| &expansion.span);
            }
        }
        spans
    }
}

#[derive(Debug, Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    message: Option<Diagnostic>,
    #[serde(default)]
    manifest_path: Option<PathBuf>,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    executable: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct Target {
    kind: Vec<String>,
    #[serde(default)]
    doctest: bool,
}

#[derive(Debug, Deserialize)]
struct Profile {
    test: bool,
}

/// A test executable or a library cargo built, and its package's manifest.
struct Artifact {
    manifest: PathBuf,
    executable: Option<PathBuf>,
    /// A library with doctests.
    doctests: bool,
}

struct Built {
    run: Finished,
    artifacts: Vec<Artifact>,
    errors: Vec<Diagnostic>,
}

/// `cargo test --no-run` of `packages`, read from its JSON messages.
fn build(cargo: &Cargo, packages: &[String], log: &Path) -> Result<Built> {
    let mut args = vec!["test".to_string(), "--no-run".to_string(), "--message-format=json".to_string()];
    args.extend(cargo.selection_args(packages));
    let run = cargo.invocation(&args).run_build(cargo.build_timeout, log)?;
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let mut artifacts = Vec::new();
    let mut errors = Vec::new();
    for message in output.lines().filter(|line| line.starts_with('{')) {
        let Ok(message) = serde_json::from_str::<Message>(message) else { continue };
        match message.reason.as_str() {
            "compiler-message" => {
                if let Some(diagnostic) =
                    message.message.filter(|d| d.level == "error" && !d.spans.is_empty())
                {
                    errors.push(diagnostic);
                }
            }
            "compiler-artifact" => {
                let (Some(manifest), Some(target)) = (message.manifest_path, message.target) else {
                    continue;
                };
                let is_test = message.profile.is_some_and(|profile| profile.test);
                let is_lib = target.kind.iter().any(|kind| kind.contains("lib"));
                artifacts.push(Artifact {
                    manifest,
                    executable: message.executable.filter(|_| is_test),
                    doctests: is_lib && target.doctest && !is_test,
                });
            }
            _ => {}
        }
    }
    Ok(Built { run, artifacts, errors })
}

/// The environment cargo gives a test it runs.
fn package_env(package: &Package, dir: &Path, target: &Path) -> Vec<(String, String)> {
    let deps = target.join("debug/deps");
    let library_path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(existing) if !existing.is_empty() => format!("{}:{existing}", deps.display()),
        _ => deps.display().to_string(),
    };
    vec![
        ("CARGO_MANIFEST_DIR".into(), dir.display().to_string()),
        ("CARGO_PKG_NAME".into(), package.name.clone()),
        ("CARGO_PKG_VERSION".into(), package.version.clone()),
        ("LD_LIBRARY_PATH".into(), library_path),
    ]
    .into_iter()
    .chain(super::build::quiet_panics())
    .chain(super::build::seeded())
    .collect()
}

/// The test names of a libtest executable; empty when it is no libtest harness.
fn list_tests(binary: &TestBinary) -> Vec<String> {
    let mut command = std::process::Command::new(&binary.path);
    command
        .args(["--list", "--format", "terse"])
        .current_dir(&binary.dir)
        .envs(binary.env.iter().map(|(k, v)| (k, v)));
    crate::seal::seal(&mut command);
    let output = command.output();
    match output {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.strip_suffix(": test"))
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// How the recording runs go: beside each other when `jobs` allows, and telling `flaky` of the
/// tests that fail and then pass.
#[derive(Clone, Copy)]
struct Recording<'a> {
    jobs: usize,
    flaky: &'a Flaky,
}

/// Runs every test executable and every package's doctests with the switch off, recording
/// what reaches each site; they must pass, and a canary must fail.
fn record(
    cargo: &Cargo,
    tested: &[String],
    artifacts: Vec<Artifact>,
    switched: &[u32],
    recording: Recording,
    steps: &mut Vec<StepRecord>,
    log: &Path,
) -> Result<Option<Switched>> {
    let Recording { jobs, flaky } = recording;
    let package_at = |manifest: &Path| {
        let dir = manifest.parent()?;
        cargo.packages.iter().find(|package| same_file(&cargo.root.join(&package.dir), dir))
    };
    let mut binaries = Vec::new();
    let mut with_doctests = Vec::new();
    for artifact in &artifacts {
        let Some(package) = package_at(&artifact.manifest) else { continue };
        let dir = cargo.root.join(&package.dir);
        if let Some(executable) = &artifact.executable {
            let mut binary = TestBinary {
                package: package.name.clone(),
                path: executable.clone(),
                env: package_env(package, &dir, &cargo.target),
                dir,
                duration: Duration::ZERO,
                tests: Vec::new(),
            };
            binary.tests = list_tests(&binary);
            binaries.push(binary);
        } else if artifact.doctests
            && tested.contains(&package.name)
            && !with_doctests.contains(&package.name)
        {
            with_doctests.push(package.name.clone());
        }
    }
    in_stable_order(&mut binaries, tested);
    let records = log.with_extension("records");
    std::fs::create_dir_all(&records)?;
    // The doctests (rustdoc compiles each of them: the slow part) are recorded beside the
    // executables when a second job is allowed.
    let record_doctests =
        || record_doctests(cargo, &with_doctests, &records, &log.with_extension("doctests"));
    let (binaries_recorded, doctests_recorded) = if jobs > 1 {
        std::thread::scope(|scope| {
            let doctests = scope.spawn(record_doctests);
            let binaries = record_binaries(cargo, &mut binaries, &records, log, flaky);
            (binaries, doctests.join().expect("the doctest recording thread panicked"))
        })
    } else {
        (record_binaries(cargo, &mut binaries, &records, log, flaky), record_doctests())
    };
    let (mut reach, binary_steps) = binaries_recorded?;
    steps.extend(binary_steps);
    let (doctests_took, doctest_steps, doctest_reach) = doctests_recorded?;
    steps.extend(doctest_steps);
    for (id, packages) in doctest_reach {
        reach.entry(id).or_default().doctests = packages;
    }
    if !canary(cargo, &binaries, &reach, steps, log)? {
        return Ok(None);
    }
    let reach = reach
        .into_iter()
        .filter(|(id, _)| switched.contains(id))
        .map(|(id, reach)| (id as usize - 1, reach))
        .collect();
    let ids = switched.iter().map(|&id| id as usize - 1).collect();
    let moved_columns = Vec::new();
    Ok(Some(Switched { binaries, reach, doctests_took, ids, cargo: cargo.clone(), moved_columns }))
}

/// Runs each test executable with the switch off, recording which of its tests reach each
/// site; each run must pass (it is the baseline).
fn record_binaries(
    cargo: &Cargo,
    binaries: &mut [TestBinary],
    records: &Path,
    log: &Path,
    flaky: &Flaky,
) -> Result<(HashMap<u32, Reach>, Vec<StepRecord>)> {
    let mut reach: HashMap<u32, Reach> = HashMap::new();
    let mut steps = Vec::new();
    for (index, binary) in binaries.iter_mut().enumerate() {
        let file = records.join(format!("binary-{index}"));
        let record_to = file.display().to_string();
        let recording = binary_command(binary, &[], &[(switch::RECORD_VAR, &record_to)]);
        // Tests that failed run again (the whole executable, recording): if it then passes,
        // they are flaky, and the recording of the run that passed stands.
        let run = recording.run(cargo.build_timeout * 4, log)?;
        let failed = libtest::failed_in_tests(&run);
        let (mut runs, flaky_said) =
            flaky::run_failed_again(flaky, run, &failed, || recording.run(cargo.build_timeout * 4, log))?;
        steps.push(StepRecord {
            step: format!("recorded tests of {}{flaky_said}", binary.package),
            record: RunRecord::of(How::Schema, &runs.iter().collect::<Vec<_>>()),
        });
        let run = runs.pop().expect("a run");
        require::passed(&run, &CargoRun::Tests(&binary.package), cargo.build_timeout * 4)?;
        binary.duration = run.duration;
        for (id, tests) in reached_by(read_record(&file), &binary.tests) {
            reach.entry(id).or_default().tests.insert(index, tests.unwrap_or_default());
        }
    }
    Ok((reach, steps))
}

/// By site, the tests of one executable whose threads reached it (`records`: the sites each
/// thread reached, in the order the threads wrote them), in the order of their names: the
/// threads run at once, in an order that varies from run to run. None where a thread that is
/// no test of `named` reached it, so any test of the executable may.
fn reached_by(records: Vec<(Vec<u32>, String)>, named: &[String]) -> HashMap<u32, Option<Vec<String>>> {
    let mut found: HashMap<u32, Option<Vec<String>>> = HashMap::new();
    for (ids, thread) in records {
        for id in ids {
            let entry = found.entry(id).or_insert_with(|| Some(Vec::new()));
            match entry {
                Some(tests) if named.contains(&thread) => {
                    if !tests.contains(&thread) {
                        tests.push(thread.clone());
                    }
                }
                _ => *entry = None,
            }
        }
    }
    for tests in found.values_mut().flatten() {
        tests.sort();
    }
    found
}

/// Puts the test executables in an order every run of the same build shares: by their
/// package's place in `tested` (the packages that own the change first), then by file. Cargo
/// lists them as they finish building, which varies from run to run; a mutant's tests are
/// listed, run and named as killers in this order, and its remembered verdict is keyed by them.
fn in_stable_order(binaries: &mut [TestBinary], tested: &[String]) {
    let place = |binary: &TestBinary| tested.iter().position(|package| *package == binary.package);
    binaries.sort_by(|a, b| {
        (place(a).unwrap_or(usize::MAX), &a.path).cmp(&(place(b).unwrap_or(usize::MAX), &b.path))
    });
}

/// What recording the doctests found: how long each package's took, the steps, and by site
/// the packages whose doctests reached it.
type DoctestRecord = (BTreeMap<String, Duration>, Vec<StepRecord>, HashMap<u32, Vec<String>>);

/// Runs the doctests of each package with the switch off, recording which packages' doctests
/// reach each site; each run must pass.
fn record_doctests(cargo: &Cargo, packages: &[String], records: &Path, log: &Path) -> Result<DoctestRecord> {
    let mut took = BTreeMap::new();
    let mut steps = Vec::new();
    let mut reach: HashMap<u32, Vec<String>> = HashMap::new();
    for package in packages {
        let file = records.join(format!("doctests-{package}"));
        let mut command = cargo.doc_tests(package);
        command.env.push((switch::RECORD_VAR.to_string(), file.display().to_string()));
        let run = command.run(cargo.build_timeout * 4, log)?;
        steps.push(StepRecord {
            step: format!("recorded doctests of {package}"),
            record: RunRecord::of(How::Schema, &[&run]),
        });
        require::passed(&run, &CargoRun::Tests(package), cargo.build_timeout * 4)?;
        took.insert(package.clone(), run.duration);
        for (ids, _) in read_record(&file) {
            for id in ids {
                let doctests = reach.entry(id).or_default();
                if !doctests.contains(package) {
                    doctests.push(package.clone());
                }
            }
        }
    }
    Ok((took, steps, reach))
}

/// The canary id must make the reached tests of every executable fail: the switch is live
/// wherever a verdict will rest on it. False when one passes (the schema is not trusted then).
/// Doctests link the same library and read the same variables: their recording proves they run
/// the switched build, so their canary (a second compilation of every doctest) runs only when no
/// executable reached a site and nothing else proves the switch.
fn canary(
    cargo: &Cargo,
    binaries: &[TestBinary],
    reach: &HashMap<u32, Reach>,
    steps: &mut Vec<StepRecord>,
    log: &Path,
) -> Result<bool> {
    let canary = switch::CANARY.to_string();
    // By executable: the tests that reached any site (none: all of them).
    let mut reached: BTreeMap<usize, Option<Vec<String>>> = BTreeMap::new();
    let mut doctests: Vec<&String> = Vec::new();
    for site in reach.values() {
        for (&index, tests) in &site.tests {
            let entry = reached.entry(index).or_insert_with(|| Some(Vec::new()));
            match (entry.as_mut(), tests.is_empty()) {
                (Some(known), false) => {
                    known.extend(tests.iter().filter(|t| !known.contains(t)).cloned().collect::<Vec<_>>())
                }
                _ => *entry = None,
            }
        }
        doctests
            .extend(site.doctests.iter().filter(|package| !doctests.contains(package)).collect::<Vec<_>>());
    }
    let mut runs = Vec::new();
    for (index, tests) in reached {
        let args = match tests {
            Some(tests) => std::iter::once("--exact".to_string()).chain(tests).collect(),
            None => Vec::new(),
        };
        let command = binary_command(&binaries[index], &args, &[(switch::MUTANT_VAR, &canary)]);
        runs.push(command.run(cargo.build_timeout * 4, log)?);
    }
    doctests.sort();
    doctests.dedup();
    if !runs.is_empty() {
        doctests.clear();
    }
    for package in doctests {
        let mut command = cargo.doc_tests(package);
        command.env.push((switch::MUTANT_VAR.to_string(), canary.clone()));
        runs.push(command.run(cargo.build_timeout * 4, log)?);
    }
    if runs.is_empty() {
        return Ok(true); // nothing reached: no verdict rests on the switch
    }
    steps.push(StepRecord {
        step: "schema canary".to_string(),
        record: RunRecord::of(How::Schema, &runs.iter().collect::<Vec<_>>()),
    });
    if runs.iter().any(|run| run.exit == Exit::Interrupted) {
        return Err(Interrupted.into());
    }
    Ok(runs.iter().all(|run| !run.passed()))
}

/// Each line of a record: the site's ids and the thread that reached it.
fn read_record(file: &Path) -> Vec<(Vec<u32>, String)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (ids, thread) = line.split_once(' ')?;
            let ids = ids.split(',').filter(|id| !id.is_empty()).filter_map(|id| id.parse().ok()).collect();
            Some((ids, thread.to_string()))
        })
        .collect()
}

/// A test executable run in its package's directory, with `args` and `env` added.
pub fn binary_command(binary: &TestBinary, args: &[String], env: &[(&str, &str)]) -> TestCommand {
    let mut all_env = binary.env.clone();
    all_env.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    TestCommand { program: binary.path.clone(), args: args.to_vec(), dir: binary.dir.clone(), env: all_env }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_executables_take_one_order_whatever_order_cargo_finished_them_in() {
        let binary = |package: &str, file: &str| TestBinary {
            package: package.to_string(),
            path: PathBuf::from("/target/debug/deps").join(file),
            dir: PathBuf::new(),
            env: Vec::new(),
            duration: Duration::ZERO,
            tests: Vec::new(),
        };
        let finished = [
            binary("semver", "test_version_req-1f"),
            binary("core", "core-9a"),
            binary("semver", "semver-3c"),
            binary("semver", "test_version-2b"),
        ];
        let names = |binaries: &[TestBinary]| -> Vec<String> {
            binaries.iter().map(|b| b.path.file_name().unwrap().to_str().unwrap().to_string()).collect()
        };
        let tested = ["semver".to_string(), "core".to_string()];
        let mut once = finished.to_vec();
        in_stable_order(&mut once, &tested);
        let mut reversed: Vec<TestBinary> = finished.iter().rev().cloned().collect();
        in_stable_order(&mut reversed, &tested);
        assert_eq!(names(&once), ["semver-3c", "test_version-2b", "test_version_req-1f", "core-9a"]);
        assert_eq!(names(&reversed), names(&once));
    }

    #[test]
    fn a_sites_tests_are_in_the_order_of_their_names_whatever_order_their_threads_wrote() {
        let named: Vec<String> = ["tests::a", "tests::b", "tests::c"].map(String::from).to_vec();
        let record = |order: &[&str]| -> Vec<(Vec<u32>, String)> {
            order.iter().map(|thread| (vec![1, 2], thread.to_string())).collect()
        };
        let first = reached_by(record(&["tests::c", "tests::a", "tests::b", "tests::a"]), &named);
        let second = reached_by(record(&["tests::b", "tests::c", "tests::a"]), &named);
        assert_eq!(first[&1], Some(named.clone()));
        assert_eq!(first, second);
        let outside =
            reached_by(vec![(vec![1], "tests::a".to_string()), (vec![1], "main".to_string())], &named);
        assert_eq!(outside[&1], None, "reached outside a named test: any test may");
    }

    #[test]
    fn a_record_line_is_a_sites_ids_and_the_thread_that_reached_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("record");
        std::fs::write(&file, "3,4, tests::adds\n7, \n9, a thread name\n").unwrap();
        assert_eq!(
            read_record(&file),
            [
                (vec![3, 4], "tests::adds".to_string()),
                (vec![7], String::new()),
                (vec![9], "a thread name".to_string())
            ]
        );
    }
}
