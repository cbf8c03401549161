"""Waking long-poll readers when a Message is written: PostgreSQL LISTEN/NOTIFY, one listener
per process, fanned out to the requests that wait.

A statement-level trigger on the message table (migration 0007) NOTIFYs `motion_messages`
with the slug of each Motion a statement wrote to. NOTIFY is delivered on commit, so a reader
hears of a row only once it is readable, a rolled-back insert rings nothing, and every write
path (the runner, the API, hooks, the importer, watches, the admin) rings without code of its
own. One daemon thread per process holds a dedicated connection that LISTENs, and sets the
`threading.Event` of each request waiting on that Motion: a waiting request costs no queries
until something is written.

On SQLite, which has no NOTIFY, the same bell rings over Unix datagram sockets
(motion_runner/thread/socket_bell.py): a trigger on each connection rings after each committed write.

When the channel is down (the listener lost its connection or its socket) waiters fall back to a slow poll (`MESSAGES_FALLBACK_POLL_SECONDS`); each
change of the channel's state wakes every waiter once, so nothing written meanwhile waits for
the next poll.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from django.db import connection, transaction

try:
    import psycopg
except ImportError:  # a host on psycopg2 alone (memory-lane pins psycopg2-binary): listened to below
    psycopg = None

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..sql.channels import MESSAGES, NOTIFY, TRIGGER, Channel, carrier, driver_errors, notify
from . import socket_bell

log = logging.getLogger(__name__)

CHANNEL = MESSAGES
# How long the listener waits for a notification before it checks its connection and stop flag.
LISTEN_HEARTBEAT_SECONDS = 1.0
RECONNECT_MAX_SECONDS = 30.0

T = TypeVar("T")


class MessageBell:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[threading.Event]] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._closing = threading.Event()  # the process is stopping: no reader waits (close_readers)
        self.rings = 0  # notifications heard: for tests and the benchmark
        self._slots: threading.BoundedSemaphore | None = None
        # Each ring's number, per Motion, and of the last ring for everyone: what a reader woke
        # to, and what an answer read after (`rung`).
        self._count = 0
        self._rang: dict[str, int] = {}
        self._rang_everyone = 0

    # --- the readers' side -------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    def wait(self, motion: str, has_news: Callable[[], bool], timeout: float) -> bool:
        """Until `has_news()` (one query) says something is there (True), or `timeout` passes
        (False). It is asked once before waiting, then only when the bell rings for this
        Motion, or at the fallback pace while the channel is down."""
        deadline = time.monotonic() + timeout
        event = threading.Event()
        self.start()
        with self._lock:
            self._waiters.setdefault(motion, set()).add(event)
        try:
            # Registered before this first look: a row committed between the look and the
            # wait still rings our event, so no wake-up is lost.
            if has_news():
                return True
            release_connection()
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closing.is_set():
                    return False
                if self.listening:
                    rang = event.wait(remaining)
                else:
                    rang = event.wait(min(remaining, settings.MESSAGES_FALLBACK_POLL_SECONDS))
                    rang = rang or time.monotonic() < deadline
                if not rang:
                    return False
                event.clear()
                with self.slot():
                    if has_news():
                        return True
                release_connection()
        finally:
            with self._lock:
                waiting = self._waiters.get(motion)
                if waiting is not None:
                    waiting.discard(event)
                    if not waiting:
                        del self._waiters[motion]

    def slot(self) -> threading.BoundedSemaphore:
        """Held by a woken reader while it queries: a message in a Motion a thousand people
        watch wakes a thousand requests at once, and PostgreSQL would refuse most of their
        connections (100 by default); they take turns instead."""
        if self._slots is None:
            with self._lock:
                if self._slots is None:
                    self._slots = threading.BoundedSemaphore(settings.MESSAGES_WOKEN_READERS_AT_ONCE)
        return self._slots

    def rung(self, motion: str) -> int:
        """The number of the last ring heard for this Motion (or for everyone). Everything a
        ring announced was committed before it rang: a read begun once `rung` says n sees all
        that rings up to n announced."""
        with self._lock:
            return max(self._rang.get(motion, 0), self._rang_everyone)

    def ring(self, motion: str) -> None:
        with self._lock:
            self._count += 1
            self._rang[motion] = self._count
            events = list(self._waiters.get(motion, ()))
        for event in events:
            event.set()

    def ring_everyone(self) -> None:
        with self._lock:
            self._count += 1
            self._rang_everyone = self._count
            self._rang.clear()  # the ring for everyone is newer than each of them
            events = [event for waiting in self._waiters.values() for event in waiting]
        for event in events:
            event.set()

    def close_readers(self) -> None:
        """The process is stopping: every waiting reader answers now (nothing new, its client polls
        again) and none waits again, so a web worker's graceful exit waits for no long poll's 20 s
        (issue 43.6: bin/serve's Ctrl-C with a tab open outlived the grace and was killed)."""
        self._closing.set()
        with self._lock:
            events = [event for waiting in self._waiters.values() for event in waiting]
        for event in events:
            event.set()

    def waiting(self, motion: str | None = None) -> int:
        """How many requests wait on the bell: on `motion`'s, or on any."""
        with self._lock:
            if motion is not None:
                return len(self._waiters.get(motion, ()))
            return sum(len(waiting) for waiting in self._waiters.values())

    # --- the listener ----------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None or not settings.MESSAGES_LISTEN:
            return
        carried_by = carrier(connection)
        if carried_by is None:
            return
        with self._lock:
            if self._thread is not None:
                return
            self._stop.clear()
            params = dict(connection.settings_dict)
            target = self._listen if carried_by == NOTIFY else self._listen_socket
            self._thread = threading.Thread(target=target, args=(params,), name="message-bell", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Close the listener (tests, before the test database is dropped)."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        thread.join(timeout=LISTEN_HEARTBEAT_SECONDS * 5)
        with self._lock:
            self._thread = None

    def _connect(self, params: dict) -> Channel:
        return Channel(params)

    def _listen(self, params: dict) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                with self._connect(params) as channel:
                    channel.listen(CHANNEL)
                    self._set_listening(True)
                    backoff = 0.5
                    while not self._stop.is_set():
                        for payload in channel.notifies(LISTEN_HEARTBEAT_SECONDS):
                            self.rings += 1
                            self.ring(payload)
                        channel.check()  # a dead connection shows here, not in silence
            except (*driver_errors(), OSError) as exc:
                if not self._stop.is_set():
                    log.warning("message bell: the channel is down (%s); readers poll until it is back", exc)
            self._set_listening(False)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, RECONNECT_MAX_SECONDS)

    def _listen_socket(self, params: dict) -> None:
        def heard(motion: str) -> None:
            self.rings += 1
            self.ring(motion)

        folder = socket_bell.folder_for(params["NAME"])
        backoff = 0.5
        while not self._stop.is_set():
            try:
                socket_bell.listen(folder, heard, self._stop, self._set_listening)
            except OSError as exc:
                log.warning("message bell: no socket in %s (%s); readers poll until there is", folder, exc)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, RECONNECT_MAX_SECONDS)

    def _set_listening(self, up: bool) -> None:
        if up == self.listening:
            return
        # Anything written while the state changed may not have rung: everyone looks once. Going
        # down, after `listening` is cleared (the woken fall back to polling); coming up, before
        # it is set, so that once `listening` says so, that ring is behind every waiter.
        if up:
            self.ring_everyone()
            self._listening.set()
        else:
            self._listening.clear()
            self.ring_everyone()


class SharedAnswers:
    """One read for the readers woken together: a message in a Motion a thousand people watch
    wakes a thousand long polls asking the same thing (the same cursor and filters); the first
    to read answers the others (`answer`), instead of each reading the same page again.

    An answer read once the bell had rung n serves a reader woken by rings up to n: all that they
    announced was committed before the read began. Only while the bell listens: without it, rows
    are written without a ring and no answer is kept. A Motion's answers read after an older ring
    go when a newer one is kept (each cursor is a new question). Not authorisation: each request
    checks its own access before it asks."""

    KEPT = 256  # questions kept at most; past it, the store starts again

    def __init__(self, bell: MessageBell) -> None:
        self._bell = bell
        self._lock = threading.Lock()
        self._answers: dict[Hashable, tuple[str, int, Any]] = {}  # question: motion, ring, answer
        self._reading: dict[Hashable, threading.Lock] = {}

    def answer(self, motion: str, question: Hashable, woke: int, read: Callable[[], T]) -> T:
        """The answer to `question` read after the ring numbered `woke`, or `read()`'s."""
        with self._lock:
            if len(self._reading) >= self.KEPT and question not in self._reading:
                self._reading.clear()  # only fewer readers share a read, for a moment
            reading = self._reading.setdefault(question, threading.Lock())
        with reading:  # the others woken with this reader wait for its answer
            with self._lock:
                kept = self._answers.get(question)
            if kept is not None and woke <= kept[1]:
                return kept[2]
            listening = self._bell.listening
            before = self._bell.rung(motion)
            answer = read()
            if listening and self._bell.listening:
                with self._lock:
                    older = [q for q, (m, n, _) in self._answers.items() if m == motion and n < before]
                    for stale in older:
                        del self._answers[stale]
                        if stale != question:  # this one's lock is held, and waited on
                            self._reading.pop(stale, None)
                    if len(self._answers) >= self.KEPT:
                        self._answers.clear()
                    self._answers[question] = (motion, before, answer)
            return answer


def release_connection() -> None:
    """A waiting request holds no database connection: a thousand readers would otherwise need
    a thousand (PostgreSQL allows 100 by default). The next query opens one again. Not inside a
    transaction (a test's, or ATOMIC_REQUESTS), whose work would be lost."""
    if not connection.in_atomic_block:
        connection.close()


def ring_for(motion_id: str) -> None:
    """Wake the readers waiting on a Motion although no Message was written (someone started
    typing): a NOTIFY on the bell's channel, heard by every process on commit; on SQLite a ring on
    the bell's sockets; on anything else, this process's waiters only."""
    carried_by = carrier(connection)
    if carried_by == NOTIFY:
        notify(connection, CHANNEL, [str(motion_id)])
    elif carried_by == TRIGGER and settings.MESSAGES_LISTEN:
        socket_bell.broadcast(socket_bell.folder_for(connection.settings_dict["NAME"]), [str(motion_id)])
        bell.ring(str(motion_id))
    else:
        bell.ring(str(motion_id))


bell = MessageBell()
shared_answers = SharedAnswers(bell)


def ring_on_commit(motion_id: str) -> None:
    """`ring_for` once the caller's transaction commits (at once outside one): a turn that
    started, changed what it does or ended, a stop, a scram. Readers then read what was
    committed. A ring that fails costs a moment, never the caller's work: the readers' next
    poll shows it."""

    def ring() -> None:
        try:
            ring_for(motion_id)
        except Exception as exc:  # the database away (the runner keeps going without it)
            log.warning("message bell: could not ring for %s (%s)", motion_id, exc)

    transaction.on_commit(ring)
