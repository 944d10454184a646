//! How long the mutators take on a 2,000-line file, and on one generated function of 1,000, 10,000 and 50,000 lines (the time should grow with the lines, not faster), as the median of repeated runs (`cargo bench -p mutators`).

use std::time::{Duration, Instant};

const RUNS: usize = 21;

fn median_time(runs: usize, mut run: impl FnMut() -> usize) -> (Duration, usize) {
    let mut times = Vec::with_capacity(runs);
    let mut mutants = 0;
    for _ in 0..runs {
        let started = Instant::now();
        mutants = run();
        times.push(started.elapsed());
    }
    times.sort();
    (times[runs / 2], mutants)
}

/// One Python function of `lines` lines, every one added: generated code, the giant change.
fn giant_function(lines: usize) {
    let body: String =
        (0..lines - 2).map(|n| format!("    y = y + x * {} - (x > {} and 1)\n", n % 97, n % 13)).collect();
    let source = format!("def f(x):\n{body}    return y\n");
    let added: Vec<usize> = (1..=lines).collect();
    let runs = if lines > 10_000 { 5 } else { RUNS };
    let (median, mutants) =
        median_time(runs, || mutators::python::mutate(&source, &added).unwrap().mutants.len());
    let per_line = median / lines as u32;
    println!("python, one function: {lines} lines, {mutants} mutants, median {median:?} over {runs} runs ({per_line:?} a line)");
}

fn report(language: &str, chunk: &str, mutate: fn(&str, &[usize]) -> usize) {
    let source = chunk.repeat(2000 / chunk.lines().count());
    let lines: Vec<usize> = (1..=2000).collect();
    let (median, mutants) = median_time(RUNS, || mutate(&source, &lines));
    println!("{language}: 2,000 lines, {mutants} mutants, median {median:?} over {RUNS} runs");
}

fn main() {
    report(
        "python",
        "def f(a, b=1):\n    \"\"\"Doc.\"\"\"\n    if a > b and not a in (1, 2):\n        a += b * 2 - 1\n    return [x for x in range(a) if x % 2 == 0]\n\n",
        |source, lines| mutators::python::mutate(source, lines).unwrap().mutants.len(),
    );
    report(
        "rust",
        "fn f(a: u32, b: u32) -> u32 {\n    if a > b && a % 2 == 0 {\n        g(a * 3 - 1);\n    }\n    a + b\n}\n\n",
        |source, lines| mutators::rust::mutate(source, lines).unwrap().mutants.len(),
    );
    for lines in [1_000, 10_000, 50_000] {
        giant_function(lines);
    }
}
