"""mutdelta's keeping of compiled modules in the copy under test. With bytecode writing off
(PYTHONDONTWRITEBYTECODE, `-B`), every process compiles the project's modules afresh and pytest
rewrites the asserts of every test module afresh: each coverage run, collector, canary and
fresh run of a mutant. On a large module that costs more than running its tests. Here both are
kept as they are when writing is on (in the cache directory beside the file, which later
processes read), but only inside the copy, the current directory when `install` runs: never in
the user's files nor an installed package. A module compiled here is kept as a checked-hash pyc,
which Python takes only for the very source it was made from, whatever the file's time: a
mutant's bytecode is never taken for another mutant or the original."""

import os
import sys


class _Quiet:
    """pytest's assertion state as `_write_pyc` uses it: for its trace, which stays silent."""

    @staticmethod
    def trace(*_):
        pass


def install():
    """Keeps what is compiled or rewritten inside the current directory, though bytecode writing
    is off. A process that forks keeps this for its children."""
    if not sys.dont_write_bytecode:
        return  # Python and pytest write it themselves
    root = os.path.realpath(os.getcwd()) + os.sep

    def inside(*paths):
        return all(os.path.realpath(path).startswith(root) for path in paths)

    _keep_compiled(inside)
    _keep_rewritten(inside)


def _keep_compiled(inside):
    try:
        import importlib.util
        from importlib import _bootstrap_external, machinery

        to_pyc = _bootstrap_external._code_to_hash_pyc
        write = _bootstrap_external._write_atomic
        compile_source = machinery.SourceFileLoader.source_to_code
    except (ImportError, AttributeError):
        return
    if getattr(compile_source, "mutdelta", False):
        return

    def compile_and_keep(self, data, path, *args, **kwargs):
        code = compile_source(self, data, path, *args, **kwargs)
        try:
            pyc = importlib.util.cache_from_source(path)
            if inside(path, os.path.dirname(pyc)):
                os.makedirs(os.path.dirname(pyc), exist_ok=True)
                write(pyc, to_pyc(code, importlib.util.source_hash(data), True), 0o644)
        except (OSError, ValueError, TypeError, NotImplementedError):
            pass  # kept or not, the module is compiled
        return code

    compile_and_keep.mutdelta = True
    machinery.SourceFileLoader.source_to_code = compile_and_keep


def _keep_rewritten(inside):
    try:
        from pathlib import Path

        from _pytest.assertion import rewrite

        rewrite_test = rewrite._rewrite_test
        write_pyc = rewrite._write_pyc
        cache_dir_of = rewrite.get_cache_dir
        tail = rewrite.PYC_TAIL
    except (ImportError, AttributeError):
        return  # a pytest without these: it rewrites in every process, as before
    if getattr(rewrite_test, "mutdelta", False):
        return

    def rewrite_and_keep(fn, config):
        rewritten = rewrite_test(fn, config)
        try:
            source = Path(fn)
            cache = cache_dir_of(source)
            if inside(source, cache):
                cache.mkdir(exist_ok=True)
                write_pyc(_Quiet(), rewritten[1], rewritten[0], cache / (source.name[:-3] + tail))
        except (OSError, ValueError, TypeError, IndexError):
            pass  # kept or not, the module is rewritten
        return rewritten

    rewrite_and_keep.mutdelta = True
    rewrite._rewrite_test = rewrite_and_keep
