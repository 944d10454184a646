//! What one run of a mutant's tests came to: its status and why, read the same way for every language where the test tool does not matter.

use std::time::Duration;

use crate::model::outcome::{Outcome, Status};
use crate::model::record::{Bytes, Exit, Finished};

/// The verdict of a run whose reading does not depend on the test tool: it passed, did not
/// build, ran out of time or died of a signal. `None` when the tool's own exit code decides.
pub fn read_common(run: &Finished, timeout: Duration) -> Option<Outcome> {
    let (status, reason) = match &run.exit {
        Exit::Code(0) => (Status::Survived, "every test that runs this line passed".to_string()),
        Exit::Unviable => (Status::CompileError, format!("does not build: {}", first_error(&run.tail))),
        Exit::TimedOut => {
            (Status::Timeout, format!("the tests ran past the {:.1} s timeout", timeout.as_secs_f64()))
        }
        Exit::MemoryLimit(limit) => {
            return Some(Outcome {
                memory_limit: Some(*limit),
                ..Outcome::of_run(run, Status::Timeout, memory_limit_reason(*limit))
            })
        }
        Exit::Signal(signal) => (Status::Killed, died_of(*signal)),
        Exit::Interrupted => (Status::RuntimeError, "interrupted".to_string()),
        Exit::Code(_) => return None,
    };
    Some(Outcome::of_run(run, status, reason))
}

/// Why a test process that died of `signal` died, by the signal's name and what usually sends it.
fn died_of(signal: i32) -> String {
    let (name, cause) = match signal {
        4 => ("SIGILL", ": an illegal instruction, usually an explicit trap or a corrupted return address"),
        6 => ("SIGABRT", ": it aborted, usually a panic while panicking, a stack overflow or `abort()`"),
        7 => ("SIGBUS", ": a bus error, usually a memory-mapped file cut short"),
        8 => ("SIGFPE", ": an arithmetic fault, usually an integer division by zero in native code"),
        9 => ("SIGKILL", ": killed, often by the kernel's out-of-memory killer"),
        11 => {
            ("SIGSEGV", ": a segmentation fault, usually memory read out of bounds in unsafe or native code")
        }
        13 => ("SIGPIPE", ": it wrote to a pipe nobody reads"),
        15 => ("SIGTERM", ": something outside the tests asked it to stop"),
        _ => return format!("the test process died of signal {signal}"),
    };
    format!("the test process died of {name} (signal {signal}){cause}")
}

/// A mutant whose tests were stopped at the memory limit: it made them run away as a hang
/// does, so it counts as a Timeout, caught.
fn memory_limit_reason(limit: Bytes) -> String {
    format!("the tests grew past the {limit} memory limit and were stopped (set it with --memory-limit)")
}

/// The verdict of a user's `--test-cmd`: any non-zero exit is the mutant's doing.
pub fn read_command(run: &Finished, timeout: Duration) -> Outcome {
    read_common(run, timeout).unwrap_or_else(|| {
        let code = match run.exit {
            Exit::Code(code) => code,
            _ => unreachable!("read_common reads every other exit"),
        };
        Outcome::of_run(run, Status::Killed, format!("the test command exited with status {code}"))
    })
}

/// The first compiler error in a build's output.
fn first_error(output: &str) -> &str {
    output.lines().find(|line| line.starts_with("error")).unwrap_or_else(|| last_line(output)).trim()
}

/// The last non-blank line of some output.
pub fn last_line(text: &str) -> &str {
    text.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(exit: Exit, tail: &str) -> Finished {
        Finished { exit, duration: Duration::from_millis(7), tail: tail.to_string(), command: None }
    }

    #[test]
    fn a_passing_run_survives_and_a_failed_build_is_a_compile_error_with_its_first_error() {
        let passed = read_common(&finished(Exit::Code(0), ""), Duration::from_secs(1)).unwrap();
        assert_eq!((passed.status, passed.duration), (Status::Survived, Duration::from_millis(7)));
        let build = finished(Exit::Unviable, "   Compiling x\nerror[E0308]: mismatched types\nmore\n");
        let unviable = read_common(&build, Duration::from_secs(1)).unwrap();
        assert_eq!(unviable.status, Status::CompileError);
        assert_eq!(unviable.reason, "does not build: error[E0308]: mismatched types");
    }

    #[test]
    fn tests_stopped_at_the_memory_limit_are_a_timeout_that_names_the_limit() {
        let stopped =
            read_common(&finished(Exit::MemoryLimit(Bytes(300 << 20)), ""), Duration::from_secs(1)).unwrap();
        assert_eq!((stopped.status, stopped.memory_limit), (Status::Timeout, Some(Bytes(300 << 20))));
        assert_eq!(
            stopped.reason,
            "the tests grew past the 300 MiB memory limit and were stopped (set it with --memory-limit)"
        );
        let timed_out = read_common(&finished(Exit::TimedOut, ""), Duration::from_secs(1)).unwrap();
        assert_eq!((timed_out.status, timed_out.memory_limit), (Status::Timeout, None));
    }

    #[test]
    fn a_death_by_signal_is_killed_and_names_the_signal_and_its_usual_cause() {
        let read = |signal| read_common(&finished(Exit::Signal(signal), ""), Duration::from_secs(1)).unwrap();
        let aborted = read(6);
        assert_eq!(aborted.status, Status::Killed);
        assert_eq!(
            aborted.reason,
            "the test process died of SIGABRT (signal 6): it aborted, usually a panic while panicking, a stack overflow or `abort()`"
        );
        let named = [
            (4, "SIGILL (signal 4): an illegal instruction"),
            (7, "SIGBUS (signal 7): a bus error"),
            (8, "SIGFPE (signal 8): an arithmetic fault"),
            (9, "SIGKILL (signal 9): killed, often by the kernel's out-of-memory killer"),
            (11, "SIGSEGV (signal 11): a segmentation fault"),
            (13, "SIGPIPE (signal 13): it wrote to a pipe nobody reads"),
            (15, "SIGTERM (signal 15): something outside the tests asked it to stop"),
        ];
        for (signal, said) in named {
            let reason = read(signal).reason;
            assert!(reason.starts_with(&format!("the test process died of {said}")), "{reason}");
        }
        assert_eq!(read(40).reason, "the test process died of signal 40");
    }

    #[test]
    fn a_failing_exit_code_is_left_to_the_test_tool_except_for_a_users_command() {
        let failed = finished(Exit::Code(3), "x\n");
        assert!(read_common(&failed, Duration::from_secs(1)).is_none());
        let read = read_command(&failed, Duration::from_secs(1));
        assert_eq!(
            (read.status, read.reason.as_str()),
            (Status::Killed, "the test command exited with status 3")
        );
    }
}
