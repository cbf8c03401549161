"""What one poll of a thread's messages costs in the web process: queries, CPU and wall time.

A long poll (`wait=5`) that finds new lines at once, as the stream's poller does at 200 lines a
second, through Django's test client in this process (no HTTP, no gunicorn): the web side's own
work. Run it on two checkouts, one after the other, to compare them (the README's "a poll's
cost cut" table).

    DATABASE_URL=postgres://… .venv/bin/python bench/poll_cost.py [--polls 400] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import time

from _django import ROOT, bench_database


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--polls", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with bench_database("bench_poll_cost") as connection:
        from django.conf import settings
        from django.test.utils import CaptureQueriesContext
        from rest_framework.test import APIClient

        from motion_runner.models import Message, Motion
        from motion_runner.thread.bell import bell

        settings.ALLOWED_HOSTS = ["*"]
        motion = Motion.objects.create(slug="poll-cost", title="poll cost", visibility="public")
        for n in range(50):
            Message.objects.create(
                motion=motion, sender="magent", source="runner", kind="text", text=f"line {n}"
            )
        client = APIClient()
        url = f"/api/motions/{motion.slug}/messages/"
        cursor = client.get(url, {"kind": "text", "limit": 500}).json()["results"][-3]["cursor"]
        params = {"kind": "text", "limit": 500, "after": cursor, "wait": 5}
        with CaptureQueriesContext(connection) as queries:
            found = len(client.get(url, params).json()["results"])
        statements = [q["sql"] for q in queries.captured_queries]  # before the next request clears them
        walls, cpus = [], []
        for _ in range(args.runs):
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(args.polls):
                client.get(url, params)
            walls.append((time.perf_counter() - wall) / args.polls * 1000)
            cpus.append((time.process_time() - cpu) / args.polls * 1000)
        bell.stop()  # its listener holds a connection to the database about to be dropped
        connection.close()
    print(f"a poll finding {found} new lines: {len(statements)} queries")
    for sql in statements:
        print(f"  {sql[:110]}")
    print(f"CPU ms a poll: {' '.join(f'{c:.2f}' for c in cpus)} (best {min(cpus):.2f})")
    print(f"wall ms a poll: {' '.join(f'{w:.2f}' for w in walls)} (best {min(walls):.2f})")
    print(f"load: {os.getloadavg()[0]:.1f} (1-min average)")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
