"""mutdelta's pytest plugin: which tests execute which target statements, how long each test
takes, and which modules from outside the project the tests import (to preload them in warm
workers).

Imported by `mutdelta_probe_main` before pytest itself (so the project's files that pytest
imports, as a plugin library or a dependency of pytest, are watched too) and registered with
`-p mutdelta_probe` (PYTEST_DONT_REWRITE: pytest would otherwise warn that a plugin imported
before it cannot have its asserts rewritten, an error under `filterwarnings = error`). Configured by
environment variables: MUTDELTA_PROBE_TARGETS names a JSON file {absolute path: [lines]},
MUTDELTA_PROBE_OUT the JSON file it writes at the end of the session, and
MUTDELTA_PROBE_DESELECT (optional) a JSON list of node ids not to run (tests that already ran),
and MUTDELTA_PROBE_QUEUE (optional) a file shared by processes that run side by side: each
collects every test, then claims the next unclaimed one from the file until none is left, so
every test runs once, in collection order, and a slow test holds up only its own process. The
first failure closes the queue, and so does a process whose tests are in another order than the
first process's (then the caller runs the tests in one process). MUTDELTA_PROBE_FIRST (with the queue) names a JSON list of node
ids known to be slow: they are claimed first, in that order.

No tracer runs: the target files are imported through a loader that puts a probe call before
every statement that holds a target line (for compound statements, their header: a `def` with
its decorators and defaults, an `if` with its condition, an `except` clause, a `case`). The
rest of the program runs at full speed on every Python version, and a line counts as run when
its statement did. Statements that run outside any test (at import, when a conftest imports
the project, during collection) are reported as collection lines. A target file imported some
other way (before this module, or by path) is reported as untraced.
"""

import ast
import builtins
import fcntl
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys

_COLLECTION = "<collection>"
_PROBE = "__mutdelta_probe_hit__"
_CALLED = "__mutdelta_probe_called__"

_targets = {}
_real_paths = {}
_current = None
_hits = {}
_durations = {}
# Per probe id: the file and the target lines its statement holds.
_probes = []
# Per function whose `def` line is a target: its file and that line; and which of them were
# called outside any test (at import, during collection), by index.
_functions = []
_called_outside = set()
_instrumented = set()
# Per node id: its place in the order the session collected the tests.
_order = {}


def _real(filename):
    path = _real_paths.get(filename)
    if path is None:
        path = _real_paths[filename] = os.path.realpath(filename)
    return path


def _hit(probe):
    _hits.setdefault(_current or _COLLECTION, set()).add(probe)


def _called(function):
    if _current is None:
        _called_outside.add(function)


def _header(node):
    """The lines of a statement that run before its body: all of a simple statement."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return range(first, max(node.lineno, body[0].lineno - 1) + 1)
    cases = getattr(node, "cases", None)
    if cases:
        return range(first, max(node.lineno, cases[0].pattern.lineno - 1) + 1)
    return range(first, (node.end_lineno or node.lineno) + 1)


_DOCUMENTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _is_docstring(statement):
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)


class _Instrumenter:
    def __init__(self, path, lines):
        self.path = path
        self.lines = lines

    def probe(self, at, lines):
        hit = sorted(self.lines.intersection(lines))
        if not hit:
            return None
        _probes.append((self.path, hit))
        call = ast.Expr(ast.Call(ast.Name(_PROBE, ast.Load()), [ast.Constant(len(_probes) - 1)], []))
        return ast.fix_missing_locations(ast.copy_location(call, at))

    def block(self, statements, documented=False):
        """`documented`: the body of a module, class or function, whose docstring must stay
        first (and a module's `from __future__` imports right after it): no probe goes before
        them, and they do nothing when they run."""
        out = []
        for index, statement in enumerate(statements):
            self.inside(statement)
            self.mark_calls(statement)
            future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
            docstring = documented and index == 0 and _is_docstring(statement)
            probe = None if future or docstring else self.probe(statement, _header(statement))
            if probe is not None:
                out.append(probe)
            out.append(statement)
        return out

    def inside(self, statement):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(statement, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                documented = field == "body" and isinstance(statement, _DOCUMENTED)
                setattr(statement, field, self.block(value, documented))
        for clause in getattr(statement, "handlers", None) or []:
            clause.body = self.block(clause.body)
            self.prepend(clause.body, _header(clause))
        for case in getattr(statement, "cases", None) or []:
            case.body = self.block(case.body)
            first = case.pattern.lineno
            self.prepend(case.body, range(first, max(first, case.body[0].lineno - 1) + 1))

    def mark_calls(self, statement):
        """A function whose `def` line is watched says when it is called (after its docstring,
        which must stay first): a default argument matters only to calls."""
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) or statement.lineno not in self.lines:
            return
        _functions.append((self.path, statement.lineno))
        call = ast.Expr(ast.Call(ast.Name(_CALLED, ast.Load()), [ast.Constant(len(_functions) - 1)], []))
        body = statement.body
        at = 1 if _is_docstring(body[0]) else 0
        body.insert(at, ast.fix_missing_locations(ast.copy_location(call, body[min(at, len(body) - 1)])))

    def prepend(self, body, lines):
        probe = self.probe(body[0], lines)
        if probe is not None:
            body.insert(0, probe)


class _Loader(importlib.machinery.SourceFileLoader):
    """Compiles a target file with its probes; never reads or writes cached bytecode."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        tree = ast.parse(self.get_data(path), path)
        real = _real(path)
        tree.body = _Instrumenter(real, _targets[real]).block(tree.body, documented=True)
        _instrumented.add(real)
        return compile(tree, path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.has_location:
            return None
        if _real(spec.origin) not in _targets:
            return None
        spec.loader = _Loader(fullname, spec.origin)
        spec.cached = None
        return spec


def _start():
    global _targets
    with open(os.environ["MUTDELTA_PROBE_TARGETS"]) as spec:
        _targets = {os.path.realpath(path): set(lines) for path, lines in json.load(spec).items()}
    setattr(builtins, _PROBE, _hit)
    setattr(builtins, _CALLED, _called)
    sys.meta_path.insert(0, _Finder())


_start()

# Only now: pytest, and what it imports, are loaded through the finder.
import pytest  # noqa: E402


def _watch_what_pytest_rewrites():
    """pytest's assertion rewriter, ahead of the finder once pytest configures, loads the
    modules it rewrites itself: plugins named by `-p` (`addopts`) or by a `pytest11` entry
    point, a project's `register_assert_rewrite` modules. A target file among them is compiled
    with its probes and its asserts rewritten, as pytest would have them."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return
    hook = getattr(rewrite, "AssertionRewritingHook", None)
    if hook is None or not hasattr(hook, "exec_module") or not hasattr(rewrite, "rewrite_asserts"):
        return
    original = hook.exec_module

    def exec_module(self, module):
        origin = getattr(module.__spec__, "origin", None)
        real = _real(origin) if origin else None
        if real not in _targets:
            return original(self, module)
        names = getattr(self, "_rewritten_names", None)
        if isinstance(names, dict):
            names[module.__name__] = origin
        elif isinstance(names, set):
            names.add(module.__name__)
        with open(origin, "rb") as file:
            source = file.read()
        tree = ast.parse(source, origin)
        tree.body = _Instrumenter(real, _targets[real]).block(tree.body, documented=True)
        _instrumented.add(real)
        rewrite.rewrite_asserts(tree, source, origin, self.config)
        exec(compile(tree, origin, "exec", dont_inherit=True), module.__dict__)

    hook.exec_module = exec_module


_watch_what_pytest_rewrites()


def pytest_collection_modifyitems(session, config, items):
    done = set()
    path = os.environ.get("MUTDELTA_PROBE_DESELECT")
    if path:
        with open(path) as spec:
            done = set(json.load(spec))
    kept = [item for item in items if item.nodeid not in done]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in done])
        items[:] = kept


class _Queue:
    """The index of the next unclaimed test, in a file locked for each claim; after it, the
    digest of the tests' order that every process must share."""

    _CLOSED = 1 << 60
    _ORDER_AT = 32

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def agrees(self, order):
        """Whether this process collected the tests in the order the first one did (a plugin
        that shuffles them, such as pytest-randomly, makes each process's order its own)."""
        digest = hashlib.sha1("\n".join(order).encode()).hexdigest().encode()
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            first = os.pread(self.fd, len(digest), self._ORDER_AT)
            if not first:
                os.pwrite(self.fd, digest, self._ORDER_AT)
                return True
            return first == digest
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def _update(self, change):
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            current = int(os.pread(self.fd, 20, 0).strip(b"\0 ") or b"0")
            os.pwrite(self.fd, b"%20d" % change(current), 0)
            return current
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def claim(self):
        return self._update(lambda current: current + 1)

    def close(self):
        self._update(lambda current: self._CLOSED)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """pytest's own loop over the tests, over the tests this process claims."""
    path = os.environ.get("MUTDELTA_PROBE_QUEUE")
    if not path:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    if session.config.option.collectonly:
        return True
    queue = _Queue(path)
    if not queue.agrees([item.nodeid for item in session.items]):
        queue.close()
        raise session.Failed("the tests were collected in another order than in the other processes")
    with open(os.environ["MUTDELTA_PROBE_FIRST"]) as spec:
        rank = {nodeid: index for index, nodeid in enumerate(json.load(spec))}
    # Every process sorts alike (a stable sort: the rest keep their order).
    items = sorted(session.items, key=lambda item: rank.get(item.nodeid, len(rank)))
    # pytest tears a test's fixtures down according to the test that runs next. Claiming the
    # next test before running one would hold a slow test back behind it; instead the
    # neighbour in collection order stands in for it, and when another test is claimed, what
    # the two do not share is torn down before it runs (pytest 7's setup state). Older pytest
    # gets the next test claimed first.
    state = getattr(session, "_setupstate", None)
    late = state is not None and int(pytest.__version__.split(".")[0]) >= 7
    index = queue.claim()
    while index < len(items):
        item = items[index]
        if late:
            nextitem = items[index + 1] if index + 1 < len(items) else None
        else:
            following = queue.claim()
            nextitem = items[following] if following < len(items) else None
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        if session.testsfailed:
            queue.close()
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
        if late:
            following = queue.claim()
            claimed = items[following] if following < len(items) else None
            if claimed is not nextitem:
                state.teardown_exact(claimed)
        index = following
    return True


def pytest_collection_finish(session):
    _order.update((item.nodeid, index) for index, item in enumerate(session.items))


def pytest_runtest_logstart(nodeid, location):
    global _current
    _current = nodeid
    _durations.setdefault(nodeid, 0.0)


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_runtest_logfinish(nodeid, location):
    global _current
    _current = None


def _lines(probes):
    lines = {}
    for probe in probes:
        path, hit = _probes[probe]
        lines.setdefault(path, set()).update(hit)
    return {path: sorted(hit) for path, hit in lines.items()}


def pytest_sessionfinish(session, exitstatus):
    root = os.path.realpath(str(session.config.rootpath))
    outside = []
    files = []
    untraced = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path:
            files.append(_real(path))
            if _real(path) in _targets and _real(path) not in _instrumented:
                untraced.add(_real(path))
        if name == "__main__" or name.startswith("mutdelta_probe"):
            continue
        if path is None or not _real(path).startswith(root + os.sep):
            outside.append(name)
    tests = {
        nodeid: {"duration": duration, "order": _order.get(nodeid, len(_order)), "lines": _lines(_hits.get(nodeid, ()))}
        for nodeid, duration in _durations.items()
    }
    with open(os.environ["MUTDELTA_PROBE_OUT"], "w") as out:
        json.dump(
            {
                "tests": tests,
                "collection": _lines(_hits.get(_COLLECTION, ())),
                "outside_modules": sorted(outside),
                "module_files": files,
                "untraced": sorted(untraced),
                "functions": [
                    [path, line, index in _called_outside] for index, (path, line) in enumerate(_functions)
                ],
            },
            out,
        )
