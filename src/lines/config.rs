//! How `git diff` diffs in this repository: `diff.algorithm`, `diff.indentHeuristic` and `diff.renames` read from its config into libgit2's options.

use anyhow::{bail, Result};
use git2::{Config, DiffOptions, ErrorCode, Repository};

/// `diff.algorithm`, as far as libgit2 can reproduce it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Myers,
    Minimal,
    Patience,
}

/// `diff.renames`: off, renames only (git's default), or renames and copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renames {
    Off,
    Only,
    Copies,
}

/// The settings of the repository's config that decide which lines `git diff` shows as added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffConfig {
    pub algorithm: Algorithm,
    pub indent_heuristic: bool,
    pub renames: Renames,
    /// `diff.renameLimit` (git's default 1000; 0 for no limit).
    pub rename_limit: usize,
}

impl DiffConfig {
    /// Reads the repository's config (with the user's and the system's) as git does.
    pub fn read(repo: &Repository) -> Result<DiffConfig> {
        let config = repo.config().map_err(|err| {
            anyhow::anyhow!(
                "could not read the repository's git config ({}): fix the config file",
                err.message()
            )
        })?;
        DiffConfig::from_config(&config)
    }

    fn from_config(config: &Config) -> Result<DiffConfig> {
        Ok(DiffConfig {
            algorithm: algorithm(config)?,
            indent_heuristic: boolean(config, "diff.indentHeuristic")?.unwrap_or(true),
            renames: renames(config)?,
            rename_limit: match config.get_i64("diff.renameLimit") {
                Ok(limit) => usize::try_from(limit).unwrap_or(0),
                Err(err) if err.code() == ErrorCode::NotFound => 1000,
                Err(_) => {
                    bail!("the git config sets diff.renameLimit to a value that is not a number: fix it")
                }
            },
        })
    }

    /// Zero-context diff options with this algorithm and heuristic.
    pub fn diff_options(&self) -> DiffOptions {
        let mut options = DiffOptions::new();
        options
            .context_lines(0)
            .interhunk_lines(0)
            .indent_heuristic(self.indent_heuristic)
            .minimal(self.algorithm == Algorithm::Minimal)
            .patience(self.algorithm == Algorithm::Patience);
        options
    }
}

fn string(config: &Config, key: &str) -> Result<Option<String>> {
    match config.get_string(key) {
        Ok(value) => Ok(Some(value)),
        Err(err) if err.code() == ErrorCode::NotFound => Ok(None),
        Err(err) => bail!("could not read {key} from the git config ({}): fix its value", err.message()),
    }
}

fn boolean(config: &Config, key: &str) -> Result<Option<bool>> {
    match config.get_bool(key) {
        Ok(value) => Ok(Some(value)),
        Err(err) if err.code() == ErrorCode::NotFound => Ok(None),
        Err(_) => {
            bail!("the git config sets {key} to a value that is not a boolean: set it to true or false")
        }
    }
}

fn algorithm(config: &Config) -> Result<Algorithm> {
    let Some(value) = string(config, "diff.algorithm")? else {
        return Ok(Algorithm::Myers);
    };
    Ok(match value.to_ascii_lowercase().as_str() {
        "myers" | "default" => Algorithm::Myers,
        "minimal" => Algorithm::Minimal,
        "patience" => Algorithm::Patience,
        "histogram" => bail!(
            "the git config sets diff.algorithm=histogram, which mutdelta cannot reproduce (its diff has myers, minimal and patience), so its added lines would differ from `git diff`'s: set diff.algorithm to one of those for this repository, or give the lines with --lines"
        ),
        _ => bail!(
            "the git config sets diff.algorithm={value}, which git does not know either: set it to myers, minimal, patience or histogram"
        ),
    })
}

fn renames(config: &Config) -> Result<Renames> {
    if let Ok(Some(value)) = string(config, "diff.renames") {
        if value.eq_ignore_ascii_case("copies") || value.eq_ignore_ascii_case("copy") {
            return Ok(Renames::Copies);
        }
    }
    Ok(match boolean(config, "diff.renames")? {
        Some(false) => Renames::Off,
        Some(true) | None => Renames::Only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings read from a config file holding only `entries` (not the user's config).
    fn read(entries: &[(&str, &str)]) -> Result<DiffConfig> {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::open(&dir.path().join("config")).unwrap();
        for (key, value) in entries {
            config.set_str(key, value).unwrap();
        }
        DiffConfig::from_config(&config)
    }

    #[test]
    fn git_defaults_are_myers_with_the_indent_heuristic_and_renames() {
        assert_eq!(
            read(&[]).unwrap(),
            DiffConfig {
                algorithm: Algorithm::Myers,
                indent_heuristic: true,
                renames: Renames::Only,
                rename_limit: 1000
            }
        );
    }

    #[test]
    fn each_setting_is_read_as_git_reads_it() {
        let config = read(&[
            ("diff.algorithm", "Patience"),
            ("diff.indentHeuristic", "off"),
            ("diff.renames", "copies"),
        ])
        .unwrap();
        assert_eq!(
            config,
            DiffConfig {
                algorithm: Algorithm::Patience,
                indent_heuristic: false,
                renames: Renames::Copies,
                rename_limit: 1000
            }
        );
        let config = read(&[("diff.algorithm", "minimal"), ("diff.renames", "false")]).unwrap();
        assert_eq!((config.algorithm, config.renames), (Algorithm::Minimal, Renames::Off));
    }

    #[test]
    fn histogram_and_unknown_algorithms_are_refused_with_what_to_do() {
        let err = read(&[("diff.algorithm", "histogram")]).unwrap_err().to_string();
        assert!(err.contains("diff.algorithm=histogram") && err.contains("set diff.algorithm"), "{err}");
        let err = read(&[("diff.algorithm", "fastest")]).unwrap_err().to_string();
        assert!(err.contains("diff.algorithm=fastest"), "{err}");
    }
}
