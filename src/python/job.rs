//! What Python adds to a job: the suite's order of its tests, a first few to try alone, the files an earlier round ran, the tests a whole-suite run covers, and why it runs in a fresh process.

use crate::run::job::JobData;

/// What a Python worker needs of a job beside its tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonJob {
    /// The same tests in the order the suite runs them, when it differs (empty otherwise): a
    /// kill that does not hold up in `tests`' order is tried again in this one, for tests that
    /// lean on the ones before them.
    pub in_suite_order: Vec<String>,
    /// A few of `tests`, the likeliest to catch it, run on their own first when `tests` is a
    /// far larger selection (empty: none): a kill among them spares the rest.
    pub tried_first: Vec<String>,
    /// Test files an earlier round ran in full against it, left out when `tests` is the whole
    /// suite (empty: none).
    pub left_out: Vec<String>,
    /// The tests a run of the whole suite (no `tests`) runs, by id, as a coverage run listed
    /// them: what the report says the mutant ran under (empty: `tests` say it).
    pub covers: Vec<String>,
    /// Why only a fresh import tests it (none: it may be swapped into a process that collected
    /// its tests).
    pub fresh: Option<Fresh>,
}

/// Why a mutant is tested in a fresh process rather than swapped into one that collected its
/// tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    /// The user's test command runs the tests: there is no collector to swap into.
    TestCommand,
    /// Its code ran when the project was imported or its tests collected, which a process that
    /// has them imported cannot be patched for.
    AtImport,
    /// A survivor faces the whole suite as the suite runs.
    Confirming,
    /// The change's test files pass only in the whole suite's order: each mutant runs it whole.
    SuiteContext,
}

impl Fresh {
    /// Why, in the words the run record keeps.
    pub fn reason(self) -> &'static str {
        match self {
            Fresh::TestCommand => "the test command runs the tests",
            Fresh::AtImport => "its code ran when the project was imported or collected",
            Fresh::Confirming => "a survivor confirmed against the whole suite, as it runs",
            Fresh::SuiteContext => {
                "the change's tests pass only in the whole suite's order, which runs whole"
            }
        }
    }
}

impl JobData for PythonJob {
    fn starts_slowly(&self) -> bool {
        self.fresh.is_some()
    }

    fn other_tests(&self) -> [&[String]; 3] {
        [&self.in_suite_order, &self.tried_first, &self.left_out]
    }
}
