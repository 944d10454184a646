"""mutdelta's collector: a pytest plugin that collects the tests once, then runs each mutant in a
forked child, with the mutated code swapped into the live functions, through pytest's own
runtest protocol.

Loaded with `-p mutdelta_collector`; MUTDELTA_COLLECTOR_FILES names the mutated files (a JSON
list of paths), read once the tests are collected and before any mutant is written. It owns `pytest_runtestloop` (as pytest-xdist's workers do)
and serves requests instead of running the session. Protocol, one JSON object per line.
Requests on stdin:
  {"mutant": {"file", "start": [line, column], "end": [line, column], "replacement",
              "source_bytes"}, ...}
   "tests": [node ids], "log": path, "timeout": seconds}
  {"canary": file, "tests": [node ids], "log": path, "timeout": seconds}
  {"unmutated": true, "tests": [node ids], "log": path, "timeout": seconds}
Answers on stdout: {"ready": true} once collected; per request {"refused": why} when the
mutant cannot be swapped in (the caller then imports the project fresh), else {"child": pid},
then {"exit": 0 or 1, "failed": [node ids], "swap": s, "tests": s, "duration": s} or
{"signal": n, "duration": s} or {"timeout": true, "duration": s}.

A mutant is swapped only when it changes the code of functions that are alive in this process
and whose code is all it changes: the top-level statement holding it is compiled at its own
line numbers (so methods keep `__class__` for `super()`), its code objects are matched to the
original's by qualified name and first line, and each changed function gets the new code.
The literal defaults of a plain, undecorated function (top-level, or a method of a top-level
class) are swapped too (`__defaults__`, `__kwdefaults__`): mutdelta sends such a mutant only when
its coverage run saw that the function was not called outside the tests, so no value computed
at import used them.
Refused: Python before 3.11 (no `co_qualname`), module or class body code (decorators,
constants, defaults other than those), a changed signature, closure or kind (generator,
coroutine), a live generator or coroutine of a changed function, no live function holding the
change, tests that were not collected.
"""

import ast
import atexit
import bisect
import functools
import gc
import inspect
import json
import math
import os
import sys
import time
import types

import mutdelta_forked as forked
import mutdelta_rewritten
import pytest
from mutdelta_forked import enter_child

# Requests and answers use private copies of the original stdin and stdout, taken when pytest
# imports this plugin, before its output capture replaces them.
_requests = os.fdopen(os.dup(0), "r")
_answers = os.fdopen(os.dup(1), "w")
# Closed before exit: left to the interpreter's shutdown they warn, and under a project's
# `filterwarnings = error` those warnings bury the error the collector ended with.
atexit.register(_answers.close)
atexit.register(_requests.close)
mutdelta_rewritten.install()
_files = {}
# Why a mutated file was not read, by path.
_unread = {}
_FUNCTION_KINDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_SIGNATURE = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_freevars")
# Objects that hold a function's code while they run.
_LIVE_CODE = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def answer(message):
    _answers.write(json.dumps(message) + "\n")
    _answers.flush()


class Refused(Exception):
    pass


def choose(collected, by_id, tests):
    """The collected items `tests` name, in their order: node ids, or files and directories
    (their items in collection order). The whole suite (no names) is not what was collected."""
    if not tests:
        raise Refused("the whole suite is asked for, and only some tests were collected here")
    chosen = []
    for name in tests:
        if name in by_id:
            chosen.append(by_id[name])
            continue
        under = name.rstrip("/")
        found = [item for item in collected if item.nodeid.split("::", 1)[0] == under or item.nodeid.startswith(under + "/")]
        if "::" in name or not found:
            raise Refused("a test to run was not collected here")
        chosen.extend(found)
    return list({id(item): item for item in chosen}.values())


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        answer({"error": "collection failed"})
        return True
    items = {item.nodeid: item for item in session.items}
    # mutdelta: this process's parent, or, forked from a warm worker, that worker's parent.
    parent = int(os.environ.pop("MUTDELTA_COLLECTOR_PARENT", "") or os.getppid())
    # The mutated files as collected, read before any mutant is written into the copy.
    for path in json.loads(os.environ.get("MUTDELTA_COLLECTOR_FILES", "[]")):
        try:
            file_for(path)
        except (Refused, OSError, SyntaxError, ValueError) as error:
            _unread[path] = str(error)
    # Objects alive now stay put: forked children then copy fewer pages when they collect.
    gc.freeze()
    answer({"ready": True, "items": len(items)})
    for line in _requests:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            if "mutant" in request:
                plan = swap_plan(request["mutant"])
            elif "canary" in request:
                plan = canary_plan(request["canary"])
            else:
                plan = []  # the tests unmutated
            chosen = choose(session.items, items, request["tests"])
        except Refused as why:
            answer({"refused": str(why)})
            continue
        answer(serve(session, plan, chosen, request, parent))
    return True


# ---- what changes -------------------------------------------------------------------------


class File:
    """A mutated file as it was collected: its source, top-level statements, live objects."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as source:
            self.source = source.read()
        self.path = path
        self.lines = self.source.split("\n")
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        tree = ast.parse(_readable(self.source))
        self.blocks = []
        for node in tree.body:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            last = node.end_lineno or node.lineno
            if self.blocks and first <= self.blocks[-1][1]:
                self.blocks[-1][1] = max(self.blocks[-1][1], last)
            else:
                self.blocks.append([first, last])
        self.future = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                self.future.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        self.original_codes = {}
        self.functions = {}
        self.generators = set()
        self.caches = {}
        real = os.path.realpath(path)
        # By exact type, never isinstance: isinstance asks an object of another type for its
        # `__class__`, which runs the project's code (a module proxy that warns on any attribute,
        # an error under `filterwarnings = error`). None of these types can be subclassed.
        for obj in gc.get_objects():
            kind = type(obj)
            if kind is types.FunctionType:
                code = obj.__code__
                if same_file(code.co_filename, real):
                    self.functions.setdefault(key(code), []).append(obj)
            elif kind in _LIVE_CODE:
                code = getattr(obj, "gi_code", None) or getattr(obj, "cr_code", None) or getattr(obj, "ag_code", None)
                if code is not None and same_file(code.co_filename, real):
                    self.generators.add(key(code))
            elif kind is functools._lru_cache_wrapper:
                wrapped = getattr(obj, "__wrapped__", None)
                if type(wrapped) is types.FunctionType:
                    self.caches.setdefault(id(wrapped), []).append(obj)

    def block_holding(self, first, last):
        """The top-level statement's lines that hold lines first..last, by bisection."""
        index = bisect.bisect_right(self.blocks, [first, math.inf]) - 1
        if index >= 0 and self.blocks[index][0] <= first and last <= self.blocks[index][1]:
            return self.blocks[index]
        return None

    def offset(self, position):
        line, column = position
        return self.starts[line - 1] + column - 1

    def block_code(self, first, last, source):
        """The code of lines first..last of `source` (this file, or a mutant of it), compiled at
        their own line numbers; `from __future__` imports kept."""
        lines = source.split("\n")
        prefix = [self.lines[n - 1] if n in self.future else "" for n in range(1, first)]
        text = _readable("\n".join(prefix + lines[first - 1 : last]))
        return compile(text, self.path, "exec", dont_inherit=True)

    def original_block_codes(self, first, last):
        """`codes` of lines first..last as collected, compiled once per statement."""
        if (first, last) not in self.original_codes:
            self.original_codes[first, last] = codes(self.block_code(first, last, self.source))
        return self.original_codes[first, last]


def _readable(text):
    """`text` as compile() takes it: without the byte order mark a file may begin with, which
    Python reads past in a file but refuses in a string."""
    return text.removeprefix("\ufeff")


def same_file(filename, real):
    return filename == real or _real_path(filename) == real


@functools.lru_cache(maxsize=None)
def _real_path(filename):
    # Thousands of functions share a few hundred files; realpath stats every part of a path.
    return os.path.realpath(filename)


def key(code):
    return (code.co_qualname, code.co_firstlineno)


def codes(code, out=None, parent=None):
    """Every code object under `code` by key, with its parent's key; two code objects under one
    key (two lambdas on a line) make the key ambiguous."""
    if out is None:
        out = {}
    k = key(code)
    out[k] = (code, parent) if k not in out else (None, parent)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            codes(const, out, k)
    return out


def own_part(code):
    """The code without the code objects nested in it, nor its positions: what changed in this
    function itself. (A `def` statement's positions end where its last line does, so a mutant on
    that line moves them in the module's code, which runs the same.)"""
    consts = tuple(None if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_consts=consts, co_linetable=b"")


def is_function(code):
    return bool(code.co_flags & inspect.CO_OPTIMIZED) and code.co_name != "<module>"


def file_for(path):
    if sys.version_info < (3, 11):
        raise Refused("Python before 3.11 has no co_qualname to match functions by")
    file = _files.get(path)
    if file is None:
        file = _files[path] = File(path)
    return file


def swap_plan(mutant):
    file = _files.get(mutant["file"])
    if file is None:
        raise Refused(_unread.get(mutant["file"], "the file was not read when the tests were collected"))
    if len(file.source.encode("utf-8")) != mutant["source_bytes"]:
        raise Refused("the file collected is not the one the mutant was made from")
    start, end = mutant["start"], mutant["end"]
    holder = file.block_holding(start[0], end[0])
    if holder is None or holder[0] in file.future:
        raise Refused("the mutant is not inside one top-level statement")
    first, last = holder
    mutated = file.source[: file.offset(start)] + mutant["replacement"] + file.source[file.offset(end) :]
    growth = mutated.count("\n") - file.source.count("\n")
    try:
        before = file.original_block_codes(first, last)
        after = codes(file.block_code(first, last + growth, mutated))
    except (SyntaxError, ValueError) as error:
        raise Refused(f"the statement does not compile: {error}")
    if before.keys() != after.keys():
        raise Refused("the mutant changes which functions exist or where they start")
    if any(code is None for code, _ in before.values()) or any(code is None for code, _ in after.values()):
        raise Refused("two functions of the statement share a name and a first line")
    changed = [k for k in before if before[k][0] != after[k][0]]
    swaps = []
    covered = set()
    new_defaults = {}
    for k in changed:
        old, new = before[k][0], after[k][0]
        if own_part(old) != own_part(new) and not is_function(new):
            top = old.co_name == "<module>" or before[k][1] == next(iter(before))
            found = defaults_change(file, first, last, growth, mutated) if top else None
            if found is None:
                raise Refused("the mutant changes module or class body code (run at import)")
            function_key, old_values, new_values = found
            for function in file.functions.get(function_key, []):
                if function.__code__.co_flags & _FUNCTION_KINDS:
                    raise Refused("a generator's or coroutine's defaults are bound when it is made")
                if (function.__defaults__, function.__kwdefaults__) != old_values:
                    raise Refused("the function's defaults changed after it was defined")
                new_defaults[id(function)] = (function, new_values)
            if not new_defaults:
                raise Refused("no live function has the changed defaults")
            covered.add(k)
            continue
        if k in file.generators:
            raise Refused("a live generator or coroutine holds the old code")
        live = file.functions.get(k, [])
        if not live:
            continue
        if any(getattr(old, a) != getattr(new, a) for a in _SIGNATURE) or (old.co_flags ^ new.co_flags) & _FUNCTION_KINDS:
            raise Refused("the mutant changes a function's signature, closure or kind")
        for function in live:
            swaps.append((function, new, new_defaults.pop(id(function), (None, None))[1]))
        covered.add(k)
    for k in changed:
        if own_part(before[k][0]) == own_part(after[k][0]):
            continue  # only code nested in it changed
        parent = k
        while parent is not None and parent not in covered:
            parent = before[parent][1]
        if parent is None:
            raise Refused("no live function holds the mutated code")
    swaps.extend((function, None, values) for function, values in new_defaults.values())
    if not swaps:
        raise Refused("no live function holds the mutated code")
    return swaps


def defaults_change(file, first, last, growth, mutated):
    """When lines first..last hold one plain, undecorated function, or a class whose methods
    include one, and the mutant changes nothing that runs at import but that function's literal
    defaults: the function's key and its (`__defaults__`, `__kwdefaults__`) before and after."""
    try:
        [old] = ast.parse(_readable("\n".join(file.lines[first - 1 : last]))).body
        [new] = ast.parse(_readable("\n".join(mutated.split("\n")[first - 1 : last + growth]))).body
    except (SyntaxError, ValueError):
        return None
    prefix = ""
    if type(old) is type(new) is ast.ClassDef:
        if _without_body(old) != _without_body(new) or len(old.body) != len(new.body):
            return None
        differing = [(a, b) for a, b in zip(old.body, new.body) if ast.dump(a) != ast.dump(b)]
        if len(differing) != 1:
            return None
        prefix = old.name + "."
        [(old, new)] = differing
    if not (type(old) is type(new) is ast.FunctionDef) or old.decorator_list or new.decorator_list:
        return None
    # The defaults must be what changed: else the change of the code run at import has another
    # cause (a method that stops using `super()` no longer needs the class's `__class__` cell).
    if _without_defaults(old) != _without_defaults(new) or _defaults(old) == _defaults(new):
        return None
    try:
        values = _literal_defaults(old), _literal_defaults(new)
    except ValueError:
        return None
    return (prefix + old.name, first + old.lineno - 1), values[0], values[1]


def _without_body(node):
    """What of a class statement runs at import besides its body."""
    return node.name, [ast.dump(part) for part in node.bases + node.keywords + node.decorator_list]


def _without_defaults(node):
    """What of a `def` runs at import besides its defaults: its name, arguments (with their
    annotations and which have defaults) and return annotation."""
    args = node.args
    has_default = [default is not None for default in args.kw_defaults]
    bare = ast.arguments(
        posonlyargs=args.posonlyargs, args=args.args, vararg=args.vararg, kwonlyargs=args.kwonlyargs,
        kw_defaults=[], kwarg=args.kwarg, defaults=[],
    )
    return (node.name, ast.dump(bare), len(args.defaults), has_default, ast.dump(node.returns) if node.returns else None)


def _defaults(node):
    return [ast.dump(default) for default in node.args.defaults + node.args.kw_defaults if default is not None]


def _literal_defaults(node):
    """(`__defaults__`, `__kwdefaults__`) as Python makes them; ValueError unless literals."""
    args = node.args
    positional = tuple(ast.literal_eval(default) for default in args.defaults) or None
    keyword = {
        arg.arg: ast.literal_eval(default) for arg, default in zip(args.kwonlyargs, args.kw_defaults) if default is not None
    } or None
    return positional, keyword


def canary_plan(path):
    """Every live function of the file made to raise: the tests must fail."""
    file = _files.get(path)
    if file is None:
        raise Refused(_unread.get(path, "the file was not read when the tests were collected"))
    swaps = []
    for functions in file.functions.values():
        for function in functions:
            code = function.__code__
            replacement = _RAISING.get(code.co_flags & _FUNCTION_KINDS)
            if code.co_freevars or replacement is None:
                continue
            swaps.append((function, replacement, None))
    if not swaps:
        raise Refused("no function of the file can be swapped")
    return swaps


def _raising():
    """A function that raises, of each kind (plain, generator, coroutine, async generator)."""
    source = (
        "def plain(*args, **kwargs):\n    raise RuntimeError('mutdelta canary')\n"
        "def generator(*args, **kwargs):\n    raise RuntimeError('mutdelta canary')\n    yield\n"
        "async def coroutine(*args, **kwargs):\n    raise RuntimeError('mutdelta canary')\n"
        "async def async_generator(*args, **kwargs):\n    raise RuntimeError('mutdelta canary')\n    yield\n"
    )
    namespace = {}
    exec(compile(source, "<mutdelta canary>", "exec"), namespace)
    return {
        namespace[name].__code__.co_flags & _FUNCTION_KINDS: namespace[name].__code__
        for name in ("plain", "generator", "coroutine", "async_generator")
    }


_RAISING = _raising()


# ---- running a mutant ---------------------------------------------------------------------


def serve(session, swaps, items, request, parent):
    result_path = request["log"] + ".result"
    outcome = forked.serve(request, parent, lambda: run_child(session, swaps, items, request["log"], result_path), answer)
    if "exit" in outcome:
        outcome["failed"] = []
        try:
            with open(result_path) as result:
                outcome.update(json.load(result))
        except (OSError, ValueError):
            pass
    return outcome


def run_child(session, swaps, items, log, result_path):
    code = 3
    try:
        config = session.config
        capman = config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.stop_global_capturing()
        enter_child(log)
        if capman is not None:
            capman.start_global_capturing()
            capman.suspend_global_capture()
        started = time.monotonic()
        for function, new, defaults in swaps:
            if new is not None:
                function.__code__ = new
            if defaults is not None:
                function.__defaults__, function.__kwdefaults__ = defaults
            for cache in _files_caches(function):
                cache.cache_clear()
        swapped = time.monotonic()
        failed = []

        class Listener:
            def pytest_runtest_logreport(self, report):
                if report.failed and not hasattr(report, "wasxfail") and report.nodeid not in failed:
                    failed.append(report.nodeid)

        config.pluginmanager.register(Listener(), "mutdelta-listener")
        for index, item in enumerate(items):
            nextitem = items[index + 1] if index + 1 < len(items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if failed:
                break
        tests_took = time.monotonic() - swapped
        reporter = config.pluginmanager.getplugin("terminalreporter")
        if failed and reporter is not None:
            # What a run of pytest would end with: the failures and the short summary.
            reporter.summary_failures()
            reporter.short_test_summary()
        with open(result_path, "w") as result:
            json.dump({"failed": failed, "swap": swapped - started, "tests": tests_took}, result)
        sys.stdout.flush()
        sys.stderr.flush()
        code = 1 if failed else 0
    except BaseException:
        import traceback

        traceback.print_exc()
    os._exit(code)


def _files_caches(function):
    for file in _files.values():
        yield from file.caches.get(id(function), ())
