"""A PostgreSQL cluster and a Redis server of a test's own, on their own ports and in a temp dir,
so a fault test may restart them: the shared services on 5432 and 6379 are never touched."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.conftest import _in_ci

# Runs one turn in a process of its own against a database (and migrates the template).
DRIVER = Path(__file__).with_name("turn_in_a_process.py")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def missing(what: str) -> None:
    """In CI a missing binary fails the test (it must not hide); elsewhere it is a skip."""
    if _in_ci():
        pytest.fail(f"{what} is not installed")
    pytest.skip(f"{what} is not installed")


class PrivatePostgres:
    """initdb + pg_ctl from /usr/lib/postgresql/*/bin, trust auth on 127.0.0.1:<port>. Run as
    the `postgres` user when the tests run as root (PostgreSQL refuses to run as root)."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
        if not found:
            missing("PostgreSQL's server binaries (/usr/lib/postgresql/*/bin)")
        self.bin = Path(found[-1]).parent
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="mr-private-pg-"))
        self.data = self.root / "data"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str) -> None:
        done = subprocess.run([*self.as_user, *argv], capture_output=True, text=True, timeout=120)
        if done.returncode:
            log = (self.root / "log").read_text()[-1500:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"{argv[0]} failed: {done.stdout}{done.stderr}\n{log}")

    def init(self) -> PrivatePostgres:
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"
        )
        self.start()
        return self

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> float:
        """Stop (fast: every connection is cut) and start again; returns how long it was away."""
        started = time.monotonic()
        self.stop()
        self.start()
        return time.monotonic() - started

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def destroy(self) -> None:
        try:
            self.stop()
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


class PrivateRedis:
    """redis-server on its own port with no persistence: a restart forgets every queued task."""

    def __init__(self) -> None:
        self.binary = shutil.which("redis-server")
        if not self.binary:
            missing("redis-server")
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def start(self) -> PrivateRedis:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the private redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"


def _env(database_url: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": "memory://", **extra}


def fresh_database(cluster: PrivatePostgres) -> str:
    name = f"turn_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(cluster.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE migrated")
    return cluster.url(name)
