//! One snapshot per Python mutator family, arid rule and equivalence rule, and proof that every mutant shown compiles.

mod support;

use mutators::catalog::{Rule, EQUIVALENT, PYTHON, PYTHON_ARID};
use mutators::python::{executable_lines, mutate};
use mutators::Mutant;
use support::{json_string, run_python};

struct Row {
    /// The family, arid rule or equivalence rule the row is about (its first word); it must
    /// show up among the row's mutants.
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
        family: "ConditionForcing of conditional expressions",
        source: "x = a if c > 0 else b\ny = p if (q if r else s) else t if u else v\nz = f(w if True else -w)\n",
    },
    Row {
        family: "ConditionForcing of comprehension conditions",
        source: "evens = [x for x in xs if x % 2 == 0]\npairs = {k: v for k, v in d.items() if v if k}\n\
                 total = sum(x for x in xs if x)\nasync def f():\n    return {x async for x in ax if x > 1}\n",
    },
    Row {
        family: "ConditionForcing of match guards",
        source: "match p:\n    case (x, y) if x > y:\n        pass\n    case [z, *_] if z:\n        pass\n",
    },
    Row {
        family: "ConditionForcing keeps a walrus",
        source: "if (n := len(a)) > 10:\n    pass\nelif m := n:\n    pass\nwhile chunk := f.read(n):\n    pass\n\
                 ys = [y for x in xs if (y := g(x))]\nv = a if (k := h()) else k\n",
    },
    Row {
        family: "MatchArmDeletion",
        source: "match cmd:\n    case \"go\" | \"run\":\n        go()\n    case Point(x=0, y=0) if ready:\n        stop()\n    \
                 case [1,\n          2]:\n        pass\n    case _:\n        pass\nmatch other:\n    case 1:\n        pass\n",
    },
    Row {
        family: "StringLiteral of f-strings",
        source: "s = f\"total: {n + 1}\"\nt = f'{{x}} {x!r:>{w}} {y=} end'\nu = f\"{a}\"\nv = f\"plain\"\nw = f\"\"\n",
    },
    Row {
        family: "StatementDeletion of await",
        source: "async def f():\n    await g(x + 1)\n    async with lock(a - 1) as l:\n        async for i in it(b * 2):\n            pass\n",
    },
    Row {
        family: "ignored by pragma",
        source: "x = a + 1  # mutdelta: skip logging only\n",
    },
    Row {
        family: "logging is arid",
        source: "log = logging.getLogger(\"app\")\ndef f(x, logger):\n    logger.info(\"x is %s\", x + 1)\n    \
                 self.audit_logger.warning(\"w\")\n    logging.debug(\"d\")\n    _LOG.error(\"e\", exc_info=True)\n    \
                 return math.log(x + 1)\n",
    },
    Row {
        family: "print is arid",
        source: "def f(x, out):\n    print(\"x =\", x + 1)\n    y = x.print(1)\n    print(\"y\", file=sys.stderr)\n    \
                 print(y, file=out)\n    return y\n",
    },
    Row {
        family: "warnings-warn is arid",
        source: "if old:\n    warnings.warn(\"old\", DeprecationWarning, stacklevel=2)\n",
    },
    Row {
        family: "sleep is arid",
        source: "time.sleep(0.5)\nasync def f():\n    await asyncio.sleep(1)\n    await other.sleep(1)\n",
    },
    Row {
        family: "assert is arid",
        source: "def f(n):\n    assert n >= 0, \"negative\"\n    return n - 1\n",
    },
    Row {
        family: "main-guard is arid",
        source: "def main():\n    return 1\nif __name__ == \"__main__\":\n    sys.exit(main() + 1)\nx = 2\n",
    },
    Row {
        family: "repr is arid",
        source: "class P:\n    def __repr__(self):\n        return \"P(%d)\" % (self.x + 1)\n    def size(self):\n        \
                 return self.x + 1\n",
    },
    Row {
        family: "argparse-text is arid",
        source: "p = argparse.ArgumentParser(description=\"Tool\", epilog=\"bye\")\n\
                 p.add_argument(\"-n\", type=int, default=1, help=\"how \" + \"many\", metavar=\"N\")\n",
    },
    Row {
        family: "fast-path-guard is likely equivalent",
        source: "def __eq__(self, other):\n    if self is other:\n        return True\n    if other is None:\n        return False\n    \
                 if self.items is other.items: return True\n    if self is not other:\n        return self.items == other.items\n\
                 def base(cl):\n    if cl.__class__ is _GenericAlias:\n        return cl.__origin__\n    if cl is NOTHING:\n        return None\n",
    },
    Row {
        family: "NumberLiteral outside annotations",
        source: "def f(x: \"Foo\" = 1, *a: int | None, y: Literal[1] = 2, z=lambda b: b + 1) -> \"Bar[0]\":\n    \
                 v: Dict[str, \"X\"] = {\"k\": 1}\n    w: Literal[3]\n    return v\n",
    },
    Row {
        family: "BooleanLiteral returns keep no None",
        source: "def f(x):\n    if x:\n        return True\n    return False\n",
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
        assert!(support::shows_family(row.family, mutants), "row {} has no mutant of its family", row.family);
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

#[test]
fn every_arid_and_equivalence_mark_is_put_on_a_mutant_of_some_table_row() {
    let mutants: Vec<Mutant> = ROWS.iter().flat_map(mutants_of).collect();
    assert_eq!(support::unused_markers(PYTHON_ARID, &mutants), Vec::<&str>::new());
    // Of the equivalence rules only the fast-path guard marks; the others make no mutant.
    assert_eq!(
        support::unused_markers(EQUIVALENT, &mutants),
        ["duplicate", "bool-return-none", "identity-operand", "literal-fold"]
    );
}
