"""The session lock's advisory lock (motion_runner/ingest/twins.py `session_lock`).

Why by hand: the writers that match twins (hooks, the importer) check and then insert, safe only
one at a time per session, and the session's row may not exist yet, so no row lock serves; the
ORM has no advisory lock. A transaction-scoped one (`pg_advisory_xact_lock`) is released at the
caller's commit or rollback, whatever happens. There is no ORM reference path: SQLite serializes
writers by itself, so elsewhere nothing is taken (docs/concurrency.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError
from django.db.backends.base.base import BaseDatabaseWrapper

from . import is_postgresql


def lock_key(name: str) -> int:
    """A name's signed 64-bit key: the first eight bytes of its SHA-256."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


def hold_for_transaction(connection: BaseDatabaseWrapper, name: str) -> None:
    """Wait for, then hold to the end of the caller's transaction, the lock named `name`."""
    if not is_postgresql(connection):
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_key(name)])


def bound_transaction(
    connection: BaseDatabaseWrapper, *, idle_seconds: float | None = None, lock_seconds: float | None = None
) -> None:
    """Bound the caller's open transaction (SET LOCAL: the bounds end with it), PostgreSQL only.

    `idle_seconds`: the server ends the session when this transaction sits idle between its
    statements that long (`idle_in_transaction_session_timeout`): a runner frozen (SIGSTOP) in its
    write transaction releases its locks and uncommitted rows instead of holding whoever waits
    for them. `lock_seconds`: a statement that waits that long for a lock fails with
    lock_not_available (55P03, `lock_timeout`) instead of waiting on."""
    if not is_postgresql(connection):
        return
    settings = []
    if idle_seconds is not None:
        settings.append(("idle_in_transaction_session_timeout", f"{int(idle_seconds * 1000)}ms"))
    if lock_seconds is not None:
        settings.append(("lock_timeout", f"{int(lock_seconds * 1000)}ms"))
    if not settings:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in settings),
            [value for setting in settings for value in setting],
        )


LOCK_NOT_AVAILABLE = "55P03"


def is_lock_timeout(exc: BaseException) -> bool:
    """True for a statement that gave up waiting for a lock (`lock_timeout`)."""
    return getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE


@contextmanager
def waiting_no_longer_than(connection: BaseDatabaseWrapper, seconds: float) -> Iterator[None]:
    """Within: a statement of this session that waits `seconds` for a lock fails with
    lock_not_available (`is_lock_timeout`) instead of waiting on; the session's own value after.
    PostgreSQL only (SQLite's writers wait on its busy timeout)."""
    if not is_postgresql(connection):
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('lock_timeout', %s, false)", [f"{int(seconds * 1000)}ms"])
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        except DatabaseError:  # the connection is gone (or its transaction failed): so is the value
            pass
