//! Function body replacement: a whole new body holding a value of the function's return type.

use std::ops::Range;

use syn::{
    Block, Expr, GenericArgument, Path, PathArguments, ReturnType, Signature, Stmt, Type, TypeParamBound,
};

use super::walk::Walker;
use crate::catalog::{self, Mutator, Rule, RUST};

const INTEGERS: &[&str] =
    &["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize"];
const ITERATOR_TRAITS: &[&str] = &["Iterator", "IntoIterator", "DoubleEndedIterator", "ExactSizeIterator"];
/// Wrappers built with `<name>::new(value)`.
const POINTERS: &[&str] = &["Box", "Rc", "Arc"];

impl Walker<'_, '_> {
    /// Replaces the body of a `fn` whose every line was requested (`braces`, from `{` to `}`):
    /// its statements, from the first to the last, give way to a value of its return type (none
    /// for `()`), so the mutant stands on the body's first line, as cargo-mutants places it. A
    /// function the change merely touches keeps its body.
    pub(crate) fn replace_body(&mut self, sig: &Signature, block: &Block, braces: Range<usize>) {
        if sig.constness.is_some() {
            return; // its body may be evaluated at compile time, where most values cannot be built
        }
        if let [Stmt::Expr(Expr::Lit(_), None)] = block.stmts.as_slice() {
            return; // `{ 7 }`: the literal's own mutants say the same
        }
        let (Some(first), Some(last)) = (block.stmts.first(), block.stmts.last()) else {
            return; // `{}`: nothing to replace
        };
        let lines = self.source.line(braces.start)..=self.source.line(braces.end - 1);
        if !lines.into_iter().all(|line| self.is_wanted(line)) {
            return;
        }
        let statements = self.source.node(first).start..self.source.node(last).end;
        let body = &self.source.text[statements.clone()];
        let mut values = return_values(&sig.output);
        values.extend(self.default_fields(&sig.output, block));
        for (rule, value) in values {
            let replacement = if value == "()" { String::new() } else { value.clone() };
            if without_blanks(body) == without_blanks(&replacement) {
                continue;
            }
            let description = format!("replace body of `{}` with `{value}`", sig.ident);
            self.push(statements.clone(), replacement, rule, description);
        }
    }
}

impl Walker<'_, '_> {
    /// Replaces each value a function ends in (its final expression, or the final expression of
    /// each branch of a final `if` or `match`), where the change rewrote that expression (every
    /// line of it) but not the whole function: the values the body rule gives for its return
    /// type. A function whose every line is new gets its body replaced instead.
    pub(crate) fn replace_tail(&mut self, sig: &Signature, block: &Block, braces: Range<usize>) {
        if sig.constness.is_some() || self.all_wanted(&braces) {
            return;
        }
        let Some(rule) = catalog::lookup(RUST, Mutator::FunctionBody, "fn f() -> T { ..; <tail> }") else {
            return;
        };
        let mut tails = Vec::new();
        returned_values(block, &mut tails);
        let values = return_values(&sig.output);
        for tail in tails {
            let span = self.source.node(tail);
            if !self.all_wanted(&span) {
                continue;
            }
            let written = without_blanks(&self.source.text[span.clone()]);
            for (_, value) in &values {
                if value == "()" || without_blanks(value) == written {
                    continue;
                }
                let description = format!("replace the value `{}` returns with `{value}`", sig.ident);
                self.push(span.clone(), value.clone(), rule, description);
            }
        }
    }

    fn all_wanted(&self, range: &Range<usize>) -> bool {
        (self.source.line(range.start)..=self.source.line(range.end - 1)).all(|line| self.is_wanted(line))
    }

    /// The struct literal a body ends in (returning `Self` or the struct's type, no `..base`),
    /// with `Default::default()` for every field: a value of the type that keeps nothing of the
    /// inputs, also where the type itself is not `Default`.
    fn default_fields(&self, output: &ReturnType, block: &Block) -> Option<Value> {
        let ReturnType::Type(_, ty) = output else { return None };
        let Type::Path(returned) = &**ty else { return None };
        let Some(Stmt::Expr(Expr::Struct(literal), None)) = block.stmts.last() else { return None };
        let returned = returned.path.segments.last()?.ident.to_string();
        let built = literal.path.segments.last()?.ident.to_string();
        if literal.rest.is_some() || literal.fields.is_empty() || (returned != "Self" && returned != built) {
            return None;
        }
        let fields: Vec<String> = literal
            .fields
            .iter()
            .map(|field| {
                format!("{}: Default::default()", self.source.text[self.source.node(&field.member)].trim())
            })
            .collect();
        let path = self.source.text[self.source.node(&literal.path)].trim();
        let value = format!("{path} {{ {} }}", fields.join(", "));
        let rule = catalog::lookup(RUST, Mutator::FunctionBody, "fn f() -> Self { ..; S { a: x, b: y } }")?;
        Some((rule, value))
    }
}

/// The expressions whose value `block` ends in: its final expression, through the branches of
/// an `if` or `match` and nested blocks; not literals (their own mutants say the same), loops,
/// closures, or macros that never return.
fn returned_values<'b>(block: &'b Block, found: &mut Vec<&'b Expr>) {
    let Some(Stmt::Expr(tail, None)) = block.stmts.last() else { return };
    returned_from(tail, found);
}

fn returned_from<'b>(expr: &'b Expr, found: &mut Vec<&'b Expr>) {
    match expr {
        Expr::If(branches) => {
            returned_values(&branches.then_branch, found);
            if let Some((_, otherwise)) = &branches.else_branch {
                returned_from(otherwise, found);
            }
        }
        Expr::Match(matched) => matched.arms.iter().for_each(|arm| returned_from(&arm.body, found)),
        Expr::Block(inner) if inner.label.is_none() => returned_values(&inner.block, found),
        Expr::Paren(inner) => returned_from(&inner.expr, found),
        Expr::Block(_) | Expr::Unsafe(_) | Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {}
        Expr::Lit(_) | Expr::Const(_) | Expr::Closure(_) | Expr::Async(_) | Expr::Return(_) => {}
        Expr::Macro(call)
            if call.mac.path.segments.last().is_some_and(|segment| {
                ["panic", "unreachable", "todo", "unimplemented"]
                    .contains(&segment.ident.to_string().as_str())
            }) => {}
        _ => found.push(expr),
    }
}

fn without_blanks(text: &str) -> String {
    text.split_whitespace().collect()
}

/// A value to return, with the catalog row it comes from.
type Value = (&'static Rule, String);

fn return_values(output: &ReturnType) -> Vec<Value> {
    match output {
        ReturnType::Default => table("fn f() { <body> }"),
        ReturnType::Type(_, ty) => values(ty),
    }
}

/// The catalog's values for a return type `pattern`.
fn table(pattern: &str) -> Vec<Value> {
    let from = if pattern.starts_with("fn ") {
        pattern.to_string()
    } else {
        format!("fn f() -> {pattern} {{ <body> }}")
    };
    catalog::entries(RUST, Mutator::FunctionBody, &from).map(|(rule, to)| (rule, to.to_string())).collect()
}

/// Values of `ty` to return; none when no value can be written without knowing more.
fn values(ty: &Type) -> Vec<Value> {
    match ty {
        Type::Paren(inner) => values(&inner.elem),
        Type::Group(inner) => values(&inner.elem),
        Type::Tuple(tuple) if tuple.elems.is_empty() => table("fn f() { <body> }"),
        Type::Tuple(_) | Type::Array(_) => table("<other type>"),
        Type::Path(path) if path.qself.is_none() => path_values(&path.path),
        Type::Reference(reference) if reference.mutability.is_none() => match &*reference.elem {
            Type::Path(path) if path.qself.is_none() && path.path.is_ident("str") => table("&str"),
            Type::Slice(_) => table("&[T]"),
            _ => Vec::new(),
        },
        Type::ImplTrait(bounds) if bounds.bounds.iter().any(is_iterator) => table("impl Iterator"),
        // !, other impl Trait, dyn Trait, pointers, fn pointers, unsized types, macros
        _ => Vec::new(),
    }
}

fn path_values(path: &Path) -> Vec<Value> {
    let Some(last) = path.segments.last() else { return Vec::new() };
    let name = last.ident.to_string();
    let argument = first_type_argument(&last.arguments);
    match name.as_str() {
        "bool" | "String" => table(&name),
        "f32" | "f64" => table("<float>"),
        "Vec" | "Option" => table(&format!("{name}<T>")),
        "str" => Vec::new(),
        "Result" => {
            let inner = argument.map_or_else(|| table("<other type>"), values);
            wrap(&table("Result<T, E>"), &inner)
        }
        _ if INTEGERS.contains(&name.as_str()) => table("<integer>"),
        _ if POINTERS.contains(&name.as_str()) => {
            let inner = argument.map(values).unwrap_or_default();
            let templates = table(&format!("{name}<T>"));
            // Keep the path as written: `std::rc::Rc<T>` gives `std::rc::Rc::new(..)`.
            let written = written_path(path);
            let templates: Vec<Value> =
                templates.into_iter().map(|(rule, t)| (rule, t.replacen(&name, &written, 1))).collect();
            wrap(&templates, &inner)
        }
        _ => table("<other type>"),
    }
}

/// Each template with `<T>` replaced by each value; the template's row names the result.
fn wrap(templates: &[Value], values: &[Value]) -> Vec<Value> {
    templates
        .iter()
        .flat_map(|(rule, template)| {
            values.iter().map(move |(_, value)| (*rule, template.replace("<T>", value)))
        })
        .collect()
}

fn first_type_argument(arguments: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(angle) = arguments else { return None };
    angle.args.iter().find_map(|argument| match argument {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    })
}

/// The path's segments without their generic arguments: `std::rc::Rc`.
fn written_path(path: &Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|segment| segment.ident.to_string()).collect();
    let lead = if path.leading_colon.is_some() { "::" } else { "" };
    format!("{lead}{}", segments.join("::"))
}

fn is_iterator(bound: &TypeParamBound) -> bool {
    let TypeParamBound::Trait(bound) = bound else { return false };
    bound.path.segments.last().is_some_and(|last| ITERATOR_TRAITS.iter().any(|name| last.ident == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(ty: &str) -> Vec<String> {
        values(&syn::parse_str::<Type>(ty).unwrap()).into_iter().map(|(_, value)| value).collect()
    }

    #[test]
    fn values_by_return_type() {
        assert_eq!(of("bool"), ["true", "false"]);
        assert_eq!(of("u8"), ["0", "1"]);
        assert_eq!(of("f64"), ["0.0", "1.0"]);
        assert_eq!(of("std::string::String"), ["String::new()", "\"xyzzy\".into()"]);
        assert_eq!(of("&'a str"), ["\"\"", "\"xyzzy\""]);
        assert_eq!(of("&[u8]"), ["&[]"]);
        assert_eq!(of("Vec<u8>"), ["vec![]"]);
        assert_eq!(of("Option<String>"), ["None"]);
        assert_eq!(of("Result<bool, E>"), ["Ok(true)", "Ok(false)"]);
        assert_eq!(of("io::Result<()>"), ["Ok(())"]);
        assert_eq!(of("fmt::Result"), ["Ok(Default::default())"]);
        assert_eq!(of("Result<Config, Error>"), ["Ok(Default::default())"]);
        assert_eq!(of("std::rc::Rc<u32>"), ["std::rc::Rc::new(0)", "std::rc::Rc::new(1)"]);
        assert_eq!(of("Box<Option<T>>"), ["Box::new(None)"]);
        assert_eq!(of("impl Iterator<Item = u8> + '_"), ["std::iter::empty()"]);
        assert_eq!(of("Self"), ["Default::default()"]);
        assert_eq!(of("(u8, bool)"), ["Default::default()"]);
        assert_eq!(of("()"), ["()"]);
        for none in
            ["!", "impl Fn()", "Box<dyn Error>", "&mut T", "&T", "*const u8", "Result<impl Display, E>"]
        {
            assert!(of(none).is_empty(), "{none}: {:?}", of(none));
        }
    }
}
