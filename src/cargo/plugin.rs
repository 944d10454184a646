//! Rust plugged into the runner: its descriptor and the cargo check; no kill-loss audit yet.

use super::check::CargoCheck;
use super::{settings, spec};
use crate::run::check_language;
use crate::run::plugin::Plugin;

/// Rust plugged into the runner: the cargo check; no kill-loss audit yet.
pub const PLUGIN: Plugin = Plugin {
    language: spec::LANGUAGE,
    settings: settings::SETTINGS,
    relevant_tests: |_, _| Vec::new(),
    check: |ctx, candidates, timings, events| {
        check_language(&CargoCheck::new(ctx)?, ctx, candidates, timings, events)
    },
    audit: None,
    record: |options| serde_json::json!({ "testTool": settings::RustSettings::of(options).test_tool.name() }),
};
