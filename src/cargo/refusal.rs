//! What Rust's unmutated runs say when they do not pass: cargo refusing the build before compiling anything, the crate not building, a package's tests failing.

use std::time::Duration;

use crate::model::record::{Exit, Finished};
use crate::run::require::Unmutated;

/// A cargo run that must pass before any mutant counts.
#[derive(Debug, Clone, Copy)]
pub enum CargoRun<'a> {
    /// The build of a cargo workspace's tests.
    Build,
    /// The tests of one cargo package.
    Tests(&'a str),
}

impl Unmutated for CargoRun<'_> {
    fn tests(&self) -> String {
        match self {
            CargoRun::Tests(package) => format!("the tests of {package}"),
            CargoRun::Build => "the tests".to_string(),
        }
    }

    fn refusal(&self, run: &Finished, _: Duration) -> Option<String> {
        if !matches!((&run.exit, self), (Exit::Unviable | Exit::Code(_), CargoRun::Build)) {
            return None;
        }
        Some(match cargo_refusal(&run.tail) {
            Some(error) => format!(
                "cargo refused to build the tests before compiling anything, saying `{error}`: that is about the command or its settings, not your code: check the features given (--features, --all-features, --no-default-features, or the configuration's) and that `cargo test --no-run` works in your checkout. Cargo's output ended with:\n{}",
                run.tail.trim_end()
            ),
            None => format!(
                "the crate does not build before any mutation: fix the build first. Cargo's output ended with:\n{}",
                run.tail.trim_end()
            ),
        })
    }
}

/// Cargo's own error when it stopped before any compiler or build script ran (an unknown
/// feature, an ambiguous package): its first `error:` line.
fn cargo_refusal(tail: &str) -> Option<&str> {
    let compiled = ["could not compile", "error[", "failed to run custom build command"];
    if compiled.iter().any(|sign| tail.contains(sign)) {
        return None;
    }
    tail.lines().find_map(|line| line.strip_prefix("error: ")).map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::require::passed;

    fn refusal(exit: Exit, tail: &str, run: CargoRun) -> String {
        let finished = Finished { exit, duration: Duration::ZERO, tail: tail.to_string(), command: None };
        passed(&finished, &run, Duration::from_secs(60)).unwrap_err().to_string()
    }

    #[test]
    fn each_cargo_refusal_says_what_to_do() {
        let failed = refusal(Exit::Code(101), "FAILED test_x\n", CargoRun::Tests("core"));
        assert!(failed.starts_with("the tests of core fail before any mutation"), "{failed}");
        assert!(refusal(Exit::Unviable, "", CargoRun::Build).starts_with("the crate does not build"));
        let compile_error = "error[E0308]: mismatched types\nerror: could not compile `x` (lib)\n";
        assert!(
            refusal(Exit::Unviable, compile_error, CargoRun::Build).starts_with("the crate does not build")
        );
        let unknown_feature = "error: none of the selected packages contains this feature: fast\n";
        let refused = refusal(Exit::Code(101), unknown_feature, CargoRun::Build);
        assert!(
            refused.starts_with("cargo refused to build the tests before compiling anything, saying `none of the selected packages contains this feature: fast`: "),
            "{refused}"
        );
        assert_eq!(
            refusal(Exit::TimedOut, "", CargoRun::Tests("core")),
            "the tests of core did not finish within 60 s before any mutation: make them faster or fix what hangs"
        );
        assert!(refusal(Exit::Unviable, "", CargoRun::Tests("core")).starts_with("the tests of core fail"));
        assert_eq!(
            refusal(Exit::TimedOut, "", CargoRun::Build),
            "the tests did not finish within 60 s before any mutation: make them faster or fix what hangs"
        );
    }
}
