//! The per-language part of `Options`: each language's settings, read from its keys and the command-line flags it declares and resolved by the language itself, opaque to the engine, which asks them only for their part of a verdict's key.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use anyhow::Result;

use crate::cli::CheckArgs;
use crate::config::{LanguageTable, Resolver};

/// A language's resolved settings, as the engine sees them.
pub trait LanguageOptions: Any + Send + Sync + fmt::Debug {
    /// What of them can change a verdict, as the verdict memory's key writes it.
    fn verdict_key(&self) -> String;
    fn as_any(&self) -> &dyn Any;
}

/// How a language resolves its settings: the command line over what the file gave its keys
/// (`LanguageTable::read`'s form, none where no file was read) over its defaults, each kept
/// with its source.
pub type Resolve =
    fn(&CheckArgs, Option<&(dyn Any + Send + Sync)>, &mut Resolver) -> Result<Arc<dyn LanguageOptions>>;

/// How a language's settings are read and resolved, named by the language's plugin.
#[derive(Clone, Copy)]
pub struct SettingsOf {
    /// Its keys in the configuration, and how it reads them.
    pub file: LanguageTable,
    /// The command-line flags it reads (`check --help` names them).
    pub flags: &'static [&'static str],
    /// What runs its tests when no `test-cmd` replaces it, in words.
    pub tests_run_by: &'static str,
    /// What runs the edited tests of its kill-loss audit, where it has one, in words.
    pub audit_runs_with: Option<&'static str>,
    /// Its settings, resolved.
    pub resolve: Resolve,
}

/// Each language's settings, in the order of the languages.
#[derive(Clone, Debug, Default)]
pub struct Languages(Vec<Arc<dyn LanguageOptions>>);

impl Languages {
    pub fn new(settings: Vec<Arc<dyn LanguageOptions>>) -> Languages {
        Languages(settings)
    }

    /// The settings of type `T`: the language that owns `T` asks for its own.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.0.iter().find_map(|settings| settings.as_any().downcast_ref())
    }

    /// Every language's part of a verdict's key, in the languages' order.
    pub fn verdict_key(&self) -> String {
        self.0.iter().map(|settings| settings.verdict_key()).collect::<Vec<_>>().join(" ")
    }
}

/// What a language's own tests of its settings read: its settings (`T`) resolved from `config`
/// and the command line `args` by `settings`, with each setting's key, value and source as
/// `--print-config` prints them.
#[cfg(test)]
pub fn resolved_for_tests<T: Clone + 'static>(
    settings: &SettingsOf,
    config: &crate::config::Config,
    args: &[&str],
) -> (T, Vec<(String, String, String)>) {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let args = crate::cli::parse_check_options(&args).unwrap();
    let mut resolver = Resolver::new(config);
    let file = config.languages.get(settings.file.table).map(|file| &**file);
    let resolved = (settings.resolve)(&args, file, &mut resolver).unwrap();
    let shown = resolver
        .finish()
        .settings
        .into_iter()
        .map(|s| (s.key.to_string(), s.value, s.source.to_string()))
        .collect();
    (resolved.as_any().downcast_ref::<T>().unwrap().clone(), shown)
}
