"""Runs pytest with mutdelta's probe loaded first: `python -m mutdelta_probe_main ARGS` is
`python -m pytest ARGS` in which the project's files that pytest itself imports (a plugin
library or a dependency of pytest, as pluggy is) are imported through the probe's loader and
watched like the rest."""

import sys

import mutdelta_probe  # noqa: F401  (puts the probe's finder in place)
import mutdelta_rewritten
import pytest

mutdelta_rewritten.install()

if __name__ == "__main__":
    # Not `console_main`, which pytest 9.2 deprecates for use outside its own entry point.
    sys.exit(pytest.main())
