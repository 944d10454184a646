//! Progress on standard error while a check runs: a reporter that listens to the runner's events.

use std::io::{IsTerminal, Write};

use std::path::Path;

use crate::report::{MutantResult, Timings};
use crate::run::Event;

/// Writes one line per phase; per mutant, a counter when standard error is a terminal, or with
/// `--verbose` a line with its verdict and how it ran; with `--quiet`, nothing.
pub struct Console {
    live: bool,
    verbose: bool,
    quiet: bool,
}

impl Console {
    pub fn new(verbose: bool, quiet: bool) -> Console {
        Console { live: std::io::stderr().is_terminal(), verbose, quiet }
    }

    pub fn hear(&mut self, event: Event) {
        if self.quiet {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = match event {
            Event::BaselinePassed { duration, what } => {
                writeln!(err, "baseline: {what} passed unmutated in {:.2} s", duration.as_secs_f64())
            }
            Event::Note(text) => writeln!(err, "{text}"),
            Event::MutantsStarting { total, workers } => {
                let mutants = if total == 1 { "mutant" } else { "mutants" };
                let copies = if workers == 1 { "copy" } else { "parallel copies" };
                writeln!(err, "testing {total} {mutants} in {workers} {copies}")
            }
            Event::MutantFinished { result, path, done, total } if self.verbose => {
                writeln!(err, "[{done}/{total}] {}", verdict_line(result, path))
            }
            Event::MutantFinished { result, done, total, .. } if self.live => {
                let end = if done == total { "\n" } else { "" };
                write!(err, "\r[{done}/{total}] {:?}{:20}{end}", result.outcome.status, "")
            }
            Event::MutantFinished { .. } => Ok(()),
        };
    }
}

impl Console {
    /// The time each phase took, once the report is printed.
    pub fn finish(&self, timings: &Timings) {
        if self.quiet {
            return;
        }
        let seconds = |d: std::time::Duration| d.as_secs_f64();
        eprintln!(
            "phases: diff {:.2} s, mutants made {:.3} s, compile check {:.2} s (beside the baseline), baseline {:.2} s, mutants tested {:.2} s; total {:.2} s; peak memory {}",
            seconds(timings.diff),
            seconds(timings.generate),
            seconds(timings.compile),
            seconds(timings.baseline),
            seconds(timings.mutants),
            seconds(timings.wall),
            peak_memory().map_or("unknown".to_string(), |kib| format!("{:.1} MiB", kib as f64 / 1024.0)),
        );
    }
}

/// `Killed pkg/mod.py:14:9 replace + with - (swap, 12 ms)`; a mutant that fell back says why.
fn verdict_line(result: &MutantResult, path: &Path) -> String {
    let mutant = &result.planned.mutant;
    let outcome = &result.outcome;
    let how = match &outcome.record {
        Some(record) => match &record.fallback {
            Some(why) => format!("{}: {why}", record.how.name()),
            None => record.how.name().to_string(),
        },
        None => "not run".to_string(),
    };
    format!(
        "{} {}:{}:{} {} ({how}, {} ms)",
        result.verdict(),
        path.display(),
        mutant.start.line,
        mutant.start.column,
        mutant.description,
        outcome.duration.as_millis()
    )
}

/// This process's peak resident set size in KiB (Linux: VmHWM in /proc/self/status).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
