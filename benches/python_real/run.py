#!/usr/bin/env python3
"""Benchmark of mutdelta on a real Python project's commit, against one run of its own suite.

Clones --repo at --commit (outside this repository), then measures, as medians over --runs
runs with the interpreter --python (a virtual environment with the project's test
dependencies and the project installed):
  - one run of the project's whole test suite, as its own pytest configuration collects it
    (`python -m pytest`, coverage plugins and doctests included where the project asks);
  - `mutdelta check --commit HEAD --no-cache` (nothing reused from an earlier run), the same
    with --no-audit (no kill-loss audit of the tests the commit edits), and a re-run of the
    same content;
and prints each ratio to the suite (the suite runs just before each check; the ratio is the
median of the pairs', which on a machine whose speed drifts met the same load), the mutants and
their verdicts, mutants per second, the phases mutdelta prints, the share of mutants on each
path and what a swapped mutant costs.
With --also-no-swap, the same check importing every mutant fresh. With --with-map (Python 3.12 or
later), also the situation that matters most: a check of the commit after `mutdelta map` recorded
its parent's test-impact map, with and without the audit. Before each of those checks mutdelta's
store in .git/mutdelta is emptied of all but that map, so nothing measured at the commit itself is
reused from an earlier check; what one check measures and uses again within itself counts.

Usage: python3 benches/python_real/run.py --repo PATH --commit SHA --python PATH
                                          [--runs 3] [--jobs N] [--mutdelta PATH] [--also-no-swap]
                                          [--with-map]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}
PHASES = re.compile(r"phases: (.*); total")


def run(cmd, cwd, check=True):
    return subprocess.run(cmd, cwd=cwd, env=GIT_ENV, check=check, capture_output=True, text=True)


def timed(cmd, cwd):
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=cwd, env=GIT_ENV, capture_output=True, text=True)
    return time.monotonic() - start, result


def clone(source, commit):
    repo = Path(tempfile.gettempdir()) / "mutdelta-bench-python-real"
    shutil.rmtree(repo, ignore_errors=True)
    run(["git", "clone", "-q", "--no-hardlinks", str(source), str(repo)], Path.cwd())
    run(["git", "checkout", "-q", commit], repo)
    return repo


def mutdelta_binary(explicit):
    if explicit:
        return Path(explicit).resolve()
    run(["cargo", "build", "--release", "-q"], ROOT)
    return ROOT / "target" / "release" / "mutdelta"


def whole_suite(python, repo):
    """One run of the project's whole suite, as its own configuration collects it: seconds."""
    seconds, result = timed([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], repo)
    if result.returncode != 0:
        sys.exit(f"the project's suite fails:\n{result.stdout[-3000:]}")
    return seconds


def check(binary, python, repo, runs, extra, suite=None, prepare=None):
    """`runs` checks, each after `prepare()` when given; with `suite` (a list), one run of the
    whole suite just before each, added to it: a ratio is then taken between runs that met the
    same load on the machine."""
    times, phases, report, result = [], [], None, None
    for index in range(runs):
        if prepare is not None:
            prepare()
        if suite is not None:
            suite.append(whole_suite(python, repo))
        out = repo / ".git" / f"mutdelta-bench-{index}.json"
        command = [str(binary), "check", "--commit", "HEAD", "--python", str(python), "--json", str(out), *extra]
        seconds, result = timed(command, repo)
        if result.returncode not in (0, 1):
            sys.exit(f"mutdelta failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        times.append(seconds)
        match = PHASES.search(result.stderr)
        phases.append(match.group(1) if match else "?")
        report = json.loads(out.read_text())
    return times, phases, report, result


def describe(report):
    """Verdict counts, and how the mutants that ran ran."""
    mutants = [m for file in report["files"].values() for m in file["mutants"]]
    statuses, ways, reasons, costs = {}, {}, {}, {"fork": [], "swap": [], "tests": []}
    for mutant in mutants:
        statuses[mutant["status"]] = statuses.get(mutant["status"], 0) + 1
        run_ = mutant.get("run")
        if not run_:
            continue
        ways[run_["how"]] = ways.get(run_["how"], 0) + 1
        if "fallback" in run_:
            reasons[run_["fallback"]] = reasons.get(run_["fallback"], 0) + 1
        if "split" in run_:
            costs["swap"].append(run_["split"]["swap"])
            costs["tests"].append(run_["split"]["tests"])
            costs["fork"].append(mutant["duration"] - run_["split"]["swap"] - run_["split"]["tests"])
    median = lambda values: f"{statistics.median(values):.1f} ms" if values else "-"
    lines = [
        f"{len(mutants)} mutants: {', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}",
        f"paths: {', '.join(f'{k} {v}' for k, v in sorted(ways.items())) or 'none ran'}",
    ]
    lines += [f"  fell back ({count}): {reason}" for reason, count in sorted(reasons.items(), key=lambda item: -item[1])]
    lines.append(
        f"per swapped mutant (median): fork and answer {median(costs['fork'])}, swap {median(costs['swap'])}, "
        f"tests {median(costs['tests'])}"
    )
    return statuses, lines


def conditions():
    """What the ratios depend on beyond the code: whether Python writes bytecode (the suite
    reuses what its first run wrote; mutdelta's copies are new each run), and the file system
    of the temporary directory (the copies, and the files pytest keeps there while it runs:
    on a disk, creating, truncating and removing them costs far more than in memory)."""
    bytecode = "off (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    temp = tempfile.gettempdir()
    kind = subprocess.run(["stat", "-f", "-c", "%T", temp], capture_output=True, text=True).stdout.strip()
    return f"bytecode writing {bytecode}; temporary directory {temp} on {kind or 'an unknown file system'}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True, help="a git repository (or mirror) of the project")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--python", required=True, help="an interpreter with the project's test dependencies")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="mutdelta's -j (default: its own)")
    parser.add_argument("--mutdelta", help="the binary to measure (default: build target/release/mutdelta)")
    parser.add_argument("--also-no-swap", action="store_true")
    parser.add_argument("--with-map", action="store_true", help="also check after a map of the parent")
    args = parser.parse_args()
    python = Path(args.python).absolute()
    repo = clone(Path(args.repo).resolve(), args.commit)
    binary = mutdelta_binary(args.mutdelta)
    jobs = ["-j", str(args.jobs)] if args.jobs else []

    subject = run(["git", "log", "-1", "--format=%h %s"], repo).stdout.strip()
    added = run(["git", "diff", "--numstat", "HEAD~1", "HEAD"], repo).stdout
    print(f"commit: {subject}")
    print(f"  {sum(int(line.split()[0]) for line in added.splitlines() if line.split()[0].isdigit())} lines added")
    print(f"conditions: {conditions()}")
    all_suite_runs = []

    store = repo / ".git" / "mutdelta"
    rerun = "re-run of the same content (after one run that keeps what it measured)"
    situations = [
        ("first run (--no-cache)", ["--no-cache"], None),
        ("first run without the kill-loss audit (--no-cache --no-audit)", ["--no-cache", "--no-audit"], None),
        (rerun, [], None),
    ]
    if args.also_no_swap:
        situations.append(("--no-swap --no-cache", ["--no-swap", "--no-cache"], None))
    if args.with_map:
        shutil.rmtree(store, ignore_errors=True)
        seconds, built = timed([str(binary), "map", "--commit", "HEAD~1", "--python", str(python), *jobs], repo)
        if built.returncode != 0:
            sys.exit(f"mutdelta map failed:\n{built.stderr[-3000:]}")
        print(f"mutdelta map of the parent: {seconds:.2f} s ({built.stderr.strip()})")
        kept_map = repo / ".git" / "mutdelta-bench-map"
        shutil.rmtree(kept_map, ignore_errors=True)
        shutil.copytree(store / "python" / "impact", kept_map)

        def only_the_map():
            shutil.rmtree(store, ignore_errors=True)
            shutil.copytree(kept_map, store / "python" / "impact")

        situations += [
            ("after a map of the parent", [], only_the_map),
            ("after a map of the parent, without the audit (--no-audit)", ["--no-audit"], only_the_map),
        ]
    first = None
    for name, extra, prepare in situations:
        if name == rerun:
            check(binary, python, repo, 1, jobs)
        suite = []
        times, phases, report, result = check(binary, python, repo, args.runs, [*extra, *jobs], suite, prepare)
        all_suite_runs += suite
        median = statistics.median(times)
        ratio = statistics.median(check / whole for check, whole in zip(times, suite))
        statuses, lines = describe(report)
        first = first or statuses
        print(f"mutdelta check, {name}: median {median:.2f} s over {args.runs} runs ({', '.join(f'{t:.2f}' for t in times)})")
        print(f"  the whole suite just before each: median {statistics.median(suite):.2f} s ({', '.join(f'{t:.2f}' for t in suite)})")
        print(f"  ratio to one run of the whole suite (median of the pairs): {ratio:.2f}")
        print(f"  exit {result.returncode}; {sum(statuses.values()) / median:.1f} mutants/s")
        print(f"  phases (median run): {sorted(phases)[len(phases) // 2]}")
        for line in lines:
            print(f"  {line}")
        for said in re.findall(r"baseline: (.*\(.*test-impact map.*\)) passed", result.stderr):
            print(f"  {said}")
        if statuses != first:
            print(f"  verdict counts DIFFER from the first run's: {first}")
    print(f"whole suite, one run: median {statistics.median(all_suite_runs):.2f} s over {len(all_suite_runs)} runs")


if __name__ == "__main__":
    main()
