#!/usr/bin/env python3
"""Load benchmark: a change that adds 2,000 lines (hundreds of mutants) in one commit.

Generates a project whose last commit adds a 2,000-line module of small functions and a test
file for it, runs `mutdelta check --commit HEAD` on it with a private TMPDIR, and reports the
wall time, the mutants and their verdicts, mutdelta's peak resident memory (as it reports it),
and whether anything was left behind: temporary directories, or processes working in them.

Usage: python3 benches/load/run.py [--functions 100] [--mutdelta PATH]
Everything is built under target/bench/load.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_git import GIT_ENV  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
WORK = ROOT / "target" / "bench" / "load"


def function(index):
    """Twenty lines: a filter with a threshold, some comments, a docstring."""
    return f'''

def above_{index}(values, scale=1):
    """Keep the values above {index}, scaled.

    The threshold is the function's number.
    """
    # An empty input gives an empty output.
    kept = []
    for value in values:
        # Values at the threshold are not kept.
        if value > {index}:
            kept.append(value * scale)
    # Preserve the input order,
    # and give back a new list.
    return kept


# (end of above_{index})
# ----------------------
'''


def test(index):
    return f'''

def test_above_{index}():
    assert above_{index}([{index}, {index + 1}, {index + 5}], 2) == [{2 * (index + 1)}, {2 * (index + 5)}]
'''


def run(cmd, cwd):
    subprocess.run(cmd, cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def build(functions):
    repo = WORK / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    (repo / "tests").mkdir(parents=True)
    (repo / "bulk.py").write_text('"""Generated functions."""\n')
    (repo / "tests" / "test_bulk.py").write_text("from bulk import *  # noqa: F401,F403\n")
    run(["git", "init", "-q", "-b", "main"], repo)
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", "empty module"], repo)
    (repo / "bulk.py").write_text('"""Generated functions."""\n' + "".join(function(i) for i in range(functions)))
    (repo / "tests" / "test_bulk.py").write_text(
        "from bulk import *  # noqa: F401,F403\n" + "".join(test(i) for i in range(functions))
    )
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", "add the functions"], repo)
    added = len((repo / "bulk.py").read_text().splitlines()) - 1
    return repo, added


def python_with_pytest():
    venv = WORK / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pytest"], check=True)
    return python


def processes_in(directory):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(os.readlink(entry / "cwd")).startswith(str(directory)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--functions", type=int, default=100, help="20 lines each (default 100: 2,000 lines)")
    parser.add_argument("--mutdelta", help="the binary to measure (default: build target/release/mutdelta)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    python = python_with_pytest()
    repo, added = build(args.functions)
    if args.mutdelta:
        binary = Path(args.mutdelta).resolve()
    else:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
        binary = ROOT / "target" / "release" / "mutdelta"
    tmp = WORK / "tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    report = WORK / "report.json"
    start = time.monotonic()
    result = subprocess.run(
        [str(binary), "check", "--commit", "HEAD", "--python", str(python), "--json", str(report)],
        cwd=repo,
        env={**GIT_ENV, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - start
    if result.returncode not in (0, 1):
        sys.exit(f"mutdelta failed:\n{result.stdout}\n{result.stderr}")
    statuses = {}
    for file in json.loads(report.read_text())["files"].values():
        for mutant in file["mutants"]:
            statuses[mutant["status"]] = statuses.get(mutant["status"], 0) + 1
    memory = re.search(r"peak memory ([^\n]+)", result.stderr)
    phases = re.search(r"phases: (.*); total", result.stderr)
    left_dirs = sorted(p.name for p in tmp.iterdir())
    left_processes = processes_in(tmp)
    print(f"change: +{added} lines in one file, {args.functions} functions, {args.functions} tests")
    print(f"mutants: {sum(statuses.values())} ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})")
    print(f"wall time: {seconds:.1f} s; {sum(statuses.values()) / seconds:.1f} mutants/s")
    print(f"phases: {phases.group(1) if phases else '?'}")
    print(f"mutdelta peak resident memory: {memory.group(1) if memory else '?'}")
    print(f"left behind: {len(left_dirs)} temporary entries, {len(left_processes)} processes")
    if left_dirs or left_processes:
        sys.exit(1)


if __name__ == "__main__":
    main()
