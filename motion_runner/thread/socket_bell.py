"""The message bell on the embedded default (SQLite), which has no LISTEN/NOTIFY: a Unix datagram
socket per listening process, in a folder named after the database file.

Each SQLite connection gets a temporary trigger that calls a Python function for every message
inserted (`install`); the Motions written are rung once the write is committed (after the
statement in autocommit, on commit inside a transaction), so a reader rung finds the row. The
ring is one datagram to each socket in the folder (`broadcast`): every web process's listener
(`listen`, started by MessageBell) hears it and wakes its waiters. A socket whose process is
gone refuses the datagram and is removed. Nothing here needs PostgreSQL, Redis or a server.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import socket
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ..sql.channels import SQLITE_BELL_FUNCTION, create_sqlite_bell_trigger

log = logging.getLogger(__name__)

MAX_DATAGRAM = 8192
_pending = threading.local()  # the Motions this thread's connection wrote, not yet rung


def folder_for(database: str) -> Path:
    """The folder of one database's bell: every process on that file shares it. Under the
    system's temporary folder (a socket's path is at most 107 bytes)."""
    digest = hashlib.sha256(os.path.abspath(database).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"motion-runner-bell-{digest}"


def broadcast(folder: Path, motions: Iterable[str]) -> None:
    payload = "\n".join(sorted(set(motions))).encode()[:MAX_DATAGRAM]
    if not payload:
        return
    try:
        paths = list(folder.glob("*.sock"))
    except OSError:
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
        sender.setblocking(False)
        for path in paths:
            try:
                sender.sendto(payload, str(path))
            except (ConnectionRefusedError, FileNotFoundError):
                path.unlink(missing_ok=True)  # its process is gone
            except OSError as exc:  # a full queue: that reader polls at the fallback pace
                log.debug("message bell: %s did not take a ring (%s)", path.name, exc)


def listen(
    folder: Path, on_ring: Callable[[str], None], stop: threading.Event, up: Callable[[bool], None]
) -> None:
    """Hears rings until `stop` is set; `up(True)` once the socket is bound."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{os.getpid()}-{secrets.token_hex(4)}.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(1.0)  # how often the stop flag is looked at
        up(True)
        try:
            while not stop.is_set():
                try:
                    payload = sock.recv(MAX_DATAGRAM)
                except TimeoutError:
                    continue
                for motion in payload.decode(errors="replace").splitlines():
                    on_ring(motion)
        finally:
            up(False)
            path.unlink(missing_ok=True)


def install(connection) -> None:
    """On a new SQLite connection (Django's `connection_created`): the function the trigger
    calls, the trigger, and the wrapper that rings after each committed write."""
    connection.connection.create_function(SQLITE_BELL_FUNCTION, 1, _written)
    connection.motion_bell_trigger = _create_trigger(connection.connection)
    if _ring_after not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, _ring_after)


def _create_trigger(raw) -> bool:
    if created := create_sqlite_bell_trigger(raw):
        return created
    log.debug("message bell: no trigger on this connection yet (no message table: before `migrate`)")
    return False


def _written(motion_id) -> None:
    motions = getattr(_pending, "motions", None)
    if motions is None:
        motions = _pending.motions = set()
    motions.add(str(motion_id))


def _ring_after(execute, sql, params, many, context):
    connection = context["connection"]
    if not getattr(connection, "motion_bell_trigger", True) and sql.lstrip()[:6].upper() == "INSERT":
        # Opened before the table was made (migrate on this very connection): add it now.
        connection.motion_bell_trigger = _create_trigger(connection.connection)
    result = execute(sql, params, many, context)
    if getattr(_pending, "motions", None):
        if connection.in_atomic_block:
            # Once per transaction: a rolled-back one drops its callback, and the next registers anew.
            flush = getattr(_pending, "flush", None)
            if flush is None or flush[0] is not connection:
                flush = _pending.flush = (connection, lambda: _flush(connection))
            if not any(entry[1] is flush[1] for entry in connection.run_on_commit):
                connection.on_commit(flush[1])
        else:
            _flush(connection)
    return result


def _flush(connection) -> None:
    motions, _pending.motions = getattr(_pending, "motions", set()), set()
    if motions:
        broadcast(folder_for(connection.settings_dict["NAME"]), motions)
