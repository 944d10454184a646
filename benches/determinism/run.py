#!/usr/bin/env python3
"""Verdicts that do not depend on luck, and what deciding them so costs, on real commits.

For each commit of --suite, in a fresh clone: `mutdelta check --commit HEAD --no-cache --json`
with the --before and the --after executable in interleaved pairs (--runs of each, calm), then
the --after executable once more beside four busy processes (started here, ended by their
PIDs). Prints per commit the median wall time of each build and their ratio, the verdicts by
status, and every mutant whose status differs between any run of the after build (calm or
busy) and its first run, or between the builds, matched by file, line, column, mutator and
replacement.

Suite file lines: <clone directory under --clones>  <commit>  <interpreter (absolute, or
relative to the clone; `-` for a Rust project)>  <what it is>. `#` starts a comment.

Usage: python3 benches/determinism/run.py --before PATH --after PATH --suite FILE --clones DIR
           [--runs 3] [--jobs 2]
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"}
BUSY = "while True: pass"


def clone(repo, commit, into):
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(into)], check=True, env=GIT_ENV)
    subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", commit], cwd=into, check=True, env=GIT_ENV)


def check(binary, repo, python, jobs, report):
    """One check of HEAD in `repo`: its wall time and exit status; the report in `report`."""
    command = [binary, "check", "--commit", "HEAD", "--no-cache", "-q", "-j", str(jobs), "--json", str(report)]
    if python != "-":
        command += ["--python", python if Path(python).is_absolute() else str(Path(repo) / python)]
    started = time.monotonic()
    done = subprocess.run(command, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started, done.returncode


def verdicts(report):
    document = json.loads(Path(report).read_text())
    found = {}
    for path, entry in document["files"].items():
        for mutant in entry["mutants"]:
            start = mutant["location"]["start"]
            key = (path, start["line"], start["column"], mutant["mutatorName"], mutant.get("replacement"))
            found[key] = mutant["status"]
    return found, document["mutdelta"].get("flaky", {})


def differences(first, other):
    keys = sorted(set(first) | set(other), key=str)
    return [(key, first.get(key), other.get(key)) for key in keys if first.get(key) != other.get(key)]


def measure(args, repo_dir, commit, python, what):
    with tempfile.TemporaryDirectory(prefix="mutdelta-determinism-") as tmp:
        repo = Path(tmp) / "repo"
        clone(Path(args.clones) / repo_dir, commit, repo)
        times = {"before": [], "after": []}
        runs = {"before": [], "after": []}
        for index in range(args.runs):
            for build in ("before", "after"):
                report = Path(tmp) / f"{build}-{index}.json"
                took, status = check(getattr(args, build), repo, python, args.jobs, report)
                times[build].append(took)
                runs[build].append((f"{build} {index + 1} (exit {status})", *verdicts(report)))
        busy = [subprocess.Popen(["python3", "-c", BUSY]) for _ in range(4)]
        try:
            report = Path(tmp) / "busy.json"
            _, status = check(args.after, repo, python, args.jobs, report)
            runs["after"].append((f"after, four busy processes beside (exit {status})", *verdicts(report)))
        finally:
            for process in busy:
                process.kill()
                process.wait()
    before, after = statistics.median(times["before"]), statistics.median(times["after"])
    print(f"{repo_dir} {commit} ({what}): before {before:.2f} s, after {after:.2f} s, ratio {after / before:.2f}")
    first_name, first, flaky = runs["after"][0]
    counts = {}
    for status in first.values():
        counts[status] = counts.get(status, 0) + 1
    print(f"  {len(first)} mutants {dict(sorted(counts.items()))}; flaky tests named: {flaky or 'none'}")
    for name, other, _ in runs["after"][1:] + runs["before"]:
        found = differences(first, other)
        print(f"  vs {name}: {len(found)} differences")
        for key, mine, theirs in found:
            print(f"    {key}: {mine} in {first_name}, {theirs} there")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--clones", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    for line in Path(args.suite).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            repo_dir, commit, python, *what = line.split()
            measure(args, repo_dir, commit, python, " ".join(what))


if __name__ == "__main__":
    main()
