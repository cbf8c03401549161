"""One look of the consider loop over 1,000 / 10,000 / 100,000 Motions with 1 % active.

The look is `ListenState WHERE due_at <= now` on a partial index: it should cost what the due
(active) pairs cost, whatever the number of Motions. Baselines, measured in the same run: the
same look read through Django's own timestamptz loader (psycopg's Python one, what the project
used before motion_runner/sql/backend), and the naive look that asks every pair "anything new
since you last considered?" (a comparison of two columns, which no index serves), as a poller
over all Motions would.

    BENCH_DATABASE_URL=postgres://…/<a db of your own> .venv/bin/python bench/consider_look.py

The target (issue 31) is a ratio: the look at least 1.5× faster than the naive scan at 100,000
Motions, in the same run; the last line says whether it is met.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from contextlib import contextmanager
from datetime import timedelta

from _figures import ratio
from _setup import setup

URL = setup()

from django.db import connection  # noqa: E402
from django.db.backends.postgresql.psycopg_any import register_tzloader  # noqa: E402
from django.db.models import F  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from motion_runner.models import Agent, Motion  # noqa: E402
from wakes.consider_loop.loop import look  # noqa: E402
from wakes.models import ListenState  # noqa: E402

RUNS = 30
TURNS = 3
TIMESTAMPTZ_OID = 1184


def populate(total: int, active: int, rng: random.Random):
    """The pairs, `active` of them due at the time it returns (the fill's own "now": a fill that
    takes minutes would otherwise make the quiet pairs due too, issue 41.4)."""
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE wakes_listenstate, motion_runner_motion CASCADE")
    agent, _ = Agent.objects.get_or_create(name="magent")
    now = timezone.now()
    Motion.objects.bulk_create(
        [Motion(slug=f"m{i}", title=f"Motion {i}", created_at=now) for i in range(total)], batch_size=5000
    )
    active_ids = set(rng.sample(range(total), active))
    states = []
    for i in range(total):
        last = now - timedelta(minutes=rng.uniform(1, 60 * 24 * 7))
        state = ListenState(
            motion_id=f"m{i}",
            agent=agent,
            created_at=now - timedelta(days=30),
            last_post_at=last,
            considered_through=last,
            last_said_at=last,
            last_person_at=last,
        )
        if i in active_ids:  # a burst just ended: owed a consideration now
            state.last_post_at = now - timedelta(seconds=rng.uniform(11, 60))
            state.due_at = state.last_post_at + timedelta(seconds=10)
        elif rng.random() < 0.5:  # resting: nothing owed until a post
            state.rested = True
        else:  # quiet: a long-quiet consideration due later
            state.due_at = now + timedelta(minutes=rng.uniform(1, 400))
        states.append(state)
    ListenState.objects.bulk_create(states, batch_size=5000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wakes_listenstate")
    due = ListenState.objects.filter(due_at__lte=now).count()
    assert due == active, f"{due} pairs due at the fill's time, not {active}"
    return now


def naive_look(now):
    """Every pair compared: what a loop without `due_at` has to ask."""
    return list(
        ListenState.objects.filter(
            last_post_at__gt=F("considered_through"), last_post_at__lte=now - timedelta(seconds=10)
        )
    )


@contextmanager
def djangos_own_loader():
    """This connection reads timestamps through Django's stock loader while inside."""
    connection.ensure_connection()
    adapters = connection.connection.adapters  # this connection's own map (copy on write)
    ours = adapters.get_loader(TIMESTAMPTZ_OID, 0)
    register_tzloader(connection.timezone, connection.connection)
    try:
        yield
    finally:
        adapters.register_loader(TIMESTAMPTZ_OID, ours)


def measure(fn):
    fn()  # warm
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            rows = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), len(queries), len(rows)


def plan(now) -> str:
    sql, params = ListenState.objects.filter(due_at__lte=now).order_by("due_at").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return " / ".join(row[0].strip() for row in cursor.fetchall()[:3])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--cases", default="1000:10,10000:100,100000:1000,1000:10,100000:10", help="motions:active,…"
    )
    cases = [tuple(int(n) for n in case.split(":")) for case in parser.parse_args().cases.split(",")]
    rng = random.Random(41)
    print(f"database: {URL} ({connection.vendor})")
    print(
        f"{'motions':>9} {'active':>7} | {'look ms':>8} {'queries':>7} {'rows':>5} {'batch ms':>8} | "
        f"{'stock ms':>8} {'stock/look':>10} | {'naive ms':>9} {'rows':>5} | {'naive/look':>10}"
    )
    first_plan = ""
    at_scale = None
    for total, active in cases:
        now = populate(total, active, rng)
        look_ms, look_queries, look_rows = measure(lambda now=now: look(now, 10**6))
        batch_ms, _, _ = measure(lambda now=now: look(now, 200))
        with djangos_own_loader():
            stock_ms, _, _ = measure(lambda now=now: look(now, 10**6))
        naive_ms, _, naive_rows = measure(lambda now=now: naive_look(now))
        # The look and the naive scan take turns, the better median of each kept: the load weighs
        # on both alike.
        for _ in range(TURNS):
            look_ms = min(look_ms, measure(lambda now=now: look(now, 10**6))[0])
            naive_ms = min(naive_ms, measure(lambda now=now: naive_look(now))[0])
        print(
            f"{total:>9,} {active:>7,} | {look_ms:>8.3f} {look_queries:>7} {look_rows:>5} {batch_ms:>8.3f} | "
            f"{stock_ms:>8.3f} {stock_ms / look_ms:>9.1f}× | {naive_ms:>9.3f} {naive_rows:>5} | {naive_ms / look_ms:>9.1f}×"
        )
        if total == 100_000:
            first_plan = first_plan or plan(now)
        if (total, active) == (100_000, 1_000):
            at_scale = at_scale or (look_ms, naive_ms)
    print(f"plan at 100,000: {first_plan}")
    print("(look: every due pair; batch: the tick's real look, at most Dials.look_batch = 200 pairs;")
    print(" stock: the look read through Django's own timestamptz loader, before motion_runner/sql/backend;")
    print(" naive: every pair's last post compared with its cursor, as a poller of all Motions asks)")
    if at_scale is None:
        return
    look_ms, naive_ms = at_scale
    ratio(
        "the look at 100,000 Motions (1 % active), the naive scan / the look",
        look_ms,
        naive_ms,
        "ms",
        1.5,
        lower_is_better=True,
    )


if __name__ == "__main__":
    main()
