"""A running turn's events, written as they come: the batch per burst, the backlog while the
database is away, the lease kept, a stop heard (TurnRun: the listener run_streaming tells)."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import TypeVar

from django.db import DatabaseError, OperationalError, connection, transaction
from django.utils import timezone

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..harnesses import Event, EventKind, StreamParser
from ..harnesses.base import json_object
from ..ingest.announcing import Announcer
from ..ingest.sessions import SessionConflict
from ..ingest.writer import EventWriter
from ..lib.ids import system_uuid
from ..models import Turn, TurnStatus
from ..sql.locks import bound_transaction
from ..thread.bell import ring_on_commit
from .db_retry import database_answers, is_outage
from .live_text import LiveText
from .monitor import TurnMonitor
from .process import Listener
from .stop_bell import StopBell

log = logging.getLogger(__name__)


T = TypeVar("T")

# A write transaction idle this long (its runner frozen, SIGSTOP, between two statements) is ended
# by PostgreSQL (idle_in_transaction_session_timeout), its locks and uncommitted rows released, so
# the sweep's recovery of the same lines never waits on it (docs/concurrency.md). A live runner's
# batch is milliseconds between statements.
WRITE_IDLE_SECONDS = 10.0


@dataclass
class TurnRun(Listener):
    turn: Turn
    writer: EventWriter
    parser: StreamParser | None = None
    on_event: Callable[[Event], None] | None = None
    monitors: list[TurnMonitor] = field(default_factory=list)
    turn_end: Event | None = None
    bad_lines: int = 0
    line_no: int = 0
    # Set when writing an event failed: the harness is stopped (its output would have
    # nowhere to go) and the turn fails with this, instead of staying "running".
    failure: str | None = None
    # Events parsed but not yet stored because the database did not answer: kept in order and
    # written first once it does (a blip of a few seconds loses nothing and stops nothing).
    backlog: list[Event] = field(default_factory=list)
    outage_since: float | None = None
    # The failure is a stop, the outage bound or a lost lease: what the harness printed before its
    # stop is still kept (and written once the database is back), only nothing more is asked of it.
    keep_printed: bool = False
    next_try: float = 0.0
    lease_renewed: float = field(default_factory=time.monotonic)
    # Every Message announced once, after commit; the batches within NOTE_SECONDS together.
    announcer: Announcer = field(default_factory=Announcer)
    # A person (or a scram) stopped it: `failure` holds who, and the turn ends killed, not failed.
    stopped: bool = False
    # The monitor whose stop_reason stopped the harness, if one did.
    stopped_by: TurnMonitor | None = None
    # Its ear for a person's stop or a scram (runner/stop_bell.py), selected on with the pipes.
    bell: StopBell | None = None
    # Its words as they are typed, for the page alone (runner/live_text.py).
    live: LiveText | None = None
    # What one streamed event says its API message cost (the adapter's streamed_cost), and the
    # most each message's events said so far: a turn that ends without a result line is priced
    # by these (ending.cost_without_result), each message once, its output counted where the
    # stream gave it (Claude Code's message_delta), which the stored rows never hold.
    price: Callable[[Event], Decimal | None] | None = None
    streamed: dict[str, Decimal] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.writer.announce = self.announcer
        if self.live is None:
            self.live = LiveText(self.turn.pk, self.turn.motion_id)

    def on_start(self, pid: int) -> None:
        # Its own session: the group id is the leader's pid (what a reaper kills).
        Turn.objects.filter(pk=self.turn.pk).update(
            pid=pid, pgid=pid, runner_host=socket.gethostname(), activity=f"{self.turn.agent.name}: starting…"
        )
        ring_on_commit(self.turn.motion_id)

    def ended(self) -> bool:
        """Its last word said, and no background task of its own still running."""
        return self.turn_end is not None and not getattr(self.parser, "background_tasks", None)

    def on_lines(self, lines: list[bytes]) -> None:
        """The lines of one read. Lines that arrived together are parsed, then written in
        one transaction (one commit a burst). While the database is away they wait in memory
        (`drain`). If a write fails otherwise, each event is written on its own, so what can
        be kept is kept; an event that cannot be written ends the turn, and the error never
        escapes the runner."""
        if self.failure and not self.keep_printed:
            return
        events = self.live.take([event for line in lines for event in self.events_for_line(line)])
        self.live.show()  # before the batch is written: a final Message replaces the text
        for event in events:
            self.observe(event)
        self.backlog.extend(events)
        if self.stop_reason() is None:
            self.drain()
        # else: a guard tripped (or a stop came): the harness is killed first and written after,
        # so it makes no calls while this batch is written (keep_what_it_said stores the rest).

    def on_tick(self) -> str | None:
        """The select loop's clock (twice a second): retry buffered writes, renew the lease; a
        failure (the outage outlasted its bound, the lease was taken) stops the harness."""
        if self.backlog and not self.failure:
            self.drain()
        self.live.show()
        if self.outage_since is not None:
            self.check_outage_bound(time.monotonic())
        if self.outage_since is None:  # its receivers query: what waits, waits for the database
            self.announcer.flush_due()
        self.keep_lease()
        return self.failure

    def database_away(self, exc: BaseException | str) -> None:
        """The database dropped us: reconnect on the next try, after a back-off (0.1 s doubling
        to 2 s), and give up once it has been away longer than RUNNER_DB_OUTAGE_SECONDS."""
        now = time.monotonic()
        try:
            connection.close()  # the next query opens a fresh connection
        except DatabaseError:
            pass
        if self.outage_since is None:
            self.outage_since = now
            log.warning("turn %s: the database is away (%s); keeping lines in memory", self.turn.pk, exc)
        away = now - self.outage_since
        self.next_try = now + min(2.0, 0.1 * 2 ** min(5, int(away)))
        self.check_outage_bound(now)

    def check_outage_bound(self, now: float) -> None:
        """The bound, on this runner's own clock (every tick), not only when a query fails: a try
        may wait in the pool's getconn far longer than the bound."""
        away = now - self.outage_since if self.outage_since is not None else 0.0
        if away > settings.RUNNER_DB_OUTAGE_SECONDS and not self.failure:
            self.failure = f"the database did not answer for {away:.0f} s, so the harness was stopped"
            self.keep_printed = True

    def may_try(self) -> bool:
        """Whether to ask the database now: not while backing off, and during an outage only
        once a probe on a connection of its own answers (the pool would hold the try)."""
        if self.outage_since is None:
            return True
        if time.monotonic() < self.next_try:
            return False
        if not database_answers():
            self.database_away("no answer yet")
            return False
        return True

    def drain(self) -> None:
        """Write the backlog, oldest first, unless we are backing off from an outage."""
        if not self.backlog or not self.may_try():
            return
        try:
            self.store_backlog()
            self.flush_activity()
        except DatabaseError as exc:
            if is_outage(exc):
                self.database_away(exc)
                return
            raise
        self.database_back()

    def flush_activity(self, *, force: bool = False) -> None:
        """The activity line written (EventWriter.flush_activity); a new one rings the thread."""
        before = self.writer.flushed_activity
        self.writer.flush_activity(force=force)
        if self.writer.flushed_activity != before:
            ring_on_commit(self.turn.motion_id)

    def database_back(self) -> None:
        if self.outage_since is not None:
            log.warning(
                "turn %s: the database is back after %.1f s",
                self.turn.pk,
                time.monotonic() - self.outage_since,
            )
        self.outage_since = None

    def store_backlog(self) -> None:
        """Write the whole backlog now; an outage error is raised with the backlog kept."""
        if self.backlog:
            events = list(self.backlog)
            self.write_events(events)
            del self.backlog[: len(events)]

    def keep_lease(self) -> None:
        """Renew the lease (a third of it is left to spare). The row no longer running means the
        turn was reclaimed as lost while we could not renew: stop, someone else ended it."""
        if time.monotonic() - self.lease_renewed < settings.RUNNER_LEASE_SECONDS / 3:
            return
        if not self.may_try():
            return
        now = timezone.now()
        try:
            held = Turn.objects.filter(pk=self.turn.pk, status=TurnStatus.RUNNING).update(
                lease_until=now + timedelta(seconds=settings.RUNNER_LEASE_SECONDS), heartbeat_at=now
            )
        except DatabaseError as exc:
            if is_outage(exc):
                self.database_away(exc)
                return
            raise
        self.lease_renewed = time.monotonic()
        if not self.backlog:  # with a backlog, the database is back once it is written
            self.database_back()
        if not held and not self.failure:
            self.failure = "its lease lapsed and the turn was ended as lost"
            self.keep_printed = True
        if held and not self.failure and (reason := self.stop_asked()):
            # A ring lost with a dropped connection: the flag stays, and is read here.
            self.stopped_by_someone(reason)

    def stop_asked(self) -> str | None:
        """Someone stopped this turn (runner/stop_bell.py): the reason the thread gives."""
        row = Turn.objects.filter(pk=self.turn.pk).values("stop_requested_at", "stopped_by").first()
        if row is None or row["stop_requested_at"] is None:
            return None
        return f"{row['stopped_by'] or 'someone'} stopped it"

    def on_ring(self) -> str | None:
        """The bell: a stop was rung for this turn (once at the start too)."""
        try:
            reason = self.stop_asked()
        except DatabaseError as exc:
            if is_outage(exc):
                self.database_away(exc)
                return None
            raise
        if reason and not self.failure:
            self.stopped_by_someone(reason)
        return reason

    def stopped_by_someone(self, reason: str) -> None:
        """A person's stop or a scram: the harness is killed, but what it printed before the kill
        (drained from its pipe after it) was spent, so it is stored and priced all the same."""
        self.failure = reason
        self.stopped = True
        self.keep_printed = True

    def write_events(self, events: list[Event]) -> None:
        try:
            with transaction.atomic():
                bound_transaction(connection, idle_seconds=WRITE_IDLE_SECONDS)
                self.write_many(events)
        except DatabaseError as exc:
            if is_outage(exc):
                raise
            self.write_one_by_one(events)
        except Exception:
            self.write_one_by_one(events)

    def write_one_by_one(self, events: list[Event]) -> None:
        """Each event in its own transaction, so one that cannot be written costs no other."""
        log.exception(
            "turn %s: a batch of %d events could not be written together", self.turn.pk, len(events)
        )
        for event in events:
            try:
                with transaction.atomic():
                    bound_transaction(connection, idle_seconds=WRITE_IDLE_SECONDS)
                    self.write(event)
            except SessionConflict as exc:
                self.failure = f"its session is not this Motion's: {exc}"
            except DatabaseError as exc:
                if is_outage(exc):
                    raise
                log.exception("turn %s: could not write an event", self.turn.pk)
                self.failure = f"the runner could not write an event ({type(exc).__name__}: {exc})"
            except Exception as exc:
                log.exception("turn %s: could not write an event", self.turn.pk)
                self.failure = f"the runner could not write an event ({type(exc).__name__}: {exc})"

    def handle_line(self, line: bytes) -> None:
        """One line, written and observed (for callers outside the streaming loop)."""
        self.on_lines([line])

    def events_for_line(self, line: bytes) -> list[Event]:
        self.line_no += 1
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return []
        try:
            obj = json_object(text)
        except ValueError as exc:
            self.bad_lines += 1
            return [
                Event(
                    EventKind.ERROR,
                    uuid=system_uuid("bad-line", self.turn.pk, self.line_no),
                    text=f"the harness printed a line that is not a JSON event ({exc}): {text[:300]}",
                    raw={"line": text[:4000]},
                )
            ]
        try:
            return self.parser.feed(obj)
        except Exception as exc:  # an adapter bug must not lose the rest of the turn
            log.exception("adapter failed on a line of turn %s", self.turn.pk)
            return [
                Event(
                    EventKind.ERROR,
                    uuid=system_uuid("adapter-error", self.turn.pk, self.line_no),
                    text=f"could not read a {obj.get('type', '?')} line: {exc}",
                    raw=obj,
                )
            ]

    def write(self, event: Event) -> None:
        self.write_many([event])

    def write_many(self, events: list[Event]) -> None:
        """One INSERT … ON CONFLICT DO NOTHING for the batch (ingest.EventWriter.write_many)."""
        outcome = self.writer.write_many(events)
        if outcome.turn_end is not None:
            self.turn_end = outcome.turn_end
        for error in outcome.errors:  # a malformed event is said, never fatal to the turn
            self.writer.write_many(
                [
                    Event(
                        EventKind.ERROR,
                        uuid=system_uuid("bad-event", self.turn.pk, error),
                        text=f"an event could not be stored: {error}",
                    )
                ]
            )

    def observe(self, event: Event) -> None:
        if self.price is not None and event.message_id and (cost := self.price(event)) is not None:
            self.streamed[event.message_id] = max(self.streamed.get(event.message_id, cost), cost)
        for monitor in self.monitors:
            monitor.observe(event)
        if self.on_event:
            self.on_event(event)

    def emit(self, event: Event) -> None:
        if not self.live.take([event]):
            return
        self.live.show()
        self.observe(event)
        self.backlog.append(event)
        self.drain()

    def stop_reason(self) -> str | None:
        if self.failure:
            return self.failure
        for monitor in self.monitors:
            if monitor.stop_reason:
                if self.stopped_by is None:  # the first to answer is the one that stops it
                    self.stopped_by = monitor
                return monitor.stop_reason
        return None


def while_database_away(run: TurnRun, work: Callable[[], T]) -> T:
    """Run `work` (idempotent: conditional updates, messages with fixed ids), again after a
    back-off while the database is away. The harness is done by now and what it printed is held
    here, so this waits for the database as long as RUNNER_END_RETRY_SECONDS, renewing the lease
    first each time it answers; past that the error is raised, the lease lapses and the sweep
    ends the turn (recovering what it can from a transcript): it never stays `running`."""
    give_up = time.monotonic() + max(settings.RUNNER_END_RETRY_SECONDS, settings.RUNNER_DB_OUTAGE_SECONDS)
    while True:
        if not run.may_try():
            if time.monotonic() > give_up:
                raise OperationalError(f"turn {run.turn.pk}: the database did not come back")
            time.sleep(max(0.05, run.next_try - time.monotonic()))
            continue
        try:
            run.keep_lease()
            return work()
        except DatabaseError as exc:
            if not is_outage(exc) or time.monotonic() > give_up:
                raise
            run.database_away(exc)
