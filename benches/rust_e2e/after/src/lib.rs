//! Word frequencies.

use std::collections::BTreeMap;

use regex::Regex;

/// The words of `text`, lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let re = Regex::new(r"[A-Za-z']+").unwrap();
    re.find_iter(text).map(|m| m.as_str().to_lowercase()).collect()
}

/// The `n` most frequent words of at least `min_len` letters, most frequent first, ties
/// alphabetical.
pub fn top_words(text: &str, n: usize, min_len: usize) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for word in words(text) {
        if word.len() >= min_len {
            *counts.entry(word).or_insert(0) += 1;
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(n);
    ranked
}

/// The share of `text`'s words that are `word`, in percent.
pub fn share(text: &str, word: &str) -> f64 {
    let all = words(text);
    if all.is_empty() {
        return 0.0;
    }
    let hits = all.iter().filter(|w| *w == word).count();
    hits as f64 * 100.0 / all.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lower_cased() {
        assert_eq!(words("The cat's HAT"), ["the", "cat's", "hat"]);
    }

    #[test]
    fn top_words_ranks_by_count() {
        let text = "b a b c b a";
        assert_eq!(top_words(text, 2, 1), [("b".to_string(), 3), ("a".to_string(), 2)]);
    }

    #[test]
    fn share_is_a_percentage() {
        assert_eq!(share("a b a b", "a"), 50.0);
    }
}
