#!/usr/bin/env python
"""200 readers long-polling a public Motion, and everyone else's requests meanwhile.

Starts the web server exactly as docker-compose.yml runs it (its gunicorn arguments, read from the
file; only the bind address changes), opens `--readers` long polls (`wait=25`) on a public Motion,
and while they wait times `--requests` unrelated requests (`GET /api/motions/`, one at a time).
Then the same with the command docker-compose ran before (`-w 3`, sync workers) and
`--baseline-readers` readers (4: one more than its workers), for comparison.

`--one-address N` (issue 30 item 8): N anonymous readers from one address against docker-compose's
command twice in the same run, with the long-poll caps lifted (as before them) and with their
defaults (api/poll_caps.py): the other requests' times, and how many polls were told 429 at once.

    DATABASE_URL=postgres://… .venv/bin/python bench/held_polls.py [--readers 200] [--requests 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from _django import ROOT, bench_database, free_port, percentile, wait_for, web_env

OLD_COMMAND = ["motion_runner.wsgi", "-b", "0.0.0.0:8000", "-w", "3"]


def gunicorn(env: dict, args: list[str]):
    import subprocess
    from pathlib import Path

    from tests.motion_runner.site.test_web_server import bound_to

    port = free_port()
    argv = [str(Path(sys.executable).parent / "gunicorn"), *bound_to(args, f"127.0.0.1:{port}")]
    server = subprocess.Popen([*argv, "--log-level", "warning"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    wait_for(base)
    return server, base


async def readers_and_others(base: str, slug: str, cursor: str, readers: int, requests: int) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=readers + 10, max_keepalive_connections=readers + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        url = f"{base}/api/motions/{slug}/messages/"
        polls = [
            asyncio.create_task(client.get(url, params={"after": cursor, "wait": 25})) for _ in range(readers)
        ]
        await asyncio.sleep(2)  # the polls are sent and waiting (each waits 25 s)
        waited, unanswered = [], 0
        async with httpx.AsyncClient(timeout=60) as other:
            for _ in range(requests):
                started = time.monotonic()
                try:
                    response = await other.get(f"{base}/api/motions/")
                except httpx.HTTPError:  # dropped by a server with no thread for it: starved
                    unanswered += 1
                    continue
                waited.append(time.monotonic() - started)
                assert response.status_code == 200
        still_waiting = sum(not poll.done() for poll in polls)
        answers = await asyncio.gather(*polls, return_exceptions=True)
    refused = sum(not isinstance(a, Exception) and a.status_code == 429 for a in answers)
    errors = sum(isinstance(a, Exception) or a.status_code not in (200, 429) for a in answers)
    return {
        "waited": waited or [float("nan")],
        "unanswered": unanswered,
        "still_waiting": still_waiting,
        "errors": errors,
        "refused": refused,
    }


def run(label: str, args: list[str], readers: int, requests: int, connection, env=None) -> None:
    from motion_runner.models import Message, Motion

    slug = f"held-{label}"
    motion = Motion.objects.create(slug=slug, title=label, visibility="public")
    Message.objects.create(motion=motion, sender="justin", source="web", kind="text", text="before")
    server, base = gunicorn({**web_env(connection), **(env or {})}, args)
    try:
        import httpx

        cursor = httpx.get(
            f"{base}/api/motions/{slug}/messages/", params={"since": "2000-01-01T00:00:00Z"}
        ).json()["next"]
        result = asyncio.run(readers_and_others(base, slug, cursor, readers, requests))
    finally:
        server.terminate()
        server.wait()
    waited = result["waited"]
    print(
        f"{label}: gunicorn {' '.join(args)}; {readers} waiting readers, {requests} other requests:"
        f" p50 {percentile(waited, 50) * 1000:,.0f} ms, p95 {percentile(waited, 95) * 1000:,.0f} ms,"
        f" max {max(waited) * 1000:,.0f} ms, dropped unanswered {result['unanswered']}; readers still waiting after them: {result['still_waiting']},"
        f" told 429 at once: {result['refused']}, reader errors: {result['errors']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--baseline-readers", type=int, default=4)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--baseline-requests", type=int, default=3)
    parser.add_argument("--one-address", type=int, default=0, help="readers from one address, capped and not")
    options = parser.parse_args()
    with bench_database("held_polls") as connection:
        from tests.motion_runner.site.test_web_server import UNCAPPED, compose_gunicorn_args

        if options.one_address:
            for label, env in (("uncapped", UNCAPPED), ("capped", {})):
                run(label, compose_gunicorn_args(), options.one_address, options.requests, connection, env)
            return

        run("compose", compose_gunicorn_args(), options.readers, options.requests, connection)
        run("before", OLD_COMMAND, options.baseline_readers, options.baseline_requests, connection)


if __name__ == "__main__":
    main()
