//! What nextest's configuration says of flaky tests: the retries its profile gives every test, and those its per-test overrides give some (`.config/nextest.toml` at the workspace root).

use std::path::Path;

use crate::run::flaky::NamePattern;

/// Where nextest reads a workspace's configuration.
pub const CONFIG: &str = ".config/nextest.toml";

/// The retries nextest's configuration asks for, in the profile `cargo nextest run` uses
/// (`NEXTEST_PROFILE`, else `default`; a custom profile inherits the default's).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Retries {
    /// Retries every test gets: those of the profile, and of each override whose filter this
    /// reading cannot tell the tests of (a regular expression, a package, `not`).
    pub every: u32,
    /// The tests overrides give retries, by what their filters match.
    pub tests: Vec<NamePattern>,
}

impl Retries {
    /// The configuration of the workspace at `root`: none without one; an error naming the
    /// file when it is no TOML.
    pub fn read(root: &Path) -> Result<Retries, String> {
        let Ok(text) = std::fs::read_to_string(root.join(CONFIG)) else { return Ok(Retries::default()) };
        let profile = std::env::var("NEXTEST_PROFILE").unwrap_or_else(|_| "default".to_string());
        Retries::parse(&text, &profile).map_err(|why| format!("{CONFIG} could not be read: {why}"))
    }

    fn parse(text: &str, profile: &str) -> Result<Retries, String> {
        let config: toml::Table = toml::from_str(text).map_err(|err| err.message().to_string())?;
        let profiles = config.get("profile").and_then(toml::Value::as_table);
        let named =
            |name: &str| profiles.and_then(|profiles| profiles.get(name)).and_then(toml::Value::as_table);
        let mut chain = vec![named(profile)];
        if profile != "default" {
            chain.push(named("default"));
        }
        let chain: Vec<&toml::Table> = chain.into_iter().flatten().collect();
        let mut retries = Retries {
            every: chain.iter().find_map(|table| table.get("retries")).map_or(Ok(0), count)?,
            tests: Vec::new(),
        };
        let overrides = chain.iter().filter_map(|table| table.get("overrides")?.as_array()).flatten();
        for entry in overrides {
            let Some(times) = entry.get("retries") else { continue };
            let times = count(times)?;
            if times == 0 {
                continue;
            }
            match entry.get("filter").and_then(toml::Value::as_str).map(tests_of) {
                Some(Some(names)) => retries.tests.extend(names),
                // A platform-only override, or a filter this reading cannot split into tests.
                _ => retries.every = retries.every.max(times),
            }
        }
        Ok(retries)
    }
}

/// A `retries` setting's count: a number, or a policy's `count`.
fn count(value: &toml::Value) -> Result<u32, String> {
    let number = match value {
        toml::Value::Table(policy) => policy.get("count").and_then(toml::Value::as_integer),
        other => other.as_integer(),
    };
    let refused = || "`retries` is not a count of 0 or more, nor a policy with one (`count = 2`)".to_string();
    number.and_then(|n| u32::try_from(n).ok()).ok_or_else(refused)
}

/// The tests a filterset names, when it is `test(...)` terms joined by `|`, `+` or `or`; none
/// for any other filterset.
fn tests_of(filter: &str) -> Option<Vec<NamePattern>> {
    let spaced = filter.replace(" or ", " | ").replace('+', "|");
    spaced
        .split('|')
        .map(|term| {
            let argument = term.trim().strip_prefix("test(")?.strip_suffix(')')?;
            if argument.contains(['(', ')', '/', '#', '&', '|']) || argument.is_empty() {
                return None;
            }
            Some(match argument.strip_prefix('=') {
                Some(exact) => NamePattern::Exact(exact.to_string()),
                None => NamePattern::Contains(argument.strip_prefix('~').unwrap_or(argument).to_string()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_s_retries_reach_every_test_and_an_override_s_the_tests_its_filter_names() {
        let text = r#"
[profile.default]
retries = { backoff = "fixed", count = 2, delay = "1s" }

[[profile.default.overrides]]
filter = 'test(slow)'
slow-timeout = "60s"

[[profile.default.overrides]]
filter = 'test(steady)'
retries = 0

[[profile.default.overrides]]
filter = 'test(=tests::tax_runs) | test(~network)'
retries = 3
"#;
        let retries = Retries::parse(text, "default").unwrap();
        assert_eq!(retries.every, 2);
        assert_eq!(
            retries.tests,
            [NamePattern::Exact("tests::tax_runs".into()), NamePattern::Contains("network".into())]
        );
        assert!(
            retries.tests[0].matches("tests::tax_runs") && !retries.tests[0].matches("tests::tax_runs_2")
        );
        assert!(retries.tests[1].matches("io::network_down"));
    }

    #[test]
    fn a_filter_that_names_no_tests_alone_gives_its_retries_to_every_test() {
        for filter in
            ["test(/^net/)", "package(core) & test(net)", "not test(fast)", "all()", "test(a) or test(#b*)"]
        {
            let text = format!("[[profile.default.overrides]]\nfilter = '{filter}'\nretries = 4\n");
            let retries = Retries::parse(&text, "default").unwrap();
            assert_eq!(retries, Retries { every: 4, tests: Vec::new() }, "{filter}");
        }
        for joined in ["test(a) or test(b)", "test(a) + test(b)", "test(a) | test(b)"] {
            let text = format!("[[profile.default.overrides]]\nfilter = '{joined}'\nretries = 1\n");
            let tests = Retries::parse(&text, "default").unwrap().tests;
            assert_eq!(
                tests,
                [NamePattern::Contains("a".into()), NamePattern::Contains("b".into())],
                "{joined}"
            );
        }
    }

    #[test]
    fn a_custom_profile_inherits_the_default_and_a_bad_setting_is_refused() {
        let text = "[profile.default]\nretries = 1\n[profile.ci]\nretries = 5\n";
        assert_eq!(Retries::parse(text, "ci").unwrap().every, 5);
        assert_eq!(Retries::parse("[profile.default]\nretries = 1\n[profile.ci]\n", "ci").unwrap().every, 1);
        assert_eq!(Retries::parse("", "default").unwrap(), Retries::default());
        assert!(Retries::parse("[profile.default]\nretries = -1\n", "default")
            .unwrap_err()
            .contains("not a count"));
        assert!(Retries::parse("[profile.default\n", "default").is_err());
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Retries::read(dir.path()).unwrap(), Retries::default(), "no configuration");
        std::fs::create_dir_all(dir.path().join(".config")).unwrap();
        std::fs::write(dir.path().join(CONFIG), "retries = [").unwrap();
        assert!(Retries::read(dir.path())
            .unwrap_err()
            .starts_with(".config/nextest.toml could not be read: "));
    }
}
