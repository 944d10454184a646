"""mutdelta's pytest plugin: which tests execute which target statements, how long each test
takes, and which modules from outside the project the tests import (to preload them in warm
workers). This module watches the target statements; its hooks are in `mutdelta_probe_hooks`.

Imported by `mutdelta_probe_main` before pytest itself (so the project's files that pytest
imports, as a plugin library or a dependency of pytest, are watched too) and registered with
`-p mutdelta_probe` (PYTEST_DONT_REWRITE: pytest would otherwise warn that a plugin imported
before it cannot have its asserts rewritten, an error under `filterwarnings = error`). Configured by
environment variables: MUTDELTA_PROBE_TARGETS names a JSON file {absolute path: [lines]},
MUTDELTA_PROBE_OUT the JSON file it writes at the end of the session, and
MUTDELTA_PROBE_DESELECT (optional) a JSON list of node ids not to run (tests that already ran),
MUTDELTA_PROBE_RULED_OUT (optional) a JSON object of node ids the test-impact map proved need
not run, with the digest of their parameters then (run all the same when those differ now),
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
the project, during collection) are reported as collection lines. A target file loaded by its path
(`spec_from_file_location`) is compiled with its probes too; one imported some other way
(before this module, or by `exec` of its text) is reported as untraced when it is a module.

What a test runs in other Python processes counts for it too: while it runs, its node id is in
the environment (MUTDELTA_PROBE_TEST), a process it starts imports this module from
`sitecustomize` (mutdelta_probe_child.py) and one it forks inherits it; either writes each
statement it executes, once, to a file beside MUTDELTA_PROBE_OUT, which the test's process
reads at the end. Such a process loads no hooks, nor pytest.

With MUTDELTA_PROBE_IMPACT set, it also records what the test-impact map keeps
(`mutdelta_impact`): per test (and for the collection), the code objects it started (on Python
3.12 and later through sys.monitoring, each once per test; before it through a global trace
function that traces no line, and whose record is dropped when another tracer took its place),
the files it read and the directories it listed (an audit hook), and whether it started a
process. MUTDELTA_PROBE_IMPACT names the project's root, and MUTDELTA_PROBE_IMPACT_KNOWN (optional) a
JSON file of the blocks a map read before, reused for files whose content is the same.
"""

import ast
import builtins
import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading

# Set in the environment while a test runs: a Python process it starts watches its own imports
# (support/subprocesses/sitecustomize.py imports this module) and its hits count for that test.
CHILD_OF_TEST = "MUTDELTA_PROBE_TEST"
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
# The node ids the session collected but left out (MUTDELTA_PROBE_DESELECT).
_deselected = []
# Whether the test-impact map left out a test (MUTDELTA_PROBE_RULED_OUT).
_ruled_out_any = False
# Per node id: its place in the order the session collected the tests.
_order = {}
# The node ids the session would have run but for the tests it left out itself (those other
# plugins deselected, by `-m` or `-k`, are not among them); none before the collection ended.
_collected = None
# In a process a test started (a subprocess, or a fork of the test's process): the file its
# hits go to, a line per statement and test, for the test's process to read at the end.
_child_out = None
# The test-impact map's records, per node id (or _COLLECTION): the code objects started, as
# (file, first line; 0 for a module's own code); the paths read, and listed (a trailing "/"); those that started a process.
_executed = {}
_reads = {}
_spawned = set()
# Per node id: a digest of its parameters (mutdelta_probe_hooks._params).
_params = {}
_impact = False
# Per node id (or _COLLECTION): the programs the processes it started ran, by name.
_commands = {}
_SPAWNS = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork", "os.forkpty", "pty.spawn"}
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _real(filename):
    path = _real_paths.get(filename)
    if path is None:
        path = _real_paths[filename] = os.path.realpath(filename)
    return path


def _hit(probe):
    seen = _hits.setdefault(_current or _COLLECTION, set())
    if probe in seen:
        return
    seen.add(probe)
    if _child_out is not None and _current is not None:
        path, lines = _probes[probe]
        os.write(_child_out, ("%s\t%s\t%s\n" % (_current, path, ",".join(map(str, lines)))).encode())


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


def _instrumented_tree(source, path):
    """The syntax tree of the target file at `path`, with its probes."""
    tree = ast.parse(source, path)
    real = _real(path)
    tree.body = _Instrumenter(real, _targets[real]).block(tree.body, documented=True)
    _instrumented.add(real)
    return tree


class _Loader(importlib.machinery.SourceFileLoader):
    """Compiles a target file with its probes; never reads or writes cached bytecode."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return compile(_instrumented_tree(self.get_data(path), path), path, "exec", dont_inherit=True)


class _ThenWatch(importlib.abc.Loader):
    """Loads pytest's assertion rewriter as usual, then lets the probe watch what it loads."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _watch_what_pytest_rewrites(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname == "_pytest.assertion.rewrite":
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _ThenWatch(spec.loader)
            return spec
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.has_location:
            return None
        if _real(spec.origin) not in _targets:
            return None
        spec.loader = _Loader(fullname, spec.origin)
        spec.cached = None
        return spec


def _child_file(test):
    """Where a process started within `test` writes its hits."""
    global _current, _child_out
    _current = test
    path = "%s.child-%d" % (os.environ["MUTDELTA_PROBE_OUT"], os.getpid())
    _child_out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def _impact_started(code, offset):
    key = _current or _COLLECTION
    executed = _executed.get(key)
    if executed is None:
        executed = _executed[key] = set()
    # A module's code starts at line 1 too, where a function may start: told apart by name.
    executed.add((code.co_filename, 0 if code.co_name == "<module>" else code.co_firstlineno))
    return sys.monitoring.DISABLE


_project_files = {}


def _in_project(filename):
    """Whether code of `filename` is the project's: under its root, in no hidden directory, no
    installed package, no cache."""
    known = _project_files.get(filename)
    if known is None and not os.path.isabs(filename):
        known = _project_files[filename] = False  # <frozen ...>, <string>: no file
    if known is None:
        real = _real(filename)
        relative = os.path.relpath(real, _impact_root) if real.startswith(_impact_root + os.sep) else None
        parts = relative.split(os.sep) if relative else []
        known = _project_files[filename] = bool(parts) and not any(
            part.startswith(".") or part in ("site-packages", "__pycache__") for part in parts
        )
    return known


def _by_project():
    """Whether the project's code is on the stack: a read by pytest alone (its configuration,
    discovering and reading the test files) is no input of the tests' code."""
    frame = sys._getframe(2)
    while frame is not None:
        if _in_project(frame.f_code.co_filename):
            return True
        frame = frame.f_back
    return False


def _program(event, args):
    """The name of the program a process-starting audit event runs (`fork` for a fork): its
    file's name, letters, digits and `._+-` only, at most 40 of them."""
    program = "fork"
    if event == "subprocess.Popen":
        executable, argv = args[0], args[1]
        if executable is None:
            argv = argv.split() if isinstance(argv, (str, bytes)) else list(argv or [])
            executable = argv[0] if argv else None
        program = executable
    elif event == "os.system":
        words = os.fsdecode(args[0]).split()
        program = words[0] if words else "sh"
    elif event in ("os.posix_spawn", "os.exec"):
        program = args[0]
    elif event == "os.spawn":
        program = args[1]
    elif event == "pty.spawn":
        argv = args[0]
        program = argv if isinstance(argv, (str, bytes)) else (list(argv) or ["pty"])[0]
    name = os.path.basename(os.fsdecode(program)) if program is not None else "a process"
    return "".join(c for c in name if c.isalnum() or c in "._+-")[:40] or "a process"


def _impact_audit(event, args):
    """Never raises: an audit hook's error would be the audited operation's."""
    if not _impact:
        return
    try:
        key = _current or _COLLECTION
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or (mode is not None and any(c in mode for c in "wax+")):
                return
            if mode is None and flags & _WRITES:
                return
            if _by_project():
                _reads.setdefault(key, set()).add(os.path.abspath(os.fsdecode(path)))
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args and args[0] is not None else "."
            if not isinstance(path, int) and _by_project():
                _reads.setdefault(key, set()).add(os.path.abspath(os.fsdecode(path)) + "/")
        elif event in _SPAWNS:
            _spawned.add(key)
            _commands.setdefault(key, set()).add(_program(event, args))
    except Exception:
        pass


def _impact_traced(frame, event, arg):
    """Before Python 3.12: the global trace function, called as each frame starts (a generator's
    at each resumption); it traces no line of it. Only the project's code is recorded."""
    if event == "call":
        code = frame.f_code
        if _in_project(code.co_filename):
            key = _current or _COLLECTION
            executed = _executed.get(key)
            if executed is None:
                executed = _executed[key] = set()
            executed.add((code.co_filename, 0 if code.co_name == "<module>" else code.co_firstlineno))
    return None


def check_tracer(key):
    """Before Python 3.12, whether the probe's trace function still ran through `key` (a test,
    or the collection). Python drops a trace function that raises (a RecursionError raised in
    it, deep in a test that recurses to the limit): what ran after is not recorded, so `key`
    is left unrecorded (`_untraced`), and the trace function is set again. A test or a plugin
    that sets its own (coverage measurement, a debugger) hides what the tests run from it:
    then nothing this session recorded is kept."""
    global _impact_lost
    if not _impact or _impact_tool is not None:
        return
    tracer = sys.gettrace()
    if tracer is _impact_traced:
        return
    if tracer is None:
        _untraced.add(key)
        sys.settrace(_impact_traced)
    else:
        _impact_lost = True


def stop_impact():
    """Ends the records: what the session does after its tests is nobody's."""
    global _impact
    if _impact:
        check_tracer(_COLLECTION)
        _impact = False
        if _impact_tool is not None:
            sys.monitoring.set_events(_impact_tool, 0)
        elif sys.gettrace() is _impact_traced:
            sys.settrace(None)
            threading.settrace(None)


def restart_impact():
    """A test starts: every code object it starts is recorded again, once."""
    if _impact:
        if _impact_tool is not None:
            sys.monitoring.restart_events()
        else:
            check_tracer(_COLLECTION)


_impact_tool = None
_impact_root = None
# Before Python 3.12: another trace function took the probe's place while the tests ran.
_impact_lost = False
# Before Python 3.12: the tests (or _COLLECTION) during which the trace function was dropped.
_untraced = set()


def _watch_impact():
    """Records what the test-impact map keeps: on Python 3.12 and later through sys.monitoring
    (each code object's start, once per test), before it through a global trace function."""
    global _impact, _impact_tool, _impact_root
    if not os.environ.get("MUTDELTA_PROBE_IMPACT"):
        return
    _impact_root = os.path.realpath(os.environ["MUTDELTA_PROBE_IMPACT"])
    if hasattr(sys, "monitoring"):
        monitoring = sys.monitoring
        free = [tool for tool in (4, 3, 2, 0) if monitoring.get_tool(tool) is None]
        if not free:
            return
        _impact_tool = free[0]
        monitoring.use_tool_id(_impact_tool, "mutdelta impact map")
        monitoring.register_callback(_impact_tool, monitoring.events.PY_START, _impact_started)
        monitoring.set_events(_impact_tool, monitoring.events.PY_START)
    else:
        if sys.gettrace() is not None:
            return  # another tracer runs already: the probe's would take its place
        sys.settrace(_impact_traced)
        threading.settrace(_impact_traced)
    sys.addaudithook(_impact_audit)
    _impact = True


def _forked():
    if _current is not None:
        _child_file(_current)


def _start():
    global _targets
    with open(os.environ["MUTDELTA_PROBE_TARGETS"]) as spec:
        _targets = {os.path.realpath(path): set(lines) for path, lines in json.load(spec).items()}
    setattr(builtins, _PROBE, _hit)
    setattr(builtins, _CALLED, _called)
    sys.meta_path.insert(0, _Finder())
    _watch_loads_by_path()
    os.register_at_fork(after_in_child=_forked)
    test = os.environ.get(CHILD_OF_TEST)
    if test:
        _child_file(test)
    else:
        _watch_impact()


def _watch_loads_by_path():
    """A test that loads a target file by its path (`importlib.util.spec_from_file_location`,
    as tests of scripts outside any package do) gets a plain `SourceFileLoader`, which no finder
    sees: every such loader compiles a target file with its probes too, so the lines it runs
    count for the test that runs them."""
    original = importlib.machinery.SourceFileLoader.get_code

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        if _real(path) not in _targets:
            return original(self, fullname)
        return compile(_instrumented_tree(self.get_data(path), path), path, "exec", dont_inherit=True)

    importlib.machinery.SourceFileLoader.get_code = get_code


def _watch_what_pytest_rewrites(rewrite):
    """pytest's assertion rewriter (the module `rewrite`, just imported), ahead of the finder
    once pytest configures, loads the modules it rewrites itself: plugins named by `-p`
    (`addopts`) or by a `pytest11` entry point, a project's `register_assert_rewrite` modules.
    A target file among them is compiled with its probes and its asserts rewritten, as pytest
    would have them."""
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
        tree = _instrumented_tree(source, origin)
        rewrite.rewrite_asserts(tree, source, origin, self.config)
        exec(compile(tree, origin, "exec", dont_inherit=True), module.__dict__)

    hook.exec_module = exec_module



_start()

if _child_out is None:
    # The plugin's hooks, registered with this module (`-p mutdelta_probe`). pytest, and what
    # it imports, are loaded only now, through the finder.
    from mutdelta_probe_hooks import *  # noqa: E402,F401,F403

