//! Corpus check: mutants of this machine's Python standard library still compile.

mod support;

use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mutators::python::{executable_lines, mutate};
use mutators::{Mutant, MutateError};
use support::{json_string, run_python};

/// At most this many mutants per file are compiled, evenly spread over the file;
/// `MUTDELTA_CORPUS_CAP=<n>` changes it (a large n checks every mutant, in minutes).
const MUTANTS_PER_FILE: usize = 60;

fn mutants_per_file() -> usize {
    std::env::var("MUTDELTA_CORPUS_CAP").ok().and_then(|v| v.parse().ok()).unwrap_or(MUTANTS_PER_FILE)
}

/// Compiles every sampled mutant. To keep this fast, a mutant is compiled within the
/// top-level statement that holds it (plus the file's `__future__` imports) rather than
/// as the whole file, and within a class, with only the class member that holds it:
/// whether code compiles never depends on other top-level statements or class members.
const CHECKER: &str = r#"
import ast, bisect, json, re, sys, warnings
warnings.simplefilter("ignore")

class Chunks:
    def __init__(self, data, tree):
        self.data = data
        self.starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]
        self.top = [(self.span(n), n) for n in tree.body]
        futures = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
        self.prefix = b"".join(self.data[slice(*self.span(n))] for n in futures)

    def span(self, node):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno
        end = self.starts[last] if last < len(self.starts) else len(self.data)
        return self.starts[first - 1], end

    def holder(self, spanned, start, end):
        i = bisect.bisect_right([s for (s, _), _ in spanned], start) - 1
        if i >= 0 and spanned[i][0][0] <= start and end <= spanned[i][0][1]:
            return spanned[i]
        return None

    def pieces(self, span, node, start, end):
        s, e = span
        if isinstance(node, ast.ClassDef):
            members = [(self.span(n), n) for n in node.body]
            held = self.holder(members, start, end)
            if held and members[0][0][0] > s:
                return [(s, members[0][0][0])] + self.pieces(*held, start, end)
        return [(s, e)]

    def mutated(self, start, end, replacement):
        held = self.holder(self.top, start, end)
        if held is None:
            return self.data[:start] + replacement + self.data[end:]
        out = [self.prefix, b"\n"] if self.prefix else []
        for s, e in self.pieces(*held, start, end):
            if s <= start < e:
                out += [self.data[s:start], replacement, self.data[end:e]]
            else:
                out.append(self.data[s:e])
        return b"".join(out)

files = mutants = compiled = 0
failures = []
for job in json.load(sys.stdin):
    path = job["path"]
    data = open(path, "rb").read()
    try:
        tree = ast.parse(data, path)
        compile(tree, path, "exec")
    except (SyntaxError, ValueError):
        print("UNCOMPILABLE", path)
        continue
    files += 1
    if not job["mutants"]:
        continue
    chunks = Chunks(data, tree)
    for start, end, replacement, where in job["mutants"]:
        mutants += 1
        try:
            compile(chunks.mutated(start, end, replacement.encode()), path, "exec")
            compiled += 1
        except (SyntaxError, ValueError) as e:
            failures.append(f"{path}:{where} -> {e}")
print("FAILURES", len(failures))
for f in failures[:20]:
    print("  " + f)
print(f"SUMMARY {files} {mutants} {compiled}")
"#;

struct Job {
    path: PathBuf,
    /// Every mutant the file has, and the sample sent to python3.
    total: usize,
    sample: Vec<Mutant>,
}

#[test]
fn stdlib_mutants_compile() {
    let started = Instant::now();
    let stdlib = stdlib_dir();
    let paths = python_files(&stdlib);
    let cap = mutants_per_file();
    let mut jobs = Vec::new();
    let mut syntax_errors = Vec::new();
    let mut not_utf8 = 0;
    for path in paths {
        let Ok(source) = fs::read_to_string(&path) else {
            not_utf8 += 1;
            continue;
        };
        let result = panic::catch_unwind(AssertUnwindSafe(|| mutate_all(&source)));
        let found = result.unwrap_or_else(|_| panic!("mutate panicked on {}", path.display()));
        match found {
            Ok(mutants) => {
                let total = mutants.len();
                jobs.push(Job { path, total, sample: spread(mutants, cap) });
            }
            Err(err) => syntax_errors.push((path, err)),
        }
    }
    let generated = started.elapsed();

    let output = run_python(CHECKER, &jobs_json(&jobs, &syntax_errors));
    let uncompilable: Vec<&str> = output.lines().filter_map(|l| l.strip_prefix("UNCOMPILABLE ")).collect();
    let summary = output.lines().find_map(|l| l.strip_prefix("SUMMARY ")).expect("checker summary");
    let [files, mutants, compiled]: [usize; 3] =
        summary.split(' ').map(|n| n.parse().unwrap()).collect::<Vec<_>>().try_into().unwrap();
    let real_syntax_errors: Vec<_> =
        syntax_errors.iter().filter(|(path, _)| !uncompilable.contains(&path.to_str().unwrap())).collect();

    let all_mutants: usize = jobs.iter().map(|j| j.total).sum();
    println!("stdlib: {}", stdlib.display());
    println!(
        "files: {} compiled by python3 ({} not, {} not UTF-8 skipped); {} gave MutateError::Syntax",
        files,
        uncompilable.len(),
        not_utf8,
        real_syntax_errors.len()
    );
    println!(
        "mutants: {all_mutants} generated in {generated:?}; sampled up to {cap} per file, evenly spread"
    );
    println!("mutants: {mutants} checked, {compiled} compiled, {} not", mutants - compiled);
    print!(
        "{}",
        output
            .lines()
            .skip_while(|l| !l.starts_with("FAILURES"))
            .take_while(|l| !l.starts_with("SUMMARY"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    for (path, err) in &real_syntax_errors {
        println!("  syntax error: {}: {err}", path.display());
    }
    println!("total time {:?}", started.elapsed());

    assert!(files > 100, "too few stdlib files found in {}", stdlib.display());
    assert!(compiled * 100 >= mutants * 99, "fewer than 99% of mutants compile: {compiled}/{mutants}");
    assert!(
        real_syntax_errors.len() * 200 < files,
        "too many files rejected: {}/{files}",
        real_syntax_errors.len()
    );
}

/// Mutants of every executable line of `source`.
fn mutate_all(source: &str) -> Result<Vec<Mutant>, MutateError> {
    let lines = executable_lines(source)?;
    let found = mutate(source, &lines)?;
    assert_eq!(found.executable_lines, lines);
    for mutant in &found.mutants {
        assert_eq!(source[mutant.span.clone()], mutant.original);
        assert_ne!(mutant.original, mutant.replacement, "{mutant:?}");
    }
    Ok(found.mutants)
}

/// At most `cap` items, evenly spread over `items`.
fn spread<T>(items: Vec<T>, cap: usize) -> Vec<T> {
    let n = items.len();
    if n <= cap {
        return items;
    }
    items.into_iter().enumerate().filter(|(i, _)| i * cap / n != (i + 1) * cap / n).map(|(_, m)| m).collect()
}

fn jobs_json(jobs: &[Job], rejected: &[(PathBuf, MutateError)]) -> String {
    let mut entries = Vec::new();
    for job in jobs {
        let mutants: Vec<String> = job
            .sample
            .iter()
            .map(|m| {
                let label =
                    format!("{} {} {:?} -> {:?}", m.line, m.mutator().name(), m.original, m.replacement);
                format!(
                    "[{},{},{},{}]",
                    m.span.start,
                    m.span.end,
                    json_string(&m.replacement),
                    json_string(&label)
                )
            })
            .collect();
        entries.push(format!("{{\"path\":{},\"mutants\":[{}]}}", path_json(&job.path), mutants.join(",")));
    }
    for (path, _) in rejected {
        entries.push(format!("{{\"path\":{},\"mutants\":[]}}", path_json(path)));
    }
    format!("[{}]", entries.join(",\n"))
}

fn path_json(path: &Path) -> String {
    json_string(path.to_str().expect("UTF-8 path"))
}

/// The standard library, or the folder `MUTDELTA_CORPUS_DIR` names.
fn stdlib_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MUTDELTA_CORPUS_DIR") {
        return PathBuf::from(dir);
    }
    let script = "import sysconfig; print(sysconfig.get_paths()['stdlib'])";
    PathBuf::from(run_python(script, "").trim())
}

/// Every `.py` file under `dir`, sorted, outside `test`/`tests` folders and `site-packages`.
fn python_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if !matches!(name.to_str(), Some("test" | "tests" | "site-packages")) {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "py") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
