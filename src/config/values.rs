//! The values of a configuration file in words and forms every reader shares: a value described for an error, the closest known key, lists of strings, paths read from the repository root.

use std::path::{Path, PathBuf};

use toml::Value;

/// A path in the configuration, read from the repository root; a bare name that is no file
/// there stays a command name.
pub fn from_root(root: &Path, path: &str) -> PathBuf {
    let joined = root.join(path);
    if Path::new(path).components().count() == 1 && !joined.exists() {
        PathBuf::from(path)
    } else {
        joined
    }
}

pub fn strings(value: &Value) -> Option<Vec<String>> {
    value.as_array()?.iter().map(|item| item.as_str().map(str::to_string)).collect()
}

pub fn boolean(value: &Value) -> Option<bool> {
    value.as_bool()
}

/// A value in words, for an error that says what was found instead.
pub fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => format!("the string {text:?}"),
        Value::Integer(n) => n.to_string(),
        Value::Float(x) => format!("{x:?}"),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(when) => format!("the date {when}"),
        Value::Array(items) => match items.iter().find(|item| !item.is_str()) {
            Some(item) => format!("a list holding {}", describe(item)),
            None => "a list".to_string(),
        },
        Value::Table(_) => "a table".to_string(),
    }
}

/// " (did you mean `x`?)" for the candidate closest to `word`, when one is close.
pub fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let plain = |text: &str| text.to_lowercase().replace(['_', '-'], "");
    let word = plain(word);
    candidates
        .map(|candidate| (strsim::jaro_winkler(&word, &plain(candidate)), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| format!(" (did you mean `{candidate}`?)"))
        .unwrap_or_default()
}
