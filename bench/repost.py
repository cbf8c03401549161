#!/usr/bin/env python3
"""Re-posts of already-stored stream events (all skipped), in more rounds than bench/ingest.py's
one: the statements one re-post sends, the best and median rate over the rounds, and the CPU this
process spent a post (what the web process spends; the rest of the wall time is PostgreSQL and
the machine's other load). `--profile` prints a cProfile of one more round; `--freeze` freezes
what is loaded before the clock starts, as the web process does (motion_runner/wsgi.py).

Then (`--clients 1,2,4`; `--clients ""` for none) the same over HTTP to ONE web process as
deployed (gunicorn, one gthread worker with `--threads` threads, motion_runner.settings with
DEBUG off): N concurrent clients, each re-posting its own session's stored batches over a
kept-alive connection, with the web process's CPU a post (/proc utime + stime, master included).

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/repost.py \
      [--events N] [--rounds R] [--clients 1,2,4] [--threads 4]

The bodies are encoded before the clock starts, as in bench/ingest.py (whose events it reuses).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _figures import figure, tree  # noqa: E402

ROOT = tree()  # this checkout, or the one bench/against.py names (BENCH_TREE)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")

import django  # noqa: E402

django.setup()

from _django import clients_posting, web_env, web_process  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402
from ingest import stream_events  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=4_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() before the clock, as wsgi.py.")
    parser.add_argument("--clients", default="1,2,4", help="Concurrent HTTP clients; empty for none.")
    parser.add_argument("--threads", type=int, default=4, help="The gunicorn worker's threads.")
    parser.add_argument("--http-rounds", type=int, default=3)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def session_bodies(count: int, batch: int) -> list[str]:
    session = str(uuid.uuid4())
    events = stream_events(count, session)
    return [
        json.dumps({"harness": "claude-code", "session_id": session, "events": events[at : at + batch]})
        for at in range(0, len(events), batch)
    ]


def over_http(args, key: str, post_fresh) -> None:
    """Each client count re-posts `args.events` events in all (each client its own session,
    stored before the clock starts), `args.http_rounds` times over."""
    counts = [int(n) for n in args.clients.split(",") if n.strip()]
    if not counts:
        return
    sessions = {n: [session_bodies(args.events // n, args.batch) for _ in range(n)] for n in counts}
    for per_client in sessions.values():
        for bodies in per_client:
            post_fresh(bodies)
    connection.close()
    env = web_env(connection)
    env["WEB_CONCURRENCY"] = "1"
    with web_process(env, args.threads) as base_url:
        port = int(base_url.rsplit(":", 1)[1])

        def all_skipped(answer: dict) -> bool:
            return answer["imported"] == 0

        warm_up = [body.encode() for body in sessions[counts[0]][0][:5]]
        clients_posting(port, key, [warm_up], all_skipped, rounds=2)
        for n in counts:
            per_client = [[body.encode() for body in bodies] for bodies in sessions[n]]
            posts = sum(map(len, per_client)) * args.http_rounds
            seconds, cpu = clients_posting(port, key, per_client, all_skipped, rounds=args.http_rounds)
            print(
                f"over HTTP, {n} client(s), one web process ({args.threads} threads): "
                f"{posts * args.batch / seconds:,.0f} events/s, {seconds * 1000 / posts * n:.2f} ms a post "
                f"for each client, web CPU {cpu * 1000 / posts:.2f} ms a post; load {os.getloadavg()[0]:.2f}"
            )
            figure(f"re-posts over HTTP, {n} client(s)", posts * args.batch / seconds, "events/s")


def run(args) -> None:
    from motion_runner.api.auth import create_key
    from motion_runner.models import Agent, Motion

    motion = Motion.objects.create(slug="bench", title="Bench")
    agent = Agent.objects.create(name="bencher")
    motion.agents.add(agent)
    key = create_key(agent)[1]
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    client = Client()
    bodies = session_bodies(args.events, args.batch)

    def post_all(expect_new: bool) -> None:
        for body in bodies:
            response = client.post(
                "/api/motions/bench/stream/", body, content_type="application/json", **headers
            )
            assert response.status_code == 200, response.content[:300]
            assert expect_new or response.json()["imported"] == 0, response.content[:300]

    post_all(expect_new=True)
    if args.freeze:
        gc.collect()
        gc.freeze()
    with CaptureQueriesContext(connection) as queries:
        client.post("/api/motions/bench/stream/", bodies[0], content_type="application/json", **headers)
    print(f"statements a re-post of {args.batch} events: {len(queries)}")
    for query in queries:
        print(f"  {query['sql'][:110]}")
    walls, cpus = [], []
    for _ in range(args.rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        post_all(expect_new=False)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    walls.sort()
    per_post = 1000 / len(bodies)
    print(
        f"re-post, {args.rounds} rounds of {args.events} events: best {args.events / walls[0]:,.0f} events/s "
        f"({walls[0] * per_post:.2f} ms a post), median {args.events / walls[len(walls) // 2]:,.0f} events/s; "
        f"this process's CPU {min(cpus) * per_post:.2f} ms a post; load {os.getloadavg()[0]:.2f}"
    )
    figure("re-posts in process, best", args.events / walls[0], "events/s")
    figure("re-posts in process, a CPU second", args.events / min(cpus), "events")
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(post_all, False)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)

    def post_fresh(fresh: list[str]) -> None:
        for body in fresh:
            response = client.post(
                "/api/motions/bench/stream/", body, content_type="application/json", **headers
            )
            assert response.status_code == 200 and response.json()["imported"] > 0, response.content[:300]

    over_http(args, key, post_fresh)


if __name__ == "__main__":
    main()
