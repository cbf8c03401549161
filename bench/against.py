#!/usr/bin/env python3
"""One bench on two trees taking turns in the same minutes: this checkout and another (by default
main at `e4eb508`, before issue 31's moves), each round the other tree first, then this one. The
bench files are this tree's in both runs; only the apps they import and the web process they start
differ (`BENCH_TREE`, bench/_figures.py). For each `figure:` line the bench prints, the best of
each tree's rounds and their ratio against the target (at least 0.95×: the moves must not slow
it), with the load beside every run.

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python bench/against.py \\
      [--ref e4eb508 | --other /path/to/checkout] [--rounds 2] [--target 0.95] repost.py --clients 2

`--ref` unpacks that commit (`git archive`) into a folder of /tmp once, so no other checkout is
written to (its `__pycache__` included).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent
FIGURE = re.compile(r"^figure: (?P<name>.+?) = (?P<value>[-+0-9.eE]+) (?P<unit>[^;]*); (?P<load>load .*)$")


def unpacked(ref: str) -> Path:
    """The tree of commit `ref`, unpacked once into /tmp."""
    commit = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--short", ref], check=True, capture_output=True, text=True
    ).stdout.strip()
    folder = Path("/tmp") / f"bench-tree-{commit}"
    if not (folder / "manage.py").exists():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", str(HERE), "archive", commit], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(folder)], stdin=archive.stdout, check=True)
        if archive.wait():
            raise SystemExit(f"git archive {commit} failed")
    return folder


def run_once(tree: Path, bench: str, args: list[str]) -> list[dict]:
    """The bench on `tree`'s code: its output echoed, its figures returned."""
    env = dict(os.environ, BENCH_TREE=str(tree))
    started = time.strftime("%H:%M:%S", time.gmtime())
    print(f"--- {tree} at {started} UTC, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    done = subprocess.run(
        [sys.executable, str(BENCH / bench), *args], env=env, cwd=tree, capture_output=True, text=True
    )
    print(done.stdout, end="", flush=True)
    if done.returncode:
        print(done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{bench} failed on {tree}")
    return [
        match.groupdict() | {"at": started}
        for line in done.stdout.splitlines()
        if (match := FIGURE.match(line))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", default="e4eb508", help="The other tree: this commit, unpacked into /tmp.")
    parser.add_argument("--other", type=Path, help="The other tree: a checkout (instead of --ref).")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--target", type=float, default=0.95, help="This tree's figure over the other's.")
    parser.add_argument("bench", help="A bench of this tree's bench/ that prints `figure:` lines.")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    other = (args.other or unpacked(args.ref)).resolve()
    trees = {"other": other, "this": HERE}
    figures: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for _ in range(args.rounds):
        for side in ("other", "this"):  # before, after, before, after
            for found in run_once(trees[side], args.bench, args.args):
                figures[found["name"]][side].append(found)
    print(f"=== {args.bench} {' '.join(args.args)}: this tree ({HERE}) against {other}")
    met = True
    for name, sides in figures.items():
        for side in ("other", "this"):
            runs = ", ".join(f"{float(f['value']):,.4g} ({f['at']}, {f['load']})" for f in sides[side])
            print(f"  {name}, {side}: {runs}")
        if not sides["other"] or not sides["this"]:
            continue
        best_other = max(float(f["value"]) for f in sides["other"])
        best_this = max(float(f["value"]) for f in sides["this"])
        unit = sides["this"][0]["unit"]
        times = best_this / best_other
        met = met and times >= args.target
        print(
            f"ratio: {name}, this / other = {times:.2f}x (best {best_this:,.4g} against {best_other:,.4g} "
            f"{unit}; target >= {args.target:g}x): {'met' if times >= args.target else 'NOT met'}"
        )
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
