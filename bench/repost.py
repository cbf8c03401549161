#!/usr/bin/env python3
"""Re-posts of already-stored stream events (all skipped), in more rounds than bench/ingest.py's
one: the statements one re-post sends, the best and median rate over the rounds, and the CPU this
process spent a post (what the web process spends; the rest of the wall time is PostgreSQL and
the machine's other load). `--profile` prints a cProfile of one more round.

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/repost.py [--events N] [--rounds R]

The bodies are encoded before the clock starts, as in bench/ingest.py (whose events it reuses).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")

import django  # noqa: E402

django.setup()

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
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args) -> None:
    from motion_runner.api.auth import create_key
    from motion_runner.models import Agent, Motion

    motion = Motion.objects.create(slug="bench", title="Bench")
    agent = Agent.objects.create(name="bencher")
    motion.agents.add(agent)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {create_key(agent)[1]}"}
    client = Client()
    session = str(uuid.uuid4())
    events = stream_events(args.events, session)
    bodies = [
        json.dumps({"harness": "claude-code", "session_id": session, "events": events[at : at + args.batch]})
        for at in range(0, len(events), args.batch)
    ]

    def post_all(expect_new: bool) -> None:
        for body in bodies:
            response = client.post(
                "/api/motions/bench/stream/", body, content_type="application/json", **headers
            )
            assert response.status_code == 200, response.content[:300]
            assert expect_new or response.json()["imported"] == 0, response.content[:300]

    post_all(expect_new=True)
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
        f"re-post, {args.rounds} rounds of {len(events)} events: best {len(events) / walls[0]:,.0f} events/s "
        f"({walls[0] * per_post:.2f} ms a post), median {len(events) / walls[len(walls) // 2]:,.0f} events/s; "
        f"this process's CPU {min(cpus) * per_post:.2f} ms a post; load {os.getloadavg()[0]:.2f}"
    )
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(post_all, False)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
