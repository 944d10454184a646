"""mutdelta's compile check: does each mutant still compile? One interpreter for all of them.

Input on stdin, JSON: {"files": [{"name", "source", "mutants": [[start_line, start_column,
end_line, end_column, replacement], ...]}], "longFunction": lines (optional)} with 1-based lines and 1-based columns counted in
characters, end exclusive. Output on stdout, JSON: {"originals": [error or null per file],
"mutants": [error or null per mutant, in input order], "equivalent": [per mutant: null,
"original" when it compiles to the code the original compiles to, or the input index of an
earlier mutant that it compiles the same as]}.

Compiled the same means the same code objects but for where their code lies (line and column
tables): the same bytecode, constants (folded by the compiler: `2 + 0` is `2`; compared with
their types, so `2` is not `2.0`), names, flags and exception table, nested code alike. Such a
mutant behaves as the original (or the earlier mutant) does, whatever the tests (trivial
compiler equivalence); only source positions, which a traceback shows, tell them apart.

Whether a statement compiles never depends on the other top-level statements of its file (only
on `from __future__` imports), so each mutant is compiled within the top-level statement that
holds it, after those imports alone (and again at its own line numbers when it fails, for the
error to name the file's lines): a mutant of a 20,000-line file costs a few lines' compile.
Nor does a method's depend on the rest of its class (a class body binds nothing a method's
`nonlocal` could name), so a mutant in a method, or in a function of a class nested in classes
only, is compiled within that function, under a stand-in `class _:` header on the line above.
Within a function longer than LONG_FUNCTION lines (generated code: one function of 50,000
lines took a second to compile, for each of its mutants), a mutant is compiled within the
statement of the function's body that holds it, under the function's own header: the other
statements of the body reach its compile only through the names they bind, the same for the
original and the mutant, which never adds a declaration (`request["longFunction"]` sets the
length, for tests).
Likewise within a statement longer than that (one literal of 20,000 lines), a mutant that lies
in an element of a list, tuple, set or dictionary display, or in an argument of a call, is
compiled as the innermost such element alone, in parentheses: an element is always compiled as
a value, the same whatever its neighbours, so an element compiling to the original element's
code makes the statement compile to the original's (a condition's parts are not elements: the
compiler turns them into jumps that depend on where they stand). A mutant that does not compile so, or an element that does not compile alone
(`yield`, `await`), goes back to the statement's compile, for its error to be the file's.
"""

import ast
import bisect
import json
import sys

BOM = "\ufeff"

# Lines past which a function is long: compiling it whole for each of its mutants would cost
# more than compiling each mutant's statement under its header.
LONG_FUNCTION = 200

def describe(error):
    return f"{type(error).__name__}: {error}"


def compiled(source, name):
    """The code object, or the error's description."""
    # A file may begin with a byte order mark, which Python reads past in a file but refuses
    # in a string.
    try:
        return compile(source.removeprefix(BOM), name, "exec", dont_inherit=True), None
    except (SyntaxError, ValueError) as error:
        return None, describe(error)


def compiled_element(text, name):
    """The code of an expression in parentheses, or None when it does not compile so."""
    try:
        return compile("(" + text + ")", name, "eval", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None


def compile_error(source, name):
    return compiled(source, name)[1]


CODE_FIELDS = (
    "co_code", "co_flags", "co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals",
    "co_stacksize", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_name",
    "co_qualname", "co_exceptiontable",
)


def shape(code):
    """What a code object does, without where its source lies: comparable for equality."""
    fields = tuple(getattr(code, field, None) for field in CODE_FIELDS)
    return fields + (tuple(constant_shape(constant) for constant in code.co_consts),)


def constant_shape(constant):
    if hasattr(constant, "co_code"):
        return ("code", shape(constant))
    if isinstance(constant, (tuple, frozenset)):
        items = [constant_shape(item) for item in constant]
        return (type(constant).__name__, tuple(sorted(items, key=repr) if isinstance(constant, frozenset) else items))
    return (type(constant).__name__, repr(constant))


def blocks_of(tree):
    """Line ranges of the top-level statements, decorators included, merged where they share a line."""
    ranges = []
    for node in tree.body:
        first = first_line(node)
        last = node.end_lineno or node.lineno
        if ranges and first <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    return ranges


def enclosing(ranges, starts, first, last):
    """The range of `ranges` (sorted, not overlapping; `starts` their first lines) that holds
    lines first..last, found by bisection: a file of thousands of statements costs no more per
    mutant than a small one."""
    index = bisect.bisect_right(starts, first) - 1
    if index >= 0 and ranges[index][0] <= first and last <= ranges[index][1]:
        return ranges[index]
    return None


def first_line(node):
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def methods_of(tree, lines):
    """Line ranges of the functions whose enclosing statements are classes only, below the top
    level, each starting its own line (so that the stand-in header can take the line above)."""
    ranges = []
    pending = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    while pending:
        holder = pending.pop()
        for node in holder.body:
            if isinstance(node, ast.ClassDef):
                pending.append(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = first_line(node)
                opening = min([node] + node.decorator_list, key=lambda n: (n.lineno, n.col_offset))
                if first > holder.lineno and not lines[first - 1][: opening.col_offset].strip():
                    ranges.append((first, node.end_lineno or node.lineno))
    return ranges


def long_functions(tree, over):
    """The functions of more than `over` lines, top-level or in classes, by their first line
    (decorators included), each with the first lines of its body's statements."""
    found = {}
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.ClassDef):
            pending.extend(node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if (node.end_lineno or node.lineno) - first_line(node) + 1 > over:
                found[first_line(node)] = (node, [first_line(child) for child in node.body])
    return found


def statement_in(function, body_starts, first, last):
    """The statement of `function`'s body that holds lines first..last, found by bisection,
    when the body starts below the header; else None."""
    if body_starts[0] <= function.lineno:
        return None
    index = bisect.bisect_right(body_starts, first) - 1
    if index < 0:
        return None
    node = function.body[index]
    if first_line(node) <= first and last <= (node.end_lineno or node.lineno):
        return node
    return None


def is_element(holder, child):
    """Whether `child` is an element of a display `holder` that is read, or an argument of a
    call: an expression always compiled as a value, whatever its neighbours."""
    if not isinstance(child, ast.expr) or isinstance(child, ast.Starred):
        return False
    if isinstance(holder, (ast.List, ast.Tuple)):
        return isinstance(holder.ctx, ast.Load)
    if isinstance(holder, ast.Call):
        return child is not holder.func
    return isinstance(holder, (ast.Set, ast.Dict, ast.keyword))


class Elements:
    """The elements (`is_element`) of long statements, found for a mutant by bisection at each
    level of the tree, so a literal of 50,000 elements costs a mutant a few steps."""

    def __init__(self, source, lines, starts):
        self.source, self.lines, self.starts = source, lines, starts
        self.children = {}

    def offset(self, line, byte_column):
        text = self.lines[line - 1]
        column = byte_column if text.isascii() else len(text.encode()[:byte_column].decode())
        return self.starts[line - 1] + column

    def span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def sorted_children(self, node):
        if id(node) not in self.children:
            children = [child for child in ast.iter_child_nodes(node) if hasattr(child, "end_col_offset")]
            spans = sorted((self.span(child), index, child) for index, child in enumerate(children))
            self.children[id(node)] = ([span[0] for span, _, _ in spans], [(span, child) for span, _, child in spans])
        return self.children[id(node)]

    def holding(self, statement, begin, end):
        """The innermost element of `statement` that holds offsets begin..end, as its span; None
        when no element does."""
        node, found = statement, None
        while True:
            firsts, children = self.sorted_children(node)
            index = bisect.bisect_right(firsts, begin) - 1
            if index < 0 or children[index][0][1] < end:
                return found
            span, child = children[index]
            if is_element(node, child):
                found = span
            node = child


def future_lines(tree):
    lines = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def check_file(file, over):
    name, source = file["name"], file["source"]
    original = compile_error(source, name)
    results = []
    if original is not None:
        return original, [original for _ in file["mutants"]], [None for _ in file["mutants"]]
    tree = ast.parse(source.removeprefix(BOM))
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    blocks = blocks_of(tree)
    methods = sorted(methods_of(tree, lines))
    functions = long_functions(tree, over)
    block_starts = [first for first, _ in blocks]
    method_starts = [first for first, _ in methods]
    future = future_lines(tree)
    # Per unit compiled (the whole file, or a block at its place), the original's shape and
    # the shapes mutants compiled to, with the first mutant of each.
    originals, seen = {}, {}
    equivalent = []
    alone = {}

    elements = Elements(source, lines, starts)

    def element_alone(span, begin, end, replacement):
        """The mutant compiled as the element at `span` alone, when the element compiles alone
        and the mutant does too; else None."""
        key = ("element", span[0])
        if key not in originals:
            unmutated = compiled_element(source[span[0] : span[1]], name)
            originals[key] = unmutated and shape(unmutated)
        if originals[key] is None:
            return None
        return compiled_element(source[span[0] : begin] + replacement + source[end : span[1]], name)

    def stands_alone(statement, function, body_starts, stand_in):
        """Whether the statement, unmutated, compiles under the function's header alone: one
        that leans on the rest of the body (a nested function's `nonlocal` naming a variable
        another statement binds) is compiled within the whole function."""
        key = first_line(statement)
        if key not in alone:
            last = statement.end_lineno or statement.lineno
            text = source[starts[key - 1] : starts[last] - 1 if last < len(lines) else len(source)]
            head = stand_in + lines[function.lineno - 1 : body_starts[0] - 1]
            future_head = [lines[n - 1] for n in sorted(future)]
            alone[key] = compile_error("\n".join(future_head + head + [text]), name) is None
        return alone[key]

    for index, (start_line, start_column, end_line, end_column, replacement) in enumerate(file["mutants"]):
        begin = starts[start_line - 1] + start_column - 1
        end = starts[end_line - 1] + end_column - 1
        holder = enclosing(blocks, block_starts, start_line, end_line)
        if holder is None or holder[0] in future:
            code, error = compiled(source[:begin] + replacement + source[end:], name)
            results.append(error)
            unit, original = "file", lambda: source
        else:
            method = enclosing(methods, method_starts, start_line, end_line)
            first, last = method or holder
            stand_in = ["class _:"] if method else []
            # In a long function, the statement of its body that holds the mutant, under the
            # function's own header (decorators left out): a giant generated function costs
            # each mutant its statement's compile, not the function's.
            function, body_starts = functions.get(first, (None, None))
            statement = function and statement_in(function, body_starts, start_line, end_line)
            if statement and stands_alone(statement, function, body_starts, stand_in):
                stand_in += lines[function.lineno - 1 : body_starts[0] - 1]
                first, last = first_line(statement), statement.end_lineno or statement.lineno
            block_begin, block_end = starts[first - 1], starts[last] - 1 if last < len(lines) else len(source)
            element = last - first + 1 > over and elements.holding(tree, begin, end)
            alone_code = element and element_alone(element, begin, end, replacement)
            if alone_code:
                results.append(None)
                code, unit = alone_code, ("element", element[0])
            else:
                # The `from __future__` lines (at the top), then the stand-in header of a method
                # or a long function, then the statement, at once; only a statement that does
                # not compile so is compiled again at its own line numbers, for the error to
                # name the file's lines.
                kept = max((n for n in future if n < first), default=0)
                header = [lines[n - 1] if n in future else "" for n in range(1, kept + 1)]
                block = source[block_begin:begin] + replacement + source[end:block_end]
                code, error = compiled("\n".join(header + stand_in + [block]), name)
                if error is not None:
                    padding = [""] * (first - 1 - kept - len(stand_in))
                    error = compile_error("\n".join(header + padding + stand_in + [block]), name)
                results.append(error)
                unit = (first, last, bool(method))
                original = lambda: "\n".join(header + stand_in + [source[block_begin:block_end]])
        if code is None:
            equivalent.append(None)
            continue
        if unit not in originals:
            unmutated = compiled(original(), name)[0]
            originals[unit] = unmutated and shape(unmutated)
        mutant = shape(code)
        if originals[unit] is None:
            equivalent.append(None)
        elif mutant == originals[unit]:
            equivalent.append("original")
        else:
            equivalent.append(seen.setdefault((unit, mutant), index))
            if equivalent[-1] == index:
                equivalent[-1] = None
    return None, results, equivalent


def main():
    request = json.load(sys.stdin)
    originals, mutants, equivalent = [], [], []
    # Above this many lines a function's mutants are compiled within their statement.
    over = request.get("longFunction", LONG_FUNCTION)
    for file in request["files"]:
        original, results, same = check_file(file, over)
        originals.append(original)
        # Indexes count from the first mutant of the request, not of the file.
        offset = len(mutants)
        equivalent.extend(offset + other if isinstance(other, int) else other for other in same)
        mutants.extend(results)
    json.dump({"originals": originals, "mutants": mutants, "equivalent": equivalent}, sys.stdout)


if __name__ == "__main__":
    main()
