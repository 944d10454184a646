//! The process exit statuses and what each one means.

/// How a mutdelta run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every mutant was caught, ignored or unviable, or there was nothing to mutate.
    Clean = 0,
    /// Some added line has a mutant that no test caught (or whose test run broke).
    Survivors = 1,
    /// Bad input or a broken set-up: nothing was proven.
    Error = 2,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted = 130,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}
