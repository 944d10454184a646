//! The code's shape, read from its syntax: each module of `src/` uses only modules of its own layer or of the layers below (the order DESIGN.md's "Layers" table states), no module of `src/` or `mutators/src/` reaches itself through its imports or uses its own folder's module, and no function of either is longer than a screen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// A module by its path inside its crate (`run::pool`); the crate root is the empty path.
type Module = String;

/// Every arrow `from → to` between two modules of a crate, with the names it takes (for the
/// failure message).
type Arrows = BTreeMap<(Module, Module), BTreeSet<String>>;

/// The modules of the crate rooted at `src` (`lib.rs`), by path, with their files.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(src: &Path, dir: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(src, &path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(src).unwrap().with_extension("");
                let mut parts: Vec<String> = relative
                    .components()
                    .map(|part| part.as_os_str().to_str().unwrap().to_string())
                    .collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    parts.pop();
                }
                out.insert(parts.join("::"), path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// Whether an item is compiled only for tests (`#[cfg(test)]`): its imports are not the product's.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|ident| ident == "test")
    })
}

/// The paths a file names: every `use` (its tree spelled out) and every path in its code, macro
/// arguments included; test-only items left out.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => self.found.push(with(prefix, &name.ident)),
            syn::UseTree::Rename(rename) => self.found.push(with(prefix, &rename.ident)),
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// `a::b::c` sequences in a macro's tokens, where the parser cannot see paths.
    fn tokens(&mut self, tokens: TokenStream) {
        let mut current: Vec<String> = Vec::new();
        let mut colons = 0;
        for token in tokens {
            match token {
                TokenTree::Ident(ident) if current.is_empty() || colons == 2 => {
                    current.push(ident.to_string());
                    colons = 0;
                }
                TokenTree::Punct(punct) if punct.as_char() == ':' && !current.is_empty() && colons < 2 => {
                    colons += 1;
                }
                TokenTree::Group(group) => {
                    self.flush(&mut current);
                    colons = 0;
                    self.tokens(group.stream());
                }
                TokenTree::Ident(ident) => {
                    self.flush(&mut current);
                    current.push(ident.to_string());
                    colons = 0;
                }
                _ => {
                    self.flush(&mut current);
                    colons = 0;
                }
            }
        }
        self.flush(&mut current);
    }

    fn flush(&mut self, current: &mut Vec<String>) {
        if current.len() > 1 {
            self.found.push(std::mem::take(current));
        }
        current.clear();
    }
}

fn with(prefix: &[String], last: &syn::Ident) -> Vec<String> {
    let mut path = prefix.to_vec();
    path.push(last.to_string());
    path
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Use(item) => &item.attrs,
            syn::Item::Struct(item) => &item.attrs,
            syn::Item::Enum(item) => &item.attrs,
            syn::Item::Const(item) => &item.attrs,
            syn::Item::Static(item) => &item.attrs,
            syn::Item::Trait(item) => &item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    /// A path of one segment is a local name (a variable may share a module's name); a module
    /// is reached by a path of two or more.
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            self.found.push(path.segments.iter().map(|segment| segment.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    /// `pub(super)` names who may see an item, not what the module uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// The module a path names from `module`, if it names one of the crate's: `crate::`, `super::`,
/// `self::` or a child module, resolved to the longest module it reaches.
fn resolve(module: &str, path: &[String], known: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let mut base: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split("::").collect() };
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|part| part == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        Some(child) => {
            let mut candidate = base.clone();
            candidate.push(child);
            if !known.contains_key(&candidate.join("::")) {
                return None;
            }
        }
        None => return None,
    }
    let mut full: Vec<&str> = base;
    full.extend(rest.iter().map(String::as_str));
    (0..=full.len())
        .rev()
        .map(|length| full[..length].join("::"))
        .find(|candidate| known.contains_key(candidate))
}

/// The arrows between the modules of the crate at `src`.
fn arrows(src: &Path) -> (BTreeMap<Module, PathBuf>, Arrows) {
    let known = modules(src);
    let mut arrows = Arrows::new();
    for (module, file) in &known {
        let text = std::fs::read_to_string(file).unwrap();
        let syntax = syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        let mut paths = Paths::default();
        paths.visit_file(&syntax);
        for path in &paths.found {
            let Some(target) = resolve(module, path, &known) else { continue };
            if target != *module && !target.is_empty() {
                arrows.entry((module.clone(), target)).or_default().insert(path.join("::"));
            }
        }
    }
    (known, arrows)
}

/// The import circles among `arrows`: each strongly connected set of two or more modules.
fn circles(arrows: &Arrows) -> Vec<Vec<Module>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in arrows.keys() {
        next.entry(from).or_default().push(to);
    }
    let nodes: BTreeSet<&str> = arrows.keys().flat_map(|(from, to)| [from.as_str(), to.as_str()]).collect();
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &after in next.get(node).into_iter().flatten() {
                if seen.insert(after) {
                    stack.push(after);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&str, BTreeSet<&str>> = nodes.iter().map(|&node| (node, reach(node))).collect();
    let mut found: Vec<Vec<Module>> = Vec::new();
    let mut placed = BTreeSet::new();
    for &node in &nodes {
        if placed.contains(node) || !reached[node].contains(node) {
            continue;
        }
        let circle: Vec<Module> = reached[node]
            .iter()
            .filter(|&&other| reached[other].contains(node))
            .map(|other| other.to_string())
            .collect();
        placed.extend(circle.iter().cloned());
        found.push(circle);
    }
    found
}

/// The layers DESIGN.md states, lowest first: each a list of module paths (a path stands for its
/// module and every module below it not listed on its own).
fn layers() -> Vec<(String, Vec<Module>)> {
    let design = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DESIGN.md")).unwrap();
    let section = design.split("\n## Layers").nth(1).expect("DESIGN.md has a `## Layers` section");
    let section = section.split("\n## ").next().unwrap();
    let mut layers = Vec::new();
    for row in section.lines().filter(|line| line.starts_with('|')) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let [name, modules, ..] = cells[..] else { continue };
        if name == "layer" || name.starts_with("---") {
            continue;
        }
        let modules = modules.split('`').skip(1).step_by(2).map(str::to_string).collect();
        layers.push((name.to_string(), modules));
    }
    layers.reverse();
    layers
}

/// The layer of `module`: its own entry's, else its closest listed ancestor's.
fn layer_of(module: &str, layers: &[(String, Vec<Module>)]) -> Option<usize> {
    let mut path: Vec<&str> = module.split("::").collect();
    while !path.is_empty() {
        let name = path.join("::");
        if let Some(index) = layers.iter().position(|(_, modules)| modules.contains(&name)) {
            return Some(index);
        }
        path.pop();
    }
    None
}

#[test]
fn every_module_of_the_binary_uses_only_its_own_layer_or_those_below() {
    let (known, arrows) = arrows(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let layers = layers();
    assert!(layers.len() >= 5, "DESIGN.md's layer table was not read: {layers:?}");
    let unplaced: Vec<&Module> =
        known.keys().filter(|module| !module.is_empty() && layer_of(module, &layers).is_none()).collect();
    assert!(unplaced.is_empty(), "modules no layer of DESIGN.md holds (add them to its table): {unplaced:?}");
    let upward: Vec<String> = arrows
        .iter()
        .filter(|((from, to), _)| layer_of(from, &layers) < layer_of(to, &layers))
        .map(|((from, to), names)| {
            let (above, below) =
                (&layers[layer_of(to, &layers).unwrap()].0, &layers[layer_of(from, &layers).unwrap()].0);
            format!(
                "{from} ({below}) uses {to} ({above}): {}",
                names.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    assert!(upward.is_empty(), "{} arrows run up a layer:\n{}", upward.len(), upward.join("\n"));
}

#[test]
fn no_module_of_the_binary_reaches_itself_through_its_imports() {
    let (_, arrows) = arrows(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(arrows.len() > 100, "the binary's imports were not read: {} arrows", arrows.len());
    let circles = circles(&arrows);
    assert!(
        circles.is_empty(),
        "import circles: {circles:?}\narrows inside them:\n{}",
        inside(&arrows, &circles)
    );
}

#[test]
fn no_module_of_the_mutators_reaches_itself_through_its_imports() {
    let (_, arrows) = arrows(&Path::new(env!("CARGO_MANIFEST_DIR")).join("mutators/src"));
    assert!(arrows.len() > 20, "the mutators' imports were not read: {} arrows", arrows.len());
    let circles = circles(&arrows);
    assert!(
        circles.is_empty(),
        "import circles: {circles:?}\narrows inside them:\n{}",
        inside(&arrows, &circles)
    );
}

/// The arrows that join the modules of each circle, with what they take.
fn inside(arrows: &Arrows, circles: &[Vec<Module>]) -> String {
    let mut lines = Vec::new();
    for circle in circles {
        for ((from, to), names) in arrows {
            if circle.contains(from) && circle.contains(to) {
                lines.push(format!(
                    "{from} -> {to}: {}",
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn no_module_uses_the_folder_module_above_it() {
    for src in ["src", "mutators/src"] {
        let (_, arrows) = arrows(&Path::new(env!("CARGO_MANIFEST_DIR")).join(src));
        let upward: Vec<String> = arrows
            .iter()
            .filter(|((from, to), _)| from.starts_with(&format!("{to}::")))
            .map(|((from, to), names)| {
                format!("{from} -> {to}: {}", names.iter().cloned().collect::<Vec<_>>().join(", "))
            })
            .collect();
        assert!(
            upward.is_empty(),
            "{src}: modules that use their own folder's module:\n{}",
            upward.join("\n")
        );
    }
}

/// The longest a product function may be, from its `fn` to its closing brace.
const LONGEST_FUNCTION: usize = 80;

/// The functions of a file (test-only items aside) with their length in lines.
#[derive(Default)]
struct Lengths {
    found: Vec<(String, usize)>,
}

impl Lengths {
    fn measure(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let lines = block.brace_token.span.close().end().line + 1 - fn_token.span.start().line;
        self.found.push((name.to_string(), lines));
    }
}

impl<'ast> Visit<'ast> for Lengths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let test_only = match item {
            syn::Item::Mod(item) => is_test_only(&item.attrs),
            syn::Item::Fn(item) => is_test_only(&item.attrs),
            syn::Item::Impl(item) => is_test_only(&item.attrs),
            _ => false,
        };
        if !test_only {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.measure(&item.sig.ident, &item.sig.fn_token, &item.block);
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test_only(&item.attrs) {
            self.measure(&item.sig.ident, &item.sig.fn_token, &item.block);
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.measure(&item.sig.ident, &item.sig.fn_token, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}

/// Every function of the crate at `src` longer than `LONGEST_FUNCTION`, with its file.
fn long_functions(src: &Path) -> Vec<String> {
    let mut long = Vec::new();
    for file in modules(src).values() {
        let syntax = syn::parse_file(&std::fs::read_to_string(file).unwrap()).unwrap();
        let mut lengths = Lengths::default();
        lengths.visit_file(&syntax);
        for (name, lines) in lengths.found.into_iter().filter(|(_, lines)| *lines > LONGEST_FUNCTION) {
            long.push(format!(
                "{}: {name} ({lines} lines)",
                file.strip_prefix(src).unwrap_or(file).display()
            ));
        }
    }
    long
}

#[test]
fn no_product_function_is_longer_than_a_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let long: Vec<String> =
        ["src", "mutators/src"].iter().flat_map(|src| long_functions(&root.join(src))).collect();
    assert!(long.is_empty(), "functions over {LONGEST_FUNCTION} lines (split them):\n{}", long.join("\n"));
}

#[test]
fn a_function_is_measured_from_its_fn_to_its_closing_brace_and_test_code_is_not() {
    let text = "/// doc\nfn three() {\n    1;\n}\n\nimpl X {\n    fn two() {}\n}\n\n#[cfg(test)]\nmod tests {\n    fn long() {\n\n\n    }\n}\n";
    let mut lengths = Lengths::default();
    lengths.visit_file(&syn::parse_file(text).unwrap());
    assert_eq!(lengths.found, [("three".to_string(), 3), ("two".to_string(), 1)]);
}

#[test]
fn a_path_is_resolved_to_the_module_it_names() {
    let known: BTreeMap<Module, PathBuf> =
        ["", "run", "run::pool", "run::process", "report", "python", "python::select"]
            .into_iter()
            .map(|module| (module.to_string(), PathBuf::new()))
            .collect();
    let path = |text: &str| text.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(resolve("run::pool", &path("super::process::Exit"), &known).as_deref(), Some("run::process"));
    assert_eq!(resolve("run::pool", &path("super::INTERRUPTED"), &known).as_deref(), Some("run"));
    assert_eq!(
        resolve("python", &path("crate::run::process::Exit"), &known).as_deref(),
        Some("run::process")
    );
    assert_eq!(resolve("python", &path("select::relevant"), &known).as_deref(), Some("python::select"));
    assert_eq!(resolve("python", &path("self::select::relevant"), &known).as_deref(), Some("python::select"));
    assert_eq!(resolve("python::select", &path("std::path::Path"), &known), None, "outside the crate");
    assert_eq!(resolve("python::select", &path("pool::x"), &known), None, "not a child of its module");
    assert_eq!(resolve("", &path("super::x"), &known), None, "above the crate root");
}

#[test]
fn circles_are_found_and_a_chain_is_none() {
    let arrows = |pairs: &[(&str, &str)]| -> Arrows {
        pairs.iter().map(|(from, to)| ((from.to_string(), to.to_string()), BTreeSet::new())).collect()
    };
    assert!(circles(&arrows(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    assert_eq!(
        circles(&arrows(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d")])),
        [vec!["a", "b", "c"], vec!["d", "e"]]
    );
}

/// The languages' names the engine's modules may not spell: the engine asks a language's
/// plugin or descriptor, never names one.
const LANGUAGE_NAMES: [&str; 5] = ["python", "pytest", "cargo", "rust", "nextest"];

/// The engine's modules (a path stands for its module and every module below it).
const ENGINE: [&str; 9] =
    ["run", "report", "model", "options", "config", "plan", "reformat", "choose", "shard"];

/// Where a language's name is data, not a choice the engine makes: mutdelta's own package
/// facts, as the compiler gives them.
const NAMES_AS_DATA: [&str; 2] = ["CARGO_PKG_VERSION", "CARGO_PKG_REPOSITORY"];

/// The words of an identifier or a string: split at every character that is not a letter or a
/// digit and where a lower-case letter meets an upper-case one, lower-cased.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for character in text.chars() {
        if !character.is_alphanumeric() {
            words.push(std::mem::take(&mut current));
            previous_lower = false;
            continue;
        }
        if character.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
        current.extend(character.to_lowercase());
    }
    words.push(current);
    words.retain(|word| !word.is_empty());
    words
}

/// The identifiers and string literals of a file's product code (test-only items aside),
/// macro arguments included.
#[derive(Default)]
struct Names {
    found: Vec<String>,
}

impl Names {
    fn tokens(&mut self, tokens: TokenStream) {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => self.found.push(ident.to_string()),
                TokenTree::Literal(literal) => {
                    if let Ok(syn::Lit::Str(text)) = syn::parse_str::<syn::Lit>(&literal.to_string()) {
                        self.found.push(text.value());
                    }
                }
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Punct(_) => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let test_only = match item {
            syn::Item::Mod(item) => is_test_only(&item.attrs),
            syn::Item::Fn(item) => is_test_only(&item.attrs),
            syn::Item::Impl(item) => is_test_only(&item.attrs),
            syn::Item::Use(item) => is_test_only(&item.attrs),
            _ => false,
        };
        if !test_only {
            syn::visit::visit_item(self, item);
        }
    }

    /// A doc comment is prose, not a name the code uses.
    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        if !attr.path().is_ident("doc") {
            syn::visit::visit_attribute(self, attr);
        }
    }

    fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
        self.found.push(ident.to_string());
    }

    fn visit_lit_str(&mut self, text: &'ast syn::LitStr) {
        self.found.push(text.value());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// Each identifier or string of the engine's product code that names a language, as
/// `module: text`.
fn languages_named_by_the_engine(src: &Path) -> Vec<String> {
    let in_engine = |module: &str| {
        ENGINE.iter().any(|engine| module == *engine || module.starts_with(&format!("{engine}::")))
    };
    let mut named = Vec::new();
    for (module, file) in modules(src).iter().filter(|(module, _)| in_engine(module)) {
        let syntax = syn::parse_file(&std::fs::read_to_string(file).unwrap()).unwrap();
        let mut names = Names::default();
        names.visit_file(&syntax);
        for text in names.found {
            let as_data = NAMES_AS_DATA.contains(&text.as_str());
            if !as_data && words(&text).iter().any(|word| LANGUAGE_NAMES.contains(&word.as_str())) {
                named.push(format!("{module}: {text}"));
            }
        }
    }
    named.sort();
    named.dedup();
    named
}

#[test]
fn the_engine_names_no_language() {
    let named = languages_named_by_the_engine(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        named.is_empty(),
        "{} names of languages in the engine's code (ask the language):\n{}",
        named.len(),
        named.join("\n")
    );
}

#[test]
fn a_language_is_named_by_a_word_of_an_identifier_or_a_string_not_by_a_part_of_one() {
    assert_eq!(words("PythonSettings"), ["python", "settings"]);
    assert_eq!(words("options.rust.test_tool"), ["options", "rust", "test", "tool"]);
    assert_eq!(
        words("no executable Python or Rust lines"),
        ["no", "executable", "python", "or", "rust", "lines"]
    );
    assert_eq!(words("trusted_runs"), ["trusted", "runs"]);
    let text = "/// Python's.\nfn f() -> &'static str { let _ = format!(\"{}\", \"pytest\"); \"ok\" }\n#[cfg(test)]\nmod tests { const X: &str = \"cargo\"; }\nstruct PythonSettings;";
    let mut names = Names::default();
    names.visit_file(&syn::parse_file(text).unwrap());
    let languages: Vec<&String> = names
        .found
        .iter()
        .filter(|name| words(name).iter().any(|word| LANGUAGE_NAMES.contains(&word.as_str())))
        .collect();
    assert_eq!(
        languages,
        ["pytest", "PythonSettings"],
        "a macro's string and a type; the doc comment and the test module left out"
    );
}
