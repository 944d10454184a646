"""mutdelta's forked children, shared by the warm worker and the collector: one child per
request, in its own process group and killed with its parent, its output in a log; waited for
with a deadline, its whole group killed afterwards."""

import os
import select
import signal
import time


def _libc():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, ImportError):
        return None


_LIBC = _libc()


def enter_child(log):
    """In a fresh child: its own process group, killed when its parent dies (even by SIGKILL),
    standard input from /dev/null, standard output and error to `log`."""
    os.setpgid(0, 0)
    try:
        _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except AttributeError:
        pass
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)


def serve(request, parent, run, answer):
    """Forks a child that calls `run` (which ends with os._exit), answers {"child": pid}, and
    waits for it up to request["timeout"]; returns {"exit": code}, {"signal": n} or
    {"timeout": true}, each with "duration" in seconds. If mutdelta (`parent`) dies meanwhile,
    the child's group is killed and this process exits."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        run()
    answer({"child": pid})
    ended = _ChildEnd(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if not parent_alive(parent):
                kill_group(pid)
                os._exit(1)
            if time.monotonic() - start > request["timeout"]:
                kill_group(pid)
                os.waitpid(pid, 0)
                return {"timeout": True, "duration": time.monotonic() - start}
            ended.wait(min(0.2, max(0.0, start + request["timeout"] - time.monotonic())))
    finally:
        ended.close()
    duration = time.monotonic() - start
    kill_group(pid)  # whatever the tests left running in the background
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status), "duration": duration}
    return {"exit": os.WEXITSTATUS(status), "duration": duration}


def parent_alive(parent):
    """Whether mutdelta (`parent`) still runs: this process's parent, or for a collector forked
    from a warm worker (and reparented when that worker ended) a process that still exists."""
    if os.getppid() == parent:
        return True
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _ChildEnd:
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
