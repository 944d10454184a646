//! Added lines that are old code reformatted or moved: token-equal, alone or as a run, to lines the same change removes.
//!
//! The rule:
//! - Lines are compared as tokens: whitespace and comments do not count; in Python a string is
//!   its prefix and value, so `'x'` and `"x"` are equal (in Rust `'x'` is a char: compared as
//!   written); a trailing comma before a closing bracket does not count, unless it makes a
//!   one-element tuple (`(x,)`, `a[x,]`).
//! - A *run* is a stretch of consecutive added (or removed) lines of one file. A match pairs the
//!   lines of an added run from a line's start with the lines of a removed run of the same
//!   language from a line's start, when their tokens are equal and both end at a line's end: one
//!   line with one line, or a re-wrapped signature (five lines) with the two it replaced. From
//!   each added line the longest match is taken.
//! - Each removed line is matched at most once.
//! - A match counts only if it holds at least three tokens: a lone `)`, `pass`, `return x` or
//!   `else:` equal to some removed line is new code; inside a longer match (a moved function, a
//!   list of short items) it is old code like its neighbours.
//! - A match counts only if its first added line lies in the same functions and types (by name,
//!   `impl Identifier` › `fn ptr_eq`) as its first removed line did: code moved into a function
//!   the change adds, or into another function, runs in new contexts and is new code. A whole
//!   function moved as it is starts outside itself on both sides, so it stays old code.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use mutators::Scope;

use crate::model::plan::Language;

/// A match is old code only with this many tokens: one line of them, or a run of shorter ones.
const MIN_TOKENS: usize = 3;

/// The added lines of one file, with their text.
#[derive(Debug, Clone)]
pub struct AddedFile<'a> {
    pub path: &'a Path,
    pub language: Language,
    /// Line number (1-based) to text.
    pub lines: BTreeMap<usize, &'a str>,
    /// Its functions and types.
    pub scopes: Vec<Scope>,
}

/// How many token comparisons the search for old code makes at most: past them, a giant
/// change's remaining added lines count as new code (mutated, never passed over unseen).
pub const MAX_STEPS: u64 = 200_000_000;

/// The added lines found to be old code, and where the search stopped if it ran out of steps.
#[derive(Debug, Default)]
pub struct OldCode {
    pub lines: BTreeMap<PathBuf, BTreeSet<usize>>,
    /// The first added line not looked at, when the search spent its steps.
    pub stopped_at: Option<(PathBuf, usize)>,
}

/// The added lines of `added` that are old code, per file: each equal, alone or in a run, to
/// lines of `removed` (old path to line number to text) in the same functions and types
/// (`removed_scopes`, by old path); in at most `max_steps` token comparisons.
pub fn old_code(
    added: &[AddedFile<'_>],
    removed: &BTreeMap<PathBuf, BTreeMap<usize, String>>,
    removed_scopes: &BTreeMap<PathBuf, Vec<Scope>>,
    languages: &[Language],
    max_steps: u64,
) -> OldCode {
    let mut removed_runs: Vec<Run> = Vec::new();
    for (path, lines) in removed {
        let Some(language) = Language::of(path, languages) else { continue };
        let lines: BTreeMap<usize, &str> = lines.iter().map(|(&n, text)| (n, text.as_str())).collect();
        let scopes = removed_scopes.get(path).map(Vec::as_slice).unwrap_or_default();
        removed_runs.extend(runs(&lines, language, scopes));
    }
    let mut search = Search {
        starts: Starts::index(&removed_runs),
        used: removed_runs.iter().map(|run| vec![false; run.lines.len()]).collect(),
        removed_runs,
        steps_left: max_steps,
    };
    let mut old = OldCode::default();
    for file in added {
        let mut passed = BTreeSet::new();
        for run in runs(&file.lines, file.language, &file.scopes) {
            let mut at = 0;
            while at < run.lines.len() {
                if run.lines[at].tokens.is_empty() {
                    at += 1;
                    continue;
                }
                match search.best_match(file.language, &run.lines[at..]) {
                    Err(Spent) => {
                        old.stopped_at = Some((file.path.to_path_buf(), run.lines[at].number));
                        break;
                    }
                    Ok(Some(added_len)) => {
                        passed.extend(run.lines[at..at + added_len].iter().map(|line| line.number));
                        at += added_len;
                    }
                    Ok(None) => at += 1,
                }
            }
            if old.stopped_at.is_some() {
                break;
            }
        }
        if !passed.is_empty() {
            old.lines.insert(file.path.to_path_buf(), passed);
        }
        if old.stopped_at.is_some() {
            break;
        }
    }
    old
}

/// The search's step budget is spent.
struct Spent;

/// The removed lines, which of them a match has taken, and the steps left.
struct Search {
    removed_runs: Vec<Run>,
    starts: Starts,
    used: Vec<Vec<bool>>,
    steps_left: u64,
}

impl Search {
    /// The longest match of `added` from its first line (its length in added lines), the
    /// removed lines it takes marked used.
    fn best_match(&mut self, language: Language, added: &[Line]) -> Result<Option<usize>, Spent> {
        let Search { removed_runs, starts, used, steps_left } = self;
        let best = starts
            .candidates(language, &added[0])
            // The hashes hold the context too; this keeps a collision from crossing functions.
            .filter(|&(r, l)| removed_runs[r].lines[l].context == added[0].context)
            .filter_map(|(r, l)| {
                longest_match(added, &removed_runs[r].lines[l..], &used[r][l..], steps_left)
                    .map(|(added_len, removed_len)| (added_len, r, l, removed_len))
            })
            .filter(|&(added_len, ..)| {
                added[..added_len].iter().map(|line| line.tokens.len()).sum::<usize>() >= MIN_TOKENS
            })
            .max_by_key(|&(added_len, r, l, _)| (added_len, std::cmp::Reverse((r, l))));
        if *steps_left == 0 {
            return Err(Spent);
        }
        Ok(best.map(|(added_len, r, l, removed_len)| {
            used[r][l..l + removed_len].iter_mut().for_each(|slot| *slot = true);
            added_len
        }))
    }
}

/// Where each removed line starts, found from an added line without trying every removed line:
/// a match from an added line's start to a removed line's start needs one of the two first lines
/// to begin the other (a line moved as it is, a statement re-wrapped over more or fewer lines).
/// Keys are hashes of token prefixes with the language and the functions the line lies in, so a
/// candidate is still checked token by token.
struct Starts {
    /// By the hash of a removed line's whole first line: those an added line begins with.
    whole: HashMap<u64, Vec<(usize, usize)>>,
    /// By the hash of each shorter start of a removed line: those that begin with an added line.
    begun: HashMap<u64, Vec<(usize, usize)>>,
}

impl Starts {
    fn index(runs: &[Run]) -> Starts {
        let mut starts = Starts { whole: HashMap::new(), begun: HashMap::new() };
        for (run_index, run) in runs.iter().enumerate() {
            for (line_index, line) in run.lines.iter().enumerate() {
                let at = (run_index, line_index);
                let hashes = prefix_hashes(run.language, line);
                if let Some((&last, shorter)) = hashes.split_last() {
                    starts.whole.entry(last).or_default().push(at);
                    for &hash in shorter {
                        starts.begun.entry(hash).or_default().push(at);
                    }
                }
            }
        }
        starts
    }

    /// The removed lines that may start a match with `line` (a superset: each is still checked).
    fn candidates(&self, language: Language, line: &Line) -> impl Iterator<Item = (usize, usize)> + '_ {
        let hashes = prefix_hashes(language, line);
        let begun = hashes.last().and_then(|whole| self.begun.get(whole));
        let whole = hashes.into_iter().filter_map(|hash| self.whole.get(&hash));
        whole.chain(begun).flatten().copied()
    }
}

/// The hashes of `line`'s first token, its first two, ... its whole line, each with its language
/// and the functions and types it lies in.
fn prefix_hashes(language: Language, line: &Line) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut seed = std::hash::DefaultHasher::new();
    (language.name, &line.context).hash(&mut seed);
    let mut previous = seed.finish();
    line.tokens
        .iter()
        .map(|token| {
            let mut hasher = std::hash::DefaultHasher::new();
            (previous, token).hash(&mut hasher);
            previous = hasher.finish();
            previous
        })
        .collect()
}

/// The longest match of `added` from its first line with `removed` from its first line, as
/// (added lines, removed lines), every removed line of it unused; each token compared takes a
/// step of `steps_left`, and none left ends the match.
fn longest_match(
    added: &[Line],
    removed: &[Line],
    used: &[bool],
    steps_left: &mut u64,
) -> Option<(usize, usize)> {
    let (mut a, mut r) = (0, 0);
    let (mut a_token, mut r_token) = (0, 0);
    let mut best = None;
    loop {
        // Step over ended lines; a match ends where both sides end a line together.
        while a < added.len() && a_token == added[a].tokens.len() {
            a += 1;
            a_token = 0;
        }
        while r < removed.len() && r_token == removed[r].tokens.len() {
            r += 1;
            r_token = 0;
        }
        let a_at_start = a_token == 0;
        let r_at_start = r_token == 0;
        if a_at_start && r_at_start && (a, r) != (0, 0) {
            best = Some((a, r));
        }
        if a == added.len() || r == removed.len() || used[r] {
            // One run ends where the other's line has only closing brackets left: the diff
            // showed that side's bracket on a line it kept.
            let closers_only = |line: &Line, from: usize| line.tokens[from..].iter().all(|t| is_closer(t));
            if a == added.len() && r < removed.len() && !used[r] && closers_only(&removed[r], r_token) {
                return Some((a, r + 1));
            }
            if r == removed.len() && a < added.len() && closers_only(&added[a], a_token) {
                return Some((a + 1, r));
            }
            return best;
        }
        if *steps_left == 0 || added[a].tokens[a_token] != removed[r].tokens[r_token] {
            return best;
        }
        *steps_left -= 1;
        a_token += 1;
        r_token += 1;
    }
}

/// One line as tokens, and the functions and types it lies in.
#[derive(Debug, Clone)]
struct Line {
    number: usize,
    tokens: Vec<String>,
    context: Vec<String>,
}

/// Consecutive lines of one file.
#[derive(Debug, Clone)]
struct Run {
    language: Language,
    lines: Vec<Line>,
}

/// The stretches of consecutive line numbers in `lines`, tokenized; lines without tokens
/// (blank, comment only) are kept in a run but match nothing.
fn runs(lines: &BTreeMap<usize, &str>, language: Language, scopes: &[Scope]) -> Vec<Run> {
    let mut runs: Vec<Vec<(usize, &str)>> = Vec::new();
    let mut previous = None;
    for (&number, &text) in lines {
        if previous != Some(number.wrapping_sub(1)) {
            runs.push(Vec::new());
        }
        runs.last_mut().expect("pushed above").push((number, text));
        previous = Some(number);
    }
    runs.into_iter()
        .map(|run| {
            let mut lines: Vec<Line> = run
                .iter()
                .map(|&(number, text)| Line {
                    number,
                    tokens: tokens(text, language),
                    context: mutators::context_of(scopes, number).into_iter().map(str::to_string).collect(),
                })
                .collect();
            drop_trailing_commas(&mut lines, language);
            // Lines left without tokens cannot start or end a match: they are skipped inside one.
            Run { language, lines }
        })
        .collect()
}

/// The tokens of one line: words, literals (as the language reads them), single punctuation
/// marks.
fn tokens(text: &str, language: Language) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if starts_at(&chars, i, language.lexing.line_comment) {
            break;
        } else if let Some((token, end)) = (language.lexing.literal)(&chars, i) {
            out.push(token);
            i = end;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// Removes each comma right before a closing bracket of `lines` (one stream over the run),
/// unless the comma makes a one-element tuple. A bracket opened before the run counts its
/// commas from the run's start; a comma ending the run inside a bracket still open, or right
/// after one closed in it, is taken for one before a closing bracket on a line the change kept.
fn drop_trailing_commas(lines: &mut [Line], language: Language) {
    struct Open {
        /// Whether a trailing comma can go: a call, a definition, a list, a set or a block.
        droppable: bool,
        commas: usize,
    }
    let positions: Vec<(usize, usize)> =
        lines.iter().enumerate().flat_map(|(l, line)| (0..line.tokens.len()).map(move |t| (l, t))).collect();
    let mut stack: Vec<Open> = Vec::new();
    // The commas of the bracket the run started in, which it may close.
    let mut outer_commas = 0;
    let mut drop: Vec<(usize, usize)> = Vec::new();
    for (index, &(l, t)) in positions.iter().enumerate() {
        let token = lines[l].tokens[t].as_str();
        let before = index.checked_sub(1).map(|p| lines[positions[p].0].tokens[positions[p].1].as_str());
        match token {
            "(" | "[" | "{" => {
                // Rust generics end in `>` before a call's or definition's parenthesis.
                let after_name = before.is_some_and(|b| {
                    b == ")"
                        || b == "]"
                        || (b == ">" && language.lexing.generics)
                        || (is_word(b) && !is_keyword(b, language))
                });
                let droppable = match token {
                    "(" => after_name,
                    "[" => !after_name,
                    _ => true,
                };
                stack.push(Open { droppable, commas: 0 });
            }
            ")" | "]" | "}" => {
                let droppable = match stack.pop() {
                    Some(open) => open.droppable || open.commas >= 2,
                    None => std::mem::take(&mut outer_commas) >= 2,
                };
                if before == Some(",") && droppable {
                    drop.push(positions[index - 1]);
                }
            }
            "," => match stack.last_mut() {
                Some(open) => open.commas += 1,
                None => outer_commas += 1,
            },
            _ => {}
        }
    }
    if let [.., before_last, last] = positions[..] {
        let token = |(l, t): (usize, usize)| lines[l].tokens[t].as_str();
        let in_open_group = stack.last().is_some_and(|open| open.droppable || open.commas >= 2);
        if token(last) == "," && (in_open_group || (stack.is_empty() && is_closer(token(before_last)))) {
            drop.push(last);
        }
    }
    for &(l, t) in drop.iter().rev() {
        lines[l].tokens.remove(t);
    }
}

/// Whether `chars` from `at` begin with `text`.
fn starts_at(chars: &[char], at: usize, text: &str) -> bool {
    text.chars().enumerate().all(|(offset, c)| chars.get(at + offset) == Some(&c))
}

fn is_closer(token: &str) -> bool {
    matches!(token, ")" | "]" | "}")
}

fn is_word(token: &str) -> bool {
    token.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_') && !token.starts_with("str:")
}

fn is_keyword(word: &str, language: Language) -> bool {
    language.lexing.keywords.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTHON: Language = crate::python::spec::LANGUAGE;
    const RUST: Language = crate::cargo::spec::LANGUAGE;
    const LANGUAGES: &[Language] = &[PYTHON, RUST];

    fn lines(start: usize, text: &str) -> BTreeMap<usize, &str> {
        text.lines().enumerate().map(|(i, line)| (start + i, line)).collect()
    }

    /// The added lines of `a.py` (from line `added_at`) that are old code, given removed lines of `old.py`.
    fn old_lines(added_at: usize, added: &str, removed_at: usize, removed: &str) -> Vec<usize> {
        let file = AddedFile {
            path: Path::new("a.py"),
            language: PYTHON,
            lines: lines(added_at, added),
            scopes: Vec::new(),
        };
        let removed = BTreeMap::from([(
            PathBuf::from("old.py"),
            lines(removed_at, removed).into_iter().map(|(n, text)| (n, text.to_string())).collect(),
        )]);
        old_code(&[file], &removed, &BTreeMap::new(), LANGUAGES, MAX_STEPS)
            .lines
            .remove(Path::new("a.py"))
            .unwrap_or_default()
            .into_iter()
            .collect()
    }

    /// The added lines of a change from `before` to `after` (whole files of `language`) that are
    /// old code, every line of both diffed as all removed and all added but for those `kept`.
    fn moved(language: Language, before: &'static str, after: &'static str, kept: &[&str]) -> Vec<usize> {
        let (old_path, new_path) =
            if language == PYTHON { ("m.py", "m.py") } else { ("src/m.rs", "src/m.rs") };
        let scopes = |text: &str| (language.scopes)(text).unwrap();
        let changed = |text: &'static str| -> BTreeMap<usize, &'static str> {
            text.lines()
                .enumerate()
                .filter(|(_, line)| !kept.contains(line))
                .map(|(i, line)| (i + 1, line))
                .collect()
        };
        let file =
            AddedFile { path: Path::new(new_path), language, lines: changed(after), scopes: scopes(after) };
        let removed_lines = changed(before).into_iter().map(|(n, text)| (n, text.to_string())).collect();
        let removed = BTreeMap::from([(PathBuf::from(old_path), removed_lines)]);
        let removed_scopes = BTreeMap::from([(PathBuf::from(old_path), scopes(before))]);
        old_code(&[file], &removed, &removed_scopes, LANGUAGES, MAX_STEPS)
            .lines
            .remove(Path::new(new_path))
            .unwrap_or_default()
            .into_iter()
            .collect()
    }

    #[test]
    fn code_moved_into_a_new_function_is_new_code() {
        // semver 75856ef: `eq`'s comparison moves into a new `ptr_eq`.
        let before = "\
impl PartialEq for Identifier {
    fn eq(&self, rhs: &Self) -> bool {
        if self.is_empty_or_inline() {
            self.head == rhs.head && self.tail == rhs.tail
        } else {
            false
        }
    }
}
";
        let after = "\
impl Identifier {
    pub(crate) fn ptr_eq(&self, rhs: &Self) -> bool {
        self.head == rhs.head && self.tail == rhs.tail
    }
}

impl PartialEq for Identifier {
    fn eq(&self, rhs: &Self) -> bool {
        if self.ptr_eq(rhs) {
            true
        } else {
            false
        }
    }
}
";
        let kept = [
            "impl PartialEq for Identifier {",
            "    fn eq(&self, rhs: &Self) -> bool {",
            "        } else {",
            "            false",
            "        }",
            "    }",
            "}",
        ];
        assert_eq!(moved(RUST, before, after, &kept), Vec::<usize>::new());
        // Without scopes (the rule before), the comparison was old code.
        assert_eq!(
            old_lines(
                3,
                "        self.head == rhs.head && self.tail == rhs.tail\n",
                4,
                "            self.head == rhs.head && self.tail == rhs.tail\n"
            ),
            vec![3]
        );
    }

    #[test]
    fn code_moved_into_another_function_is_new_code_but_a_whole_moved_function_and_a_rewrap_are_old() {
        let before = "\
def total(items):
    checked = [int(item) for item in items]
    return sum(checked)


def mean(items):
    return total(items) / len(items)
";
        // `checked = ...` moves into a new helper; `mean` moves above `total`, whole.
        let after = "\
def mean(items):
    return total(items) / len(items)


def parse(items):
    checked = [int(item) for item in items]
    return checked


def total(items):
    return sum(parse(items))
";
        assert_eq!(moved(PYTHON, before, after, &["", "def total(items):"]), vec![1, 2]);
        // A statement re-wrapped in its own function stays old code.
        let rewrapped = "\
def total(items):
    checked = [
        int(item) for item in items
    ]
    return sum(checked)


def mean(items):
    return total(items) / len(items)
";
        let kept = [
            "def total(items):",
            "    return sum(checked)",
            "",
            "def mean(items):",
            "    return total(items) / len(items)",
        ];
        assert_eq!(moved(PYTHON, before, rewrapped, &kept), vec![2, 3, 4]);
    }

    #[test]
    fn a_requoted_line_is_old_code_and_an_edited_one_is_not() {
        assert_eq!(old_lines(3, "__version__ = \"3.0.0\"\n", 3, "__version__ = '3.0.0'\n"), vec![3]);
        assert_eq!(
            old_lines(3, "__version__ = \"3.0.1\"\n", 3, "__version__ = '3.0.0'\n"),
            Vec::<usize>::new()
        );
        assert_eq!(
            old_lines(3, "x = 'it\\'s'  # why\n", 9, "x  =  \"it's\"\n"),
            vec![3],
            "escapes, comments, spaces"
        );
    }

    #[test]
    fn a_rewrapped_signature_is_old_code() {
        let added = "def parse(\n    text,\n    strict=False,\n):\n";
        assert_eq!(old_lines(10, added, 10, "def parse(text, strict=False):\n"), vec![10, 11, 12, 13]);
        let changed = "def parse(\n    text,\n    strict=True,\n):\n";
        assert_eq!(old_lines(10, changed, 10, "def parse(text, strict=False):\n"), Vec::<usize>::new());
    }

    #[test]
    fn a_rewrapped_all_list_is_old_code() {
        let added = "__all__ = [\n    \"a\",\n    \"b\",\n]\n";
        assert_eq!(old_lines(1, added, 1, "__all__ = ['a', 'b']\n"), vec![1, 2, 3, 4]);
    }

    #[test]
    fn commas_before_brackets_outside_the_run_do_not_count() {
        let added = "        parts[\"major\"],\n        parts[\"build\"],\n    )\n";
        assert_eq!(old_lines(5, added, 5, "            parts['major'], parts['build'])\n"), vec![5, 6, 7]);
        let added = "    (\n        master_doc,\n        \"manual\",\n    )\n";
        assert_eq!(old_lines(5, added, 5, "    (master_doc, 'manual'),\n"), vec![5, 6, 7, 8]);
        let call = "    return format_version(\n        verinfo[\"major\"],\n        verinfo[\"build\"],\n";
        let old_call =
            "    return format_version(verinfo['major'],\n                          verinfo['build'])\n";
        assert_eq!(old_lines(5, call, 5, old_call), vec![5, 6, 7], "its `)` is on a kept line");
        let items = "    \"a.b\",\n    \"c.d\",\n";
        assert_eq!(old_lines(5, items, 5, "    'a.b',\n    'c.d',\n"), vec![5, 6], "short lines in a run");
    }

    #[test]
    fn a_trailing_comma_of_a_one_element_tuple_counts() {
        assert_eq!(old_lines(1, "values = (x,)\n", 1, "values = (x)\n"), Vec::<usize>::new());
        assert_eq!(old_lines(1, "values = call(x,)\n", 1, "values = call(x)\n"), vec![1]);
    }

    #[test]
    fn a_moved_function_is_old_code_short_lines_included() {
        let function = "def total(items):\n    if not items:\n        return 0\n    return sum(items)\n";
        assert_eq!(old_lines(40, function, 5, function), vec![40, 41, 42, 43]);
    }

    #[test]
    fn a_short_line_alone_is_new_code() {
        assert_eq!(old_lines(7, "    return x\n", 20, "    return x\n"), Vec::<usize>::new());
        assert_eq!(old_lines(7, "    )\n", 20, "    )\n"), Vec::<usize>::new());
    }

    #[test]
    fn each_removed_line_is_matched_once() {
        let twice = "total = compute(a, b)\nprint('unrelated')\ntotal = compute(a, b)\n";
        assert_eq!(old_lines(1, twice, 9, "total = compute(a, b)\n"), vec![1]);
    }

    #[test]
    fn a_comment_ends_a_line_at_its_first_marker_whatever_precedes_it() {
        let words = |text: &str, language| tokens(text, language);
        assert_eq!(words("let a = b / c; // halve", RUST), ["let", "a", "=", "b", "/", "c", ";"]);
        assert_eq!(words("x = a // b  # floor", PYTHON), ["x", "=", "a", "/", "/", "b"]);
    }

    #[test]
    fn rust_chars_and_strings_differ_and_lifetimes_are_words() {
        let file = |text: &'static str| AddedFile {
            path: Path::new("src/a.rs"),
            language: RUST,
            lines: BTreeMap::from([(1, text)]),
            scopes: Vec::new(),
        };
        let removed = |text: &str| {
            BTreeMap::from([(PathBuf::from("src/b.rs"), BTreeMap::from([(4, text.to_string())]))])
        };
        let old = |added, removed_text| {
            old_code(&[file(added)], &removed(removed_text), &BTreeMap::new(), LANGUAGES, MAX_STEPS).lines
        };
        assert!(old("let c = 'x';", "let c = \"x\";").is_empty());
        assert_eq!(old("fn f<'a>(x: &'a str) {}", "fn f<'a>(x: &'a str,) {}").len(), 1);
    }

    #[test]
    fn an_unwrapped_call_is_old_code() {
        let removed = "    total = compute(\n        a,\n        b,\n    )\n";
        assert_eq!(old_lines(4, "    total = compute(a, b)\n", 4, removed), vec![4]);
        assert_eq!(old_lines(4, "    total = compute(a, c)\n", 4, removed), Vec::<usize>::new());
    }

    #[test]
    fn a_search_out_of_steps_stops_where_it_is_and_claims_no_line_past_it() {
        // Identical lines re-indented, with a new line in the middle: each removed line starts a
        // long match, so the search for the first added line alone costs about 200 x 100 steps.
        let removed: String = "    x = x + 1\n".repeat(200);
        let added = format!(
            "{}        y = 2\n{}",
            "        x = x + 1\n".repeat(100),
            "        x = x + 1\n".repeat(100)
        );
        let file = AddedFile {
            path: Path::new("a.py"),
            language: PYTHON,
            lines: lines(3, &added),
            scopes: Vec::new(),
        };
        let removed = BTreeMap::from([(
            PathBuf::from("a.py"),
            lines(2, &removed).into_iter().map(|(n, text)| (n, text.to_string())).collect(),
        )]);
        let search =
            |steps| old_code(std::slice::from_ref(&file), &removed, &BTreeMap::new(), LANGUAGES, steps);

        let whole = search(MAX_STEPS);
        assert_eq!(whole.stopped_at, None);
        let expected: BTreeSet<usize> = (3..103).chain(104..204).collect();
        assert_eq!(whole.lines[Path::new("a.py")], expected, "all but `y = 2`");

        let cut = search(10_000);
        assert_eq!(cut.stopped_at, Some((PathBuf::from("a.py"), 3)), "stopped at the first added line");
        assert!(cut.lines.is_empty(), "{:?}", cut.lines);
        let later = search(200 * 100 * 4 + 1_000);
        let Some((_, line)) = later.stopped_at.clone() else { panic!("the search was expected to stop") };
        assert!(line > 3 && line < 203, "{line}");
        let claimed = &later.lines[Path::new("a.py")];
        assert!(claimed.iter().all(|&n| n < line), "no line from {line} on is old code: {claimed:?}");
        assert_eq!(search(200 * 100 * 4 + 1_000).lines, later.lines, "the same steps, the same answer");
    }

    #[test]
    fn only_removed_lines_in_the_same_functions_and_language_are_candidates() {
        let line = |context: &[&str]| Line {
            number: 1,
            tokens: tokens("total = compute(a, b)", PYTHON),
            context: context.iter().map(|name| name.to_string()).collect(),
        };
        let run = |language, context: &[&str]| Run { language, lines: vec![line(context)] };
        let removed = [run(PYTHON, &["f"]), run(PYTHON, &["g"]), run(RUST, &["f"]), run(PYTHON, &["f"])];
        let starts = Starts::index(&removed);
        let found: Vec<(usize, usize)> = starts.candidates(PYTHON, &line(&["f"])).collect();
        assert_eq!(found, [(0, 0), (3, 0)]);
    }
}
