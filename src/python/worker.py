"""mutdelta's warm worker: imports pytest and the suite's outside modules once, then forks one
child per request, which runs the selected tests against the (mutated) project imported fresh.

Protocol, one JSON object per line. Requests on stdin: {"args": [...], "log": path, "timeout": s}.
Answers on stdout: {"child": pid} when the child starts, then {"exit": code} or
{"signal": n} or {"timeout": true}, each with "duration" in seconds.
"""

import importlib
import json
import os
import select
import signal
import sys
import time


# Answers go to a private copy of stdout; fd 1 itself is pointed at stderr so that nothing a
# preloaded module prints can be mistaken for an answer.
_answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


def answer(message):
    _answers.write(json.dumps(message) + "\n")
    _answers.flush()


def die_with_parent():
    """Linux: the child is killed when the worker dies, even by SIGKILL."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def run_child(args, log):
    try:
        os.setpgid(0, 0)
        die_with_parent()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
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
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        run_child(request["args"], request["log"])
    answer({"child": pid})
    ended = ChildEnd(pid)
    try:
        return wait_for(pid, ended, start, request, parent)
    finally:
        ended.close()


def wait_for(pid, ended, start, request, parent):
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if os.getppid() != parent:
            # mutdelta itself was killed: take the tests down with us.
            kill_group(pid)
            os._exit(1)
        if time.monotonic() - start > request["timeout"]:
            kill_group(pid)
            os.waitpid(pid, 0)
            return {"timeout": True, "duration": time.monotonic() - start}
        ended.wait(min(0.2, max(0.0, start + request["timeout"] - time.monotonic())))
    duration = time.monotonic() - start
    kill_group(pid)  # whatever the tests left running in the background
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status), "duration": duration}
    return {"exit": os.WEXITSTATUS(status), "duration": duration}


class ChildEnd:
    """Waits for a child to end: on its pidfd where Linux has them, else in growing sleeps."""

    def __init__(self, pid):
        try:
            self.fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.fd = None
        self.pause = 0.001

    def wait(self, limit):
        if self.fd is not None:
            select.select([self.fd], [], [], limit)
        else:
            time.sleep(min(self.pause, limit))
            self.pause = min(self.pause * 2, 0.02)

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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
