"""mutdelta's warm worker: imports pytest and the suite's outside modules once, then forks one
child per request, which runs the selected tests against the (mutated) project imported fresh.

Protocol, one JSON object per line. Requests on stdin: {"args": [...], "log": path, "timeout": s}.
Answers on stdout: {"child": pid} when the child starts, then {"exit": code} or
{"signal": n} or {"timeout": true}, each with "duration" in seconds.
"""

import importlib
import json
import os
import sys

import mutdelta_forked as forked
from mutdelta_forked import enter_child


# Answers go to a private copy of stdout; fd 1 itself is pointed at stderr so that nothing a
# preloaded module prints can be mistaken for an answer.
_answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


def answer(message):
    _answers.write(json.dumps(message) + "\n")
    _answers.flush()


def run_child(args, log):
    try:
        enter_child(log)
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
        code = 3
    os._exit(code)


def serve(request, parent):
    return forked.serve(request, parent, lambda: run_child(request["args"], request["log"]), answer)


def main():
    parent = os.getppid()
    import pytest  # noqa: F401  (imported once here, shared by every child)

    for name in json.loads(os.environ.get("MUTDELTA_PRELOAD", "[]")):
        try:
            importlib.import_module(name)
        except BaseException:
            pass
    answer({"ready": True})
    for line in sys.stdin:
        if line.strip():
            answer(serve(json.loads(line), parent))


if __name__ == "__main__":
    main()
