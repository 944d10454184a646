"""Which tests a change edits or deletes, read from the test files' syntax trees.

Reads a JSON list from standard input, one entry per test file the change touches:
{"old": path or null, "new": path or null, "removed": [old line numbers], "added": [new line numbers]}
and writes a JSON list of the same length: per entry, the pytest selectors (relative to the old
file: "Class::test_x", "test_y", or "" for the whole file) whose tests existed before the change
and whose code the change edits or deletes.

A changed line inside a test function selects that test. One inside any other function or
statement of a class (a helper, setUp, a class attribute) selects every test of the class. One
in any other module-level statement (a helper function, a fixture, a constant) selects the
whole file. Imports, docstrings, blank lines and comments select nothing.
"""

import ast
import json
import sys


def is_test_name(name):
    return name.startswith("test")


def spans(tree):
    """(start, end, selector or None for "the whole file", qualname parts) for each statement
    that can select tests, innermost first when they nest."""
    out = []

    def visit(body, prefix):
        for node in body:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            end = node.end_lineno
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if prefix and is_test_name(node.name):
                    out.append((start, end, "::".join(prefix + [node.name])))
                elif prefix:
                    out.append((start, end, "::".join(prefix)))
                elif is_test_name(node.name):
                    out.append((start, end, node.name))
                else:
                    out.append((start, end, ""))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + [node.name])
                out.append((start, end, "::".join(prefix + [node.name])))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            elif (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                continue  # a docstring
            elif prefix:
                out.append((start, end, "::".join(prefix)))
            else:
                out.append((start, end, ""))

    visit(tree.body, [])
    return out


class Parsed:
    def __init__(self, tree, lines):
        self.tree = tree
        self.lines = lines

    def holds_code(self, number):
        """False for a blank or comment-only line, which changes nothing it sits in."""
        if not 1 <= number <= len(self.lines):
            return False
        text = self.lines[number - 1].strip()
        return bool(text) and not text.startswith(b"#")


def parse(path):
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            source = f.read()
        return Parsed(ast.parse(source, filename=path), source.splitlines())
    except (OSError, SyntaxError, ValueError):
        return None


def selectors_of(parsed, lines):
    """The innermost selector of each line that holds code and lies in a statement."""
    found = set()
    table = spans(parsed.tree)
    for line in filter(parsed.holds_code, lines):
        best = None
        for start, end, selector in table:
            if start <= line <= end and (best is None or end - start < best[1] - best[0]):
                best = (start, end, selector)
        if best is not None:
            found.add(best[2])
    return found


def existing(parsed):
    """Every selector the old file defines."""
    return {selector for _, _, selector in spans(parsed.tree)} | {""}


def touched(entry):
    old = parse(entry["old"])
    if old is None:
        return []  # a new test file, or one that did not parse: no test of it existed before
    new = parse(entry["new"])
    selected = selectors_of(old, entry["removed"])
    if new is not None:
        # Lines added inside a test that existed before edit it too (a skip, an early return).
        selected |= selectors_of(new, entry["added"]) & existing(old)
    elif entry["new"] is not None:
        selected.add("")  # the new file does not parse: every old test of it is gone
    if "" in selected:
        return [""]
    # A class selected whole makes its tests' own selectors redundant.
    return sorted(
        s for s in selected if not any(s != other and s.startswith(other + "::") for other in selected)
    )


def main():
    entries = json.load(sys.stdin)
    json.dump([touched(entry) for entry in entries], sys.stdout)


if __name__ == "__main__":
    main()
