"""The flush after a transactional test, tried again when PostgreSQL chose it as a deadlock's victim.

A transactional test (the browser tests, the workers' tests) ends with Django's flush: one TRUNCATE of
every table. Whatever still talks to the database then (a live-server thread answering a closed
page's last long poll, a worker process on its way out) can lock a table the TRUNCATE has not reached
yet while waiting for one it has: PostgreSQL ends one of them, and when it is the TRUNCATE the flush
fails, every row of the test stays, and the next test that makes the same rows fails on its setup.
CI saw exactly that once (a browser test's teardown: "Database test_test couldn't be flushed", then
"duplicate key … (slug)=(harbor)" at the next one's setup).

The TRUNCATE runs in one transaction, so a victim's attempt changed nothing: it is tried again, up to
`ATTEMPTS` times, after a short wait. Any other error is raised at once, as before."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from django.db import OperationalError

# deadlock_detected, lock_not_available, serialization_failure: a conflict with another session
RETRYABLE_SQLSTATES = frozenset({"40P01", "55P03", "40001"})
ATTEMPTS = 5
PAUSE_SECONDS = 0.5


def sqlstate(error: BaseException) -> str | None:
    return getattr(error.__cause__, "sqlstate", None) or getattr(error, "sqlstate", None)


def retrying(flush: Callable, pause: Callable[[float], None] = time.sleep) -> Callable:
    """`flush` (DatabaseOperations.execute_sql_flush) tried again on a conflict with another session."""

    def execute_sql_flush(self, sql_list):
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return flush(self, sql_list)
            except OperationalError as error:
                if sqlstate(error) not in RETRYABLE_SQLSTATES or attempt == ATTEMPTS:
                    raise
                print(
                    f"tests/flush.py: the flush lost to another session ({sqlstate(error)}: "
                    f"{str(error).strip().splitlines()[0]}); trying again ({attempt + 1}/{ATTEMPTS})",
                    file=sys.stderr,
                )
                pause(PAUSE_SECONDS * attempt)
        return None

    execute_sql_flush.retrying = True
    return execute_sql_flush


def install() -> None:
    """Once per test process; PostgreSQL only (SQLite's flush waits on its file lock)."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    if not getattr(DatabaseOperations.execute_sql_flush, "retrying", False):
        DatabaseOperations.execute_sql_flush = retrying(DatabaseOperations.execute_sql_flush)
