//! How long the mutators take on a 2,000-line file, as the median of repeated runs (`cargo bench -p mutators`).

use std::time::{Duration, Instant};

const RUNS: usize = 21;

fn median_time(mut run: impl FnMut() -> usize) -> (Duration, usize) {
    let mut times = Vec::with_capacity(RUNS);
    let mut mutants = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        mutants = run();
        times.push(started.elapsed());
    }
    times.sort();
    (times[RUNS / 2], mutants)
}

fn report(language: &str, chunk: &str, mutate: fn(&str, &[usize]) -> usize) {
    let source = chunk.repeat(2000 / chunk.lines().count());
    let lines: Vec<usize> = (1..=2000).collect();
    let (median, mutants) = median_time(|| mutate(&source, &lines));
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
}
