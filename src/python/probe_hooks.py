"""mutdelta's pytest plugin hooks, re-exported by `mutdelta_probe` (the plugin pytest
registers), which holds what they measure: how long each test takes and in what order, which
target statements each test executed (its own and those of the Python processes it started),
which modules from outside the project the tests imported.

PYTEST_DONT_REWRITE
"""

import fcntl
import glob
import hashlib
import json
import os
import re
import sys
import warnings

import pytest

import mutdelta_probe as core

__all__ = [
    "pytest_collection_modifyitems",
    "pytest_runtestloop",
    "pytest_collection_finish",
    "pytest_runtest_logstart",
    "pytest_runtest_logreport",
    "pytest_runtest_logfinish",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
]

# The tests that failed, each with the fingerprint of its first failure.
_failures = {}
# The tests the project marks flaky (`@pytest.mark.flaky`, pytest-rerunfailures' or flaky's).
_marked_flaky = []

# What the processes a test starts write (`core._child_file`), left by an earlier run.
_CHILDREN = glob.escape(os.environ["MUTDELTA_PROBE_OUT"]) + ".child-*"
for _stale in glob.glob(_CHILDREN):
    os.remove(_stale)

def _ran_already(config):
    """Whether a test's node id is one the selectors in MUTDELTA_PROBE_DESELECT name, as pytest
    would select them on its command line: a directory or a file (relative to the directory
    pytest runs in), or a node id within one, with its parametrizations and what it holds."""
    path = os.environ.get("MUTDELTA_PROBE_DESELECT")
    if not path:
        return lambda nodeid: False
    with open(path) as spec:
        selectors = json.load(spec)
    root = os.path.realpath(str(config.rootpath))
    named = set()
    for selector in selectors:
        file, sep, within = selector.partition("::")
        relative = os.path.relpath(os.path.realpath(file), root).replace(os.sep, "/")
        named.add(relative + sep + within)

    def ran_already(nodeid):
        if nodeid in named:
            return True
        # Every prefix of the node id ending where a part of it begins (a directory, a file, a
        # class, a parametrization).
        for at, char in enumerate(nodeid):
            if char in "/:[" and nodeid[:at] in named:
                return True
        return False

    return ran_already


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable(value):
    """A parameter as text that is the same from run to run (no object's address)."""
    if callable(value) and hasattr(value, "__qualname__"):
        return "%s.%s" % (getattr(value, "__module__", ""), value.__qualname__)
    return _ADDRESS.sub("", repr(value))


def _params(item):
    """A digest of a test's parameters ("" for none; None when they cannot be told apart): the
    same node id with other parameters is another test."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return ""
    try:
        text = repr(sorted((name, _stable(value)) for name, value in callspec.params.items()))
    except Exception:
        return None
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def _ruled_out():
    """The tests the test-impact map proved cannot reach the change, with their parameters then
    (MUTDELTA_PROBE_RULED_OUT): left out when their parameters are the same now."""
    path = os.environ.get("MUTDELTA_PROBE_RULED_OUT")
    if not path:
        return {}
    with open(path) as spec:
        return json.load(spec)


def pytest_collection_modifyitems(session, config, items):
    ran_already = _ran_already(config)
    ruled_out = _ruled_out()
    kept, done = [], []
    for item in items:
        if item.get_closest_marker("flaky") is not None:
            _marked_flaky.append(item.nodeid)
        if core._impact:
            core._params[item.nodeid] = _params(item)
        recorded = ruled_out.get(item.nodeid)
        proven = recorded is not None and recorded == (core._params.get(item.nodeid) if core._impact else _params(item))
        (done if ran_already(item.nodeid) or proven else kept).append(item)
        core._ruled_out_any = core._ruled_out_any or (proven and not ran_already(item.nodeid))
    core._deselected.extend(item.nodeid for item in done)
    if done:
        config.hook.pytest_deselected(items=done)
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
    core._order.update((item.nodeid, index) for index, item in enumerate(session.items))
    core._collected = [item.nodeid for item in session.items] + core._deselected


def pytest_runtest_logstart(nodeid, location):
    core._current = nodeid
    core.restart_impact()
    os.environ[core.CHILD_OF_TEST] = nodeid
    core._durations.setdefault(nodeid, 0.0)


def pytest_runtest_logreport(report):
    core._durations[report.nodeid] = core._durations.get(report.nodeid, 0.0) + report.duration


def pytest_runtest_logfinish(nodeid, location):
    core.check_tracer(nodeid)
    core._current = None
    os.environ.pop(core.CHILD_OF_TEST, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.nodeid not in _failures:
        _failures[item.nodeid] = fingerprint(item, call.excinfo)


def fingerprint(item, excinfo):
    """How a failure looks, whatever the run: the exception's type, its message's first line
    with numbers and addresses blotted out, and the line of the test's own file it passed
    through last."""
    if excinfo is None:
        return "failed"
    message = str(excinfo.value).strip().splitlines()
    shape = re.sub(r"0x[0-9a-fA-F]+|\d+(\.\d+)?", "#", message[0] if message else "")[:120]
    own = os.path.realpath(str(getattr(item, "path", None) or item.fspath))
    line = None
    for entry in excinfo.traceback:
        if os.path.realpath(str(entry.path)) == own:
            line = entry.lineno + 1
    where = f" at {os.path.basename(own)}:{line}" if line is not None else ""
    return f"{excinfo.type.__name__}: {shape}{where}" if shape else f"{excinfo.type.__name__}{where}"


def _lines(probes):
    lines = {}
    for probe in probes:
        path, hit = core._probes[probe]
        lines.setdefault(path, set()).update(hit)
    return {path: sorted(hit) for path, hit in lines.items()}


def _add_children(tests):
    """The statements the processes each test started executed, as theirs."""
    for child in glob.glob(_CHILDREN):
        with open(child) as hits:
            for hit in hits:
                nodeid, path, lines = hit.rstrip("\n").split("\t")
                test = tests.get(nodeid)
                if test is not None:
                    known = set(test["lines"].get(path, ()))
                    test["lines"][path] = sorted(known.union(int(line) for line in lines.split(",")))
        os.remove(child)


def _impact(root):
    """What the test-impact map keeps of this session (`mutdelta_impact`): the project's blocks
    as they stand, and per test (and for the collection) the blocks it executed, the files under
    the project it read (Python files aside: their blocks stand for them) with their digests,
    and whether it started a process."""
    import mutdelta_impact as impact

    known = os.environ.get("MUTDELTA_PROBE_IMPACT_KNOWN")
    table = impact.table(root, impact.read_known(known) if known else None)
    blocks = {}

    def block(filename, line):
        key = (filename, line)
        if key not in blocks:
            real = core._real(filename)
            relative = os.path.relpath(real, root).replace(os.sep, "/") if real.startswith(root + os.sep) else None
            entry = table.get(relative)
            blocks[key] = None if entry is None else [relative, impact.block_of(entry, line)]
        return blocks[key]

    digests = {}

    def data(paths):
        out = {}
        for path in paths:
            directory = path.endswith("/")
            real = os.path.realpath(path.rstrip("/"))
            if not real.startswith(root + os.sep):
                continue
            relative = os.path.relpath(real, root).replace(os.sep, "/") + ("/" if directory else "")
            parts = relative.rstrip("/").split("/")
            if any(part.startswith(".") or part == "__pycache__" for part in parts):
                continue
            if relative.endswith((".py", ".pyc")):
                continue
            if relative not in digests:
                digests[relative] = impact.data_digest(root, relative)
            out[relative] = digests[relative]
        return out

    def reach(key):
        executed = (block(filename, line) for filename, line in core._executed.get(key, ()))
        reads = set(core._reads.get(key, ()))
        own = key.split("::")[0]
        if key != core._COLLECTION and not own.endswith(".py"):
            # A test pytest reads from a file of text (a doctest file): that file is its code.
            reads.add(os.path.join(root, own))
        return {
            "blocks": sorted({tuple(found) for found in executed if found is not None}),
            "data": data(reads),
            "spawned": key in core._spawned,
            "commands": sorted(core._commands.get(key, ())),
            "untraced": key in core._untraced,
            "params": core._params.get(key),
            "seconds": round(core._durations.get(key, 0.0), 6),
        }

    return {
        "table": table,
        "config": impact.configuration(root),
        "tests": {nodeid: reach(nodeid) for nodeid in core._durations},
        "collection": reach(core._COLLECTION),
        "collected": None if core._collected is None else sorted(set(core._collected)),
    }


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and core._ruled_out_any and not session.testsfailed:
        # Every test the session collected was left out, some by the test-impact map: the
        # tests that could reach the change are none, which is an answer, not a failure.
        session.exitstatus = pytest.ExitCode.OK
    root = os.path.realpath(str(session.config.rootpath))
    impact = None
    if core._impact:
        core.stop_impact()
        if not core._impact_lost:
            # Under the project's warning filters (`error` turns a warning into a failure):
            # what the map reads of the project is no test's business.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                impact = _impact(os.path.realpath(os.environ["MUTDELTA_PROBE_IMPACT"]))
    outside = []
    files = []
    untraced = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path:
            files.append(core._real(path))
            if core._real(path) in core._targets and core._real(path) not in core._instrumented:
                untraced.add(core._real(path))
        if name == "__main__" or name.startswith("mutdelta_probe"):
            continue
        if path is None or not core._real(path).startswith(root + os.sep):
            outside.append(name)
    tests = {
        nodeid: {"duration": duration, "order": core._order.get(nodeid, len(core._order)), "lines": _lines(core._hits.get(nodeid, ()))}
        for nodeid, duration in core._durations.items()
    }
    _add_children(tests)
    with open(os.environ["MUTDELTA_PROBE_OUT"], "w") as out:
        json.dump(
            {
                "tests": tests,
                "collection": _lines(core._hits.get(core._COLLECTION, ())),
                "outside_modules": sorted(outside),
                "module_files": files,
                "untraced": sorted(untraced),
                "functions": [
                    [path, line, index in core._called_outside] for index, (path, line) in enumerate(core._functions)
                ],
                "impact": impact,
                "impact_lost": core._impact_lost,
                "deselected": core._deselected,
                "failed": _failures,
                "marked_flaky": _marked_flaky,
                "reruns": getattr(session.config.option, "reruns", 0) or 0,
            },
            out,
        )
