"""mutdelta's pytest plugin: which tests execute which target lines, how long each test takes,
and which modules from outside the project the tests import (to preload them in warm workers).

Loaded with `-p mutdelta_probe`, which pytest imports before any conftest: tracing starts on
import, so lines that run when a conftest imports the project count (as collection lines).
Configured by environment variables: MUTDELTA_PROBE_TARGETS names a JSON file
{absolute path: [lines]}, MUTDELTA_PROBE_OUT the JSON file it writes at the end of the session,
and MUTDELTA_PROBE_DESELECT (optional) a JSON list of node ids not to run (tests that already
ran). Only the target files are traced, so the cost stays small: sys.monitoring with DISABLE on
Python >= 3.12, sys.settrace with a per-file filter before that.
"""

import json
import os
import sys
import threading

_targets = {}
_real_paths = {}
_current = None
_hits = {}
_durations = {}
_COLLECTION = "<collection>"


def _real(filename):
    path = _real_paths.get(filename)
    if path is None:
        path = _real_paths[filename] = os.path.realpath(filename)
    return path


def _record(path, line):
    _hits.setdefault(_current or _COLLECTION, set()).add((path, line))


def _start_settrace():
    def local(lines, path):
        def trace(frame, event, arg):
            if event == "line" and frame.f_lineno in lines:
                _record(path, frame.f_lineno)
            return trace

        return trace

    def global_trace(frame, event, arg):
        path = _real(frame.f_code.co_filename)
        lines = _targets.get(path)
        if lines is None:
            return None
        if frame.f_lineno in lines:
            _record(path, frame.f_lineno)
        return local(lines, path)

    threading.settrace(global_trace)
    sys.settrace(global_trace)


def _start_monitoring():
    monitoring = sys.monitoring
    tool = monitoring.COVERAGE_ID
    if monitoring.get_tool(tool) is not None:
        tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
    monitoring.use_tool_id(tool, "mutdelta")

    def on_line(code, line):
        path = _real(code.co_filename)
        lines = _targets.get(path)
        if lines is not None and line in lines:
            _record(path, line)
        return monitoring.DISABLE

    monitoring.register_callback(tool, monitoring.events.LINE, on_line)
    monitoring.set_events(tool, monitoring.events.LINE)
    return monitoring


def _start():
    global _targets
    with open(os.environ["MUTDELTA_PROBE_TARGETS"]) as spec:
        _targets = {os.path.realpath(path): set(lines) for path, lines in json.load(spec).items()}
    if sys.version_info >= (3, 12):
        return _start_monitoring()
    _start_settrace()
    return None


_monitoring = _start()


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("MUTDELTA_PROBE_DESELECT")
    if not path:
        return
    with open(path) as spec:
        done = set(json.load(spec))
    kept = [item for item in items if item.nodeid not in done]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in done])
        items[:] = kept


def pytest_runtest_logstart(nodeid, location):
    global _current
    _current = nodeid
    _durations.setdefault(nodeid, 0.0)
    if _monitoring is not None:
        # Lines disabled during the previous test must report again for this one.
        _monitoring.restart_events()


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_runtest_logfinish(nodeid, location):
    global _current
    _current = None
    if _monitoring is not None:
        _monitoring.restart_events()


def pytest_sessionfinish(session, exitstatus):
    sys.settrace(None)
    threading.settrace(None)
    root = os.path.realpath(str(session.config.rootpath))
    outside = []
    files = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path:
            files.append(_real(path))
        if name == "__main__" or name.startswith("mutdelta_probe"):
            continue
        if path is None or not _real(path).startswith(root + os.sep):
            outside.append(name)
    tests = {}
    for nodeid, duration in _durations.items():
        lines = {}
        for path, line in _hits.get(nodeid, ()):
            lines.setdefault(path, []).append(line)
        tests[nodeid] = {"duration": duration, "lines": lines}
    collection = {}
    for path, line in _hits.get(_COLLECTION, ()):
        collection.setdefault(path, []).append(line)
    with open(os.environ["MUTDELTA_PROBE_OUT"], "w") as out:
        json.dump(
            {"tests": tests, "collection": collection, "outside_modules": sorted(outside), "module_files": files},
            out,
        )
