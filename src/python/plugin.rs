//! Python plugged into the runner: its descriptor, the tests a change names, the pytest check and the kill-loss audit.

use anyhow::Result;

use super::check::PythonCheck;
use super::first_round::FailAlone;
use super::settings::{PythonSettings, SETTINGS};
use super::{audit, select, spec};
use crate::model::plan::PlannedMutant;
use crate::model::report::Timings;
use crate::run::check_language;
use crate::run::event::Event;
use crate::run::language::Context;
use crate::run::plugin::{Auditor, Checked, Plugin};

/// Python plugged into the runner: the pytest check, and the kill-loss audit.
pub const PLUGIN: Plugin = Plugin {
    language: spec::LANGUAGE,
    settings: SETTINGS,
    relevant_tests: |plan, options| select::relevant_tests(plan, &PythonSettings::of(options).extra_tests),
    check,
    audit: Some(Auditor { touches_tests: audit::touches_tests, begin: audit::begin }),
    record: |options| {
        let python = PythonSettings::of(options);
        serde_json::json!({
            "interpreter": python.interpreter,
            "extraTests": python.extra_tests,
            "fork": python.fork,
            "swap": python.swap,
        })
    },
};

/// The pytest check of the change's mutants. Where the change's test files fail apart from the
/// rest of the suite (`FailAlone`), the whole suite runs as the first round instead, each mutant
/// meeting it whole and in its order, and the report says so; where the whole suite fails too,
/// its refusal stands.
fn check(
    ctx: &Context,
    candidates: Vec<PlannedMutant>,
    timings: &mut Timings,
    events: &mut dyn FnMut(Event),
) -> Result<Checked> {
    let first = PythonCheck::new(ctx)?;
    events(Event::Note(format!("baseline: the tests run with {}", first.python.display())));
    match check_language(&first, ctx, candidates.clone(), timings, events) {
        Err(err) if err.is::<FailAlone>() => {
            let alone = err.downcast::<FailAlone>().expect("it is one");
            events(Event::Note(alone.retrying()));
            let mut whole = PythonCheck::with_tests(ctx, Vec::new(), true, None)?;
            whole.suite_context = true;
            let mut checked = check_language(&whole, ctx, candidates, timings, events)?;
            checked.notes.push(alone.note());
            Ok(checked)
        }
        checked => checked,
    }
}
