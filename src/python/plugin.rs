//! Python plugged into the runner: its descriptor, the tests a change names, the pytest check and the kill-loss audit.

use super::check::PythonCheck;
use super::settings::{PythonSettings, SETTINGS};
use super::{audit, select, spec};
use crate::run::check_language;
use crate::run::plugin::{Auditor, Plugin};

/// Python plugged into the runner: the pytest check, and the kill-loss audit.
pub const PLUGIN: Plugin = Plugin {
    language: spec::LANGUAGE,
    settings: SETTINGS,
    relevant_tests: |plan, options| select::relevant_tests(plan, &PythonSettings::of(options).extra_tests),
    check: |ctx, candidates, timings, events| {
        check_language(&PythonCheck::new(ctx)?, ctx, candidates, timings, events)
    },
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
