//! Which added file is a renamed (or copied) deleted one, decided as `git diff` decides it: exact renames first, then files with the same unique basename, then the most similar pairs.
//!
//! Similarity is git's estimate: the share of the larger file made of the other file's chunks
//! (a chunk ends at a newline or after 64 bytes), 50% or more to pair; 75% for the basename pass.

use std::collections::{BTreeMap, HashMap};

/// git's similarity scale: 100% is 60000.
const MAX_SCORE: u64 = 60_000;
/// `-M50%`, git's default.
const MINIMUM_SCORE: u64 = MAX_SCORE / 2;
/// A file with the same basename needs half the way from the minimum to 100%.
const BASENAME_SCORE: u64 = MINIMUM_SCORE + (MAX_SCORE - MINIMUM_SCORE) / 2;
const CANDIDATES_PER_DESTINATION: usize = 4;
const HASH_BASE: u32 = 107_927;

/// A file on one side of the change, as rename detection sees it.
#[derive(Debug, Clone, Copy)]
pub struct File<'a> {
    /// The path as git stores it ('/'-separated).
    pub path: &'a [u8],
    /// The git file mode (0o100644, 0o120000, ...).
    pub mode: u32,
    pub content: &'a [u8],
    /// git would show the file as binary (it is then compared byte for byte, CRs included).
    pub binary: bool,
}

impl File<'_> {
    fn regular(&self) -> bool {
        self.mode & 0o170000 == 0o100000
    }
}

/// A file that may have been renamed or copied into an added one.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub file: File<'a>,
    /// The file stays (a modified file offered for copy detection), so it is never "renamed".
    pub stays: bool,
}

/// For each of `destinations` (added files), the index in `sources` it was renamed or copied
/// from. `sources` and `destinations` are in git's order (by path). Copies are looked for when
/// `copies` is set; `limit` is `diff.renameLimit`.
pub fn pair(
    sources: &[Source<'_>],
    destinations: &[File<'_>],
    copies: bool,
    limit: usize,
) -> Vec<Option<usize>> {
    let mut pairing = Pairing::new(sources, destinations, copies);
    if sources.is_empty() || destinations.is_empty() {
        return pairing.paired;
    }
    pairing.exact();

    let remaining = pairing.unused(0..sources.len());
    if !copies {
        pairing.same_basename(&remaining);
    }

    let remaining = pairing.unused(remaining);
    let open = pairing.open();
    if open.is_empty() || remaining.is_empty() || too_many(open.len(), remaining.len(), limit) {
        return pairing.paired;
    }
    let matrix = pairing.candidates(&open, &remaining);
    pairing.most_similar(&matrix);
    pairing.paired
}

/// The pairs found so far, and what the passes of [`pair`] share: how often each source is
/// used, and each file's chunks once computed.
struct Pairing<'a> {
    sources: &'a [Source<'a>],
    destinations: &'a [File<'a>],
    copies: bool,
    paired: Vec<Option<usize>>,
    /// Per source: the destinations paired with it, plus one if it stays.
    used: Vec<usize>,
    source_spans: Vec<Option<Spans>>,
    destination_spans: Vec<Option<Spans>>,
}

impl<'a> Pairing<'a> {
    fn new(sources: &'a [Source<'a>], destinations: &'a [File<'a>], copies: bool) -> Self {
        Pairing {
            sources,
            destinations,
            copies,
            paired: vec![None; destinations.len()],
            used: sources.iter().map(|source| usize::from(source.stays)).collect(),
            source_spans: vec![None; sources.len()],
            destination_spans: vec![None; destinations.len()],
        }
    }

    fn record(&mut self, dst: usize, src: usize) {
        self.paired[dst] = Some(src);
        self.used[src] += 1;
    }

    /// The sources among `sources` still free to pair (all of them when looking for copies).
    fn unused(&self, sources: impl IntoIterator<Item = usize>) -> Vec<usize> {
        sources.into_iter().filter(|&src| self.copies || self.used[src] == 0).collect()
    }

    /// The destinations not yet paired.
    fn open(&self) -> Vec<usize> {
        (0..self.destinations.len()).filter(|&dst| self.paired[dst].is_none()).collect()
    }

    /// Exact renames: the same content (and the same kind of file, if not a regular one).
    fn exact(&mut self) {
        for (dst, target) in self.destinations.iter().enumerate() {
            let mut best: Option<(usize, usize)> = None;
            let mut tries = 100;
            for (src, source) in self.sources.iter().enumerate() {
                let file = &source.file;
                if file.content != target.content {
                    continue;
                }
                if (!file.regular() || !target.regular()) && file.mode != target.mode {
                    continue;
                }
                if self.used[src] > 0 && !self.copies {
                    continue;
                }
                let score =
                    usize::from(self.used[src] == 0) + usize::from(basename_same(file.path, target.path));
                if best.is_none_or(|(_, best_score)| score > best_score) {
                    best = Some((src, score));
                    if score == 2 {
                        break;
                    }
                }
                tries -= 1;
                if tries == 0 {
                    break;
                }
            }
            if let Some((src, _)) = best {
                self.record(dst, src);
            }
        }
    }

    /// Files whose basename is unique among the remaining sources and destinations, when
    /// similar enough.
    fn same_basename(&mut self, remaining: &[usize]) {
        let (sources, destinations) = (self.sources, self.destinations);
        let source_names = unique_basenames(remaining.iter().map(|&src| (src, sources[src].file.path)));
        let destination_names =
            unique_basenames(self.open().into_iter().map(|dst| (dst, destinations[dst].path)));
        for &src in remaining {
            let base = basename(sources[src].file.path);
            let (Some(Some(_)), Some(Some(dst))) = (source_names.get(base), destination_names.get(base))
            else {
                continue;
            };
            let dst = *dst;
            if self.paired[dst].is_some() {
                continue;
            }
            if self.similarity(src, dst, BASENAME_SCORE) >= BASENAME_SCORE {
                self.record(dst, src);
            }
        }
    }

    /// Each of the `open` destinations' four best candidates among `remaining`, the most
    /// similar pairs first.
    fn candidates(&mut self, open: &[usize], remaining: &[usize]) -> Vec<Score> {
        let mut matrix: Vec<Score> = Vec::with_capacity(open.len() * CANDIDATES_PER_DESTINATION);
        for &dst in open {
            let mut best = [Score::NONE; CANDIDATES_PER_DESTINATION];
            for &src in remaining {
                let candidate = Score {
                    dst: Some(dst),
                    src,
                    score: self.similarity(src, dst, MINIMUM_SCORE),
                    name_score: i32::from(basename_same(
                        self.sources[src].file.path,
                        self.destinations[dst].path,
                    )),
                };
                let mut worst = 0;
                for slot in 1..CANDIDATES_PER_DESTINATION {
                    if compare(&best[slot], &best[worst]) == std::cmp::Ordering::Greater {
                        worst = slot;
                    }
                }
                if compare(&best[worst], &candidate) == std::cmp::Ordering::Greater {
                    best[worst] = candidate;
                }
            }
            matrix.extend(best);
        }
        matrix.sort_by(compare);
        matrix
    }

    /// Pairs the candidates similar enough, best first; sources already used only when
    /// looking for copies, and then after the unused ones.
    fn most_similar(&mut self, matrix: &[Score]) {
        for allow_used in if self.copies { vec![false, true] } else { vec![false] } {
            for candidate in matrix {
                let Some(dst) = candidate.dst else { break };
                if candidate.score < MINIMUM_SCORE {
                    break;
                }
                if self.paired[dst].is_some() || (!allow_used && self.used[candidate.src] > 0) {
                    continue;
                }
                self.record(dst, candidate.src);
            }
        }
    }

    /// git's similarity of source `src` to destination `dst`, or 0 when the sizes alone rule
    /// out `minimum`.
    fn similarity(&mut self, src: usize, dst: usize, minimum: u64) -> u64 {
        let (from, to) = (&self.sources[src].file, &self.destinations[dst]);
        if !plausible(from, to, minimum) {
            return 0;
        }
        let from_spans = self.source_spans[src].get_or_insert_with(|| Spans::of(from));
        let to_spans = self.destination_spans[dst].get_or_insert_with(|| Spans::of(to));
        let copied: u64 = from_spans
            .0
            .iter()
            .map(|(hash, &count)| count.min(to_spans.0.get(hash).copied().unwrap_or(0)))
            .sum();
        copied * MAX_SCORE / from.content.len().max(to.content.len()) as u64
    }
}

/// Each basename among `names`, with its index if no other name has it.
fn unique_basenames<'p>(names: impl Iterator<Item = (usize, &'p [u8])>) -> HashMap<Vec<u8>, Option<usize>> {
    let mut seen: HashMap<Vec<u8>, Option<usize>> = HashMap::new();
    for (index, path) in names {
        let base = basename(path).to_vec();
        seen.entry(base).and_modify(|slot| *slot = None).or_insert(Some(index));
    }
    seen
}

/// The inexact pass is skipped when the matrix would exceed `limit` squared.
fn too_many(destinations: usize, sources: usize, limit: usize) -> bool {
    let limit = if limit == 0 { 32_767 } else { limit } as u64;
    let (destinations, sources) = (destinations as u64, sources as u64);
    !((destinations <= limit || sources <= limit) && destinations * sources <= limit * limit)
}

#[derive(Debug, Clone, Copy)]
struct Score {
    /// None for an empty slot.
    dst: Option<usize>,
    src: usize,
    score: u64,
    name_score: i32,
}

impl Score {
    const NONE: Score = Score { dst: None, src: 0, score: 0, name_score: 0 };
}

/// Most similar first, then same basename first; empty slots last.
fn compare(a: &Score, b: &Score) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a.dst, b.dst) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        _ => b.score.cmp(&a.score).then(b.name_score.cmp(&a.name_score)),
    }
}

fn basename(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

/// Whether the two paths end in the same file name.
fn basename_same(a: &[u8], b: &[u8]) -> bool {
    basename(a) == basename(b)
}

/// Whether the sizes leave `minimum` within reach (git's cheap test before comparing content).
fn plausible(src: &File<'_>, dst: &File<'_>, minimum: u64) -> bool {
    if !src.regular() || !dst.regular() {
        return false;
    }
    let (src_size, dst_size) = (src.content.len() as u64, dst.content.len() as u64);
    let max_size = src_size.max(dst_size);
    let delta_size = max_size - src_size.min(dst_size);
    dst_size > 0 && max_size * (MAX_SCORE - minimum) >= delta_size * MAX_SCORE
}

/// Bytes per chunk hash: chunks end at a newline or after 64 bytes; a CR before a newline is
/// not counted in text.
#[derive(Debug, Clone, Default)]
struct Spans(BTreeMap<u32, u64>);

impl Spans {
    fn of(file: &File<'_>) -> Spans {
        let mut spans = BTreeMap::new();
        let (mut accum1, mut accum2, mut n) = (0u32, 0u32, 0u64);
        let bytes = file.content;
        for (index, &c) in bytes.iter().enumerate() {
            if !file.binary && c == b'\r' && bytes.get(index + 1) == Some(&b'\n') {
                continue;
            }
            let old1 = accum1;
            accum1 = (accum1 << 7) ^ (accum2 >> 25);
            accum2 = (accum2 << 7) ^ (old1 >> 25);
            accum1 = accum1.wrapping_add(u32::from(c));
            n += 1;
            if n < 64 && c != b'\n' {
                continue;
            }
            *spans.entry(accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASH_BASE).or_insert(0) += n;
            (accum1, accum2, n) = (0, 0, 0);
        }
        if n > 0 {
            *spans.entry(accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASH_BASE).or_insert(0) += n;
        }
        Spans(spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file<'a>(path: &'a str, content: &'a str) -> File<'a> {
        File { path: path.as_bytes(), mode: 0o100644, content: content.as_bytes(), binary: false }
    }

    fn deleted(file: File<'_>) -> Source<'_> {
        Source { file, stays: false }
    }

    fn lines(count: usize, tag: &str) -> String {
        (0..count).map(|i| format!("line {i} of the {tag} file\n")).collect()
    }

    #[test]
    fn an_identical_file_is_paired_preferring_the_same_basename() {
        let text = lines(10, "same");
        let sources = [deleted(file("a/x.py", &text)), deleted(file("b/y.py", &text))];
        let paired = pair(&sources, &[file("c/y.py", &text)], false, 1000);
        assert_eq!(paired, vec![Some(1)]);
    }

    #[test]
    fn a_file_half_similar_is_a_rename_and_less_is_not() {
        let old = lines(20, "old");
        let mostly: String =
            old.lines().take(12).map(|l| format!("{l}\n")).collect::<String>() + &lines(8, "new");
        let little: String =
            old.lines().take(6).map(|l| format!("{l}\n")).collect::<String>() + &lines(14, "new");
        assert_eq!(
            pair(&[deleted(file("a.py", &old))], &[file("b.py", &mostly)], false, 1000),
            vec![Some(0)]
        );
        assert_eq!(pair(&[deleted(file("a.py", &old))], &[file("b.py", &little)], false, 1000), vec![None]);
    }

    #[test]
    fn a_source_is_renamed_once_unless_copies_are_looked_for() {
        let text = lines(10, "same");
        let modified = Source { file: file("a.py", &text), stays: true };
        let destinations = [file("b.py", &text), file("c.py", &text)];
        assert_eq!(pair(&[modified], &destinations, false, 1000), vec![None, None]);
        assert_eq!(pair(&[modified], &destinations, true, 1000), vec![Some(0), Some(0)]);
        assert_eq!(pair(&[deleted(file("a.py", &text))], &destinations, false, 1000), vec![Some(0), None]);
    }

    #[test]
    fn chunks_count_bytes_and_ignore_cr_before_newline_in_text() {
        let unix = Spans::of(&file("a", "ab\ncd\n"));
        let dos = Spans::of(&file("a", "ab\r\ncd\r\n"));
        assert_eq!(unix.0, dos.0);
        assert_eq!(unix.0.values().sum::<u64>(), 6);
    }
}
