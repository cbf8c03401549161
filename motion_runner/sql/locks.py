"""The session lock's advisory lock (motion_runner/ingest/twins.py `session_lock`).

Why by hand: the writers that match twins (hooks, the importer) check and then insert, safe only
one at a time per session, and the session's row may not exist yet, so no row lock serves; the
ORM has no advisory lock. A transaction-scoped one (`pg_advisory_xact_lock`) is released at the
caller's commit or rollback, whatever happens. There is no ORM reference path: SQLite serializes
writers by itself, so elsewhere nothing is taken (docs/concurrency.md).
"""

from __future__ import annotations

import hashlib

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
