//! Corpus check: mutants of the crates in the local cargo registry still parse.

use std::fs;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mutators::rust::{executable_lines, mutate};
use mutators::{Mutant, MutateError};
use syn::spanned::Spanned;

/// At most this many mutants per file are re-parsed, evenly spread over the file;
/// `MUTDELTA_CORPUS_CAP=<n>` changes it.
const MUTANTS_PER_FILE: usize = 40;

/// About this many megabytes of source are mutated, in files evenly spread over the
/// registry (a debug build mutates some 3 MB a second); `MUTDELTA_CORPUS_MB=<n>` changes it,
/// a large n takes every file.
const MEGABYTES: usize = 12;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[derive(Default)]
struct Tally {
    files: usize,
    not_utf8: usize,
    /// Files syn itself cannot parse: newer syntax, or test fixtures that are meant not to.
    unparsable: usize,
    /// Files syn parses but `mutate` rejected: a bug.
    wrongly_rejected: Vec<String>,
    mutants: usize,
    by_family: Vec<(&'static str, usize)>,
    /// Mutants whose shape breaks what their family promises, and other inconsistencies.
    broken: Vec<String>,
    checked: usize,
    reparse_failures: Vec<String>,
    generating: Duration,
    reparsing: Duration,
}

#[test]
fn registry_mutants_parse() {
    let started = Instant::now();
    let crates = registry_crates();
    let all: Vec<PathBuf> = crates.iter().flat_map(|root| rust_files(root)).collect();
    assert!(
        all.len() > 100,
        "only {} .rs files under {}: run `cargo fetch` so the workspace's dependencies are in the registry",
        all.len(),
        registry_src().display()
    );
    let (sample, stride, total_bytes) = sample_files(&all, setting("MUTDELTA_CORPUS_MB", MEGABYTES) << 20);
    println!(
        "registry: {} ({} crates, {} .rs files, {} MB)",
        registry_src().display(),
        crates.len(),
        all.len(),
        total_bytes >> 20
    );
    println!("sampled: {} of {} files, one in {stride}, in path order", sample.len(), all.len());
    let cap = setting("MUTDELTA_CORPUS_CAP", MUTANTS_PER_FILE);
    let mut tally = Tally::default();
    for path in &sample {
        check_file(path, cap, &mut tally);
    }
    report(&tally, cap, started.elapsed());

    assert!(tally.files > 100, "too few files parsed: {}", tally.files);
    assert!(tally.wrongly_rejected.is_empty(), "files syn parses but mutate rejects");
    assert!(tally.broken.is_empty(), "mutants not shaped as their family promises");
    assert!(tally.reparse_failures.is_empty(), "mutants that no longer parse");
    assert!(tally.checked > 5_000, "only {} mutants re-parsed", tally.checked);
}

/// Every `stride`th file, the stride chosen so that the sample holds about `budget` bytes.
fn sample_files(all: &[PathBuf], budget: usize) -> (Vec<PathBuf>, usize, usize) {
    let total: usize = all.iter().map(|path| fs::metadata(path).map_or(0, |m| m.len() as usize)).sum();
    let stride = total.div_ceil(budget.max(1)).max(1);
    (all.iter().step_by(stride).cloned().collect(), stride, total)
}

fn check_file(path: &Path, cap: usize, tally: &mut Tally) {
    let Ok(source) = fs::read_to_string(path) else {
        tally.not_utf8 += 1;
        return;
    };
    let generating = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(|| mutate_all(&source)));
    let found = result.unwrap_or_else(|_| panic!("mutate panicked on {}", path.display()));
    tally.generating += generating.elapsed();
    let (mutants, executable_lines_agree) = match found {
        Ok(found) => found,
        Err(err) => {
            if syn::parse_file(&source).is_ok() {
                tally.wrongly_rejected.push(format!("{}: {err}", path.display()));
            } else {
                tally.unparsable += 1;
            }
            return;
        }
    };
    tally.files += 1;
    tally.mutants += mutants.len();
    if !executable_lines_agree {
        tally
            .broken
            .push(format!("{}: mutate and executable_lines disagree on executable lines", path.display()));
    }
    for m in &mutants {
        if let Some(problem) = broken_promise(&source, m) {
            tally.broken.push(format!("{}: {problem}: {m:?}", path.display()));
        }
        match tally.by_family.iter_mut().find(|(family, _)| *family == m.mutator().name()) {
            Some((_, count)) => *count += 1,
            None => tally.by_family.push((m.mutator().name(), 1)),
        }
    }
    let reparsing = Instant::now();
    let items = Items::of(&source);
    for m in spread(mutants, cap) {
        tally.checked += 1;
        if let Err(err) = items.reparse(&source, &m) {
            let what = format!(
                "{}:{} {} {:?} -> {:?}: {err}",
                path.display(),
                m.line,
                m.mutator().name(),
                m.original,
                m.replacement
            );
            tally.reparse_failures.push(what);
        }
    }
    proc_macro2::extra::invalidate_current_thread_spans();
    tally.reparsing += reparsing.elapsed();
}

/// Mutants of every line of `source`, and whether the executable lines agree.
fn mutate_all(source: &str) -> Result<(Vec<Mutant>, bool), MutateError> {
    let lines: Vec<usize> = (1..=source.lines().count().max(1)).collect();
    let found = mutate(source, &lines)?;
    let agree = found.executable_lines == executable_lines(source)?;
    Ok((found.mutants, agree))
}

/// What is wrong with a mutant's shape, given what its family promises.
fn broken_promise(source: &str, m: &Mutant) -> Option<&'static str> {
    if source[m.span.clone()] != m.original {
        return Some("original is not the text at the span");
    }
    if m.original == m.replacement {
        return Some("replacement equals original");
    }
    let shape_ok = match m.mutator().name() {
        "StatementDeletion" => m.original.ends_with(';') && m.replacement.is_empty(),
        "MatchArmDeletion" => m.original.contains("=>") && m.replacement.is_empty(),
        // A body's statements, from the first to the last: braces (and blanks or comments)
        // just outside them.
        // A body's statements, from the first to the last: braces (and blanks, comments or
        // inner attributes) just outside them.
        "FunctionBody" => {
            let before = without_inner_attributes(&source[..m.span.start]);
            let after = source[m.span.end..].trim_start();
            (before.ends_with('{')
                || before.ends_with("*/")
                || before.lines().last().is_some_and(|l| l.contains("//")))
                && (after.starts_with('}') || after.starts_with("//") || after.starts_with("/*"))
        }
        "UnaryOperator" => m.original.starts_with(['-', '!']) && m.replacement.trim().is_empty(),
        "StringLiteral" => m.original.ends_with(['"', '#']) && m.replacement.trim() == "\"\"",
        "ConditionForcing" => matches!(m.replacement.trim(), "true" | "false"),
        _ => !m.original.contains('\n'),
    };
    (!shape_ok).then_some("not the shape its family makes")
}

/// `text` without the inner attributes (`#![allow(..)]`) and blanks it ends in.
fn without_inner_attributes(mut text: &str) -> &str {
    loop {
        let trimmed = text.trim_end();
        let attribute = trimmed.rfind("#![").filter(|&at| {
            trimmed.ends_with(']')
                && syn::parse::Parser::parse_str(syn::Attribute::parse_inner, &trimmed[at..]).is_ok()
        });
        match attribute {
            Some(at) => text = &trimmed[..at],
            None => return trimmed,
        }
    }
}

/// What an item of a file was parsed as, to parse its mutated text the same way.
#[derive(Clone, Copy)]
enum Kind {
    Item,
    ImplItem,
    TraitItem,
}

/// The byte ranges of a file's items, at every depth of modules, impls and traits: a mutant
/// is re-parsed within the smallest item holding it, which says as much as re-parsing the
/// whole file (whether code parses never depends on the items around it) in far less time.
struct Items {
    ranges: Vec<(Range<usize>, Kind)>,
}

impl Items {
    fn of(source: &str) -> Self {
        let mut items = Items { ranges: Vec::new() };
        // syn leaves a byte order mark and a shebang out of its spans: such files are whole.
        let shebang = source.starts_with("#!") && !source[2..].trim_start().starts_with('[');
        if !source.starts_with('\u{feff}') && !shebang {
            if let Ok(file) = syn::parse_file(source) {
                items.add(&file.items);
            }
        }
        items
    }

    fn add(&mut self, items: &[syn::Item]) {
        for item in items {
            self.ranges.push((item.span().byte_range(), Kind::Item));
            match item {
                syn::Item::Mod(module) => {
                    self.add(module.content.as_ref().map_or(&[][..], |(_, items)| items))
                }
                syn::Item::Impl(block) => {
                    self.ranges.extend(block.items.iter().map(|i| (i.span().byte_range(), Kind::ImplItem)));
                }
                syn::Item::Trait(block) => {
                    self.ranges.extend(block.items.iter().map(|i| (i.span().byte_range(), Kind::TraitItem)));
                }
                _ => {}
            }
        }
    }

    /// Parses the mutated text of the smallest item holding the mutant, or of the whole file.
    fn reparse(&self, source: &str, m: &Mutant) -> syn::Result<()> {
        let holders = self.ranges.iter().filter(|(r, _)| r.start <= m.span.start && m.span.end <= r.end);
        let Some((range, kind)) = holders.min_by_key(|(r, _)| r.len()) else {
            return syn::parse_file(&m.apply(source)).map(drop);
        };
        let text = format!(
            "{}{}{}",
            &source[range.start..m.span.start],
            m.replacement,
            &source[m.span.end..range.end]
        );
        match kind {
            Kind::Item => syn::parse_str::<syn::Item>(&text).map(drop),
            Kind::ImplItem => syn::parse_str::<syn::ImplItem>(&text).map(drop),
            Kind::TraitItem => syn::parse_str::<syn::TraitItem>(&text).map(drop),
        }
    }
}

/// At most `cap` items, evenly spread over `items`.
fn spread<T>(items: Vec<T>, cap: usize) -> Vec<T> {
    let n = items.len();
    if n <= cap {
        return items;
    }
    items.into_iter().enumerate().filter(|(i, _)| i * cap / n != (i + 1) * cap / n).map(|(_, m)| m).collect()
}

fn report(tally: &Tally, cap: usize, took: Duration) {
    println!(
        "files: {} parsed, {} unparsable by syn skipped, {} not UTF-8 skipped, {} wrongly rejected",
        tally.files,
        tally.unparsable,
        tally.not_utf8,
        tally.wrongly_rejected.len()
    );
    println!("mutants: {} generated in {:?}, every line requested", tally.mutants, tally.generating);
    let mut families = tally.by_family.clone();
    families.sort();
    let families: Vec<String> = families.iter().map(|(family, n)| format!("{family} {n}")).collect();
    println!("  by family: {}", families.join(", "));
    println!(
        "re-parsed: {} (up to {cap} per file, evenly spread, each within its item) in {:?}; {} failed",
        tally.checked,
        tally.reparsing,
        tally.reparse_failures.len()
    );
    println!("broken promises: {}", tally.broken.len());
    for failure in tally.reparse_failures.iter().chain(&tally.wrongly_rejected).chain(&tally.broken).take(20)
    {
        println!("  {failure}");
    }
    println!("total time {took:?}");
}

/// `$CARGO_HOME/registry/src`, or `~/.cargo/registry/src`.
fn registry_src() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").expect("HOME or CARGO_HOME is set");
        PathBuf::from(home).join(".cargo")
    });
    cargo_home.join("registry").join("src")
}

/// Every crate folder `registry/src/<index>/<crate-version>`, sorted.
fn registry_crates() -> Vec<PathBuf> {
    let src = registry_src();
    let indexes =
        fs::read_dir(&src).unwrap_or_else(|e| panic!("no cargo registry at {}: {e}", src.display()));
    let mut crates: Vec<PathBuf> = indexes
        .flatten()
        .flat_map(|index| fs::read_dir(index.path()).into_iter().flatten().flatten())
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    crates.sort();
    crates
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
