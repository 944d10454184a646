#!/usr/bin/env python3
"""End-to-end benchmark: mutdelta against `cargo mutants --in-diff` on the same Rust commit.

Builds a git repository of a small crate that depends on `regex` (so dependency builds count,
as in real projects), whose last commit adds two functions and their tests (some weak), builds
its tests once as a developer's checkout would have them (target/ ignored by git), then
measures, as medians over --runs runs, with the same number of parallel jobs:
  - `mutdelta check --commit HEAD`;
  - `cargo mutants --in-diff <the commit's diff>` when cargo-mutants is installed;
and prints both wall times, their ratio, the mutants each tested, and the lines each caught
(a line is caught when one of its mutants is caught), with any line cargo-mutants catches
that mutdelta does not.

With --repo PATH --commit SHA the commit of a real project is measured instead (a clone of
PATH checked out at SHA, the diff against its first parent); with --fresh, as a fresh clone:
no build of it exists before either tool runs (target/ is removed before every run).

With --suite FILE --clones DIR every commit FILE lists (benches/rust_e2e/real_commits.txt:
a clone's directory name under DIR, a commit, a description) is measured in turn as --repo and
--commit would, and a table of the ratios closes the run.

Usage: python3 benches/rust_e2e/run.py [--runs 3] [--jobs 2] [--mutdelta PATH]
                                       [--repo PATH --commit SHA [--fresh]]
                                       [--suite FILE --clones DIR [--fresh]]
Everything is built under target/bench/rust_e2e.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_git import GIT_ENV  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = ROOT / "target" / "bench" / "rust_e2e"


def run(cmd, cwd, check=True):
    return subprocess.run(cmd, cwd=cwd, env=GIT_ENV, check=check, capture_output=True, text=True)


def real_repository(source, commit, fresh):
    # Outside this repository: cargo would take the project for a member of its workspace.
    repo = Path(tempfile.gettempdir()) / "mutdelta-bench-real"
    shutil.rmtree(repo, ignore_errors=True)
    run(["git", "clone", "-q", "--no-hardlinks", str(source), str(repo)], WORK)
    run(["git", "checkout", "-q", commit], repo)
    (WORK / "change.diff").write_text(run(["git", "diff", f"{commit}~1", commit], repo).stdout)
    if not fresh:
        run(["cargo", "test", "--no-run", "-q"], repo)
    return repo


FRESH = False


def forget_builds(repo):
    """A fresh clone has no build: the target directory goes before each run."""
    if FRESH:
        shutil.rmtree(repo / "target", ignore_errors=True)


def repository():
    repo = WORK / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(HERE / "before", repo)
    run(["git", "init", "-q", "-b", "main"], repo)
    run(["cargo", "generate-lockfile"], repo)
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", "words"], repo)
    shutil.copytree(HERE / "after", repo, dirs_exist_ok=True)
    run(["git", "add", "-A"], repo)
    run(["git", "commit", "-q", "-m", "Add top_words and share"], repo)
    (WORK / "change.diff").write_text(run(["git", "diff", "HEAD~1", "HEAD"], repo).stdout)
    # As a developer's checkout would be: built and tested once (target/ is ignored by git).
    run(["cargo", "test", "--no-run", "-q"], repo)
    return repo


def mutdelta_once(binary, repo, jobs):
    out = WORK / "mutdelta.json"
    forget_builds(repo)
    start = time.monotonic()
    result = run([str(binary), "check", "--commit", "HEAD", "-j", str(jobs), "--no-cache", "--json", str(out)],
                 repo, check=False)
    seconds = time.monotonic() - start
    if result.returncode not in (0, 1):
        sys.exit(f"mutdelta failed:\n{result.stdout}\n{result.stderr}")
    caught, tested = set(), 0
    report = json.loads(out.read_text())
    global LAST_SCHEMA
    LAST_SCHEMA = schema_figures(report)
    for path, file in report["files"].items():
        for mutant in file["mutants"]:
            tested += 1
            if mutant["status"] in ("Killed", "Timeout"):
                body = BODY_OURS.match(mutant["description"])
                caught.add(("body of", body.group(1)) if body else (path, mutant["location"]["start"]["line"]))
    return seconds, tested, caught


LAST_SCHEMA = ""


def schema_figures(report):
    """The schema's build time, the mutants on each path, the tests each switched mutant ran."""
    steps = report["mutdelta"].get("steps", [])
    build = sum(c["duration"] for s in steps if s["step"].startswith("schema build") for c in s["commands"]) / 1000
    recorded = sum(c["duration"] for s in steps if s["step"].startswith("recorded") for c in s["commands"]) / 1000
    paths, tests = {}, []
    for file in report["files"].values():
        for mutant in file["mutants"]:
            how = (mutant.get("run") or {}).get("how", "not run")
            paths[how] = paths.get(how, 0) + 1
            if how == "schema":
                tests.append(len(mutant.get("coveredBy") or []))
    per_mutant = f"{statistics.mean(tests):.1f}" if tests else "-"
    return (f"schema build {build:.1f} s, recording run {recorded:.1f} s; mutants by path: "
            f"{', '.join(f'{k} {v}' for k, v in sorted(paths.items()))}; tests run per switched mutant: {per_mutant}")


# A body replacement is the same mutant in both tools, but each files it under another line
# (mutdelta: the signature's `{`; cargo-mutants: the body's first statement): match it by name.
BODY_OURS = re.compile(r"replace body of `(\w+)`")
BODY_THEIRS = re.compile(r"^\S+?:\d+:\d+: replace (?:.*::)?(\w+) -> ")
CARGO_MUTANTS_LINE = re.compile(r"^(\S+?):(\d+):\d+: ")


def cargo_mutants_once(repo, jobs):
    out = WORK / "cargo-mutants"
    shutil.rmtree(out, ignore_errors=True)
    forget_builds(repo)
    start = time.monotonic()
    result = run(
        ["cargo", "mutants", "--in-diff", str(WORK / "change.diff"), "-j", str(jobs), "--output", str(out)],
        repo,
        check=False,
    )
    seconds = time.monotonic() - start
    if result.returncode not in (0, 2, 3):
        sys.exit(f"cargo mutants failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    results = out / "mutants.out"

    def lines(name):
        """Each caught line or body, with the line a body replacement is filed under: mutdelta
        catches the same mistake when it catches that line (it makes body replacements of new
        functions only, and mutates the statements of a changed one)."""
        path = results / name
        found = {}
        for line in path.read_text().splitlines() if path.exists() else []:
            body = BODY_THEIRS.match(line)
            match = CARGO_MUTANTS_LINE.match(line)
            at = (match.group(1), int(match.group(2))) if match else None
            if body:
                found[("body of", body.group(1))] = at
            elif match:
                found[at] = at
        return found

    tested = sum(len((results / n).read_text().splitlines()) for n in ("caught.txt", "missed.txt", "timeout.txt", "unviable.txt") if (results / n).exists())
    return seconds, tested, {**lines("caught.txt"), **lines("timeout.txt")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--mutdelta", help="the binary to measure (default: build target/release/mutdelta)")
    parser.add_argument("--repo", help="a real project's git repository (with --commit)")
    parser.add_argument("--commit", help="the commit of --repo to check")
    parser.add_argument("--fresh", action="store_true", help="as a fresh clone: no build before each run")
    parser.add_argument("--suite", help="a file of commits to measure in turn (with --clones)")
    parser.add_argument("--clones", help="the directory holding a clone of each project --suite names")
    args = parser.parse_args()
    global FRESH
    FRESH = args.fresh
    WORK.mkdir(parents=True, exist_ok=True)
    if args.mutdelta:
        binary = Path(args.mutdelta).resolve()
    else:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
        binary = ROOT / "target" / "release" / "mutdelta"
    if args.suite:
        rows = []
        for line in Path(args.suite).read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            name, commit, what = line.split(None, 2)
            print(f"\n== {name} {commit}: {what}")
            repo = real_repository((Path(args.clones) / name).resolve(), commit, args.fresh)
            rows.append((name, commit, measure(binary, repo, args)))
        print("\ncommit | mutdelta (median s) | cargo-mutants (median s) | ratio")
        for name, commit, (ours, theirs) in rows:
            ratio = f"{ours / theirs:.2f}" if theirs else "-"
            print(f"{name} {commit} | {ours:.1f} | {theirs or 0:.1f} | {ratio}")
        return
    repo = real_repository(Path(args.repo).resolve(), args.commit, args.fresh) if args.repo else repository()
    measure(binary, repo, args)


def measure(binary, repo, args):
    """Interleaved runs of both tools on `repo`; prints them and returns the two medians."""
    has_cargo_mutants = run(["cargo", "mutants", "--version"], repo, check=False).returncode == 0

    print(f"RUST_BACKTRACE={os.environ.get('RUST_BACKTRACE', '(unset)')}, {os.cpu_count()} cores")
    ours, theirs = [], []
    # Interleaved pairs, so that a slower spell of the machine weighs on both tools alike.
    for _ in range(args.runs):
        ours.append(mutdelta_once(binary, repo, args.jobs))
        if has_cargo_mutants:
            theirs.append(cargo_mutants_once(repo, args.jobs))
    median = statistics.median(r[0] for r in ours)
    _, tested, caught = ours[-1]
    print(f"mutdelta check --commit HEAD -j {args.jobs}: median {median:.1f} s over {args.runs} runs "
          f"({', '.join(f'{r[0]:.1f}' for r in ours)}); {tested} mutants, {len(caught)} lines or bodies caught")
    print(f"  {LAST_SCHEMA}")
    if not has_cargo_mutants:
        print("cargo-mutants is not installed (cargo install cargo-mutants): no comparison")
        return median, None
    their_median = statistics.median(r[0] for r in theirs)
    _, their_tested, their_caught = theirs[-1]
    print(f"cargo mutants --in-diff -j {args.jobs}: median {their_median:.1f} s over {args.runs} runs "
          f"({', '.join(f'{r[0]:.1f}' for r in theirs)}); {their_tested} mutants, {len(their_caught)} lines or bodies caught")
    ratios = [a[0] / b[0] for a, b in zip(ours, theirs)]
    print(f"ratio mutdelta / cargo-mutants: {median / their_median:.2f} (median of the pairs' ratios "
          f"{statistics.median(ratios):.2f})")
    missing = sorted(key for key, also in their_caught.items() if key not in caught and also not in caught)
    print(f"lines or bodies cargo-mutants catches that mutdelta does not: {missing or 'none'}")
    theirs_any = set(their_caught) | set(their_caught.values())
    print(f"lines or bodies mutdelta catches that cargo-mutants does not: {sorted(caught - theirs_any) or 'none'}")
    return median, their_median


if __name__ == "__main__":
    main()
