"""sitecustomize for the coverage runs: every Python process started while a test runs (a
CLI the test calls, a `pytester` subprocess) imports it at startup. It lets the probe watch that
process for the test (mutdelta_probe, child mode), then runs the sitecustomize it hides, if any.
"""

import importlib.util
import os
import sys


def _run_hidden():
    """The next `sitecustomize.py` on the path, run as Python would have run it."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        directory = os.path.abspath(entry or os.curdir)
        if directory == here:
            continue
        path = os.path.join(directory, "sitecustomize.py")
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("sitecustomize", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            spec.loader.exec_module(module)
            return


if os.environ.get("MUTDELTA_PROBE_TEST") and os.environ.get("MUTDELTA_PROBE_TARGETS"):
    try:
        import mutdelta_probe  # noqa: F401
    except Exception as error:  # the process must run all the same
        sys.stderr.write("mutdelta: the probe could not watch this process: %r\n" % (error,))

_run_hidden()
