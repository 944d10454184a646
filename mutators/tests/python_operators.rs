//! One snapshot per Python mutator family, and proof that every mutant shown compiles.

mod support;

use mutators::catalog::{Rule, PYTHON};
use mutators::python::{executable_lines, mutate};
use mutators::Mutant;
use support::{json_string, run_python};

struct Row {
    /// The family the row is about; it must show up among the row's mutants.
    family: &'static str,
    source: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        family: "ArithmeticOperator",
        source: "x = a + b - c * d / e // f % g ** h\n\
                 def f(p, /, *args, **kwargs): return g(*args, **kwargs), [*args], {**kwargs}\n",
    },
    Row {
        family: "UnaryOperator",
        source: "y = -x + ~x\nz = not x\nw = a - -b\nv = a[-1]\n",
    },
    Row {
        family: "BitwiseOperator",
        source: "m = a & b | c ^ d << 1 >> 2\n",
    },
    Row {
        family: "ComparisonOperator",
        source: "ok = a == b != c < d <= e > f >= g\n",
    },
    Row {
        family: "IdentityOperator",
        source: "p = a is None\nq = a is not None\n",
    },
    Row {
        family: "MembershipOperator",
        source: "for x in xs:\n    if x in ys or x not in zs:\n        pass\nr = [y for y in xs if y in zs]\n",
    },
    Row {
        family: "BooleanOperator",
        source: "t = a and b or not c\n",
    },
    Row {
        family: "AssignmentOperator",
        source: "x += 1\nx -= 1\nx *= 2\nx /= 2\nx //= 2\nx %= 2\nx **= 2\nx &= 1\nx |= 1\nx ^= 1\nx <<= 1\nx >>= 1\nx @= m\n",
    },
    Row {
        family: "NumberLiteral",
        source: "a = 0\nb = 7\nc = 0x1F\nd = 1_000\ne = 0.5\nf = 0.0\ng = 1e-3\nh = 2j\n",
    },
    Row {
        family: "BooleanLiteral",
        source: "flag = True\nf(other=False)\n",
    },
    Row {
        family: "NoneValue",
        source: "a = compute()\nb = None\nself.c = 1\nd = e = 2\nf, g = 1, 2\nh: int = 3\ni: int\nk(x=1)\n",
    },
    Row {
        family: "StringLiteral",
        source: "\"\"\"Module doc.\"\"\"\ns = \"abc\"\nb = b'x'\ne = ''\nr = r\"\\d\"\nf = f\"{x}\"\nc = \"a\"\"b\"\n",
    },
    Row {
        family: "StatementDeletion",
        source: "def f(x):\n    print(x)\n    x = g(\n        1,\n        2,\n    )\n    del x\n    raise ValueError\n    \
                 pass\n    import os\n    global y\n    assert x\n    return x; print(x)\n",
    },
    Row {
        family: "ReturnValue",
        source: "def f(x):\n    if x:\n        return x\n    if x > 1:\n        return None\n    return\n",
    },
    Row {
        family: "LoopControl",
        source: "for i in range(3):\n    if i:\n        break\n    continue\n",
    },
    Row {
        family: "ConditionForcing",
        source: "if a > 0:\n    pass\nelif a:\n    pass\nwhile a < 3:\n    a += 1\nwhile True:\n    break\nif True: pass\n",
    },
    Row {
        family: "ignored by pragma",
        source: "x = a + 1  # mutdelta: skip logging only\n",
    },
];

fn mutants_of(row: &Row) -> Vec<Mutant> {
    let lines = executable_lines(row.source).unwrap();
    mutate(row.source, &lines).unwrap().mutants
}

#[test]
fn operator_families() {
    let rows: Vec<(&Row, Vec<Mutant>)> = ROWS.iter().map(|row| (row, mutants_of(row))).collect();
    assert_every_mutant_compiles(&rows);
    for (row, mutants) in &rows {
        let shows_family = mutants.iter().any(|m| m.mutator().name() == row.family || m.ignored.is_some());
        assert!(shows_family, "row {} has no mutant of its family", row.family);
        insta::assert_snapshot!(row.family.replace(' ', "_"), support::render_mutants(row.source, mutants));
    }
}

/// One python3 for all mutants of all rows: each mutated source must compile.
fn assert_every_mutant_compiles(rows: &[(&Row, Vec<Mutant>)]) {
    let mut sources = Vec::new();
    let mut labels = Vec::new();
    for (row, mutants) in rows {
        for m in mutants {
            sources.push(json_string(&m.apply(row.source)));
            labels.push(format!("{}: line {} {:?} → {:?}", row.family, m.line, m.original, m.replacement));
        }
    }
    let script = "import json, sys\n\
                  for i, src in enumerate(json.load(sys.stdin)):\n    \
                      try: compile(src, 'x.py', 'exec')\n    \
                      except SyntaxError as e: print(i, e)\n";
    let output = run_python(script, &format!("[{}]", sources.join(",")));
    let failures: Vec<String> = output
        .lines()
        .map(|line| {
            let (index, error) = line.split_once(' ').unwrap();
            format!("{} ({error})", labels[index.parse::<usize>().unwrap()])
        })
        .collect();
    assert!(failures.is_empty(), "mutants that do not compile:\n{}", failures.join("\n"));
    assert!(sources.len() > 100, "only {} mutants checked", sources.len());
}

#[test]
fn every_catalog_row_makes_a_mutant_of_some_table_row() {
    let made: Vec<&Rule> = ROWS.iter().flat_map(mutants_of).map(|m| m.rule).collect();
    let unmade: Vec<String> = PYTHON
        .iter()
        .filter(|rule| !made.contains(rule))
        .map(|rule| format!("{} {}", rule.mutator, rule.from))
        .collect();
    assert!(unmade.is_empty(), "catalog rows that no table row exercises: {unmade:?}");
}
