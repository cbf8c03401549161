"""The one write path from harness events to Messages.

The runner, the stream API and the transcript importer all write through EventWriter, so
the same event arriving from any of them, in any order, or twice at once, lands once: a
Message's id is the harness line's own uuid (or a uuid derived from stable harness ids), and
the insert is a conditional one that leaves an existing row alone.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from .display import HOOK_STOP_TEXT, summarize_input, turn_end_text
from .harnesses.base import Event, EventKind
from .message_fit import BadEvent, announce, fit_message, text_limit  # noqa: F401 (importable from here)
from .models import Agent, Kind, Message, Motion, Turn
from .record import binding

# Session routing (sessions.py), display text (display.py) and the insert (record/) moved out of
# this module; SessionConflict and latest_session stay importable from here for the apps' modules.
from .sessions import SessionConflict, claim_session, latest_session  # noqa: F401
from .signals import message_created  # declared in the catalogue, with its arguments

log = logging.getLogger(__name__)


TOOL_RESULT_TEXT_LIMIT = 64 * 1024
RAW_LOG_LIMIT = 200


def _tokens(usage: dict[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return int(value) if isinstance(value, (int, float)) else None


@dataclass
class IngestContext:
    motion: Motion
    agent: Agent | None
    harness: str
    source: str
    turn: Turn | None = None
    session_id: str = ""
    effort: str = ""
    cwd: str = ""
    source_file: str = ""
    # The transcript importer and the hooks endpoint: an event already written under another
    # id (a hook knows a tool call's tool_use id, never its transcript line uuid) is matched
    # on (session, kind, tool id), and what only this copy knows fills the older one's blanks.
    match_twins: bool = False
    fill_in: bool = False


@dataclass
class WriteOutcome:
    imported: int = 0
    skipped: int = 0
    turn_end: Event | None = None
    messages: list[Message] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# Columns the transcript knows better than a live stream or a hook: filled in when blank.
FILL_IN_FIELDS = (
    "model_backend",
    "effort",
    "cwd",
    "harness_message_id",
    "stop_reason",
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cost_usd",
)


@contextmanager
def session_lock(session_id: str):
    """Serialize the writers that match twins (hooks, importer) on one session.

    Their check-then-insert is safe only one at a time; on PostgreSQL a transaction-scoped
    advisory lock does it, SQLite serializes writers by itself.
    """
    with transaction.atomic():
        if session_id and connection.vendor == "postgresql":
            key = int.from_bytes(hashlib.sha256(session_id.encode()).digest()[:8], "big", signed=True)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
        yield


class EventWriter:
    # The activity line and heartbeat are written when the activity changes, or at most
    # this often: one UPDATE per event would cost as much as the event itself.
    HEARTBEAT_SECONDS = 1.0

    def __init__(self, context: IngestContext):
        self.ctx = context
        self.activity = ""
        self.flushed_activity = ""
        self.unflushed_events = 0
        self.flushed_at = 0.0

    def flush_activity(self, *, force: bool = False) -> None:
        turn = self.ctx.turn
        if turn is None or not self.unflushed_events:
            return
        now = time.monotonic()
        changed = self.activity != self.flushed_activity
        if not (force or changed or now - self.flushed_at >= self.HEARTBEAT_SECONDS):
            return
        Turn.objects.filter(pk=turn.pk).update(
            activity=self.activity, heartbeat_at=timezone.now(), events=F("events") + self.unflushed_events
        )
        self.flushed_activity, self.flushed_at, self.unflushed_events = self.activity, now, 0

    @property
    def sender(self) -> str:
        return self.ctx.agent.name if self.ctx.agent else "system"

    def activity_for(self, event: Event) -> str | None:
        name = self.sender
        if event.kind == EventKind.TOOL_CALL:
            return f"{name}: {summarize_input(event.tool_name, event.tool_input)}"[:300]
        if event.kind == EventKind.TEXT:
            return f"{name}: writing…"
        if event.kind == EventKind.ACTIVITY:
            return f"{name}: {event.text}"[:300]
        if event.kind == EventKind.TOOL_RESULT:
            return f"{name}: thinking…"
        return None

    def message_for(self, event: Event) -> Message | None:
        ctx = self.ctx
        usage = event.usage or {}
        fields: dict[str, Any] = {
            "motion": ctx.motion,
            "sender": self.sender,
            "agent": ctx.agent,
            "source": ctx.source,
            "raw": event.raw,
            "harness_message_id": event.message_id,
            "session_id": event.session_id or ctx.session_id,
            "turn": ctx.turn,
            "model_backend": event.model,
            "effort": ctx.effort,
            "stop_reason": event.stop_reason or event.subtype,
            "input_tokens": _tokens(usage, "input_tokens"),
            "output_tokens": _tokens(usage, "output_tokens"),
            "cache_creation_input_tokens": _tokens(usage, "cache_creation_input_tokens"),
            "cache_read_input_tokens": _tokens(usage, "cache_read_input_tokens"),
            "cwd": event.cwd or ctx.cwd,
            "source_file": ctx.source_file,
            "is_error": event.is_error,
        }
        if event.kind == EventKind.TEXT:
            fields.update(kind=Kind.TEXT, text=event.text)
        elif event.kind == EventKind.TOOL_CALL:
            fields.update(
                kind=Kind.TOOL_CALL,
                text=summarize_input(event.tool_name, event.tool_input),
                tool_name=event.tool_name,
                tool_id=event.tool_id,
            )
        elif event.kind == EventKind.TOOL_RESULT:
            fields.update(
                kind=Kind.TOOL_RESULT,
                text=event.text[:TOOL_RESULT_TEXT_LIMIT],
                tool_id=event.tool_id,
                tool_name=event.tool_name,
            )
        elif event.kind == EventKind.TURN_END:
            text = turn_end_text(event.is_error, event.subtype, event.cost_usd)
            # An error's reason, or a note such as why the cost is unknown.
            if event.text:
                text += f" · {event.text[:500]}"
            if event.permission_denials:
                text += f" · {len(event.permission_denials)} call(s) denied"
            fields.update(kind=Kind.TURN_END, text=text, cost_usd=event.cost_usd)
        elif event.kind == EventKind.ERROR:
            fields.update(kind=Kind.ERROR, text=event.text, is_error=True)
        elif event.kind == EventKind.COMPACT:
            fields.update(kind=Kind.COMPACT, text=event.text or "compacted")
        else:
            return None
        if event.uuid:
            fields["id"] = event.uuid
        return Message(**fields)

    def insert(self, message: Message) -> bool:
        """Insert unless a Message with this id exists; True when this call inserted it."""
        fit_message(message)
        if not binding().insert_one(message):
            return False
        transaction.on_commit(lambda: message_created.send(sender=Message, message=message))
        return True

    def insert_many(self, messages: list[Message]) -> list[Message]:
        """Insert those whose id is new, in one statement; returns the ones this call inserted.

        The record binding (motion_runner/record/) tells exactly which rows were new, so two
        writers racing with the same batch each learn their own share and the signal goes out
        once per Message.
        """
        unique: dict[uuid.UUID, Message] = {}
        for message in messages:
            unique.setdefault(message.id, message)
        if len(unique) < 2 or not connection.features.can_return_rows_from_bulk_insert:
            return [message for message in unique.values() if self.insert(message)]
        # Inserted in id order: two writers with overlapping batches then take the unique
        # index's locks in the same order, so neither waits on the other in a cycle (deadlock).
        batch = sorted(unique.values(), key=lambda message: message.id)
        inserted_ids = {message.id for message in binding().insert_batch(batch)}
        inserted = [message for message in unique.values() if message.id in inserted_ids]
        if inserted:
            transaction.on_commit(lambda: announce(inserted))
        return inserted

    def write(self, event: Event) -> WriteOutcome:
        return self.write_many([event])

    def prepare(self, event: Event) -> Message | None:
        """Everything a write does short of inserting: session claims, raw log, the Message."""
        ctx = self.ctx
        if event.session_id and not ctx.session_id:
            ctx.session_id = event.session_id
        if event.kind == EventKind.INIT:
            self._on_init(event)
            return None
        if event.kind == EventKind.UNKNOWN:
            self._keep_raw(event.raw)
            return None
        message = self.message_for(event)
        return fit_message(message) if message is not None else None

    def write_many(self, events: Iterable[Event], *, prepared: list[Message] | None = None) -> WriteOutcome:
        outcome = WriteOutcome()
        ctx = self.ctx
        messages: list[Message] = list(prepared or [])
        activity = None
        counted = 0
        for event in events:
            if event.kind == EventKind.TURN_END:
                outcome.turn_end = event
            if event.kind not in (EventKind.INIT, EventKind.UNKNOWN):
                counted += 1
                activity = self.activity_for(event) or activity
            try:
                message = self.prepare(event)
            except BadEvent as exc:  # one malformed event never costs the others
                log.warning("skipped an event of session %s: %s", ctx.session_id, exc)
                outcome.errors.append(str(exc))
                continue
            if message is not None:
                messages.append(message)
        if ctx.turn is not None and counted:
            self.activity = activity or self.activity
            self.unflushed_events += counted
            self.flush_activity()
        if not messages:
            return outcome
        if ctx.match_twins:
            with session_lock(ctx.session_id):
                fresh = self._without_twins(messages)
                inserted = self.insert_many(fresh)
        else:
            inserted = self.insert_many(messages)
        inserted_ids = {m.id for m in inserted}
        outcome.imported = len(inserted)
        outcome.skipped = len({m.id for m in messages}) - len(inserted)
        outcome.messages = inserted
        if ctx.fill_in:
            for message in messages:
                if message.id not in inserted_ids:
                    self.fill_in(message)
        return outcome

    def _without_twins(self, messages: list[Message]) -> list[Message]:
        """Drop the messages already stored under another id, filling in those twins' blanks.

        A tool call or result is the same one when (session, kind, tool id) match; a reply the
        Stop hook posted (it has no ids) is the same as the transcript's when the words match.
        Two queries per batch, whatever its size.
        """
        sessions = {m.session_id for m in messages if m.session_id}
        if not sessions:
            return messages
        ids = [m.id for m in messages]
        tool_ids = {m.tool_id for m in messages if m.tool_id and m.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT)}
        by_tool: dict[tuple[str, str, str], Message] = {}
        if tool_ids:
            for stored in Message.objects.filter(
                motion_id=self.ctx.motion.pk,
                session_id__in=sessions,
                kind__in=[Kind.TOOL_CALL, Kind.TOOL_RESULT],
                tool_id__in=tool_ids,
            ).exclude(pk__in=ids):
                by_tool.setdefault((stored.session_id, stored.kind, stored.tool_id), stored)
        texts = {m.text for m in messages if m.kind == Kind.TEXT}
        by_words: dict[tuple[str, str, bool], list[Message]] = {}
        hook_words = any(m.source_file == HOOK_STOP_TEXT for m in messages) or (
            texts and Message.objects.filter(session_id__in=sessions, source_file=HOOK_STOP_TEXT).exists()
        )
        if texts and hook_words:
            for stored in (
                Message.objects.filter(
                    motion_id=self.ctx.motion.pk, session_id__in=sessions, kind=Kind.TEXT, text__in=texts
                )
                .exclude(pk__in=ids)
                .order_by("created_at")
            ):
                key = (stored.session_id, stored.text, stored.source_file == HOOK_STOP_TEXT)
                by_words.setdefault(key, []).append(stored)
        fresh = []
        for message in messages:
            twin = None
            if message.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT) and message.tool_id:
                twin = by_tool.get((message.session_id, message.kind, message.tool_id))
            elif message.kind == Kind.TEXT and by_words:
                # The hook's copy looks for the transcript's, and the transcript's for the hook's.
                wants_hook_copy = message.source_file != HOOK_STOP_TEXT
                candidates = by_words.get((message.session_id, message.text, wants_hook_copy))
                twin = candidates.pop(0) if candidates else None
            if twin is None:
                fresh.append(message)
            elif self.ctx.fill_in:
                self.fill_in(message, existing=twin)
        return fresh

    def fill_in(self, message: Message, existing: Message | None = None) -> bool:
        """Copy what this copy knows onto the stored Message where it is blank; never a second row."""
        if existing is None:
            existing = Message.objects.filter(pk=message.id).first()
            if existing is None:
                return False
        changed = []
        for name in FILL_IN_FIELDS:
            value = getattr(message, name)
            if value in (None, "") or getattr(existing, name) not in (None, ""):
                continue
            setattr(existing, name, value)
            changed.append(name)
        if existing.kind == Kind.TURN_END and "cost_usd" in changed:
            existing.text = turn_end_text(existing.is_error, existing.stop_reason, message.cost_usd)
            changed.append("text")
        if existing.source_file == HOOK_STOP_TEXT and message.source_file != HOOK_STOP_TEXT:
            existing.source_file = message.source_file
            changed.append("source_file")
        if changed:
            existing.save(update_fields=changed)
        return bool(changed)

    def _on_init(self, event: Event) -> None:
        ctx = self.ctx
        if not event.session_id:
            return
        claim_session(event.session_id, ctx.motion, ctx.agent, ctx.harness)
        if ctx.turn is not None:
            Turn.objects.filter(pk=ctx.turn.pk).update(
                session_id=event.session_id, heartbeat_at=timezone.now()
            )
            ctx.turn.session_id = event.session_id

    def _keep_raw(self, raw: Any) -> None:
        if ctx_turn := self.ctx.turn:
            ctx_turn.refresh_from_db(fields=["raw_log"])
            if len(ctx_turn.raw_log) < RAW_LOG_LIMIT:
                ctx_turn.raw_log.append(raw)
                Turn.objects.filter(pk=ctx_turn.pk).update(raw_log=ctx_turn.raw_log)


def insert_one(message: Message) -> bool:
    """Write one Message built elsewhere through the one write path: idempotent on its id, and
    `message_created` goes out once, after commit. True when this call inserted it."""
    context = IngestContext(motion=message.motion, agent=message.agent, harness="", source=message.source)
    return EventWriter(context).insert(message)


def post_system_message(
    motion: Motion,
    text: str,
    *,
    kind: str = Kind.ERROR,
    message_id: str | None = None,
    turn: Turn | None = None,
    agent: Agent | None = None,
) -> Message | None:
    """A message the runner itself says in the thread; idempotent when given an id."""
    message = Message(
        motion=motion,
        sender=agent.name if agent else "runner",
        agent=agent,
        source="system",
        kind=kind,
        text=text,
        turn=turn,
        is_error=kind == Kind.ERROR,
    )
    if message_id:
        message.id = message_id
    return message if insert_system_line(message) else None


def insert_system_line(message: Message) -> bool:
    """`insert_one` for a line the runner says under a stable id. Finding the same line there
    means it was said already (False); finding anything else under its id is a collision, which
    is logged as an error and the line is said under a fresh id: never silently dropped."""
    if insert_one(message):
        return True
    found = Message.objects.filter(pk=message.id).values_list("motion_id", "source", "kind").first()
    if found == (message.motion_id, message.source, message.kind):
        return False
    log.error(
        "the id %s of a %s line in %s is taken by another message: said under a new id",
        message.id,
        message.kind,
        message.motion_id,
    )
    message.id = uuid.uuid4()
    return insert_one(message)
