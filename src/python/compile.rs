//! The compile check: the changed files and every mutant compiled in one interpreter, each mutant within its top-level statement; the answers kept for a re-run of the same request.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::interpreter;
use crate::cache::{self, Cache};
use crate::model::plan::{Plan, PlannedMutant};

const SCRIPT: &str = include_str!("compile_check.py");
/// Where answers are kept, and how many: one per change checked (and per kill-loss audit side).
const COMPILED: &str = "python/compiled";
const KEPT_COMPILED: usize = 64;

/// What the script answers: an error (or `None`) per file and per mutant, and per mutant
/// whether it compiles as the original or an earlier mutant does, in request order.
#[derive(Debug, serde::Deserialize)]
struct Answers {
    originals: Vec<Option<String>>,
    mutants: Vec<Option<String>>,
    equivalent: Vec<Option<SameCode>>,
}

/// The script's word for a mutant whose code is another's: "original", or an earlier
/// mutant's index in the request.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum SameCode {
    Original(OriginalWord),
    Mutant(usize),
}

#[derive(Debug, serde::Deserialize)]
enum OriginalWord {
    #[serde(rename = "original")]
    Original,
}

/// A mutant that compiles to the same code (bytecode, folded constants, names: all but the
/// source positions) as the original or as another mutant: it cannot behave differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Equivalent {
    /// The same code as the unmutated source.
    Original,
    /// The same code as the mutant with this id, which is tested in its stead.
    Mutant(usize),
}

impl Equivalent {
    /// The verdict's reason.
    pub fn reason(self) -> String {
        match self {
            Equivalent::Original => {
                "equivalent: compiles to the code the original compiles to (only source positions differ)"
                    .to_string()
            }
            Equivalent::Mutant(id) => format!(
                "equivalent: compiles to the code mutant {id} compiles to (only source positions differ), which is tested"
            ),
        }
    }
}

/// What the compile check found: the error of each mutant that does not compile and the
/// equivalence of each that compiles as the original or an earlier mutant does, by mutant id.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Compiled {
    pub errors: HashMap<usize, String>,
    pub equivalent: HashMap<usize, Equivalent>,
}

/// Compiles the changed Python files and every candidate mutant; a changed file that does not
/// compile is refused (every mutant of it would be CompileError). Returns the error of each
/// mutant that does not compile and which mutants compile to code already tested, by mutant id.
pub fn compile_check(
    python: &Path,
    plan: &Plan,
    candidates: &[PlannedMutant],
    cache: &Cache,
) -> Result<Compiled> {
    let files: Vec<usize> =
        (0..plan.files.len()).filter(|&i| plan.files[i].language == super::spec::LANGUAGE).collect();
    // The mutant ids in the order the script sees their mutants: file by file.
    let mut order: Vec<usize> = Vec::new();
    let mut requests = Vec::new();
    for &index in &files {
        let file = &plan.files[index];
        // In id order, whatever order the caller holds them in: the request is the cache key.
        let mut mutants: Vec<&PlannedMutant> = candidates.iter().filter(|c| c.file == index).collect();
        mutants.sort_by_key(|planned| planned.id);
        order.extend(mutants.iter().map(|planned| planned.id));
        requests.push(json!({
            "name": file.path.display().to_string(),
            "source": file.source,
            "mutants": mutants.iter().map(|planned| {
                let m = &planned.mutant;
                json!([m.start.line, m.start.column, m.end.line, m.end.column, m.replacement])
            }).collect::<Vec<_>>(),
        }));
    }
    let answers = run(python, &json!({ "files": requests }), cache)?;
    if answers.mutants.len() != order.len()
        || answers.equivalent.len() != order.len()
        || answers.originals.len() != files.len()
    {
        bail!("the compile check answered for {} of {} mutants", answers.mutants.len(), order.len());
    }
    for (&index, error) in files.iter().zip(&answers.originals) {
        if let Some(error) = error {
            bail!(
                "{} does not compile ({error}): fix it before checking its mutants",
                plan.files[index].path.display()
            );
        }
    }
    let equivalent = order
        .iter()
        .zip(answers.equivalent)
        .filter_map(|(&id, same)| match same? {
            SameCode::Original(_) => Some((id, Equivalent::Original)),
            SameCode::Mutant(index) => Some((id, Equivalent::Mutant(*order.get(index)?))),
        })
        .collect();
    let errors =
        order.into_iter().zip(answers.mutants).filter_map(|(id, error)| Some((id, error?))).collect();
    Ok(Compiled { errors, equivalent })
}

/// Runs the script in `python` with `request` on its standard input, or reads what it answered
/// to the same request under the same interpreter before (whether code compiles depends on
/// nothing else).
fn run(python: &Path, request: &serde_json::Value, cache: &Cache) -> Result<Answers> {
    let request = serde_json::to_vec(request)?;
    let name = match interpreter::fingerprint(python) {
        Ok(interpreter) if cache.is_on() => {
            Some(format!("{COMPILED}/{}", cache::key(&[SCRIPT.as_bytes(), interpreter.as_bytes(), &request])))
        }
        _ => None,
    };
    if let Some(saved) = name.as_deref().and_then(|name| cache.read(name)) {
        if let Ok(answers) = serde_json::from_slice(&saved) {
            return Ok(answers);
        }
    }
    let output = interpreter::run_script(python, SCRIPT, "the compile check", &request)?;
    let answers =
        serde_json::from_slice(&output).context("the compile check printed something unexpected")?;
    if let Some(name) = name {
        cache.write(&name, &output);
        cache.keep_newest(COMPILED, KEPT_COMPILED);
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of `calc.py` holding `source`, with the mutants of its line 2.
    fn plan_of_line_2(source: &str) -> Plan {
        let mutants = mutators::python::mutate(source, &[2]).unwrap().mutants;
        Plan {
            files: vec![crate::model::plan::FilePlan {
                path: "calc.py".into(),
                language: crate::python::spec::LANGUAGE,
                source: source.to_string(),
                lines: vec![2],
                statements: vec![2..=2],
                mutants,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_same_mutants_in_another_order_are_the_same_request() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let cache = Cache::open(dir.path(), true);
        let plan = plan_of_line_2("def f(a):\n    return a + 1\n");
        let in_order = plan.mutants();
        assert!(in_order.len() > 2, "{in_order:?}");
        let reversed: Vec<PlannedMutant> = in_order.iter().rev().cloned().collect();
        let python = Path::new("python3");
        let first = compile_check(python, &plan, &in_order, &cache).unwrap();
        let second = compile_check(python, &plan, &reversed, &cache).unwrap();
        assert_eq!(first, second);
        let kept = std::fs::read_dir(dir.path().join(".git/mutdelta").join(COMPILED)).unwrap().count();
        assert_eq!(kept, 1, "one answer kept for both orders");
    }

    #[test]
    fn a_mutant_that_compiles_to_the_originals_code_or_an_earlier_mutants_is_equivalent() {
        let plan = plan_of_line_2("def f(x):\n    y = 2 + 0\n    return x * y\n");
        let planned = plan.mutants();
        let id = |description: &str| {
            let found = planned.iter().find(|p| p.mutant.description == description);
            found.unwrap_or_else(|| panic!("no mutant {description}: {planned:#?}")).id
        };
        let found = compile_check(Path::new("python3"), &plan, &planned, &Cache::off()).unwrap();

        assert!(found.errors.is_empty(), "{:?}", found.errors);
        // 2 - 0 folds to 2, as 2 + 0 does; 3 + 0 and 2 + 1 both fold to 3.
        let minus = id("replace + with -");
        let three = id("replace 2 with 3");
        let plus_one = id("replace 0 with 1");
        let expected = HashMap::from([(minus, Equivalent::Original), (plus_one, Equivalent::Mutant(three))]);
        assert_eq!(found.equivalent, expected, "{planned:#?}");
    }

    /// Each mutated file compiled whole, as the oracle: the error (or none) per mutant.
    const WHOLE_FILE: &str = r#"
import json, sys
request = json.load(sys.stdin)
answers = []
for source, (line, column, end_line, end_column, replacement) in request:
    lines = source.split("\n")
    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text) + 1)
    begin, end = starts[line - 1] + column - 1, starts[end_line - 1] + end_column - 1
    try:
        compile(source[:begin] + replacement + source[end:], "shapes.py", "exec", dont_inherit=True)
        answers.append(None)
    except (SyntaxError, ValueError) as error:
        answers.append(f"{type(error).__name__}: {error}")
print(json.dumps(answers))
"#;

    /// Each of `mutants` of `source` compiled in the whole file by `WHOLE_FILE`: its error, or none.
    fn whole_file_errors(python: &Path, source: &str, mutants: &[serde_json::Value]) -> Vec<Option<String>> {
        let request: Vec<_> = mutants.iter().map(|mutant| json!([source, mutant])).collect();
        let answer = interpreter::run_script(
            python,
            WHOLE_FILE,
            "the whole-file oracle",
            &serde_json::to_vec(&request).unwrap(),
        )
        .unwrap();
        serde_json::from_slice(&answer).unwrap()
    }

    /// `mutants` of `source` compiled with every function and statement taken as long (each
    /// mutant within its statement or element) and with none: asserts that both answer the
    /// whole-file oracle's errors and the same equivalences. The narrowed answers, how many
    /// mutants do not compile, and how many are equivalent.
    fn narrowed_as_whole(source: &str, mutants: &[serde_json::Value]) -> (Answers, usize, usize) {
        let python = Path::new("python3");
        let ask = |long: u64| {
            let request = json!({
                "files": [{ "name": "shapes.py", "source": source, "mutants": mutants }],
                "longFunction": long,
            });
            run(python, &request, &Cache::off()).unwrap()
        };
        let (narrowed, whole) = (ask(0), ask(1_000_000));
        let oracle = whole_file_errors(python, source, mutants);
        assert_eq!(narrowed.mutants, oracle, "the errors, at the file's lines");
        assert_eq!(whole.mutants, oracle);
        let equivalent = |answers: &Answers| -> Vec<String> {
            answers.equivalent.iter().map(|same| format!("{same:?}")).collect()
        };
        assert_eq!(equivalent(&narrowed), equivalent(&whole));
        let errors = oracle.iter().filter(|error| error.is_some()).count();
        let found = equivalent(&narrowed).iter().filter(|same| *same != "None").count();
        (narrowed, errors, found)
    }

    #[test]
    fn a_mutant_compiled_within_its_method_or_statement_errs_as_the_whole_file_would() {
        let source = [
            "from __future__ import annotations",     // 1
            "import functools",                       // 2
            "",                                       // 3
            "class Shape:",                           // 4
            "    sides = 0",                          // 5
            "",                                       // 6
            "    @functools.cache",                   // 7
            "    def area(self):",                    // 8
            "        total = 0",                      // 9
            "        for side in range(self.sides):", // 10
            "            total += side",              // 11
            "        return total",                   // 12
            "",                                       // 13
            "    class Inner:",                       // 14
            "        async def ticks(self):",         // 15
            "            yield 1",                    // 16
            "",                                       // 17
            "    def outer(self):",                   // 18
            "        count = 0",                      // 19
            "        def bump():",                    // 20
            "            nonlocal count",             // 21
            "            count += 1",                 // 22
            "        return bump",                    // 23
            "",                                       // 24
            "class Dot: value: int = 1",              // 25
            "",                                       // 26
            "def free(x: Shape) -> int:",             // 27
            "    return x.sides",                     // 28
            "",                                       // 29
        ]
        .join("\n");
        // [line, column, end line, end column, replacement], 1-based, end exclusive.
        let mutants = vec![
            json!([11, 19, 11, 21, "-="]),                // compiles
            json!([11, 13, 11, 18, "1"]),                 // `1 += side`: a literal cannot be assigned to
            json!([10, 9, 10, 12, "while"]),              // `while side in ...:` compiles
            json!([12, 9, 12, 21, "break"]),              // 'break' outside loop
            json!([16, 13, 16, 20, "yield 1; return 1"]), // 'return' with value in async generator
            json!([21, 13, 21, 27, "nonlocal total"]),    // no binding for nonlocal 'total'
            json!([22, 13, 22, 18, "pass"]),              // `pass += 1`: invalid syntax
            json!([7, 5, 7, 21, "@"]),                    // a bare decorator
            json!([5, 13, 5, 14, "("]),                   // class body, outside any method
            json!([25, 25, 25, 26, "yield"]),             // a one-line class
            json!([28, 5, 28, 19, "await x"]),            // 'await' outside async function
            json!([28, 12, 28, 19, "x.sides[0]"]),        // compiles
        ];
        let python = Path::new("python3");
        let request = json!({ "files": [{ "name": "shapes.py", "source": source, "mutants": mutants }] });
        let answers = run(python, &request, &Cache::off()).unwrap();
        let oracle = whole_file_errors(python, &source, &mutants);
        assert_eq!(answers.originals, [None]);
        assert_eq!(answers.mutants, oracle);
        let errors = oracle.iter().filter(|error| error.is_some()).count();
        assert_eq!(errors, 9, "the mutants that do not compile: {oracle:?}");
    }

    #[test]
    fn within_a_long_function_a_mutant_compiled_within_its_statement_errs_and_matches_as_in_the_whole_function(
    ) {
        let source = [
            "import functools",               // 1
            "",                               // 2
            "@functools.cache",               // 3
            "def total(xs, *, scale=1):",     // 4
            "    \"\"\"Sums.\"\"\"",          // 5
            "    count = 0",                  // 6
            "    y = 2 + 0",                  // 7
            "    def bump():",                // 8
            "        nonlocal count",         // 9
            "        count += 1",             // 10
            "    for x in xs:",               // 11
            "        bump()",                 // 12
            "        y += x * scale",         // 13
            "    return y, count",            // 14
            "",                               // 15
            "class Box:",                     // 16
            "    async def items(self, n):",  // 17
            "        await self.fill(n - 0)", // 18
            "        return n + 1",           // 19
            "",                               // 20
        ]
        .join("\n");
        // [line, column, end line, end column, replacement], 1-based, end exclusive.
        let mutants = vec![
            json!([7, 11, 7, 12, "-"]),                  // `2 - 0`: the original's code
            json!([7, 9, 7, 10, "3"]),                   // `3 + 0`
            json!([7, 13, 7, 14, "1"]),                  // `2 + 1`: as `3 + 0`
            json!([10, 15, 10, 17, "-="]),               // in the nested function leaning on `count = 0`
            json!([10, 9, 10, 19, "break"]),             // 'break' outside loop
            json!([12, 9, 12, 15, "continue"]),          // compiles, in the loop
            json!([13, 9, 13, 23, "return 1"]),          // compiles
            json!([14, 5, 14, 20, "yield y"]),           // compiles: a generator now
            json!([18, 9, 18, 31, "yield 1; return 2"]), // 'return' with value in async generator
            json!([18, 27, 18, 28, "+"]),                // `n + 0`: another operation on a variable
            json!([19, 20, 19, 21, "0"]),                // compiles
        ];
        let (by_statement, errors, equivalent) = narrowed_as_whole(&source, &mutants);
        assert_eq!(errors, 2, "{:?}", by_statement.mutants);
        assert_eq!(
            equivalent, 2,
            "`2 - 0` as the original, `2 + 1` as `3 + 0`: {:?}",
            by_statement.equivalent
        );
    }

    #[test]
    fn within_a_long_statement_a_mutant_compiled_within_its_element_errs_and_matches_as_in_the_whole_statement(
    ) {
        let lines = [
            "TABLE = [",                         // 1
            "    {'é': 1, 'b': [2, 3]},",        // 2
            "    (4 + 0, 'x'),",                 // 3
            "    *rest,",                        // 4
            "    {**base, 'k': 5},",             // 5
            "    f(6,",                          // 6
            "      key=7 * 1),",                 // 7
            "]",                                 // 8
            "def g(a):",                         // 9
            "    return [(yield 1), 2, a == 3]", // 10
            "(a, b[0]) = total(a and 8, -9)",    // 11
            "",                                  // 12
        ];
        let source = lines.join("\n");
        // The mutant that puts `replacement` for the first `text` of `line` (columns in characters).
        let at = |line: usize, text: &str, replacement: &str| {
            let bytes = lines[line - 1].find(text).unwrap();
            let column = lines[line - 1][..bytes].chars().count() + 1;
            json!([line, column, line, column + text.chars().count(), replacement])
        };
        let mutants = vec![
            at(2, "1", "2"),        // after `é`
            at(2, "3", "0"),        // a list in a dictionary in a list
            at(3, "+", "-"),        // `4 - 0`: the original's code
            at(3, "(", "4"),        // does not compile
            at(4, "rest", "other"), // in a starred element
            at(5, "5", "6"),        // beside a `**` unpacking
            at(7, ")", "]"),        // does not compile
            at(7, "*", "+"),        // `7 + 1`, a keyword argument
            at(7, "1", "2"),        // `7 * 2`
            at(6, "6", "5"),        // a call's argument
            at(10, "1", "0"),       // in a `yield` element
            at(10, "2", "3"),       // beside it
            at(10, "==", "!="),     // a comparison
            at(11, "0", "1"),       // an assignment target
            at(11, "and", "or"),    // `a or 8`, a call's argument
            at(11, "-", "+"),       // `+9`
        ];
        let (by_element, errors, equivalent) = narrowed_as_whole(&source, &mutants);
        assert_eq!(errors, 2, "{:?}", by_element.mutants);
        assert_eq!(equivalent, 1, "`4 - 0` as the original: {:?}", by_element.equivalent);
    }
}
