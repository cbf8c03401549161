"""The two channels: `motion_messages` (the message bell, motion_runner/thread/bell.py) and
`turn_stop` (the stop bell, runner/stop_bell.py). The bells keep their logic; their statements
are here.

Why by hand: the ORM has no LISTEN or NOTIFY, nor a trigger of SQLite's. On PostgreSQL a NOTIFY
is delivered on commit, so a listener hears of a write only once it is readable; SQLite has no
NOTIFY, and each of its connections gets a temporary trigger that calls a Python function for
every message inserted (motion_runner/thread/socket_bell.py rings the sockets). There is no ORM
reference path: where there is no channel (another database, `MESSAGES_LISTEN` off, a dropped
connection) the bells fall back to a poll, which tests/motion_runner/thread/test_message_bell.py covers.
"""

from __future__ import annotations

import select
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from . import is_postgresql, is_sqlite

try:
    import psycopg
except ImportError:  # a host on psycopg2 alone (memory-lane pins psycopg2-binary): listened to below
    psycopg = None

MESSAGES = "motion_messages"
TURN_STOP = "turn_stop"

# The SQLite socket bell's trigger: `function(NEW.motion_id)` after each message inserted.
SQLITE_BELL_FUNCTION = "motion_runner_bell"
SQLITE_BELL_TRIGGER = f"""
CREATE TEMP TRIGGER IF NOT EXISTS motion_runner_message_bell
AFTER INSERT ON main.motion_runner_message
BEGIN SELECT {SQLITE_BELL_FUNCTION}(NEW.motion_id); END
"""


# How a database carries a bell's ring to other processes (`carrier`).
NOTIFY = "notify"  # PostgreSQL: NOTIFY on a channel, heard on commit by a listener's connection
TRIGGER = "trigger"  # SQLite: each connection's trigger rings the socket bell (thread/socket_bell.py)


def carrier(connection: BaseDatabaseWrapper) -> str | None:
    """`NOTIFY`, `TRIGGER`, or None where the database carries no ring (the bells poll): the one
    question the bells ask of the database's vendor."""
    if is_postgresql(connection):
        return NOTIFY
    return TRIGGER if is_sqlite(connection) else None


def driver_errors() -> tuple[type[Exception], ...]:
    if psycopg is not None:
        return (psycopg.Error,)
    import psycopg2

    return (psycopg2.Error,)


def notify(connection: BaseDatabaseWrapper, channel: str, payloads: Iterable[str]) -> None:
    """NOTIFY `channel` once per payload, through the caller's connection: delivered when its
    transaction commits (at once in autocommit)."""
    with connection.cursor() as cursor:
        for payload in payloads:
            cursor.execute("SELECT pg_notify(%s, %s)", [channel, payload])


def create_sqlite_bell_trigger(raw: sqlite3.Connection) -> bool:
    """The trigger on one SQLite connection; False when there is no message table yet (a
    connection opened before `migrate`)."""
    try:
        raw.execute(SQLITE_BELL_TRIGGER)
        return True
    except sqlite3.Error:
        return False


class Channel:
    """A listener's own connection, through whichever driver the host's Django uses: psycopg 3
    (the standalone settings), or psycopg2 (a host such as memory-lane that pins psycopg2-binary;
    installing psycopg 3 beside it would switch that host's own database driver)."""

    def __init__(self, params: dict, application_name: str = "motion-runner message bell") -> None:
        kwargs = {
            "dbname": params["NAME"],
            "user": params.get("USER") or None,
            "password": params.get("PASSWORD") or None,
            "host": params.get("HOST") or None,
            "port": params.get("PORT") or None,
            "application_name": application_name,
        }
        if psycopg is not None:
            self.conn: Any = psycopg.connect(autocommit=True, **kwargs)
        else:
            import psycopg2

            self.conn = psycopg2.connect(**{k: v for k, v in kwargs.items() if v is not None})
            self.conn.autocommit = True

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.close()

    def fileno(self) -> int:
        """The connection's socket, for a select loop that waits on it (runner/stop_bell.py)."""
        return self.conn.pgconn.socket if psycopg is not None else self.conn.fileno()

    def close(self) -> None:
        self.conn.close()

    def listen(self, channel: str) -> None:
        self._execute(f"LISTEN {channel}")

    def check(self) -> None:
        """One round trip: a dead connection shows here, not in silence."""
        self._execute("SELECT 1")

    def _execute(self, sql: str) -> None:
        if psycopg is not None:
            self.conn.execute(sql)
            return
        with self.conn.cursor() as cursor:
            cursor.execute(sql)

    def notifies(self, timeout: float) -> Iterator[str]:
        """The payloads heard within `timeout` seconds, each as it comes."""
        if psycopg is not None:
            yield from (note.payload for note in self.conn.notifies(timeout=timeout))
            return
        if select.select([self.conn], [], [], timeout)[0]:
            self.conn.poll()
            while self.conn.notifies:
                yield self.conn.notifies.pop(0).payload
