"""What the fault tests share: a real Celery worker in its own process (so it can be killed with
SIGKILL), pointed at a database and a broker, and small waits."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(settings.BASE_DIR)
CELERY = str(Path(sys.executable).parent / "celery")


def database_url(settings_dict: dict | None = None) -> str:
    """The URL of the database this test runs on (the test database, not the configured one)."""
    db = settings_dict or connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker(
    queue: str, *, database: str, broker: str, log: Path, pool: str = "solo", **env: str
) -> subprocess.Popen:
    """`celery worker -Q <queue>` in one process (solo pool): killing it kills the whole worker.
    `pool="prefork"` for a worker as bin/serve runs it (two children)."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database,
        "CELERY_BROKER_URL": broker,
        "PYTHONPATH": str(ROOT),
        **env,
    }
    return subprocess.Popen(
        [
            CELERY,
            "-A",
            "motion_runner",
            "worker",
            "-Q",
            queue,
            f"--pool={pool}",
            "--concurrency=2",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=environment,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def start_turns_worker(tmp_path: Path, lease_seconds: int, **env: str) -> subprocess.Popen:
    """A worker on the turns queue of this test's database and broker, logging into `tmp_path`,
    with the runner's lease shortened to `lease_seconds` (so the sweep reclaims quickly)."""
    return start_worker(
        "turns",
        database=database_url(),
        broker=settings.CELERY_BROKER_URL,
        log=tmp_path / "worker.log",
        RUNNER_LEASE_SECONDS=str(lease_seconds),
        **env,
    )


def wait_for(what: str, check: Callable[[], object], seconds: float = 30.0, every: float = 0.1):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s: {what}")


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (PID 1 here may not reap them)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone, or going while read
        return False
