#!/usr/bin/env python3
"""The room simulation's long soak, by hand (tests/room/sim.py; docs/room-simulation.md): seeds
FROM.. for SECONDS (or COUNT seeds), each of STEPS steps, on a throwaway database; prints seeds/s,
seconds a seed and every seed that broke an invariant, with its replay command.

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/room_soak.py \
      [--from 1000] [--seconds 600 | --count 500] [--steps 40]
"""

from __future__ import annotations

import argparse
import time

from _django import bench_database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--from", dest="start", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    with bench_database("room_soak"):
        from django.db import transaction

        from tests.room import sim

        failures, seed, started = [], args.start, time.perf_counter()
        with transaction.atomic():  # every seed's savepoint inside it; all rolled back at the end
            while True:
                elapsed = time.perf_counter() - started
                done = seed - args.start
                if (args.count and done >= args.count) or (not args.count and elapsed >= args.seconds):
                    break
                try:
                    sim.run_seed(seed, steps=args.steps)
                except AssertionError as broken:
                    failures.append(seed)
                    print(f"FAIL {broken}", flush=True)
                seed += 1
            transaction.set_rollback(True)
    done = seed - args.start
    elapsed = time.perf_counter() - started
    print(
        f"{done} seeds of {args.steps} steps in {elapsed:.1f} s: {done / elapsed:.2f} seeds/s, "
        f"{elapsed / max(done, 1):.2f} s a seed; {len(failures)} failed: {failures}"
    )


if __name__ == "__main__":
    main()
