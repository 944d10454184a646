//! Rust mutants: edits at the spans of a syn syntax tree, applied as text so formatting stays.

mod arid;
mod body;
mod equivalent;
mod exits;
mod fold;
mod rules;
pub mod schema;
mod source;
mod walk;

use std::collections::HashMap;
use std::ops::Range;

use crate::pragma::{self, Pragma};
use crate::{Edit, FileMutants, Mutant, MutateError, PassOver};
use source::{Parsed, SpanScope};
use walk::Walker;

/// Every mutant starting on one of `lines` (1-based), sorted by (span start, replacement),
/// and which of those lines are executable. Mutants covered by a `// mutdelta: skip <reason>`
/// comment (on their line, or alone on a line above their item, statement or match arm)
/// are marked ignored; those in arid code carry its rule, those that force a fast-path guard
/// to false their likely-equivalence rule. Unsafe code is guarded (see `UnsafeCode`).
pub fn mutate(source: &str, lines: &[usize]) -> Result<FileMutants, MutateError> {
    mutate_with(source, lines, UnsafeCode::Guarded)
}

/// What is mutated inside `unsafe` blocks and `unsafe fn`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnsafeCode {
    /// Only the arithmetic inside the index of a bounds-checked `a[i]`: a mutant there cannot
    /// reach outside the slice by itself. Lines left without a mutant for lying in unsafe code
    /// are listed in `FileMutants::passed_over`, as `UNSAFE`.
    #[default]
    Guarded,
    /// Everything, as in safe code: a mutant may then cause undefined behaviour (a crash, or a
    /// test that passes by chance) rather than a failing test.
    Mutated,
}

/// Why a line in unsafe code gets no mutant unless `UnsafeCode::Mutated`.
pub static UNSAFE: PassOver = PassOver {
    key: "unsafe",
    place: "in `unsafe` code",
    why: "a mutant there could cause undefined behaviour rather than a failing test",
    flag: "--mutate-unsafe",
};

/// `mutate`, with unsafe code treated as `unsafe_code` says.
pub fn mutate_with(
    source: &str,
    lines: &[usize],
    unsafe_code: UnsafeCode,
) -> Result<FileMutants, MutateError> {
    let _spans = SpanScope;
    let parsed = source::parse(source)?;
    let Pragmas { mut by_line, above } = Pragmas::read(&parsed)?;
    let mut wanted = vec![false; parsed.source.index.len() + 1];
    for &line in lines {
        if let Some(slot) = wanted.get_mut(line) {
            *slot = true;
        }
    }
    let mut walker = Walker::new(&parsed.source, &wanted, above, unsafe_code == UnsafeCode::Mutated);
    walker.walk(&parsed.file);
    let executable = parsed.code_lines_within(&walker.bodies);
    let executable_lines: Vec<usize> = (1..wanted.len()).filter(|&l| wanted[l] && executable[l]).collect();
    // A pragma above a line where no item, statement or arm starts covers that line.
    by_line.extend(walker.pragma_targets);
    let skipped = Skipped { by_line, covered: walker.covered };
    let mut mutants: Vec<Mutant> =
        std::mem::take(&mut walker.edits).into_iter().map(|edit| finish(&parsed, edit, &skipped)).collect();
    crate::sort_and_dedup(source, &mut mutants);
    let made = mutants.len();
    fold::drop_folded(source, &fold::literal_arithmetic(&parsed.source, &parsed.file), &mut mutants);
    let not_made = match made - mutants.len() {
        0 => Vec::new(),
        folded => vec![("literal-fold", folded)],
    };
    walker.marks.apply(&mut mutants);
    let statements = executable_lines.iter().map(|&line| line..=line).collect();
    let mutated: std::collections::HashSet<usize> = mutants.iter().map(|mutant| mutant.line).collect();
    let passed_over = executable_lines
        .iter()
        .filter(|line| walker.refused_as_unsafe.contains(line) && !mutated.contains(line))
        .map(|&line| (line, &UNSAFE))
        .collect();
    // The lines that hold code or a mutant (a body replacement starts on its body's first line,
    // which may hold an item).
    let mut code_lines: Vec<usize> =
        executable_lines.iter().copied().chain(mutated.iter().copied()).collect();
    code_lines.sort_unstable();
    code_lines.dedup();
    let gates: Vec<(std::ops::RangeInclusive<usize>, &Vec<String>)> = walker
        .gated
        .iter()
        .map(|(range, features)| (parsed.source.line(range.start)..=parsed.source.line(range.end), features))
        .collect();
    let feature_gated = code_lines
        .into_iter()
        .filter_map(|line| {
            let mut features: Vec<String> = gates
                .iter()
                .filter(|(lines, _)| lines.contains(&line))
                .flat_map(|(_, features)| features.iter().cloned())
                .collect();
            features.sort();
            features.dedup();
            (!features.is_empty()).then_some((line, features))
        })
        .collect();
    Ok(FileMutants { executable_lines, statements, mutants, passed_over, feature_gated, not_made })
}

/// All executable lines of the file, sorted: lines holding code (not only brackets, `;` or
/// `,`) inside the body of a function outside test code.
pub fn executable_lines(source: &str) -> Result<Vec<usize>, MutateError> {
    let _spans = SpanScope;
    let parsed = source::parse(source)?;
    let mut walker = Walker::new(&parsed.source, &[], HashMap::new(), false);
    walker.walk(&parsed.file);
    let mask = parsed.code_lines_within(&walker.bodies);
    Ok((1..mask.len()).filter(|&l| mask[l]).collect())
}

/// Every `fn` with a body, `impl` and `trait` of the file (test code too), in source order.
pub fn scopes(source: &str) -> Result<Vec<crate::Scope>, MutateError> {
    use syn::spanned::Spanned;
    use syn::visit::Visit;

    struct Finder<'p, 'a> {
        source: &'p source::Source<'a>,
        scopes: Vec<crate::Scope>,
    }
    impl Finder<'_, '_> {
        fn push(&mut self, name: String, keyword: proc_macro2::Span, node: &impl Spanned) {
            let header = self.source.line(self.source.range(keyword).start);
            let end = self.source.line(self.source.node(node).end.saturating_sub(1));
            self.scopes.push(crate::Scope { name, header, end });
        }

        /// The node's text, its blanks made single spaces.
        fn text(&self, node: &impl Spanned) -> String {
            self.source.text[self.source.node(node)].split_whitespace().collect::<Vec<_>>().join(" ")
        }
    }
    impl<'ast> Visit<'ast> for Finder<'_, '_> {
        fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
            self.push(format!("fn {}", f.sig.ident), f.sig.fn_token.span, f);
            syn::visit::visit_item_fn(self, f);
        }
        fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
            self.push(format!("fn {}", f.sig.ident), f.sig.fn_token.span, f);
            syn::visit::visit_impl_item_fn(self, f);
        }
        fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
            if f.default.is_some() {
                self.push(format!("fn {}", f.sig.ident), f.sig.fn_token.span, f);
            }
            syn::visit::visit_trait_item_fn(self, f);
        }
        fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
            let ty = self.text(&i.self_ty);
            let name = match &i.trait_ {
                Some((path, _)) => format!("impl {} for {ty}", self.text(path)),
                None => format!("impl {ty}"),
            };
            self.push(name, i.impl_token.span, i);
            syn::visit::visit_item_impl(self, i);
        }
        fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
            self.push(format!("trait {}", t.ident), t.trait_token.span, t);
            syn::visit::visit_item_trait(self, t);
        }
    }

    let _spans = SpanScope;
    let parsed = source::parse(source)?;
    let mut finder = Finder { source: &parsed.source, scopes: Vec::new() };
    finder.visit_file(&parsed.file);
    Ok(finder.scopes)
}

/// The `// mutdelta: skip <reason>` comments of a file.
struct Pragmas {
    /// Reasons by line, for pragmas after code on their line.
    by_line: HashMap<usize, String>,
    /// Reasons by the line after a run of comment lines with a pragma, for the item,
    /// statement or match arm that starts there.
    above: HashMap<usize, String>,
}

impl Pragmas {
    fn read(parsed: &Parsed) -> Result<Self, MutateError> {
        let token_lines = parsed.token_lines();
        let comments = parsed.line_comments();
        let comment_lines: Vec<usize> = comments.iter().map(|c| parsed.source.line(c.start)).collect();
        let mut pragmas = Pragmas { by_line: HashMap::new(), above: HashMap::new() };
        for (comment, &line) in comments.iter().zip(&comment_lines) {
            let reason = match pragma::parse(&parsed.source.text[comment.clone()]) {
                Some(Pragma::Skip(reason)) => reason,
                Some(Pragma::SkipWithoutReason) => return Err(MutateError::PragmaWithoutReason { line }),
                None => continue,
            };
            if token_lines[line] {
                pragmas.by_line.insert(line, reason);
            } else {
                let comment_only = |l: &usize| comment_lines.contains(l) && !token_lines[*l];
                let below = (line + 1..token_lines.len()).find(|l| !comment_only(l)).unwrap_or(line + 1);
                if token_lines.get(below) == Some(&true) {
                    pragmas.above.insert(below, reason);
                }
            }
        }
        Ok(pragmas)
    }
}

/// What the pragmas cover.
struct Skipped {
    by_line: HashMap<usize, String>,
    /// Items, statements and arms a pragma above covers.
    covered: Vec<(Range<usize>, String)>,
}

impl Skipped {
    fn reason(&self, line: usize, offset: usize) -> Option<String> {
        let by_line = self.by_line.get(&line);
        let covering = || self.covered.iter().find(|(range, _)| range.contains(&offset)).map(|(_, r)| r);
        by_line.or_else(covering).cloned()
    }
}

fn finish(parsed: &Parsed, edit: Edit, skipped: &Skipped) -> Mutant {
    let text = parsed.source.text;
    let replacement = separated(text, &edit.span, &edit.replacement);
    let ignored = skipped.reason(parsed.source.line(edit.span.start), edit.span.start);
    Edit { replacement, ..edit }.into_mutant(text, &parsed.source.index, ignored)
}

/// The replacement, with a space added where it would otherwise fuse with its neighbours
/// into another token: `if(x)` → `if true`, `a|&b` → `a& &b`, `a**b` → `a/ *b`.
fn separated(text: &str, span: &Range<usize>, replacement: &str) -> String {
    let before = text[..span.start].chars().next_back();
    let after = text[span.end..].chars().next();
    let mut out = replacement.to_string();
    match (replacement.chars().next(), replacement.chars().next_back()) {
        (Some(first), Some(last)) => {
            if before.is_some_and(|before| fuses(before, first)) {
                out.insert(0, ' ');
            }
            if after.is_some_and(|after| fuses(last, after)) {
                out.push(' ');
            }
        }
        _ if before.zip(after).is_some_and(|(before, after)| fuses(before, after)) => out.push(' '),
        _ => {}
    }
    out
}

fn fuses(left: char, right: char) -> bool {
    let word = |c: char| c == '_' || c.is_alphanumeric();
    let operator = |c: char| "!#$%&*+-./:<=>?@^|~".contains(c);
    (word(left) && word(right)) || (operator(left) && operator(right))
}
