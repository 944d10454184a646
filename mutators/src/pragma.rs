//! The `mutdelta: skip <reason>` pragma, read from the text of one comment.

/// What a comment asks of mutdelta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pragma {
    /// Mutants of this line are ignored, for this reason.
    Skip(String),
    /// `mutdelta: skip` with nothing after it: a reason is required.
    SkipWithoutReason,
}

const MARKER: &str = "mutdelta:";

/// The pragma in a comment, if any; it may follow other text (`# noqa  # mutdelta: skip ...`).
pub(crate) fn parse(comment: &str) -> Option<Pragma> {
    let after_marker = &comment[comment.find(MARKER)? + MARKER.len()..];
    let after_skip = after_marker.trim_start().strip_prefix("skip")?;
    if after_skip.starts_with(|c: char| !c.is_whitespace()) {
        return None; // `skipped`, `skip-this`: not our word
    }
    let reason = after_skip.trim();
    if reason.is_empty() {
        Some(Pragma::SkipWithoutReason)
    } else {
        Some(Pragma::Skip(reason.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_skip_with_and_without_reason() {
        assert_eq!(parse("# mutdelta: skip logging only"), Some(Pragma::Skip("logging only".into())));
        assert_eq!(parse("# noqa  # mutdelta:skip  slow path "), Some(Pragma::Skip("slow path".into())));
        assert_eq!(parse("# mutdelta: skip"), Some(Pragma::SkipWithoutReason));
        assert_eq!(parse("# mutdelta: skip   "), Some(Pragma::SkipWithoutReason));
        assert_eq!(parse("# mutdelta: skipped"), None);
        assert_eq!(parse("# just a comment"), None);
    }
}
