#!/usr/bin/env python3
"""End-to-end benchmark of mutdelta on a real Python project.

Builds a git repository from the more-itertools sdist (765 tests, ~21,000 subtests), commits a
change that adds one function to the 5,000-line `more.py` and a new test file for it, then
measures, each as the median of --runs runs:
  - one run of the project's whole test suite (the yardstick), and one under mutdelta's coverage
    probe watching the change's lines (the probe's overhead);
  - `mutdelta check --commit HEAD` in three situations: a first run (`--no-cache`: every coverage
    run measured, shards in collection order); a run that knows the tests' durations from an
    earlier one but nothing else (what a CI job restoring `.git/mutdelta` after another commit
    sees: the slow tests start first); and a re-run of the same content (coverage reused). Each
    with total wall time, mutants per second, and the per-phase breakdown mutdelta prints;
  - with --cosmic-ray, cosmic-ray on the same commit with its git filter (installed into the
    benchmark's venv), and the ratio of the two.

Usage: python3 benches/python_e2e/run.py [--runs 3] [--cosmic-ray] [--mutdelta PATH]
Everything is built under target/bench/python_e2e; nothing outside it is touched.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_git import GIT_ENV  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = ROOT / "target" / "bench" / "python_e2e"
PROJECT = "more-itertools==11.2.1"


def run(cmd, cwd=None, env=None, check=True):
    return subprocess.run(cmd, cwd=cwd, env=env or GIT_ENV, check=check, capture_output=True, text=True)


def timed(cmd, cwd, env=None):
    start = time.monotonic()
    result = subprocess.run(cmd, cwd=cwd, env=env or GIT_ENV, capture_output=True, text=True)
    return time.monotonic() - start, result


def venv(with_cosmic_ray):
    path = WORK / "venv"
    python = path / "bin" / "python"
    if not python.exists():
        run([sys.executable, "-m", "venv", str(path)])
        run([str(python), "-m", "pip", "install", "-q", "pytest"])
    if with_cosmic_ray and not (path / "bin" / "cosmic-ray").exists():
        run([str(python), "-m", "pip", "install", "-q", "cosmic-ray"])
    return python


def project(python):
    """A fresh repository: the sdist as commit 1, the change as commit 2."""
    downloads = WORK / "downloads"
    if not any(downloads.glob("*.tar.gz")):
        downloads.mkdir(parents=True, exist_ok=True)
        run([str(python), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(downloads), PROJECT])
    repo = WORK / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    with tarfile.open(next(downloads.glob("*.tar.gz"))) as archive:
        archive.extractall(WORK / "unpacked", filter="data")
    shutil.move(next((WORK / "unpacked").iterdir()), repo)
    shutil.rmtree(WORK / "unpacked")
    run(["git", "init", "-q", "-b", "main"], cwd=repo)
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-q", "-m", "more-itertools as released"], cwd=repo)
    with open(repo / "more_itertools" / "more.py", "a") as more:
        more.write((HERE / "change.py").read_text())
    shutil.copy(HERE / "test_change.py", repo / "tests" / "test_clamped_window_sums.py")
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-q", "-m", "Add clamped_window_sums"], cwd=repo)
    return repo


def mutdelta_binary(explicit):
    if explicit:
        return Path(explicit).resolve()
    run(["cargo", "build", "--release", "-q"], cwd=ROOT)
    return ROOT / "target" / "release" / "mutdelta"


PHASES = re.compile(r"phases: (.*); total")


def bench_mutdelta(binary, python, repo, runs, extra=(), before_each=lambda: None):
    times, phases, report = [], [], None
    for index in range(runs):
        out = WORK / f"report-{index}.json"
        before_each()
        command = [str(binary), "check", "--commit", "HEAD", "--python", str(python), "--json", str(out), *extra]
        seconds, result = timed(command, repo)
        if result.returncode not in (0, 1):
            sys.exit(f"mutdelta failed:\n{result.stdout}\n{result.stderr}")
        times.append(seconds)
        match = PHASES.search(result.stderr)
        phases.append(match.group(1) if match else "?")
        report = json.loads(out.read_text())
    statuses = {}
    for file in report["files"].values():
        for mutant in file["mutants"]:
            statuses[mutant["status"]] = statuses.get(mutant["status"], 0) + 1
    return times, phases, statuses, result.stdout.strip().splitlines()[-1], report


def paths_and_costs(report):
    """How the mutants of the last run ran, and what one costs on each path (milliseconds)."""
    mutants = [m for file in report["files"].values() for m in file["mutants"] if "run" in m]
    ways, reasons, swap, tests, overhead, fallback = {}, {}, [], [], [], []
    for mutant in mutants:
        run = mutant["run"]
        ways[run["how"]] = ways.get(run["how"], 0) + 1
        if "fallback" in run:
            reasons[run["fallback"]] = reasons.get(run["fallback"], 0) + 1
        if "split" in run:
            swap.append(run["split"]["swap"])
            tests.append(run["split"]["tests"])
            overhead.append(mutant["duration"] - run["split"]["swap"] - run["split"]["tests"])
        else:
            fallback.append(mutant["duration"])
    median = lambda values: f"{statistics.median(values):.1f} ms" if values else "-"
    lines = [f"paths: {', '.join(f'{k} {v}' for k, v in sorted(ways.items()))} of {len(mutants)} mutants that ran"]
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        lines.append(f"    fell back ({count}): {reason}")
    lines.append(f"per swapped mutant (median): fork and answer {median(overhead)}, swap {median(swap)}, tests {median(tests)}")
    lines.append(f"per mutant imported fresh (median): {median(fallback)}")
    return lines


def probe_suite(python, repo):
    """The whole suite under mutdelta's probe, watching every line the change added to more.py."""
    support = WORK / "probe-support"
    support.mkdir(exist_ok=True)
    for module in ("probe", "probe_hooks", "probe_main"):
        shutil.copy(ROOT / "src" / "python" / f"{module}.py", support / f"mutdelta_{module}.py")
    more = (repo / "more_itertools" / "more.py").resolve()
    added = len((HERE / "change.py").read_text().splitlines())
    total = len(more.read_text().splitlines())
    (support / "targets.json").write_text(json.dumps({str(more): list(range(total - added + 1, total + 1))}))
    env = {
        **GIT_ENV,
        "PYTHONPATH": str(support),
        "MUTDELTA_PROBE_TARGETS": str(support / "targets.json"),
        "MUTDELTA_PROBE_OUT": str(support / "out.json"),
    }
    # As mutdelta runs it: the probe imported before pytest, then its plugin.
    command = [str(python), "-m", "mutdelta_probe_main", "-q", "-p", "no:cacheprovider", "-p", "mutdelta_probe", "tests"]
    seconds, result = timed(command, repo, env)
    if result.returncode != 0:
        sys.exit(f"the suite under the probe failed:\n{result.stdout[-2000:]}")
    return seconds


def bench_cosmic_ray(python, repo, runs, tests):
    bin_dir = python.parent
    config = WORK / "cosmic-ray.toml"
    config.write_text(
        "[cosmic-ray]\n"
        'module-path = "more_itertools/more.py"\n'
        "timeout = 60.0\n"
        "excluded-modules = []\n"
        f'test-command = "{python} -m pytest -x -q -p no:cacheprovider {tests}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
        "[cosmic-ray.filters.git-filter]\n"
        'branch = "HEAD~1"\n'
    )
    env = {**GIT_ENV, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    times, counts = [], None
    for _ in range(runs):
        session = WORK / "cosmic-ray.sqlite"
        session.unlink(missing_ok=True)
        start = time.monotonic()
        run([str(bin_dir / "cosmic-ray"), "init", str(config), str(session)], cwd=repo, env=env)
        run([str(bin_dir / "cr-filter-git"), "--config", str(config), str(session)], cwd=repo, env=env)
        run([str(bin_dir / "cosmic-ray"), "exec", str(config), str(session)], cwd=repo, env=env)
        times.append(time.monotonic() - start)
        dump = run([str(bin_dir / "cosmic-ray"), "dump", str(session)], cwd=repo, env=env).stdout
        counts = {}
        for line in dump.splitlines():
            item, result = json.loads(line)
            outcome = (result or {}).get("worker_outcome") if isinstance(result, dict) else None
            key = "skipped" if outcome == "skipped" else (result or {}).get("test_outcome", "pending") if isinstance(result, dict) else "pending"
            counts[key] = counts.get(key, 0) + 1
        run(["git", "checkout", "-q", "--", "."], cwd=repo)
    return times, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cosmic-ray", action="store_true", help="also time cosmic-ray on the same commit")
    parser.add_argument(
        "--cosmic-ray-tests",
        choices=["changed", "suite"],
        default="changed",
        help="cosmic-ray's test command runs the new test file only (changed, the kindest to it) or "
        "the project's whole suite (suite, as its documentation configures it)",
    )
    parser.add_argument("--cosmic-ray-runs", type=int, help="runs of cosmic-ray (default: --runs)")
    parser.add_argument("--mutdelta", help="the binary to measure (default: build target/release/mutdelta)")
    parser.add_argument("--also-no-swap", action="store_true", help="also time mutdelta --no-swap (every mutant imported fresh)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    python = venv(args.cosmic_ray)
    repo = project(python)
    binary = mutdelta_binary(args.mutdelta)

    suite = [timed([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], repo)[0] for _ in range(args.runs)]
    suite_median = statistics.median(suite)
    probed = statistics.median([probe_suite(python, repo) for _ in range(args.runs)])
    print(f"project: {PROJECT}, change: one function (+{len((HERE / 'change.py').read_text().splitlines())} lines) and its tests")
    print(f"whole suite, one run: median {suite_median:.2f} s over {args.runs} runs")
    print(f"whole suite under the coverage probe, one process: median {probed:.2f} s (overhead {100 * (probed / suite_median - 1):+.1f} %)")
    memory = repo / ".git" / "mutdelta"
    shutil.rmtree(memory, ignore_errors=True)
    situations = [
        ("first run (--no-cache)", ["--no-cache"], lambda: None),
        ("durations known, coverage measured", [], lambda: shutil.rmtree(memory / "python" / "probe", ignore_errors=True)),
        ("re-run of the same content (coverage reused)", [], lambda: None),
    ]
    medians, counts_by_situation = {}, {}
    for name, extra, before_each in situations:
        times, phases, statuses, summary, report = bench_mutdelta(binary, python, repo, args.runs, extra, before_each)
        counts_by_situation[name] = statuses
        mutants = sum(statuses.values())
        median = medians[name] = statistics.median(times)
        print(f"mutdelta check, {name}: median {median:.2f} s over {args.runs} runs ({', '.join(f'{t:.2f}' for t in times)})")
        print(f"  ratio to one run of the whole suite: {median / suite_median:.3f}")
        print(f"  {mutants} mutants ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))}); {mutants / median:.1f} mutants/s")
        print(f"  phases (median run): {sorted(phases)[len(phases) // 2]}")
        print(f"  {summary}")
        for line in paths_and_costs(report):
            print(f"  {line}")
    median = medians[situations[0][0]]
    statuses = counts_by_situation[situations[0][0]]
    differing = {name: counts for name, counts in counts_by_situation.items() if counts != statuses}
    print("verdict counts: the same in all three situations" if not differing else f"verdict counts DIFFER: {differing}")
    if args.also_no_swap:
        fresh_times, _, fresh_statuses, _, _ = bench_mutdelta(binary, python, repo, args.runs, ["--no-swap", "--no-cache"])
        fresh_median = statistics.median(fresh_times)
        same = "the same verdict counts" if fresh_statuses == statuses else f"other verdict counts: {fresh_statuses}"
        print(f"mutdelta check --no-swap: median {fresh_median:.2f} s ({', '.join(f'{t:.2f}' for t in fresh_times)}); {same}")
        print(f"  swap path speed-up: {fresh_median / median:.2f}x")
    if args.cosmic_ray:
        tests = "tests/test_clamped_window_sums.py" if args.cosmic_ray_tests == "changed" else "tests"
        cr_runs = args.cosmic_ray_runs or args.runs
        cr_times, counts = bench_cosmic_ray(python, repo, cr_runs, tests)
        cr_median = statistics.median(cr_times)
        print(f"cosmic-ray (init + cr-filter-git + exec, test command on {tests}): median {cr_median:.2f} s over {cr_runs} runs; outcomes {counts}")
        for name, took in medians.items():
            print(f"  mutdelta, {name}: {cr_median / took:.1f}x faster")


if __name__ == "__main__":
    main()
