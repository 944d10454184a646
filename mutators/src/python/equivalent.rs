//! Python fast-path guards (`fast-path-guard` in `catalog::EQUIVALENT`): `if a is b:` whose body only returns.

use std::ops::Range;

use super::structure::{Code, LogicalLine};
use super::tokenize::Kind;
use crate::marks::Marks;

/// The conditions of every fast-path guard of the file.
pub(crate) fn find(code: &Code, marks: &mut Marks) {
    for (index, line) in code.lines.iter().enumerate() {
        let Some(header) = line.header else { continue };
        let Some(colon) = header.colon else { continue };
        let condition = header.keyword + 1..colon;
        let guard = code.is(header.keyword, "if") || code.is(header.keyword, "elif");
        if guard && is_identity_test(code, condition.clone()) && only_returns(code, index) {
            marks.fast_paths.push(code.span(condition));
        }
    }
}

/// `a is b` where `a` and `b` are names or attributes (`self`, `other.items`), not `None`,
/// `True` or `False`: a test of one object against another, not of a sentinel. Nor of a type
/// or a constant: a side that ends in `__class__` or in a capitalised name (`_GenericAlias`,
/// `NOTHING`) makes it a dispatch on the type or a sentinel, whose other branch differs.
fn is_identity_test(code: &Code, condition: Range<usize>) -> bool {
    let Some(is) = condition.clone().find(|&i| code.is(i, "is")) else { return false };
    let dotted_name = |part: Range<usize>| {
        !part.is_empty()
            && part.len() % 2 == 1
            && part.clone().enumerate().all(|(k, i)| {
                if k % 2 == 1 {
                    return code.is(i, ".");
                }
                let text = code.text(i);
                code.kind(i) == Kind::Name
                    && !code.is_keyword(i)
                    && !matches!(text, "None" | "True" | "False")
            })
    };
    let an_object = |part: Range<usize>| {
        let last = code.text(part.end - 1);
        let capitalised = last.trim_start_matches('_').starts_with(|c: char| c.is_ascii_uppercase());
        dotted_name(part) && last != "__class__" && !capitalised
    };
    an_object(condition.start..is) && an_object(is + 1..condition.end)
}

/// Whether the body of the header on line `index` is one `return` statement.
fn only_returns(code: &Code, index: usize) -> bool {
    let line = &code.lines[index];
    let is_return = |line: &LogicalLine| {
        line.header.is_none() && line.statements.len() == 1 && code.is(line.statements[0].start, "return")
    };
    if !line.statements.is_empty() {
        return line.statements.len() == 1 && code.is(line.statements[0].start, "return");
    }
    let end = code.block_end(index);
    end == index + 1 && is_return(&code.lines[end])
}
