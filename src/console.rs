//! Progress on standard error while a check runs, from the runner's events: a bar on a terminal, plain periodic lines elsewhere (the only user of indicatif).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::model::outcome::{MutantResult, Status};
use crate::model::report::Timings;
use crate::run::event::{Event, Phase};

/// The environment variable that sets how often a plain progress line is printed, in seconds.
pub const INTERVAL_VARIABLE: &str = "MUTDELTA_PROGRESS_INTERVAL";

/// How often a plain progress line is printed when the environment does not say.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);

/// The interval `MUTDELTA_PROGRESS_INTERVAL` asks for, or the default.
pub fn interval_from_env() -> Result<Duration> {
    let Some(value) = std::env::var_os(INTERVAL_VARIABLE) else {
        return Ok(DEFAULT_INTERVAL);
    };
    let text = value.to_string_lossy();
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(Duration::from_secs_f64(seconds)),
        _ => bail!(
            "{INTERVAL_VARIABLE} is {text:?}: set it to a number of seconds greater than 0, like 10 or 0.5, or unset it"
        ),
    }
}

/// Mutants done in the current round, of how many, and how many survived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub done: usize,
    pub total: usize,
    pub survived: usize,
}

/// Says each phase as it starts and how the mutants are going; with `--verbose` a line per
/// verdict; with `--quiet`, nothing. On a terminal (and `CI` unset) the progress is a bar,
/// elsewhere a line at most every `interval`.
pub struct Console {
    verbose: bool,
    quiet: bool,
    state: Arc<Mutex<Progress>>,
    /// Stops the ticker when dropped.
    ticker: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

/// What the progress shows, shared with the ticker thread.
struct Progress {
    /// `mutants`, `baseline (Python)`, `kill-loss audit, mutants`.
    label: String,
    /// Put before every label once the kill-loss audit started.
    prefix: &'static str,
    since: Instant,
    counts: Option<Counts>,
    bar: Option<ProgressBar>,
    last_line: Instant,
    interval: Duration,
}

impl Progress {
    fn line(&self) -> String {
        let label = match crate::run::event::stage() {
            Some(stage) if self.counts.is_none() => format!("{}, {stage}", self.label),
            _ => self.label.clone(),
        };
        progress_line(&label, self.counts, self.since.elapsed())
    }

    /// Prints `text` above the bar, or as a line of its own.
    fn say(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }
        self.last_line = Instant::now();
    }

    fn start(&mut self, label: &str, counts: Option<Counts>) {
        self.label = format!("{}{label}", self.prefix);
        self.since = Instant::now();
        self.counts = counts;
        if let Some(bar) = &self.bar {
            bar.reset();
            match counts {
                Some(counts) => {
                    bar.set_style(bar_style());
                    bar.set_length(counts.total as u64);
                }
                None => bar.set_style(spinner_style()),
            }
            bar.set_message(self.line());
        }
    }

    /// Called by the ticker: refreshes the bar, or prints a line when `interval` has passed.
    fn tick(&mut self) {
        match &self.bar {
            Some(bar) => bar.set_message(self.line()),
            None if self.last_line.elapsed() >= self.interval => {
                let line = self.line();
                self.say(&line);
            }
            None => {}
        }
    }
}

impl Console {
    pub fn new(verbose: bool, quiet: bool, interval: Duration) -> Console {
        let live = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
        let bar = (live && !quiet).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(spinner_style());
            bar.set_message("reading the change");
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        let state = Arc::new(Mutex::new(Progress {
            label: "reading the change".to_string(),
            prefix: "",
            since: Instant::now(),
            counts: None,
            bar,
            last_line: Instant::now(),
            interval,
        }));
        let ticker = (!quiet).then(|| {
            let (stop, stopped) = mpsc::channel::<()>();
            let state = Arc::clone(&state);
            let tick = interval.min(Duration::from_millis(500));
            let thread = std::thread::spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(tick) {
                    lock(&state).tick();
                }
            });
            (stop, thread)
        });
        Console { verbose, quiet, state, ticker }
    }

    pub fn hear(&mut self, event: Event) {
        if self.quiet {
            return;
        }
        let mut state = lock(&self.state);
        match event {
            Event::Phase(Phase::Audit) => {
                state.start(&phase_label(Phase::Audit), None);
                state.prefix = "kill-loss audit, ";
            }
            Event::Phase(Phase::Check) => state.prefix = "",
            Event::Phase(phase) => {
                state.start(&phase_label(phase), None);
                let line = format!("{}{}", state.prefix, phase_line(phase));
                state.say(&line);
            }
            Event::BaselinePassed { what, reused: true, .. } => state.say(&format!(
                "baseline: {what} passed unmutated (reused: an earlier run measured them on the same content)"
            )),
            Event::BaselinePassed { duration, what, reused: false } => {
                state.say(&format!("baseline: {what} passed unmutated in {:.2} s", duration.as_secs_f64()))
            }
            Event::Note(text) => state.say(&text),
            Event::MutantsStarting { total, workers } => {
                let label = if state.label.ends_with(&phase_label(Phase::SecondRound { open: 0 })) {
                    "second round, mutants"
                } else if state.label.ends_with(&phase_label(Phase::Confirming { count: 0 })) {
                    "confirming survivors, mutants"
                } else {
                    "mutants"
                };
                state.start(label, Some(Counts { done: 0, total, survived: 0 }));
                let mutants = if total == 1 { "mutant" } else { "mutants" };
                let copies = if workers == 1 { "copy" } else { "parallel copies" };
                state.say(&format!("testing {total} {mutants} in {workers} {copies}"));
            }
            Event::MutantFinished { result, path, done, total } => {
                let survived = result.outcome.status == Status::Survived;
                let counts = state.counts.get_or_insert(Counts { done, total, survived: 0 });
                counts.done = done;
                counts.total = total;
                counts.survived += usize::from(survived);
                if self.verbose {
                    let id = result.planned.id;
                    state.say(&format!("[{done}/{total}] #{id} {}", verdict_line(result, path)));
                }
                match &state.bar {
                    Some(bar) => {
                        bar.set_position(done as u64);
                        bar.set_message(state.line());
                    }
                    // The last verdict of a round always gets its line: the counts it ends on.
                    None if done == total || state.last_line.elapsed() >= state.interval => {
                        let line = state.line();
                        state.say(&line);
                    }
                    None => {}
                }
            }
        }
    }

    /// Stops the progress and clears the bar: called before the report is printed.
    pub fn settle(&mut self) {
        if let Some((stop, thread)) = self.ticker.take() {
            drop(stop);
            let _ = thread.join();
        }
        if let Some(bar) = lock(&self.state).bar.take() {
            bar.finish_and_clear();
        }
    }

    /// The time each phase took, once the report is printed.
    pub fn finish(&mut self, timings: &Timings) {
        self.settle();
        if self.quiet {
            return;
        }
        let seconds = |d: std::time::Duration| d.as_secs_f64();
        let mut extra = String::new();
        if !timings.compile.is_zero() {
            extra += &format!("compile check {:.2} s (beside the baseline), ", seconds(timings.compile));
        }
        if !timings.build.is_zero() {
            extra += &format!("build {:.2} s (in the baseline), ", seconds(timings.build));
        }
        let mut audit = String::new();
        if timings.audit_baseline.is_zero() && timings.audit_mutants.is_zero() {
            if !timings.audit.is_zero() {
                audit = format!(", kill-loss audit {:.2} s (no test run)", seconds(timings.audit));
            }
        } else {
            audit = format!(
                ", kill-loss audit {:.2} s (baseline {:.2} s, mutants tested {:.2} s)",
                seconds(timings.audit),
                seconds(timings.audit_baseline),
                seconds(timings.audit_mutants)
            );
        }
        eprintln!(
            "phases: diff {:.2} s, mutants made {:.3} s, {extra}baseline {:.2} s, mutants tested {:.2} s{audit}; total {:.2} s; peak memory {}",
            seconds(timings.diff),
            seconds(timings.generate),
            seconds(timings.baseline),
            seconds(timings.mutants),
            seconds(timings.wall),
            peak_memory().map_or("unknown".to_string(), |kib| format!("{:.1} MiB", kib as f64 / 1024.0)),
        );
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.settle();
    }
}

/// The progress is only ever printed whole: a thread that panicked mid-line leaves it usable.
fn lock(state: &Mutex<Progress>) -> MutexGuard<'_, Progress> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {wide_msg}").expect("a valid template")
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{bar:30}] {wide_msg}")
        .expect("a valid template")
        .progress_chars("=> ")
}

/// What a phase is called in the progress lines.
fn phase_label(phase: Phase) -> String {
    match phase {
        Phase::Baseline(language) => format!("baseline ({})", language.display),
        Phase::Workers { .. } => "copies".to_string(),
        Phase::SecondRound { .. } => "second round".to_string(),
        Phase::Confirming { .. } => "confirming survivors".to_string(),
        Phase::Audit => "kill-loss audit".to_string(),
        Phase::Check => "mutants".to_string(),
    }
}

/// The line that says a phase has started.
fn phase_line(phase: Phase) -> String {
    match phase {
        Phase::Baseline(language) => format!("baseline: {} ({})", language.baseline_words, language.display),
        Phase::Workers { count: 1 } => "preparing a copy to test the mutants in".to_string(),
        Phase::Workers { count } => format!("preparing {count} parallel copies to test the mutants in"),
        Phase::SecondRound { open } => format!(
            "second round: looking in the rest of the test suite for tests of the {open} {} that survived or that no test ran",
            if open == 1 { "mutant" } else { "mutants" }
        ),
        Phase::Confirming { count } => format!(
            "confirming {count} {} against the whole test suite, as it runs",
            if count == 1 { "survivor" } else { "survivors" }
        ),
        Phase::Audit => "kill-loss audit".to_string(), // its own notes say what it does
        Phase::Check => String::new(), // never said
    }
}

/// `mutants: 12/40 done, 2 survived, 31 s elapsed, about 1 m 10 s left`, or for a phase
/// without mutants, `baseline (Python): 31 s elapsed`.
pub fn progress_line(label: &str, counts: Option<Counts>, elapsed: Duration) -> String {
    let Some(Counts { done, total, survived }) = counts else {
        return format!("{label}: {} elapsed", human(elapsed));
    };
    let mut line = format!("{label}: {done}/{total} done, {survived} survived, {} elapsed", human(elapsed));
    if done > 0 && done < total {
        let left = elapsed.mul_f64((total - done) as f64 / done as f64);
        line.push_str(&format!(", about {} left", human(left)));
    }
    line
}

/// `31 s`, `1 m 10 s`, `2 h 5 m`.
fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} m {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} m", seconds / 3600, seconds % 3600 / 60),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_line_counts_the_round_and_estimates_what_is_left_from_the_pace_so_far() {
        let counts = Counts { done: 12, total: 40, survived: 2 };
        assert_eq!(
            progress_line("mutants", Some(counts), Duration::from_secs(30)),
            "mutants: 12/40 done, 2 survived, 30 s elapsed, about 1 m 10 s left"
        );
        let done = Counts { done: 40, total: 40, survived: 3 };
        assert_eq!(
            progress_line("mutants", Some(done), Duration::from_secs(3700)),
            "mutants: 40/40 done, 3 survived, 1 h 1 m elapsed",
            "nothing is left once every mutant is done"
        );
        let none = Counts { done: 0, total: 5, survived: 0 };
        assert_eq!(
            progress_line("second round, mutants", Some(none), Duration::from_secs(3)),
            "second round, mutants: 0/5 done, 0 survived, 3 s elapsed",
            "no estimate before the first verdict"
        );
        assert_eq!(
            progress_line("baseline (Rust)", None, Duration::from_secs(125)),
            "baseline (Rust): 2 m 5 s elapsed"
        );
    }
}
