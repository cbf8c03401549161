"""What PostgreSQL may refuse for a moment, told apart from what it refuses for good.

A deadlock or a serialization failure (SQLSTATE 40P01, 40001) aborts one transaction so that the
other may go on: running the same work again succeeds. A lost connection (the server restarted)
heals once it answers again. Anything else is permanent: retrying would only repeat it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import DatabaseError, InterfaceError, OperationalError, connection

from ..sql import server
from ..sql.server import PROBE_SECONDS

log = logging.getLogger(__name__)

T = TypeVar("T")

# deadlock_detected, serialization_failure
CONFLICT_STATES = frozenset({"40P01", "40001"})
# The server ending a session left idle in its transaction: a runner frozen mid-write (SIGSTOP)
# past runner/turn_run.py WRITE_IDLE_SECONDS finds its connection gone when it wakes.
IDLE_IN_TRANSACTION_TIMEOUT = "25P03"


def is_conflict(exc: BaseException) -> bool:
    """True for a transaction PostgreSQL rolled back only because another one raced it."""
    return isinstance(exc, OperationalError) and getattr(exc.__cause__, "sqlstate", None) in CONFLICT_STATES


def is_outage(exc: BaseException) -> bool:
    """True when the database could not be reached or dropped the connection mid-way."""
    if isinstance(exc, InterfaceError):
        return True
    state = getattr(exc.__cause__, "sqlstate", None)
    if isinstance(exc, DatabaseError) and state == IDLE_IN_TRANSACTION_TIMEOUT:
        return True  # the server ended the session (psycopg raises it as an InternalError)
    if not isinstance(exc, OperationalError) or is_conflict(exc):
        return False
    # No SQLSTATE: the connection itself failed; class 08 is a connection exception, 57P0x an
    # administrator or crash shutdown.
    return state is None or state.startswith("08") or state.startswith("57P")


def retry_conflicts(work: Callable[[], T], *, attempts: int = 6, base_seconds: float = 0.02) -> T:
    """Run `work` (which must be safe to run again: its writes are idempotent or rolled back)
    and run it again after a short, jittered back-off when PostgreSQL aborted it as a deadlock or
    serialization failure. Inside an outer transaction it cannot be retried here: it is raised."""
    for attempt in range(attempts):
        try:
            return work()
        except OperationalError as exc:
            if not is_conflict(exc) or attempt == attempts - 1 or connection.in_atomic_block:
                raise
            log.info("retrying after %s (attempt %d)", exc.__cause__.__class__.__name__, attempt + 1)
            time.sleep(base_seconds * 2**attempt * random.uniform(0.5, 1.5))
    raise AssertionError("unreachable")  # pragma: no cover


def retry_outages(work: Callable[[], T], *, seconds: float, what: str) -> T:
    """Run `work` (idempotent: conditional updates, rows with fixed keys) and run it again, after a
    back-off of 0.2 s doubling to 5 s, while the database is away, for up to `seconds`; then the
    error is raised. For what must land once the database is back (a turn's settle), rather than
    wait for a periodic sweep."""
    give_up = time.monotonic() + seconds
    delay = 0.2
    while True:
        try:
            return work()
        except (OperationalError, InterfaceError) as exc:
            if not is_outage(exc) or connection.in_atomic_block or time.monotonic() + delay > give_up:
                raise
            log.warning("%s: the database is away (%s); trying again in %.1f s", what, exc, delay)
            try:
                connection.close()  # the next try opens a fresh connection
            except DatabaseError:
                pass
            time.sleep(delay)
            delay = min(5.0, delay * 2)


def database_answers(timeout: float = PROBE_SECONDS) -> bool:
    """Whether the database accepts a connection and a query now, asked on a connection of its
    own with a short connect timeout, never through the connection pool: the pool's getconn waits
    up to its own timeout (30 s) for a database that is away, which would hold a runner past the
    outage bound it measures (motion_runner/sql/server.py). Not PostgreSQL (SQLite): True."""
    return server.answers(connection, timeout)
