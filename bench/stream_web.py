#!/usr/bin/env python3
"""Fresh stream posts (batches of 100 new events) to ONE web process as deployed: gunicorn, one
gthread worker with several threads, N concurrent clients posting over HTTP, so PostgreSQL's
time (the insert, the commit's fsync) overlaps the process's own CPU. Beside it, in the same
run: the in-process figure (Django's test client, one post at a time, as bench/ingest.py's
"stream API" line; DEBUG on, as there) and memory-lane's baseline (one `get_or_create` per line).

  DATABASE_URL=postgres://postgres@127.0.0.1:5432/somedb .venv/bin/python bench/stream_web.py \
      [--events N] [--clients 2,4] [--threads 4] [--rounds 3]

The target (issue 31) is a ratio: fresh posts over HTTP (the first `--clients` count) at least 9×
the baseline, in the best of three rounds; each round measures the baseline and then the posts,
so the machine's load weighs on both. The last line says the ratio and whether it is met.

Each client posts its own session's events (fresh uuids, as a harness would) over a kept-alive
connection; the bodies are encoded before the clock starts. Printed per line: events/s, the wall
time a post, and the web process's CPU a post (its /proc utime + stime, master included), which
the machine's other load disturbs less than the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import bench_database, clients_posting, web_env, web_process  # noqa: E402
from _figures import figure, load, ratio  # noqa: E402

os.environ.setdefault("CELERY_BROKER_URL", "memory://")


def bodies_for(count: int, batch: int) -> list[bytes]:
    from ingest import stream_events

    session_id = str(uuid.uuid4())
    events = stream_events(count, session_id)
    return [
        json.dumps(
            {"harness": "claude-code", "session_id": session_id, "events": events[start : start + batch]}
        ).encode()
        for start in range(0, len(events), batch)
    ]


def over_http(port: int, key: str, clients: int, events: int, batch: int) -> tuple[float, float, float]:
    """(events/s, wall ms a post, web CPU ms a post) for `clients` posting `events` in all."""
    per_client = [bodies_for(events // clients, batch) for _ in range(clients)]
    posts = sum(map(len, per_client))
    seconds, cpu = clients_posting(port, key, per_client, lambda answer: not answer["errors"])
    return posts * batch / seconds, seconds * 1000 / posts * clients, cpu * 1000 / posts


def in_process(key: str, events: int, batch: int) -> tuple[float, float, float]:
    from django.test import Client

    client = Client()
    bodies = bodies_for(events, batch)
    cpu = time.process_time()
    started = time.perf_counter()
    for body in bodies:
        response = client.post(
            "/api/motions/bench/stream/",
            body,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        assert response.status_code == 200 and not response.json()["errors"], response.content[:300]
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    return len(bodies) * batch / seconds, seconds * 1000 / len(bodies), cpu * 1000 / len(bodies)


def baseline_rate(motion, agent, events: int) -> float:
    """memory-lane's way, events/s: one `get_or_create` per line, no HTTP (bench/ingest.py)."""
    from ingest import baseline_messages, stream_events

    from motion_runner.models import MotionSession

    session_id = str(uuid.uuid4())
    MotionSession.objects.create(session_id=session_id, motion=motion, agent=agent)
    lines = stream_events(events, session_id)
    started = time.perf_counter()
    baseline_messages([(session_id, lines)], motion, agent, "api")
    return len(lines) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000, help="Events per line (all clients together).")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--clients", default="2", help="Client counts over HTTP; the first is the figure.")
    parser.add_argument("--threads", type=int, default=4, help="The gunicorn worker's threads.")
    parser.add_argument("--baseline-events", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=3, help="Baseline and posts, taking turns.")
    parser.add_argument("--target", type=float, default=9.0, help="Fresh posts over the baseline.")
    args = parser.parse_args()
    with bench_database("stream_web") as connection:
        from django.test.utils import setup_test_environment

        from motion_runner.api.auth import create_key
        from motion_runner.models import Agent, Motion

        setup_test_environment()
        motion = Motion.objects.create(slug="bench", title="Bench")
        agent = Agent.objects.create(name="bencher")
        motion.agents.add(agent)
        _, key = create_key(agent)
        print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}); {load()}")
        # Warm-up: the first posts pay for imports and the connection's first statements.
        in_process(key, 500, args.batch)
        rate, wall, cpu = in_process(key, args.events, args.batch)
        print(
            f"in-process (test client, 1 at a time): {rate:8,.0f} events/s  {wall:5.1f} ms a post, {cpu:5.1f} ms CPU"
        )
        connection.close()  # the web process's writes are not this connection's to see mid-transaction
        env = web_env(connection)
        env["WEB_CONCURRENCY"] = "1"
        counts = [int(n) for n in args.clients.split(",")]
        pairs = []
        with web_process(env, args.threads) as base_url:
            port = int(base_url.rsplit(":", 1)[1])
            over_http(port, key, 1, 500, args.batch)  # warm-up
            baseline_rate(motion, agent, 200)  # warm-up
            for round_number in range(1, args.rounds + 1):
                # The baseline and the posts take turns: the machine's load weighs on both alike.
                base = baseline_rate(motion, agent, args.baseline_events)
                connection.close()
                print(
                    f"round {round_number}: baseline (one get_or_create per line, no HTTP): {base:8,.0f} events/s"
                )
                for clients in counts:
                    rate, wall, cpu = over_http(port, key, clients, args.events, args.batch)
                    print(
                        f"round {round_number}: gunicorn, 1 worker x {args.threads} threads, {clients} client(s): "
                        f"{rate:8,.0f} events/s  {wall:5.1f} ms a post (each client), {cpu:5.1f} ms web CPU a post"
                    )
                    if clients == counts[0]:
                        pairs.append((rate / base, rate, base))
                print(f"round {round_number}: {load()}")
        times, rate, base = max(pairs)
        figure(f"fresh posts over HTTP, {counts[0]} client(s), best round", rate, "events/s")
        ratio(
            f"fresh posts ({counts[0]} client(s)) / one get_or_create a line, best of {len(pairs)} rounds",
            rate,
            base,
            "events/s",
            args.target,
        )


if __name__ == "__main__":
    main()
