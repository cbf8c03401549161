#!/usr/bin/env python
"""Many readers long-polling one web process while nothing happens, then one message.

Readers open `GET /api/motions/<slug>/messages/?after=<cursor>&wait=25` at once against a
gunicorn gthread process (one thread per waiting request) and wait. Measured while they wait:
the queries the database ran (`pg_stat_database.xact_commit` of the bench database: every
autocommit query is one transaction), per reader and second. Then one message is written and
we time how long until every reader has its answer.

This project's readers (woken by the message bell, LISTEN/NOTIFY), `--readers` of them (1,000
by default), through HTTP; beside them in the same run, the loop it replaced (`exists()` every
5 ms on the request's own connection) in `--baseline-readers` threads (20 by default: each
holds a connection, and PostgreSQL allows 100 by default).

    DATABASE_URL=postgres://… .venv/bin/python bench/waiting_readers.py [--readers 1000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time

import psycopg

# This process's own 20 polling threads (the baseline) each hold a connection: no pool here.
os.environ.setdefault("DATABASE_POOL_SIZE", "0")

from _django import ROOT, bench_database, percentile, web_env, web_process


def commits(stats, name: str) -> int:
    stats.execute("SELECT pg_stat_clear_snapshot()")
    row = stats.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = %s", [name]).fetchone()
    return int(row[0])


def write_message(motion) -> None:
    """One agent line, from its own thread and connection (closed after, as the runner's)."""
    from django.db import connection

    from motion_runner.models import Message

    Message.objects.create(motion=motion, sender="magent", source="runner", kind="text", text="now")
    connection.close()


async def readers_wait(url: str, cursor: str, count: int) -> tuple[list[float], int, int]:
    """Every reader's answer time (monotonic), how many got the message, how many got an error.
    Readers arrive 20 at a time, 250 ms apart, as viewers open a page (a thousand connecting in
    the same moment would only measure PostgreSQL's connection limit: see the README)."""
    import httpx

    limits = httpx.Limits(max_connections=count + 10, max_keepalive_connections=count + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def one() -> tuple[float, bool, bool]:
            response = await client.get(url, params={"after": cursor, "wait": 25, "kind": "text"})
            if response.status_code != 200:
                return time.monotonic(), False, True
            return time.monotonic(), bool(response.json()["results"]), False

        tasks = []
        for n in range(count):
            tasks.append(asyncio.create_task(one()))
            if n % 20 == 19:
                await asyncio.sleep(0.25)
        results = await asyncio.gather(*tasks)
    return (
        [at for at, _, _ in results],
        sum(1 for _, got, _ in results if got),
        sum(1 for *_, bad in results if bad),
    )


def old_reader(motion_slug: str, cursor_time, stop: threading.Event, woke: list[float]) -> None:
    """The long poll this project had: `exists()` every 5 ms on the request's connection."""
    from django.db import connection

    from motion_runner.models import Message

    newer = Message.objects.filter(motion_id=motion_slug, created_at__gt=cursor_time)
    while not stop.is_set():
        if newer.exists():
            woke.append(time.monotonic())
            break
        time.sleep(0.005)
    connection.close()


def run_old(readers: int, seconds: float, connection) -> dict:
    """The baseline: the old waiting loop in `readers` threads, each with its own connection."""
    from django.utils import timezone

    from motion_runner.models import Message, Motion

    motion = Motion.objects.create(slug="readers-polling", title="polling")
    since = timezone.now()
    stop, woke = threading.Event(), []
    threads = [
        threading.Thread(target=old_reader, args=(motion.slug, since, stop, woke)) for _ in range(readers)
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    name = connection.settings_dict["NAME"]
    with stats_connection(connection) as stats:
        before = commits(stats, name)
        time.sleep(seconds)
        queries = commits(stats, name) - before - 2
    written = time.monotonic()
    Message.objects.create(motion=motion, sender="magent", source="runner", kind="text", text="now")
    for thread in threads:
        thread.join(timeout=30)
    stop.set()
    wake_ms = [(at - written) * 1000 for at in woke]
    rate = queries / seconds
    return {
        "label": "polling every 5 ms (before)",
        "readers": readers,
        "queries_per_second": rate,
        "per_reader": rate / readers,
        "got": len(woke),
        "errors": 0,
        "p50": percentile(wake_ms, 50),
        "p99": percentile(wake_ms, 99),
        "max": max(wake_ms) if wake_ms else float("nan"),
    }


def stats_connection(connection) -> psycopg.Connection:
    return psycopg.connect(
        dbname=connection.settings_dict["NAME"],
        user=connection.settings_dict.get("USER") or None,
        host=connection.settings_dict.get("HOST") or None,
        port=connection.settings_dict.get("PORT") or None,
        password=connection.settings_dict.get("PASSWORD") or None,
        autocommit=True,
    )


def run(label: str, env: dict, readers: int, seconds: float, connection, slug: str = "readers-bell") -> dict:
    from motion_runner.models import Message, Motion

    # Public: the readers read without signing in (a Motion's default needs a sign-in).
    motion = Motion.objects.create(slug=slug, title=label, visibility="public")
    Message.objects.create(motion=motion, sender="justin", source="web", kind="text", text="before")
    threads, connections = readers + 20, str(readers + 100)
    extra = ("--worker-connections", connections, "--backlog", connections, "--timeout", "120")
    with web_process(env, threads, *extra) as base:
        import httpx

        url = f"{base}/api/motions/{motion.slug}/messages/"
        cursor = httpx.get(url).json()["next"]
        result: dict = {}
        name = connection.settings_dict["NAME"]
        stats = stats_connection(connection)

        async def scenario() -> None:
            task = asyncio.create_task(readers_wait(url, cursor, readers))
            await asyncio.sleep(3.0 + readers / 20 * 0.25)  # every reader in and waiting
            before = commits(stats, name)
            await asyncio.sleep(seconds)
            result["queries"] = commits(stats, name) - before - 2  # our own two reads
            written = time.monotonic()
            await asyncio.to_thread(write_message, motion)
            answered, got, errors = await task
            result["got"], result["errors"] = got, errors
            result["wake_ms"] = [(at - written) * 1000 for at in answered]

        try:
            asyncio.run(scenario())
        finally:
            stats.close()
    rate = result["queries"] / seconds
    return {
        "label": label,
        "readers": readers,
        "queries_per_second": rate,
        "per_reader": rate / readers,
        "got": result["got"],
        "errors": result["errors"],
        "p50": percentile(result["wake_ms"], 50),
        "p99": percentile(result["wake_ms"], 99),
        "max": max(result["wake_ms"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=1000)
    parser.add_argument("--baseline-readers", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=5.0, help="how long the readers wait, measured")
    parser.add_argument(
        "--pool", type=int, default=10, help="DATABASE_POOL_SIZE of the web process (0: no pool, one arm)"
    )
    args = parser.parse_args()
    with bench_database("bench_readers") as connection:
        if connection.vendor != "postgresql":
            raise SystemExit("this benchmark needs PostgreSQL (DATABASE_URL=postgres://…)")
        env = web_env(connection)
        pooled_env = dict(env, DATABASE_POOL_SIZE=str(args.pool))
        label = f"the bell, a pool of {args.pool} connections" if args.pool else "the bell, no pool"
        ours = run(label, pooled_env, args.readers, args.seconds, connection, slug="readers-pooled")
        arms = [ours]
        if args.pool:  # the bell as it was: a connection opened per woken reader
            no_pool = dict(env, DATABASE_POOL_SIZE="0")
            arms.append(run("the bell, no pool (before)", no_pool, args.readers, args.seconds, connection))
        baseline = run_old(args.baseline_readers, args.seconds, connection)
    load = os.getloadavg()[0]
    print(
        f"waiting readers benchmark: {args.seconds:.0f} s of waiting measured; load {load:.1f} (1-min average)"
    )
    print()
    header = (
        f"{'reader':<38} {'readers':>7} {'queries/s':>10} {'per reader/s':>12} {'answered':>8} {'errors':>6} "
        f"{'wake p50':>9} {'wake p99':>9} {'max':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in (*arms, baseline):
        print(
            f"{row['label']:<38} {row['readers']:>7} {row['queries_per_second']:>10.1f} {row['per_reader']:>12.2f} "
            f"{row['got']:>8} {row['errors']:>6} {row['p50']:>7.1f}ms {row['p99']:>7.1f}ms {row['max']:>6.0f}ms"
        )
    print()
    print(
        "queries per waiting reader and second, polling ÷ bell: "
        + (
            f"{baseline['per_reader'] / ours['per_reader']:.0f}×"
            if ours["per_reader"] > 0
            else f"∞ (the bell's readers made {ours['queries_per_second']:.1f} queries/s in all)"
        )
    )
    ok = all(arm["got"] == args.readers and arm["errors"] == 0 and arm["per_reader"] < 0.01 for arm in arms)
    print("targets met" if ok else "TARGETS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
