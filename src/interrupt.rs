//! The run's interrupt: set by the Ctrl-C / SIGTERM handler, seen by every worker and test process, and the error of a run stopped before any mutant was tested.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the Ctrl-C / SIGTERM handler; workers stop and kill their tests when they see it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The run was stopped by a signal before any mutant was tested.
#[derive(Debug, thiserror::Error)]
#[error("interrupted before any mutant was tested: nothing was tested yet, no report was written, and the temporary copies were removed")]
pub struct Interrupted;

/// True when `err` is the interrupt, or came while the run was being interrupted.
pub fn is_interruption(err: &anyhow::Error) -> bool {
    err.is::<Interrupted>() || INTERRUPTED.load(Ordering::SeqCst)
}
