"""One way in: "write these lines (or events) from this producer".

The stream API, the transcript importer (local files and memory-lane's posted lines) and the hooks
route hand their lines here as events (a producer's adapter made them) and get back what each line
wrote; the runner's own lines take the same writer (`EventWriter.write_many`). Here, and only here,
a producer's lines are checked against the sessions it may write (`sessions.SessionGuard`), asked
of the record once (`known_ids`, for a producer whose lines are mostly there already), prepared
(built, fitted, redacted: `writer.EventWriter.prepare`), inserted once and announced after commit.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from django.utils import timezone

from ..harnesses.base import Event, EventKind, HarnessAdapter
from ..models import Agent, Message, Motion
from ..record import binding
from .announcing import Announcer
from .fit import BadEvent
from .sessions import (
    MayMove,
    SessionConflict,
    SessionGuard,
    SessionRaced,
    SessionRefused,
    claim_and_read,
    recorded_turn_ends,
)
from .writer import EventWriter, IngestContext, WriteOutcome, event_message_id

log = logging.getLogger(__name__)

T = TypeVar("T")

# What stops a whole post rather than one line of it: nothing of the post is written.
REFUSALS = (SessionRefused, SessionRaced)


def _run(work: Callable[[], T]) -> T:
    return work()


@dataclass(slots=True)
class Line:
    """One line of a producer's, as its adapter read it: the events it says, and Messages the
    adapter built whole (a prompt typed at a terminal). `effort` and `source_file`, when given,
    are the line's own rather than the producer's."""

    index: int
    events: list[Event] = field(default_factory=list)
    built: list[Message] = field(default_factory=list)
    effort: str = ""
    source_file: str | None = None


@dataclass
class Written:
    """What a producer's lines wrote: Messages new and already there, which lines wrote a new
    one (each Message counted for the first line that said it), and which could not be read."""

    imported: int = 0
    skipped: int = 0
    messages: list[Message] = field(default_factory=list)
    wrote: set[int] = field(default_factory=set)
    errors: list[tuple[int, Exception]] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # each error as the producer told it
    turn_end: Event | None = None

    @property
    def failed(self) -> set[int]:
        return {index for index, _ in self.errors}


class Producer:
    """Who writes: a writer's context (its Motion, agent, source, session) and what it may do.

    `guard`: the sessions a key's post may write lines of (none: a transcript's lines are the
    file's session's, trusted as the importer found them). `ask_known`: ask the record which of
    the lines' Messages it holds, once, and skip building those (a re-post's common case).
    `claims_sessions`: whether an init line claims its session (not for a session no Motion has).
    `retry`: how the insert is run (the stream API runs it again after a deadlock)."""

    def __init__(
        self,
        context: IngestContext,
        *,
        guard: SessionGuard | None = None,
        ask_known: bool = False,
        claims_sessions: bool = True,
        retry: Callable[[Callable[[], WriteOutcome]], WriteOutcome] = _run,
    ):
        self.writer = EventWriter(context)
        self.guard = guard
        self.ask_known = ask_known
        self.claims_sessions = claims_sessions
        self.retry = retry
        # Each Message id's first line in the newest prepare (a repeat counts for that line only).
        self._first_line_of: dict[uuid.UUID, int] = {}

    @property
    def context(self) -> IngestContext:
        return self.writer.ctx

    def prepare(self, lines: Iterable[Line], written: Written) -> list[Message]:
        """Every line's Messages built, fitted and redacted, in order; a line that fails is in
        `written.errors` (what it made before failing is kept), a refusal stops them all."""
        lines = list(lines)
        ids: dict[int, list[uuid.UUID | None]] = {}
        known: set[uuid.UUID] = set()
        if self.ask_known:
            for line in lines:
                ids[line.index] = [event_message_id(event) for event in line.events]
            asked = {
                message_id for line_ids in ids.values() for message_id in line_ids if message_id is not None
            }
            known = binding().known_ids(list(asked)) if asked else set()
        writer, guard, ctx = self.writer, self.guard, self.writer.ctx
        source_file = ctx.source_file
        messages: list[Message] = []
        first_line_of = self._first_line_of = {}
        for line in lines:
            ctx.effort = line.effort
            ctx.source_file = source_file if line.source_file is None else line.source_file
            line_ids = ids.get(line.index)
            try:
                if guard is not None:
                    guard.check(line.events)
                for message in line.built:
                    # Stamped as it is written, in order with the events built around it.
                    message.created_at = timezone.now()
                    messages.append(message)
                    first_line_of.setdefault(message.id, line.index)
                for position, event in enumerate(line.events):
                    if event.kind == EventKind.TURN_END:
                        written.turn_end = event
                    elif event.kind == EventKind.INIT:
                        if guard is not None and guard.on_init(event):
                            continue  # the post's own session, claimed already
                        if not self.claims_sessions:
                            continue
                    message_id = line_ids[position] if line_ids is not None else None
                    if known and message_id in known:
                        continue  # already in the record: the insert would skip it
                    message = writer.prepare(event, message_id)
                    if message is not None:
                        messages.append(message)
                        first_line_of.setdefault(message.id, line.index)
            except REFUSALS:
                raise
            except Exception as exc:  # one line that cannot be read never costs the others
                written.errors.append((line.index, exc))
        ctx.source_file = source_file
        return messages

    def write(self, lines: Iterable[Line]) -> Written:
        """Prepare the lines, insert what is new once, announce it after commit."""
        written = Written()
        messages = self.prepare(lines, written)
        outcome = self.retry(lambda: self.writer.write_many([], prepared=messages))
        written.imported, written.skipped, written.messages = (
            outcome.imported,
            outcome.skipped,
            outcome.messages,
        )
        first_line_of = self._first_line_of
        written.wrote = {
            first_line_of[message.id] for message in outcome.messages if message.id in first_line_of
        }
        return written

    def keep_unclaimed(self, lines: Iterable[Line], session_id: str) -> None:
        """Lines of a session no Motion has: prepared as its claim will read them, handed to the
        record binding alone (memory-lane's keeps them with no Mood; the apps' index waits)."""
        written = Written()
        messages = self.prepare(lines, written)
        for index, exc in written.errors:
            log.info("an unclaimed line %s of session %s could not be read: %s", index, session_id, exc)
        binding().write_unclaimed(messages, self.writer.unindexed, session_id)
        self.writer.unindexed, self.writer.unindexed_at = [], []
        self.writer.redactor.forget()


# The events a producer's reader gathers before they are written: one insert each.
WRITE_BATCH = 500


class LineReader(Protocol):
    """A producer's adapter for its own line format (a transcript's JSONL): each raw line read
    as a Line, and told what a write of its lines did."""

    def read(self, raw: bytes) -> Line | None: ...

    def wrote(self, written: Written) -> None: ...


def write_read(
    producer: Producer, reader: LineReader, raws: Iterable[bytes], *, batch: int = WRITE_BATCH
) -> None:
    """Each raw line read by the producer's reader, written every `batch` events and at the end;
    the reader hears what each write did."""
    pending: list[Line] = []
    said = 0
    for raw in raws:
        line = reader.read(raw)
        if line is None:
            continue
        pending.append(line)
        said += len(line.events) + len(line.built)
        if said >= batch:
            reader.wrote(producer.write(pending))
            pending, said = [], 0
    if pending:
        reader.wrote(producer.write(pending))


def write_stream(
    adapter: HarnessAdapter,
    motion: Motion,
    agent: Agent,
    *,
    harness: str,
    source: str,
    session_id: str,
    lines: list[Any],
    may_move: MayMove,
    retry: Callable[[Callable[[], WriteOutcome]], WriteOutcome] = _run,
) -> Written:
    """A key's post of its harness's own JSON lines: its session claimed (moved here from
    another Motion of its agent's when `may_move` lets it), each line parsed by the harness's
    adapter, its sessions checked, written once and announced as one batch at commit. Raises
    SessionRefused or SessionRaced when the post may not be written at all."""
    newest_end = claim_and_read(session_id, motion, agent, harness, may_move=may_move)
    # No Turn is ever the writer's: every Turn is a launch of the runner's, which reads, ends and
    # prices it from its own harness's stdout. A client's lines pointed at it (or its result
    # stamped on it) would set its cost, its end or its session from outside (issue 20, item 10).
    producer = Producer(
        IngestContext(motion=motion, agent=agent, harness=harness, source=source, session_id=session_id),
        guard=SessionGuard(session_id, motion, agent, harness, may_move),
        ask_known=True,
        retry=retry,
    )
    # On commit, through the one announcer (motion_runner/ingest/announcing.py): a post is one batch.
    producer.writer.announce = Announcer(interval=0.0)
    parser = adapter.new_parser(
        session_id, recorded_ends=recorded_turn_ends(session_id, newest_read=newest_end)
    )
    # The whole batch is parsed first (the parser answers a line's events as a list, so a line
    # that fails here yields none), then what the record already holds is asked in one query: a
    # re-post skips building, fitting and redacting its known Messages.
    parsed: list[Line] = []
    unread: list[tuple[int, Exception]] = []
    for index, line in enumerate(lines):
        if not isinstance(line, dict):
            unread.append((index, BadEvent(f"an event is a JSON object, not a {type(line).__name__}")))
            continue
        try:
            parsed.append(Line(index, parser.feed(line)))
        except Exception as exc:
            unread.append((index, exc))
    written = producer.write(parsed)
    written.errors = sorted(unread + written.errors, key=lambda error: error[0])
    return written


def unreadable_reason(harness: str, index: int, line: Any, exc: Exception) -> str:
    """What a stream post's answer says of its line `index`, which it could not read."""
    if isinstance(exc, (BadEvent, SessionConflict)):
        return str(exc)
    # An adapter bug on one line must not lose the rest; it is logged for whoever fixes it.
    log.error("stream: adapter %s failed on event %s", harness, index, exc_info=exc)
    return f"could not read a {line.get('type', '?') if isinstance(line, dict) else '?'} event: {exc}"
