#!/usr/bin/env python3
"""Which mutants two builds of mutdelta make and what becomes of them, on real commits.

For each commit of --suite (or the one --repo/--commit names), runs
`mutdelta check --commit HEAD --no-cache --no-audit --json` with the --before and the --after
executable in fresh clones, and prints per build: the mutants made, those Ignored as equivalent
by their compiled code (to the original, to another mutant), those Ignored by arid rule, the
kills on arid lines, and the survivors; then the mutants whose verdict differs between the two
builds, matched by file, line, column and replacement (a survivor or a kill the after build loses
is a regression unless the mutant is shown equivalent by hand: they are counted last), and the
mutants only one build makes.

Suite file lines: <clone directory under --clones>  <commit>  <interpreter (absolute, or
relative to the clone: .venv/bin/python)>  <what it is>. `#` starts a comment.

Usage: python3 benches/mutant_choice/run.py --before PATH --after PATH
           (--suite FILE --clones DIR | --repo PATH --commit SHA --python PATH) [--jobs N]
"""

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def check(binary, repo, commit, python, jobs):
    """The JSON report of one check of `commit`, in a fresh clone of `repo`."""
    with tempfile.TemporaryDirectory(prefix="mutdelta-choice-") as tmp:
        clone = Path(tmp) / "repo"
        env = {**GIT_ENV, "PATH": "/usr/bin:/bin"}
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(clone)], check=True, env=env)
        subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True, env=env)
        report = Path(tmp) / "report.json"
        interpreter = python if Path(python).is_absolute() else str(Path(repo) / python)
        command = [binary, "check", "--commit", "HEAD", "--no-cache", "--no-audit", "-q",
                   "--python", interpreter, "-j", str(jobs), "--json", str(report)]
        done = subprocess.run(command, cwd=clone, capture_output=True, text=True)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{binary} failed on {repo} {commit} (exit {done.returncode}):\n{done.stderr}")
        return json.loads(report.read_text())


def mutants(report):
    """(file, line, column, replacement) → mutant, for every mutant of the report."""
    found = {}
    for path, entry in report["files"].items():
        for mutant in entry["mutants"]:
            start = mutant["location"]["start"]
            found[(path, start["line"], start["column"], mutant["replacement"])] = mutant
    return found


def counts(found):
    reasons = collections.Counter()
    for mutant in found.values():
        reason = mutant.get("statusReason", "")
        if mutant["status"] == "Ignored" and reason.startswith("equivalent: "):
            reasons["equivalent to the original" if "the original" in reason else "equivalent to another"] += 1
        elif mutant["status"] == "Ignored" and mutant.get("arid"):
            reasons[f"ignored, arid {mutant['arid']}"] += 1
        elif mutant["status"] == "Killed" and mutant.get("arid"):
            reasons[f"killed on an arid line ({mutant['arid']})"] += 1
    statuses = collections.Counter(m["status"] for m in found.values())
    return statuses, reasons


def describe(key, mutant):
    path, line, column, _ = key
    return f"{path}:{line}:{column} {mutant.get('description', mutant['mutatorName'])}"


def compare(name, before, after):
    print(f"\n## {name}")
    old, new = mutants(before), mutants(after)
    for label, found in (("before", old), ("after", new)):
        statuses, reasons = counts(found)
        shown = ", ".join(f"{status} {count}" for status, count in sorted(statuses.items()))
        print(f"{label:>6}: {len(found)} mutants ({shown})")
        for reason, count in sorted(reasons.items()):
            print(f"        {reason}: {count}")
    changed = [(k, old[k], new[k]) for k in old.keys() & new.keys() if old[k]["status"] != new[k]["status"]]
    for key, was, now in sorted(changed, key=lambda c: c[0]):
        print(f"  {was['status']} -> {now['status']}: {describe(key, now)} ({now.get('statusReason', '')[:100]})")
    for key in sorted(new.keys() - old.keys()):
        print(f"  new: {new[key]['status']}: {describe(key, new[key])}")
    for key in sorted(old.keys() - new.keys()):
        print(f"  gone: {old[key]['status']}: {describe(key, old[key])}")
    caught = ("Killed", "Timeout")
    lost_kills = [c for c in changed if c[1]["status"] in caught and c[2]["status"] not in caught]
    lost_survivors = [c for c in changed if c[1]["status"] == "Survived" and c[2]["status"] != "Killed"]
    lost_survivors += [(k, old[k], None) for k in old.keys() - new.keys() if old[k]["status"] == "Survived"]
    if lost_kills or lost_survivors:
        print(f"  lost: {len(lost_kills)} kills, {len(lost_survivors)} survivors: check each by hand")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--suite")
    parser.add_argument("--clones")
    parser.add_argument("--repo")
    parser.add_argument("--commit")
    parser.add_argument("--python")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.suite:
        entries = []
        for line in Path(args.suite).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                name, commit, python, *what = line.split()
                entries.append((Path(args.clones) / name, commit, python, " ".join(what)))
    else:
        entries = [(Path(args.repo), args.commit, args.python, "")]
    failed = 0
    for repo, commit, python, what in entries:
        try:
            before = check(args.before, repo, commit, python, args.jobs)
            after = check(args.after, repo, commit, python, args.jobs)
        except RuntimeError as error:
            print(f"\n## {repo.name} {commit}: {error}")
            failed += 1
            continue
        compare(f"{repo.name} {commit} {what}".strip(), before, after)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
