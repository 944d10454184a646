"""The test-impact map's blocks and what a test executed, by block.

A Python file is cut into blocks: each function or method (with its decorators, signature and
body, nested functions included), each module- or class-level binding of one name, and the
file's skeleton (everything else that runs at import: imports, other module-level code, class
headers, the decorators and signatures of functions decorated by more than a wrapper).
A block's fingerprint is a digest of its syntax tree without positions, so a block that moves,
or whose comments or spacing change, keeps it. In a test module, a test's definition (a `test*`
function or method, not a fixture) is its own block whatever decorates it: adding, editing or
removing one test reaches that test alone, and the names of a file's tests are listed apart.

Imported by `mutdelta_probe` (Python 3.12 and later: sys.monitoring), which records, per test,
the code objects it started and the files under the project it opened, listed or started a
process for; run as a script, it prints the blocks of a project as it stands now, and the
digests of the files a map says the tests read:

    python -I mutdelta_impact.py ROOT REQUEST OUT [KNOWN]

REQUEST is a JSON list of paths (relative to ROOT); OUT gets {"table": ..., "config": ...,
"data": ...}; KNOWN holds blocks read before (a map's newest), reused for the files whose
content's digest is theirs.
Nothing here imports or runs the project's code.
"""

import ast
import hashlib
import json
import os
import sys

SKELETON = "<module>"
_SKIPPED_DIRECTORIES = {"__pycache__", "node_modules", "site-packages"}


def _digest(text):
    return hashlib.sha1(text.encode() if isinstance(text, str) else text).hexdigest()[:20]


def _dump(node):
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def _start(node):
    return min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])


def _scoped_fixture(node):
    """Whether `node` is a pytest fixture that outlives one test (a scope other than the
    function's): what it does runs once, for the first test that asks for it."""
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call):
            if any(keyword.arg == "scope" and not (isinstance(keyword.value, ast.Constant) and keyword.value.value == "function") for keyword in decorator.keywords):
                return True
    return False


_PLAIN = (ast.Import, ast.ImportFrom, ast.Pass)


def _plain(statements, tests=False):
    """Whether running `statements` only binds names: imports, definitions decorated by
    wrappers and pytest marks alone (in a test module, `tests`: test definitions, whatever
    decorates them), classes of such statements, docstrings and assignments that call nothing
    but pytest's marks."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if all(_plain_decorator(decorator) for decorator in statement.decorator_list):
                continue
            if tests and _test_definition(statement):
                continue
            return False
        if isinstance(statement, _PLAIN):
            continue
        if isinstance(statement, ast.ClassDef) and not statement.decorator_list and _plain(statement.body, tests):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        targets = getattr(statement, "targets", [getattr(statement, "target", None)])
        names = all(isinstance(target, ast.Name) for target in targets)
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None and names:
            calls = [node for node in ast.walk(statement.value) if isinstance(node, ast.Call)]
            if all(_dump(call.func).find("'pytest'") >= 0 for call in calls):
                continue
        return False
    return True


_PLAIN_DECORATORS = {
    "staticmethod", "classmethod", "property", "cached_property", "abstractmethod", "overload",
    "setter", "getter", "deleter", "lru_cache", "cache", "wraps", "contextmanager",
    "asynccontextmanager", "total_ordering", "dataclass", "fixture",
}


def _decorator_name(decorator):
    """The last name of what a decorator calls (`fixture` for `@pytest.fixture(scope=...)`);
    "" when it is no name."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return decorator.id if isinstance(decorator, ast.Name) else ""


def _wraps_only(decorator):
    return _decorator_name(decorator) in _PLAIN_DECORATORS


def _bound_name(statement):
    """The one name an assignment binds, if it binds one name and nothing else."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None and statement.simple:
        target = statement.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def _statements(body, functions=True):
    """Every statement in `body`: those in classes and compound statements too, and in
    functions unless `functions` is false."""
    pending = list(body)
    while pending:
        node = pending.pop()
        yield node
        if not functions and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            pending.extend(getattr(node, field, None) or ())


def _imported(statements, path):
    """The modules `statements` import, by absolute name (and `package.name` for each `from
    package import name`, which may be a module)."""
    package = path[:-3].replace("/", ".").split(".")[:-1]
    names = set()
    for node in statements:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            names.add(base)
            names.update(base + "." + alias.name for alias in node.names if alias.name != "*")
    return {name for name in names if name}


def _imports(tree, path):
    """The modules the file's module-level code imports, by absolute name."""
    return sorted(_imported(_statements(tree.body, functions=False), path))


# Names whose call imports a module by a name computed at run time: a file whose text holds one
# may import any module.
_DYNAMIC_IMPORTS = (b"import_module", b"__import__", b"reload", b"run_module", b"run_path")


def _uses(tree, path, source):
    """The modules the file imports anywhere (in its functions too), by absolute name, and `*`
    when it may import one by a name it computes (`importlib.import_module`, `__import__`):
    what its code may read the names of."""
    names = _imported(_statements(tree.body), path)
    raw = source if isinstance(source, bytes) else source.encode()
    if any(name in raw for name in _DYNAMIC_IMPORTS):
        names.add("*")
    return sorted(names)


_MARK = "Attribute(Attribute(Name('pytest', Load()), 'mark', Load())"


def _plain_decorator(decorator):
    """A decorator that only wraps its function (no registry learns of it: a pytest fixture
    is found by its name, one shared between tests makes its file `fixtures`), or a pytest mark:
    what a mark says (its parameters, a skip) only the function's own tests read, and they are
    run again when the function's block or their parameters change."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return _dump(target).startswith(_MARK) or _wraps_only(decorator)


def is_test_module(path):
    """A module that defines tests (`test_*.py`, `*_test.py`), as mutdelta tells them."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _test_definition(node):
    """Whether a function of a test module, at its module's level or in a class there, is a
    test's definition: named `test*` and no fixture. Its decorators (marks, patches, a clock
    frozen) reach the test alone."""
    if not node.name.startswith("test"):
        return False
    return not any(_decorator_name(decorator) in ("fixture", "yield_fixture") for decorator in node.decorator_list)


def blocks(source, path):
    """The blocks of one file: {"skeleton": the digest of what runs at import and is not a
    binding, "bindings": {qualname: digest} for each module- or class-level assignment of one
    name, "functions": {qualname: [digest, first line, last line]}, "fixtures": whether it holds
    fixtures shared between tests, "plain": whether its module-level code only binds names,
    "tests": the qualnames of a test module's test definitions, "imports": the modules its
    module-level code imports, "uses": those it imports anywhere}. A function whose decorators
    only wrap it, or a test's definition, is no part of the skeleton (its whole definition is
    its block): adding one, or a binding, leaves the skeleton as it was."""
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        return {"digest": _digest(source), "skeleton": _digest(source), "imports": [], "uses": ["*"], "bindings": {}, "functions": {}, "fixtures": True, "plain": False, "tests": []}
    test_module = is_test_module(path)
    tests = []
    functions = {}
    bindings = {}
    core = []
    shared = os.path.basename(path) == "conftest.py"

    def unique(table, name):
        found, count = name, 1
        while found in table:
            count += 1
            found = "%s#%d" % (name, count)
        return found

    def function(node, prefix):
        """Records `node` and the functions inside it; returns its name."""
        nonlocal shared
        name = unique(functions, prefix + node.name)
        functions[name] = [_digest(_dump(node)), _start(node), node.end_lineno or node.lineno]
        shared = shared or _scoped_fixture(node)
        inside(node.body, name + ".<locals>.")
        return name

    def inside(statements, prefix):
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function(node, prefix)
            elif isinstance(node, ast.ClassDef):
                inside(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.stmt, ast.excepthandler, ast.match_case)):
                inside(list(ast.iter_child_nodes(node)), prefix)

    def stripped(node):
        """`node` as the skeleton holds it: every function in it without its body."""
        body_of = {}
        for inner in ast.walk(node):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body_of[inner] = inner.body
        for inner in body_of:
            inner.body = []
        text = _dump(node)
        for inner, body in body_of.items():
            inner.body = body
        return text

    def level(statements, prefix):
        """Module- or class-level statements: what runs at import."""
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = function(node, prefix)
                if test_module and _test_definition(node):
                    tests.append(name)
                elif not all(_plain_decorator(decorator) for decorator in node.decorator_list):
                    core.append(name + ":" + stripped(node))
            elif isinstance(node, ast.ClassDef):
                body = node.body
                node.body = []
                core.append(prefix + node.name + ":" + _dump(node))
                node.body = body
                level(body, prefix + node.name + ".")
            elif _bound_name(node) is not None:
                bindings[unique(bindings, prefix + _bound_name(node))] = _digest(_dump(node))
            else:
                inside([node], prefix)
                core.append(prefix + ":" + stripped(node))

    level(tree.body, "")
    return {
        "digest": _digest(source),
        "imports": _imports(tree, path),
        "uses": _uses(tree, path, source),
        "skeleton": _digest("\n".join(core)),
        "bindings": bindings,
        "functions": functions,
        "fixtures": shared,
        "plain": _plain(tree.body, test_module),
        "tests": tests,
    }


def python_files(root):
    """Every Python file of the project under `root`, relative to it: hidden directories,
    caches and virtual environments left out."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if not name.startswith(".")
            and name not in _SKIPPED_DIRECTORIES
            and not os.path.exists(os.path.join(directory, name, "pyvenv.cfg"))
        )
        for name in sorted(files):
            if name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return found


def table(root, known=None):
    """The blocks of every Python file under `root`, by path relative to it. `known`: blocks
    read before (a map's), reused for a file whose content's digest is theirs."""
    known = known or {}
    out = {}
    for relative in python_files(root):
        try:
            with open(os.path.join(root, relative), "rb") as file:
                source = file.read()
        except OSError:
            continue
        before = known.get(relative)
        if isinstance(before, dict) and before.get("digest") == _digest(source):
            out[relative] = before
        else:
            out[relative] = blocks(source, relative)
    return out


def read_known(path):
    """Blocks read before, from a JSON file (as `table` returns them); none when it cannot be
    read."""
    try:
        with open(path) as file:
            known = json.load(file)
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def data_digest(root, relative):
    """A file's digest, a directory's (its names, a trailing `/` in `relative`), or None when
    it is not there."""
    path = os.path.join(root, relative.rstrip("/"))
    real_root = os.path.realpath(root)
    if not os.path.realpath(path).startswith(real_root + os.sep):
        return None  # outside the project (through a link): never read
    try:
        if relative.endswith("/"):
            return _digest("\n".join(sorted(name for name in os.listdir(path) if name != "__pycache__")))
        with open(path, "rb") as file:
            return _digest(file.read())
    except OSError:
        return None


# The files pytest reads its configuration from, at the project's root, and the part of each
# that is pytest's (None: all of it).
_CONFIGURATION = {
    "pytest.ini": None,
    ".pytest.ini": None,
    "pyproject.toml": "tool.pytest",
    "tox.ini": "pytest",
    "setup.cfg": "tool:pytest",
}


def _pytest_part(path, part):
    """The text of pytest's part of a configuration file (its section, its TOML table),
    canonical; the whole file's bytes when it cannot be read apart."""
    with open(path, "rb") as file:
        raw = file.read()
    try:
        if path.endswith(".toml"):
            import tomllib

            table = tomllib.loads(raw.decode())
            for key in part.split("."):
                table = table.get(key, {}) if isinstance(table, dict) else {}
            return json.dumps(table, sort_keys=True, default=str)
        import configparser

        parser = configparser.RawConfigParser()
        parser.read_string(raw.decode())
        items = sorted(parser.items(part)) if parser.has_section(part) else []
        return json.dumps(items)
    except Exception:
        return raw


def configuration(root):
    """The digests of pytest's configuration at `root`, per file (None: not there): what it
    sets (options, plugins, warnings as errors) reaches every test. Of a file shared with other
    tools, only pytest's part counts."""
    out = {}
    for name, part in _CONFIGURATION.items():
        path = os.path.join(root, name)
        try:
            if part:
                out[name] = _digest(_pytest_part(path, part))
            else:
                with open(path, "rb") as file:
                    out[name] = _digest(file.read())
        except OSError:
            out[name] = None
    return out


def block_of(entry, line):
    """The block of a file (as `blocks` describes it) a code object starting at `line` belongs
    to: the function starting there, else the innermost function holding the line, else the
    skeleton (a class body, a module's own code, which starts at `line` 0)."""
    if line == 0:
        return SKELETON
    best = None
    for name, (_digest_, first, last) in entry["functions"].items():
        if first == line:
            return name
        if first <= line <= last and (best is None or first >= entry["functions"][best][1]):
            best = name
    return best or SKELETON


def main(argv):
    root, request, out = argv[1:4]
    known = read_known(argv[4]) if len(argv) > 4 else {}
    with open(request) as file:
        paths = json.load(file)
    answer = {
        "table": table(root, known),
        "config": configuration(root),
        "data": {path: data_digest(root, path) for path in paths},
    }
    with open(out, "w") as file:
        json.dump(answer, file)


if __name__ == "__main__":
    main(sys.argv)
