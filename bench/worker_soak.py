#!/usr/bin/env python
"""A worker's memory over a long soak of short turns: is its RSS flat?

One process runs `--turns` turns (10,000 by default) one after another through the worker's
own code path (`enqueue_turn`, then `execute_turn`, the body of the Celery task): each spawns
a real process, a tiny shell harness that prints a Claude Code stream (init, an assistant
line, a result with usage and cost; fresh uuids each turn), parses it, writes the messages,
settles the ledger. The Motions rotate over `--motions`, as a worker serves many.

RSS (VmRSS from /proc/self/status) is sampled every `--every` turns. The baseline is the RSS
after the warm-up (the first 10 % of the turns) in the same run; the run passes when the last
sample is within `--tolerance-mb` of it and the trend over the second half, least squares, is
under 1 KB a turn.

    DATABASE_URL=postgres://… .venv/bin/python bench/worker_soak.py [--turns 10000]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

from _django import ROOT, bench_database

HARNESS = r"""#!/bin/sh
# A short Claude Code turn: init, one assistant line, the result (fresh ids every run).
# One session per Motion (a session belongs to one Motion): derived from the turn's workspace.
h=$(printf %s "$PWD" | md5sum)
session=$(echo "$h" | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12}).*/\1-\2-\3-\4-\5/')
a=$(cat /proc/sys/kernel/random/uuid)
r=$(cat /proc/sys/kernel/random/uuid)
printf '{"type":"system","subtype":"init","session_id":"%s","tools":["Read"],"model":"claude-haiku-4-5"}\n' "$session"
printf '{"type":"assistant","session_id":"%s","uuid":"%s","message":{"id":"msg_%s","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"All quiet here."}],"usage":{"input_tokens":12,"output_tokens":4}}}\n' "$session" "$a" "$a"
printf '{"type":"result","subtype":"success","is_error":false,"session_id":"%s","uuid":"%s","total_cost_usd":0.0001,"duration_ms":5,"num_turns":1,"result":"All quiet here.","usage":{"input_tokens":12,"output_tokens":4}}\n' "$session" "$r"
"""


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise SystemExit("no VmRSS in /proc/self/status (Linux only)")


def slope(points: list[tuple[int, int]]) -> float:
    """KB per turn, least squares."""
    n = len(points)
    if n < 2:
        return 0.0
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    den = sum((x - mean_x) ** 2 for x, _ in points)
    return num / den if den else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--motions", type=int, default=50)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--tolerance-mb", type=float, default=5.0)
    args = parser.parse_args()
    with bench_database("bench_soak"):
        from motion_runner.models import Agent, Motion, TurnStatus
        from motion_runner.runner.turns import enqueue_turn, execute_turn

        script = Path(tempfile.mkdtemp(prefix="soak-")) / "harness.sh"
        script.write_text(HARNESS)
        script.chmod(0o755)
        agent = Agent.objects.create(name="soak", binary=str(script))
        motions = [Motion.objects.create(slug=f"soak-{n}", title=f"Soak {n}") for n in range(args.motions)]
        for motion in motions:
            motion.agents.add(agent)
        warmup = max(args.turns // 10, 1)
        samples: list[tuple[int, int]] = []
        started = time.perf_counter()
        failed = 0
        for n in range(1, args.turns + 1):
            turn = enqueue_turn(motions[n % len(motions)], agent, "soak", dispatch=False)
            done = execute_turn(turn.pk)
            if done is None or done.status != TurnStatus.FINISHED:
                failed += 1
            if n % args.every == 0:
                gc.collect()
                samples.append((n, rss_kb()))
                print(
                    f"  turn {n:>6}: RSS {samples[-1][1] / 1024:7.1f} MB  ({(time.perf_counter() - started) / n * 1000:.1f} ms a turn)",
                    flush=True,
                )
        seconds = time.perf_counter() - started
    base = next((kb for turn, kb in samples if turn >= warmup), samples[0][1])
    last = samples[-1][1]
    trend = slope([(turn, kb) for turn, kb in samples if turn >= args.turns // 2])
    print()
    print(
        f"worker soak: {args.turns:,} turns over {args.motions} Motions in {seconds:.0f} s "
        f"({seconds / args.turns * 1000:.1f} ms a turn), load {os.getloadavg()[0]:.1f}; {failed} not succeeded"
    )
    print(
        f"RSS after warm-up (turn {warmup:,}): {base / 1024:.1f} MB; at the end: {last / 1024:.1f} MB "
        f"(ratio {last / base:.3f}, +{(last - base) / 1024:.1f} MB); trend over the second half {trend:.2f} KB a turn"
    )
    ok = failed == 0 and (last - base) / 1024 <= args.tolerance_mb and trend < 1.0
    print("flat" if ok else "NOT FLAT (or turns failed)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
