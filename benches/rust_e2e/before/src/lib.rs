//! Word frequencies.

use regex::Regex;

/// The words of `text`, lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let re = Regex::new(r"[A-Za-z']+").unwrap();
    re.find_iter(text).map(|m| m.as_str().to_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lower_cased() {
        assert_eq!(words("The cat's HAT"), ["the", "cat's", "hat"]);
    }
}
