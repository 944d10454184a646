//! Colour for the terminal report: whether to use it (`--color`, `NO_COLOR`, a terminal), and the report's lines painted by their kind.

use std::io::IsTerminal;

/// `--color`: always, never, or on a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether the report written to standard output (`to_stdout`) or standard error is
    /// coloured: `auto` colours a terminal unless `NO_COLOR` is set to anything not empty
    /// (<https://no-color.org>) or `TERM` is `dumb`.
    pub fn enabled(self, to_stdout: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let terminal =
                    if to_stdout { std::io::stdout().is_terminal() } else { std::io::stderr().is_terminal() };
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
                let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
                terminal && !no_color && !dumb
            }
        }
    }
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const CYAN: &str = "\x1b[36m";
const BOLD_RED: &str = "\x1b[1;31m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// The terminal report with its status words and diffs coloured: `[MUT-survived]` and
/// `[MUT-lost]` red, `[MUT-nocoverage]` and `[MUT-timeout]` yellow, a diff's removed lines red
/// and added lines green, its hunk headers cyan, notes dim. Only whole lines or a line's
/// leading tag are wrapped, so the text without its escapes is the plain report.
pub fn paint(report: &str) -> String {
    let mut out = String::with_capacity(report.len() + report.len() / 8);
    for line in report.split_inclusive('\n') {
        let (text, end) = match line.strip_suffix('\n') {
            Some(text) => (text, "\n"),
            None => (line, ""),
        };
        out.push_str(&paint_line(text));
        out.push_str(end);
    }
    out
}

fn paint_line(line: &str) -> String {
    let tag = |colour: &str| -> Option<String> {
        let end = line.find(']')? + 1;
        Some(format!("{colour}{}{RESET}{}", &line[..end], &line[end..]))
    };
    let whole = |colour: &str| format!("{colour}{line}{RESET}");
    let painted = if line.starts_with("[MUT-survived]") || line.starts_with("[MUT-lost]") {
        tag(BOLD_RED)
    } else if line.starts_with("[MUT-nocoverage]") || line.starts_with("[MUT-timeout]") {
        tag(YELLOW)
    } else if line.starts_with("[MUT-") {
        tag(DIM)
    } else if let Some(diff) = line.strip_prefix("    ") {
        if diff.starts_with("---") || diff.starts_with("+++") {
            Some(whole(DIM))
        } else if diff.starts_with("@@") {
            Some(whole(CYAN))
        } else if diff.starts_with('-') {
            Some(whole(RED))
        } else if diff.starts_with('+') {
            Some(whole(GREEN))
        } else {
            None
        }
    } else if line.starts_with("note: ") {
        Some(whole(DIM))
    } else {
        None
    };
    painted.unwrap_or_else(|| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text with its escape sequences taken out.
    fn plain(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    const REPORT: &str = "note: something\n\
        [MUT-survived] m.py:15:9: delete statement\n\
        \x20   --- a/m.py\n\
        \x20   +++ b/m.py\n\
        \x20   @@ -14,3 +14,3 @@\n\
        \x20        if stop_reason == \"max_tokens\":\n\
        \x20   -        raise RuntimeError(\"x\")\n\
        \x20   +        pass\n\
        \x20   ran under: tests/t.py::test_a\n\
        [MUT-nocoverage] m.py:20: no test runs this line (1 mutant: 20:5 delete statement)\n\
        mutation delta: 2 of 6 mutants caught on 2 new lines; 1 line with survivors\n";

    #[test]
    fn painting_only_adds_colour_and_colours_each_kind_of_line() {
        let painted = paint(REPORT);
        assert_eq!(plain(&painted), REPORT, "without its escapes the report is the plain one");
        let lines: Vec<&str> = painted.lines().collect();
        assert_eq!(lines[1], "\x1b[1;31m[MUT-survived]\x1b[0m m.py:15:9: delete statement");
        assert_eq!(lines[6], "\x1b[31m    -        raise RuntimeError(\"x\")\x1b[0m");
        assert_eq!(lines[7], "\x1b[32m    +        pass\x1b[0m");
        assert_eq!(lines[4], "\x1b[36m    @@ -14,3 +14,3 @@\x1b[0m");
        assert_eq!(lines[5], "         if stop_reason == \"max_tokens\":", "context is left plain");
        assert_eq!(lines[8], "    ran under: tests/t.py::test_a");
        assert!(lines[9].starts_with("\x1b[33m[MUT-nocoverage]\x1b[0m m.py:20"), "{}", lines[9]);
        assert_eq!(lines[10], "mutation delta: 2 of 6 mutants caught on 2 new lines; 1 line with survivors");
    }

    #[test]
    fn always_and_never_are_kept_whatever_the_terminal() {
        assert!(ColorChoice::Always.enabled(true));
        assert!(!ColorChoice::Never.enabled(true));
    }
}
