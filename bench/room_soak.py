#!/usr/bin/env python3
"""The room simulation's long soak, by hand (tests/room/sim.py; docs/room-simulation.md): seeds
FROM.. for SECONDS (or COUNT seeds), each of STEPS steps, on a throwaway database; prints seeds/s,
seconds and CPU seconds a seed, SQL statements a seed and every seed that broke an invariant, with
its replay command. `--ab-dials`: every seed twice, interleaved, with the wakes' dials read once a
decision (wakes.models.dials.dials_held, as shipped) and with every gate reading them (as before):
the same seeds, the same load, the two side by side.

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/room_soak.py \
      [--from 1000] [--seconds 600 | --count 500] [--steps 40] [--ab-dials]
"""

from __future__ import annotations

import argparse
import contextlib
import time

from _django import bench_database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--from", dest="start", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--ab-dials", action="store_true")
    args = parser.parse_args()
    with bench_database("room_soak"):
        from django.db import connection, transaction

        from tests.room import sim
        from wakes.models import dials

        held = dials.dials_held
        arms = {"dials once a decision": held, "dials at every gate": contextlib.nullcontext}
        if not args.ab_dials:
            arms = {"room": held}
        figures = {arm: [0.0, 0.0, 0] for arm in arms}  # wall, cpu, statements
        statements = [0]

        def count(execute, sql, params, many, context):
            statements[0] += 1
            return execute(sql, params, many, context)

        failures, seed, started = [], args.start, time.perf_counter()
        with transaction.atomic(), connection.execute_wrapper(count):  # every seed rolled back
            sim.run_seed(args.start - 1, steps=args.steps)  # warm: imports, caches
            started = time.perf_counter()
            while True:
                elapsed = time.perf_counter() - started
                done = seed - args.start
                if (args.count and done >= args.count) or (not args.count and elapsed >= args.seconds):
                    break
                order = list(arms) if seed % 2 else list(reversed(arms))
                for arm in order:
                    dials.dials_held = arms[arm]
                    statements[0], wall, cpu = 0, time.perf_counter(), time.process_time()
                    try:
                        sim.run_seed(seed, steps=args.steps)
                    except AssertionError as broken:
                        failures.append(seed)
                        print(f"FAIL {broken}", flush=True)
                    figure = figures[arm]
                    figure[0] += time.perf_counter() - wall
                    figure[1] += time.process_time() - cpu
                    figure[2] += statements[0]
                seed += 1
            dials.dials_held = held
            transaction.set_rollback(True)
    done = max(seed - args.start, 1)
    for arm, (wall, cpu, count_) in figures.items():
        print(
            f"{arm}: {done} seeds of {args.steps} steps in {wall:.1f} s: {done / wall:.2f} seeds/s, "
            f"{wall / done:.2f} s a seed ({cpu / done:.2f} s CPU), {count_ / done:.0f} statements a seed"
        )
    print(f"{len(failures)} failed: {sorted(set(failures))}")


if __name__ == "__main__":
    main()
