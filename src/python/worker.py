"""mutdelta's warm worker: imports pytest and the suite's outside modules once, then forks one
child per request, which runs the selected tests against the (mutated) project imported fresh.

Protocol, one JSON object per line. Requests on stdin: {"args": [...], "log": path, "timeout": s}.
Answers on stdout: {"ready": true, "project_files": [paths in the copy it imported]} once it
has imported what it preloads; {"child": pid} when the child starts, then {"exit": code} or
{"signal": n} or {"timeout": true}, each with "duration" in seconds.
{"preload": [modules]} imports those too and answers {"project_files": [...]} again.
{"collector": {"socket": path, "args": [...], "files": [paths], "log": path}} forks a collector
and answers nothing: the child connects to the Unix socket mutdelta listens on, which becomes
its standard input and output, and runs pytest with `args` (the collector plugin among them) as
`python -m pytest` would, without another interpreter start or another import of pytest.
"""

import importlib
import json
import os
import sys

import mutdelta_forked as forked
import mutdelta_rewritten
from mutdelta_forked import enter_child


# Answers go to a private copy of stdout; fd 1 itself is pointed at stderr so that nothing a
# preloaded module prints can be mistaken for an answer.
_answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


def answer(message):
    _answers.write(json.dumps(message) + "\n")
    _answers.flush()


def run_child(args, log):
    run_pytest(lambda: enter_child(log), args)


def run_pytest(enter, args):
    """In a forked child: `enter` (which points its standard streams where they go), then
    pytest with `args`, as `python -m pytest` would run it; exits with pytest's status (3 when
    it could not run)."""
    code = 3
    try:
        enter()
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        import pytest

        code = int(pytest.main(args))
        sys.stdout.flush()
        sys.stderr.flush()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    os._exit(code)


def serve(request, parent):
    return forked.serve(request, parent, lambda: run_child(request["args"], request["log"]), answer)


def fork_collector(request, parent):
    """A collector forked from this worker, in its own process group. It does not die with this
    worker (mutdelta ends it), since mutdelta may stop the worker and keep the collector."""
    pid = os.fork()
    if pid:
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child set it already, or has ended
        return

    def enter():
        import socket

        os.setpgid(0, 0)
        _answers.close()
        out = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 2)
        os.close(out)
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        channel.connect(request["socket"])
        os.dup2(channel.fileno(), 0)
        os.dup2(channel.fileno(), 1)
        channel.close()
        os.environ["MUTDELTA_COLLECTOR_FILES"] = json.dumps(request["files"])
        # The collector outlives this worker: it watches mutdelta.
        os.environ["MUTDELTA_COLLECTOR_PARENT"] = str(parent)

    run_pytest(enter, request["args"])


def preload(names, rewritten):
    """Imports `names`, leaving out the plugins pytest rewrites and any that fails to import."""
    for name in names:
        if name.partition(".")[0] in rewritten:
            continue
        try:
            importlib.import_module(name)
        except BaseException:
            pass


def rewritten_plugins():
    """The top-level modules of the installed pytest plugins whose asserts pytest rewrites when
    it starts. One imported before makes pytest warn ("Module already imported so cannot be
    rewritten"), an error under `filterwarnings = error` that would break every forked run; so
    they are left for each child to import, as a fresh run would. A module that asks not to be
    rewritten (PYTEST_DONT_REWRITE, as pytest-cov does) is no such module."""
    try:
        from importlib import metadata, util

        from _pytest.config import _iter_rewritable_modules
    except ImportError:
        return set()
    files = [
        str(file)
        for dist in metadata.distributions()
        if any(entry.group == "pytest11" for entry in dist.entry_points)
        for file in dist.files or ()
    ]
    names = set()
    for name in _iter_rewritable_modules(files):
        try:
            with open(util.find_spec(name).origin, encoding="utf-8", errors="replace") as source:
                if "PYTEST_DONT_REWRITE" in source.read(8192):
                    continue
        except (ImportError, ValueError, AttributeError, TypeError, OSError):
            pass
        names.add(name)
    return names


def project_files(root):
    """The files of the copy at `root` imported here already (pytest itself, or a preloaded
    module, imports them): a child would not import them afresh."""
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and os.path.realpath(path).startswith(root + os.sep):
            files.add(os.path.relpath(os.path.realpath(path), root))
    return sorted(files)


def main():
    # mutdelta: this process's parent, unless `--python` names a wrapper that runs this
    # interpreter as its child (then mutdelta says who it is).
    parent = int(os.environ.pop("MUTDELTA_WORKER_PARENT", "") or os.getppid())
    import pytest  # noqa: F401  (imported once here, shared by every child)

    mutdelta_rewritten.install()

    rewritten = rewritten_plugins()
    root = os.path.realpath(os.getcwd())
    preload(json.loads(os.environ.get("MUTDELTA_PRELOAD", "[]")), rewritten)
    answer({"ready": True, "project_files": project_files(root)})
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "collector" in request:
            fork_collector(request["collector"], parent)
        elif "preload" in request:
            preload(request["preload"], rewritten)
            answer({"project_files": project_files(root)})
        else:
            answer(serve(request, parent))


if __name__ == "__main__":
    main()
