"""Shared set-up for benchmarks: Django on a fresh throwaway database.

Uses DATABASE_URL when set (PostgreSQL in CI and on these machines), SQLite otherwise; the
database is created for the run with Django's test-database machinery and dropped after.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from _figures import tree

ROOT = tree()  # this checkout, or the one bench/against.py names (BENCH_TREE)
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


@contextmanager
def bench_database(suffix: str = "bench"):
    import django

    django.setup()
    from django.db import connection

    settings_dict = connection.settings_dict
    settings_dict["TEST"] = dict(settings_dict.get("TEST") or {})
    if connection.vendor == "sqlite":
        settings_dict["TEST"]["NAME"] = str(ROOT / "var" / f"{suffix}.sqlite3")
    else:
        settings_dict["TEST"]["NAME"] = f"{suffix}_{os.getpid()}"
    settings_dict["CONN_MAX_AGE"] = 0  # server threads close theirs after each request
    old_name = settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield connection
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0, keepdb=False)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def database_url(connection) -> str:
    """The URL of the database this run created, for a web process of its own."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    return f"postgres://{s['USER'] or 'postgres'}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def web_env(connection) -> dict[str, str]:
    """The environment of a bench's web process: the standalone settings on this run's database."""
    return dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        DATABASE_URL=database_url(connection),
        DJANGO_SETTINGS_MODULE="motion_runner.settings",
        DEBUG="0",
        SECRET_KEY="bench-only",
        ALLOWED_HOSTS="127.0.0.1",
        LOG_LEVEL="WARNING",
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(base_url: str) -> None:
    import httpx

    for _ in range(200):
        try:
            httpx.get(f"{base_url}/api/motions/", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise SystemExit("the web process did not start")


@contextmanager
def web_process(env: dict[str, str], threads: int, *extra: str):
    """The web process as deployed (gunicorn, gthread workers) on a free port; yields its base URL."""
    port = free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "motion_runner.wsgi",
            "--chdir",
            str(ROOT),
            "-b",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--threads",
            str(threads),
            *extra,
            "--log-level",
            "warning",
        ],
        env=env,
    )
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_for(base_url)
        yield base_url
    finally:
        server.terminate()
        server.wait()


def process_cpu(port: int) -> float:
    """CPU seconds of every process started with `-b 127.0.0.1:<port>` (gunicorn's master and worker)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"127.0.0.1:{port}".encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def post_stream(
    port: int, key: str, bodies: list[bytes], failures: list[str], accept, rounds: int = 1
) -> None:
    """One client posting `bodies` to the stream API over one HTTP connection, `rounds` times;
    the first answer that is not a 200 `accept` takes is noted in `failures`, and the client stops."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    try:
        for _ in range(rounds):
            for body in bodies:
                conn.request("POST", "/api/motions/bench/stream/", body, headers)
                response = conn.getresponse()
                answer = response.read()
                if response.status != 200 or not accept(json.loads(answer)):
                    failures.append(f"{response.status} {answer[:200]!r}")
                    return
    finally:
        conn.close()


def clients_posting(
    port: int, key: str, per_client: list[list[bytes]], accept, rounds: int = 1
) -> tuple[float, float]:
    """Each list of bodies posted by a client of its own, all at once: (wall seconds, the web
    process's CPU seconds). A failed post ends the bench."""
    failures: list[str] = []
    threads = [
        threading.Thread(target=post_stream, args=(port, key, bodies, failures, accept, rounds))
        for bodies in per_client
    ]
    cpu, started = process_cpu(port), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds, cpu = time.perf_counter() - started, process_cpu(port) - cpu
    if failures:
        raise SystemExit(f"a post failed: {failures[0]}")
    return seconds, cpu
