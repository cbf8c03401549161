"""The one write path from harness events to Messages.

The runner, the stream API and the transcript importer all write through EventWriter, so
the same event arriving from any of them, in any order, or twice at once, lands once: a
Message's id is the harness line's own uuid (or a uuid derived from stable harness ids), and
the insert is a conditional one that leaves an existing row alone.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from ..harnesses.base import Event, EventKind
from ..models import Agent, Kind, Message, Motion, Turn
from ..record import binding
from .display import summarize_input, turn_end_text
from .fit import BadEvent, announce, fit_message, insert_one
from .redaction import Redactor
from .sessions import claim_session
from .twins import fill_in, session_lock, without_twins

log = logging.getLogger(__name__)


TOOL_RESULT_TEXT_LIMIT = 64 * 1024
RAW_LOG_LIMIT = 200
# The kinds message_for turns into a Message; the others write none.
MESSAGE_KINDS = frozenset(
    {
        EventKind.TEXT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TURN_END,
        EventKind.ERROR,
        EventKind.COMPACT,
        EventKind.THINKING,
        EventKind.TASK,
    }
)
# Events no Message of the apps' index is made of, handed to the record binding alone.
UNINDEXED_KINDS = frozenset({EventKind.PROMPT})


def event_message_id(event: Event) -> uuid.UUID | None:
    """The id the event's Message will carry, when the event names one and it is a UUID."""
    if event.kind not in MESSAGE_KINDS or not event.uuid:
        return None
    try:
        return uuid.UUID(str(event.uuid))
    except ValueError:
        return None  # fit_message reports it as a BadEvent


def _default(field: Any) -> tuple[Any, bool]:
    """(the field's default, whether it is called for each Message): a callable default (a uuid,
    now) is called each time, as `get_default` calls it; any other is the one value it returns."""
    called = field.has_default() and callable(field.default)
    return (field.default if called else field.get_default()), called


# A Message's columns in `concrete_fields` order, each with its default, and its relations.
_COLUMNS = tuple((field.attname, *_default(field)) for field in Message._meta.concrete_fields)
_RELATIONS = tuple(
    (field.name, field.attname) for field in Message._meta.concrete_fields if field.is_relation
)
_NAMES = frozenset(name for name, _, _ in _COLUMNS) | {name for name, _ in _RELATIONS}


def new_message(fields: dict[str, Any]) -> Message:
    """`Message(**fields)`, built from its values in column order, as Django's own
    `Model.from_db` builds an instance (the form its docs give under "Customizing model
    loading"): the keyword form looks up every field by name, once per Message of every write
    (bench/README.md, "A Message built from its values"). A related object given in `fields`
    (`motion`, `agent`, `turn`) is set through its field afterwards, as the keyword form does;
    tests/motion_runner/ingest/test_new_message.py holds the two forms equal."""
    if unknown := fields.keys() - _NAMES:
        raise TypeError(f"Message has no field(s) {sorted(unknown)}")
    related = []
    for name, attname in _RELATIONS:
        if name in fields:
            obj = fields.pop(name)
            fields[attname] = None if obj is None else obj.pk
            if obj is not None:
                related.append((name, obj))
    message = Message(
        *[
            fields[name] if name in fields else default() if called else default
            for name, default, called in _COLUMNS
        ]
    )
    for name, obj in related:
        setattr(message, name, obj)
    return message


USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


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
        # One per writer (a stream post, a transcript chunk): each distinct string redacted once.
        self.redactor = Redactor()
        # Called on commit with the Messages a write inserted; the runner's announces what it
        # commits within 0.25 s together (motion_runner/ingest/announcing.py).
        self.announce: Callable[[list[Message]], None] = announce
        # Thinking and prompt lines, redacted, for the record binding alone (no Message of the
        # apps' index: their thread never shows them; memory-lane's record keeps every line).
        self.unindexed: list[Event] = []
        # When each was read, in order with the Messages built around it (their created_at): the
        # binding's rows of a batch are ordered as said (record binding `order_batch`).
        self.unindexed_at: list[tuple[str | None, datetime]] = []

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
        if event.kind in (EventKind.TOOL_RESULT, EventKind.THINKING):
            return f"{name}: thinking…"
        return None

    def message_for(self, event: Event, message_id: uuid.UUID | None = None) -> Message | None:
        """`message_id`: `event_message_id(event)`, when the caller made it already (fit_message
        then keeps it rather than parse the text again)."""
        fields = self.message_fields(event)
        if fields is not None and message_id is not None:
            fields["id"] = message_id
        return None if fields is None else new_message(fields)

    def message_fields(self, event: Event) -> dict[str, Any] | None:
        """`Message(**fields)` is the event's Message; None for an event that writes none."""
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
        elif event.kind == EventKind.THINKING:
            fields.update(kind=Kind.THINKING, text=event.text)
        elif event.kind == EventKind.TASK:
            fields.update(kind=Kind.TASK, text=event.text, tool_id=event.tool_id)
        else:
            return None
        if event.uuid:
            fields["id"] = event.uuid
        return fields

    def insert(self, message: Message) -> bool:
        """Insert unless a Message with this id exists; True when this call inserted it."""
        return insert_one(message, redactor=self.redactor, announce_with=self.announce)

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
            transaction.on_commit(lambda: self.announce(inserted))
        return inserted

    def write(self, event: Event) -> WriteOutcome:
        return self.write_many([event])

    def prepare(self, event: Event, message_id: uuid.UUID | None = None) -> Message | None:
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
        if event.kind in UNINDEXED_KINDS:
            if binding().keeps_unindexed:  # else dropped unread, as before (the own record)
                event.text = self.redactor.redact(event.text)
                event.raw = self.redactor.redact_json(event.raw)
                self.unindexed.append(event)
                self.unindexed_at.append((event.uuid, timezone.now()))
            return None
        message = self.message_for(event, message_id)
        return fit_message(message, self.redactor) if message is not None else None

    def write_many(self, events: Iterable[Event], *, prepared: list[Message] | None = None) -> WriteOutcome:
        outcome = WriteOutcome()
        ctx = self.ctx
        began = timezone.now()
        messages: list[Message] = list(prepared or [])
        activity = None
        counted = 0
        finals: list[Event] = []
        for event in events:
            if event.kind == EventKind.TURN_END:
                outcome.turn_end = event
            if event.kind == EventKind.USAGE:
                finals.append(event)
            if event.kind not in (EventKind.INIT, EventKind.UNKNOWN, EventKind.USAGE):
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
        self.redactor.forget()  # the batch's strings are not kept past it
        if ctx.turn is not None and counted:
            self.activity = activity or self.activity
            self.unflushed_events += counted
            self.flush_activity()
        if not messages:
            self.keep_unindexed(messages, began)
            self.store_final_usage(finals)
            return outcome
        if ctx.match_twins:
            with session_lock(ctx.session_id):
                fresh = without_twins(messages, self.ctx.motion.pk, fill_in_blanks=self.ctx.fill_in)
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
                    fill_in(message)
        self.keep_unindexed(messages, began)
        self.store_final_usage(finals)
        return outcome

    def store_final_usage(self, finals: list[Event]) -> None:
        """An API message's whole usage (its USAGE event: Claude Code's message_delta) onto the
        turn's rows of that message, which were stored with the message_start snapshot (no
        output): a turn whose runner dies after it is charged it by the sweep
        (runner.ending.dead_turn_cost). One UPDATE an API message, after its rows' insert."""
        turn = self.ctx.turn
        for event in finals:
            if turn is None or not event.message_id:
                continue
            if fields := {key: _tokens(event.usage, key) for key in USAGE_COLUMNS if key in event.usage}:
                Message.objects.filter(turn=turn, harness_message_id=event.message_id).update(**fields)

    def keep_unindexed(self, messages: list[Message], began: datetime) -> None:
        """The lines only the record binding keeps, written after the batch's Messages; then the
        binding orders the batch's rows as they were said (a compaction stays below the turns
        before it on memory-lane's page)."""
        if not self.unindexed:
            return
        ctx = self.ctx
        binding().write_unindexed(self.unindexed, ctx.motion, ctx.agent)
        said = [(str(m.id), m.created_at) for m in messages if m.created_at is not None]
        binding().order_batch(said + [(i, at) for i, at in self.unindexed_at if i], began)
        self.unindexed, self.unindexed_at = [], []

    def _on_init(self, event: Event) -> None:
        ctx = self.ctx
        if not event.session_id:
            return
        # The turn's row before the session's, the order a take-back locks them in (retract.py's
        # retire_sessions): the other order could deadlock with it. Both or neither.
        with transaction.atomic():
            if ctx.turn is not None:
                Turn.objects.filter(pk=ctx.turn.pk).update(
                    session_id=event.session_id, heartbeat_at=timezone.now()
                )
            claim_session(event.session_id, ctx.motion, ctx.agent, ctx.harness)
        if ctx.turn is not None:
            ctx.turn.session_id = event.session_id

    def _keep_raw(self, raw: Any) -> None:
        if ctx_turn := self.ctx.turn:
            ctx_turn.refresh_from_db(fields=["raw_log"])
            if len(ctx_turn.raw_log) < RAW_LOG_LIMIT:
                ctx_turn.raw_log.append(raw)
                Turn.objects.filter(pk=ctx_turn.pk).update(raw_log=ctx_turn.raw_log)
