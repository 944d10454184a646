//! Byte offsets in a source text turned into 1-based lines and character columns.

use crate::Position;

/// Where each line of a text starts; a line ends at `\n`, `\r\n` or a lone `\r`.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(source: &str) -> Self {
        let bytes = source.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            let ends_line = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            if ends_line {
                starts.push(i + 1);
            }
        }
        LineIndex { starts }
    }

    /// Number of lines (a text ending in a line break has an empty last line).
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The 1-based line holding the byte at `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset)
    }

    /// The 1-based line and character column of the byte at `offset`.
    pub(crate) fn position(&self, source: &str, offset: usize) -> Position {
        let line = self.line(offset);
        let start = self.starts[line - 1];
        let column = source[start..offset].chars().count() + 1;
        Position { line, column }
    }
}

/// `value` written the way `like` is: same base prefix (and case), decimal otherwise.
pub(crate) fn format_like(like: &str, value: u128) -> String {
    let prefix = like.get(..2).unwrap_or("");
    match prefix.to_ascii_lowercase().as_str() {
        "0x" if like[2..].chars().any(|c| c.is_ascii_lowercase()) => format!("{prefix}{value:x}"),
        "0x" => format!("{prefix}{value:X}"),
        "0o" => format!("{prefix}{value:o}"),
        "0b" => format!("{prefix}{value:b}"),
        _ => value.to_string(),
    }
}

/// Source text for a description: one line, at most 40 characters.
pub(crate) fn shorten(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 40 {
        one_line
    } else {
        format!("{}…", one_line.chars().take(39).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_characters_and_all_line_endings() {
        let source = "aé\r\nb\rc\nd";
        let index = LineIndex::new(source);
        assert_eq!(index.len(), 4);
        let d = source.find('d').unwrap();
        assert_eq!(index.position(source, d), Position { line: 4, column: 1 });
        let b = source.find('b').unwrap();
        assert_eq!(index.position(source, b), Position { line: 2, column: 1 });
        let e_end = source.find('\r').unwrap();
        assert_eq!(index.position(source, e_end), Position { line: 1, column: 3 });
    }
}
