//! Python arid code (`catalog::PYTHON_ARID`): logging, print, warnings, sleep and argparse-text calls, `assert`, the `__main__` guard, `__repr__`.

use std::ops::Range;

use super::structure::Code;
use super::tokenize::Kind;
use crate::catalog::{Marker, PYTHON_ARID};
use crate::marks::{named, Marks};

/// Logger methods whose calls are logging.
const LOG_METHODS: &[&str] = &["debug", "info", "warning", "warn", "error", "exception", "critical", "log"];

/// Calls whose help-text arguments are arid, and those arguments.
const ARGPARSE_CALLS: &[&str] = &[
    "add_argument",
    "ArgumentParser",
    "add_parser",
    "add_subparsers",
    "add_argument_group",
    "add_mutually_exclusive_group",
];
const ARGPARSE_TEXT: &[&str] = &["help", "usage", "description", "epilog", "title", "metavar"];

/// Every arid stretch of the file, as byte ranges with their rules.
pub(crate) fn find(code: &Code, marks: &mut Marks) {
    let rule = |name| named(PYTHON_ARID, name);
    for (index, line) in code.lines.iter().enumerate() {
        if let Some(header) = line.header {
            let block = || code.span(line.tokens.start..code.lines[code.block_end(index)].tokens.end);
            let condition = header.keyword + 1..header.colon.unwrap_or(line.tokens.end);
            if code.is(header.keyword, "if") && is_main_test(code, condition) {
                marks.arid(block(), rule("main-guard"));
            }
            let named_repr = header.keyword + 1 < line.tokens.end && code.is(header.keyword + 1, "__repr__");
            if code.is(header.keyword, "def") && named_repr {
                marks.arid(block(), rule("repr"));
            }
        }
        for statement in &line.statements {
            if code.is(statement.start, "assert") {
                marks.arid(code.span(statement.clone()), rule("assert"));
            }
        }
        for i in line.tokens.clone() {
            let starts_chain =
                code.kind(i) == Kind::Name && !code.is_keyword(i) && !(i > 0 && code.is(i - 1, "."));
            if starts_chain {
                chain(code, i, line.tokens.end, marks);
            }
        }
    }
}

/// `__name__ == "__main__"`, either way round.
fn is_main_test(code: &Code, condition: Range<usize>) -> bool {
    let texts: Vec<&str> = condition.map(|i| code.text(i)).collect();
    let main = |text: &str| matches!(text, "\"__main__\"" | "'__main__'");
    match texts.as_slice() {
        [a, "==", b] => (*a == "__name__" && main(b)) || (main(a) && *b == "__name__"),
        _ => false,
    }
}

/// The arid calls of the chain of names, attributes, calls and subscripts starting at token
/// `start` (`self.log.info(x)`, `print(x)`, `parser.add_argument(...)`).
fn chain(code: &Code, start: usize, end: usize, marks: &mut Marks) {
    let rule = |name| named(PYTHON_ARID, name);
    let first = code.text(start);
    let mut i = start;
    let mut previous_name: Option<&str> = None;
    while i < end {
        match code.kind(i) {
            Kind::Name if !code.is_keyword(i) => {
                previous_name = Some(code.text(i));
                i += 1;
            }
            Kind::Op if code.is(i, ".") && i + 1 < end && code.kind(i + 1) == Kind::Name => i += 1,
            Kind::Op if code.is(i, "(") || code.is(i, "[") => {
                let Some(close) = code.closing(i).filter(|&c| c < end) else { return };
                if code.is(i, "(") {
                    let call = start..close + 1;
                    let callee = previous_name.unwrap_or("");
                    let receiver = (i >= start + 3 && code.is(i - 2, ".")).then(|| code.text(i - 3));
                    let found: Option<&'static Marker> = match (first, receiver, callee) {
                        ("logging", _, _) => Some(rule("logging")),
                        (_, Some(receiver), method)
                            if is_logger(receiver) && LOG_METHODS.contains(&method) =>
                        {
                            Some(rule("logging"))
                        }
                        ("print", None, "print") if !writes_to_a_stream(code, i, close) => {
                            Some(rule("print"))
                        }
                        ("warnings", Some("warnings"), "warn" | "warn_explicit") => {
                            Some(rule("warnings-warn"))
                        }
                        ("time" | "asyncio", Some("time" | "asyncio"), "sleep") => Some(rule("sleep")),
                        _ => None,
                    };
                    if let Some(found) = found {
                        let awaited = found.name == "sleep" && start > 0 && code.is(start - 1, "await");
                        let from = if awaited { start - 1 } else { start };
                        marks.arid(code.span(from..call.end), found);
                        return;
                    }
                    if ARGPARSE_CALLS.contains(&callee) {
                        help_arguments(code, i, close, marks);
                    }
                }
                previous_name = None;
                i = close + 1;
            }
            _ => return,
        }
    }
}

/// A `file=` argument other than `sys.stdout` or `sys.stderr` in the call whose parentheses
/// are at `open` and `close`: `print(line, file=out)` writes what the function is for.
fn writes_to_a_stream(code: &Code, open: usize, close: usize) -> bool {
    let mut depth = 0usize;
    for i in open + 1..close {
        match code.text(i) {
            _ if code.kind(i) != Kind::Op => {}
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            "=" if depth == 0 && code.is(i - 1, "file") => {
                let value: Vec<&str> = (i + 1..close).take(4).map(|j| code.text(j)).collect();
                return !matches!(
                    value.as_slice(),
                    ["sys", ".", "stdout" | "stderr", "," | ")"] | ["sys", ".", "stdout" | "stderr"]
                );
            }
            _ => {}
        }
    }
    false
}

/// `log`, `logger`, `_LOG`, `audit_logger`, `request_log`.
fn is_logger(name: &str) -> bool {
    let name = name.trim_start_matches('_').to_ascii_lowercase();
    matches!(name.as_str(), "log" | "logger") || name.ends_with("_log") || name.ends_with("_logger")
}

/// The values of the help-text keyword arguments of the call whose parentheses are at `open`
/// and `close`.
fn help_arguments(code: &Code, open: usize, close: usize, marks: &mut Marks) {
    let mut depth = 0usize;
    let mut value: Option<usize> = None;
    for i in open + 1..=close {
        let at_top = depth == 0;
        match code.text(i) {
            _ if code.kind(i) != Kind::Op => {}
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth > 0 => depth -= 1,
            "=" if at_top && ARGPARSE_TEXT.contains(&code.text(i - 1)) => value = Some(i + 1),
            ")" | "," if at_top => {
                if let Some(start) = value.take().filter(|&start| start < i) {
                    marks.arid(code.span(start..i), named(PYTHON_ARID, "argparse-text"));
                }
            }
            _ => {}
        }
    }
}
