#!/usr/bin/env python3
"""Giant-change benchmark: how planning and the compile check grow with the change.

For 1,000, 10,000 and 50,000 lines it times, as the median of --runs:
- `mutdelta list --commit HEAD` on a commit that rewrites one generated function whole (every
  old line removed, every new one added: the search for moved code, the diff, the mutants);
- the same on a commit that re-indents as many identical lines under a new `if` (the search for
  moved code at its worst, bounded by its step count);
- the compile check of 5,000 mutants (the default bound) of a generated function, and of one
  literal of that many lines, each mutant compiled by `compile_check.py` as a check does.

Usage: python3 benches/giant_change/run.py [--runs 3] [--mutdelta PATH] [--python PATH]
Everything is built under target/bench/giant_change.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_git import GIT_ENV  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
WORK = ROOT / "target" / "bench" / "giant_change"
COMPILE_CHECK = ROOT / "src" / "python" / "compile_check.py"
SIZES = (1_000, 10_000, 50_000)
MUTANTS = 5_000


def function(lines, new):
    """A generated function of `lines` statements; `new` writes each one differently."""
    if new:
        body = "".join(f"    y = y + (x + {n % 7}) * (x - {n % 11}) - {n % 13}\n" for n in range(lines))
    else:
        body = "".join(f"    y = y + x * {n % 97} - {n % 13}\n" for n in range(lines))
    return f"def f(x):\n    y = 0\n{body}    return y\n"


def reindented(lines, new):
    """Identical lines, re-indented under a new `if` with a new line in the middle."""
    if not new:
        return "def f(x):\n" + "    x = x + 1\n" * lines
    half = "        x = x + 1\n" * (lines // 2)
    return f"def f(x):\n    if x:\n{half}        y = 2\n{half}"


def literal(lines):
    rows = "".join(f"    ({n} + 1, 'n{n}', [{n % 7}, -{n % 5}]),\n" for n in range(lines))
    return f"TABLE = [\n{rows}]\n"


def repository(name, before, after):
    repo = WORK / name
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git = lambda *args: subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)
    git("init", "-q")
    (repo / "gen.py").write_text(before)
    git("add", ".")
    git("commit", "-qm", "before")
    (repo / "gen.py").write_text(after)
    git("commit", "-qam", "after")
    return repo


def timed(run, runs):
    times = []
    for _ in range(runs):
        start = time.monotonic()
        run()
        times.append(time.monotonic() - start)
    return statistics.median(times)


def plan_time(mutdelta, repo, runs):
    command = [mutdelta, "list", "--commit", "HEAD"]
    return timed(lambda: subprocess.run(command, cwd=repo, check=True, capture_output=True), runs)


def compile_time(python, source, runs):
    """The compile check of up to MUTANTS mutants, one per line: each `+`, `*` or `-` flipped."""
    mutants = []
    for number, text in enumerate(source.split("\n"), start=1):
        for operator, other in (("+", "-"), ("*", "/"), ("-", "+")):
            at = text.find(f" {operator} ")
            if at >= 0:
                mutants.append([number, at + 2, number, at + 3, other])
                break
    step = max(1, len(mutants) // MUTANTS)
    mutants = mutants[::step][:MUTANTS]
    request = json.dumps({"files": [{"name": "gen.py", "source": source, "mutants": mutants}]})
    script = COMPILE_CHECK.read_text()
    run = lambda: subprocess.run([python, "-c", script], input=request, text=True, check=True, capture_output=True)
    return timed(run, runs), len(mutants)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mutdelta", default=str(ROOT / "target" / "release" / "mutdelta"))
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    print(f"{'lines':>7} {'rewrite list':>13} {'re-indent list':>15} {'function check':>15} {'literal check':>14}")
    for lines in SIZES:
        rewrite = repository(f"rewrite-{lines}", function(lines, False), function(lines, True))
        indent = repository(f"indent-{lines}", reindented(lines * 3 // 2, False), reindented(lines, True))
        function_check, count = compile_time(args.python, function(lines, True), args.runs)
        literal_check, _ = compile_time(args.python, literal(lines), args.runs)
        print(
            f"{lines:>7} {plan_time(args.mutdelta, rewrite, args.runs):>12.2f}s"
            f" {plan_time(args.mutdelta, indent, args.runs):>14.2f}s"
            f" {function_check:>14.2f}s {literal_check:>13.2f}s   ({count} mutants compiled)"
        )


if __name__ == "__main__":
    main()
