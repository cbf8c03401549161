"""Stopping a running turn from anywhere: a flag on its row, then a ring its runner hears.

A person's stop (or a scram) sets `Turn.stop_requested_at` and NOTIFYs `turn_stop` with the
turn's id in the same transaction, so the ring is heard only once the flag is readable. Each
running turn's runner LISTENs on its own connection and puts that connection's socket in the
select loop that reads the harness (runner/process.py), so a ring wakes it at once: no poll.
The lease renewal reads the flag too, so a ring lost with a dropped connection still stops the
turn within a third of the lease. A dropped connection (a PostgreSQL restart, its backend
terminated) is reopened by the select loop (`reopen`, at most every REOPEN_SECONDS), which then
reads the flag once for a ring lost meanwhile: later rings are heard at once again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from django.db import connection

from ..sql.channels import NOTIFY, TURN_STOP, Channel, carrier, driver_errors, notify

log = logging.getLogger(__name__)

CHANNEL = TURN_STOP
# A bell whose connection dropped tries to listen again at most this often.
REOPEN_SECONDS = 1.0


def ring_stop(turn_ids: Iterable[int]) -> None:
    """NOTIFY the runners of these turns (delivered when the caller's transaction commits)."""
    if carrier(connection) != NOTIFY:
        return  # no NOTIFY: the lease renewal reads the flag
    notify(connection, CHANNEL, [str(turn_id) for turn_id in turn_ids])


class StopBell:
    """One running turn's ear: `fileno()` for the select loop, `heard()` once it is readable."""

    def __init__(self, turn_id: int) -> None:
        self.turn_id = str(turn_id)
        # Through whichever driver the host's Django uses (sql.channels.Channel): psycopg 3, or a
        # host's psycopg2 (memory-lane pins psycopg2-binary).
        self.conn: Channel | None = None
        self.settings_dict = dict(connection.settings_dict)
        self.carried = carrier(connection) == NOTIFY  # else the lease renewal alone reads the flag
        self.next_try = 0.0
        if self.carried:
            self.open()

    def open(self) -> bool:
        """Listen on a connection of its own; False (and the lease renewal reads the flag) if the
        database does not answer now."""
        self.next_try = time.monotonic() + REOPEN_SECONDS
        try:
            self.conn = Channel(self.settings_dict, f"motion-runner stop bell {self.turn_id}")
            self.conn.listen(CHANNEL)
        except driver_errors() as exc:  # the lease renewal still reads the flag
            log.warning(
                "turn %s: cannot listen for a stop (%s); the lease renewal reads it", self.turn_id, exc
            )
            self.close()
            return False
        return True

    def reopen(self) -> bool:
        """Its connection dropped (or never opened): listen anew, at most every REOPEN_SECONDS.
        True when this call opened it: the caller selects on `fileno()` again and reads the flag
        once, for a ring lost while it was away."""
        if not self.carried or self.conn is not None or time.monotonic() < self.next_try:
            return False
        if not self.open():
            return False
        log.info("turn %s: the stop bell listens again", self.turn_id)
        return True

    def fileno(self) -> int | None:
        return self.conn.fileno() if self.conn is not None else None

    def heard(self) -> bool:
        """Read what arrived; True if one of the rings was for this turn."""
        if self.conn is None:
            return False
        try:
            return any(payload == self.turn_id for payload in self.conn.notifies(timeout=0))
        except driver_errors() as exc:
            log.warning("turn %s: the stop bell's connection dropped (%s)", self.turn_id, exc)
            self.close()
            return True  # look at the flag once; the lease renewal looks after that

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except driver_errors():
                pass
            self.conn = None
