"""The one write path from harness events to Messages.

The runner, the stream API and the transcript importer all write through EventWriter, so
the same event arriving from any of them, in any order, or twice at once, lands once: a
Message's id is the harness line's own uuid (or a uuid derived from stable harness ids), and
the insert is a conditional one that leaves an existing row alone.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.dispatch import Signal
from django.utils import timezone

from .harnesses.base import Event, EventKind
from .models import Agent, Kind, Message, Motion, MotionSession, Turn

log = logging.getLogger(__name__)

# Sent after commit for every Message that was really inserted (never for a skipped
# duplicate). wakes/ listens to it for mentions and the consider loop.
message_created = Signal()

TOOL_RESULT_TEXT_LIMIT = 64 * 1024
RAW_LOG_LIMIT = 200


class SessionConflict(Exception):
    """A session id already claimed by another Motion: events are never re-routed."""


def claim_session(session_id: str, motion: Motion, agent: Agent | None, harness: str) -> MotionSession:
    session, created = MotionSession.objects.get_or_create(
        session_id=session_id,
        defaults={"motion": motion, "agent": agent, "harness": harness},
    )
    if session.motion_id != motion.pk:
        raise SessionConflict(
            f"session {session_id} belongs to Motion {session.motion_id!r}, not {motion.pk!r}"
        )
    if not created:
        MotionSession.objects.filter(pk=session_id).update(last_used_at=timezone.now())
    return session


def latest_session(motion: Motion, agent: Agent) -> str | None:
    return (
        MotionSession.objects.filter(motion=motion, agent=agent, harness=agent.harness, retired_at=None)
        .order_by("-last_used_at")
        .values_list("session_id", flat=True)
        .first()
    )


def summarize_input(tool_name: str, tool_input: Any) -> str:
    """A short human line for a tool call: `Read README.md`, `Bash ls -la`."""
    if isinstance(tool_input, dict):
        for key in ("file_path", "path", "command", "pattern", "url", "query", "title", "cmd"):
            if key in tool_input and tool_input[key]:
                value = tool_input[key]
                if isinstance(value, list):
                    value = " ".join(map(str, value))
                return f"{tool_name} {str(value)[:200]}"
        if tool_input:
            return f"{tool_name} {json.dumps(tool_input, ensure_ascii=False)[:200]}"
    elif tool_input:
        return f"{tool_name} {str(tool_input)[:200]}"
    return tool_name


def _tokens(usage: dict[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return int(value) if isinstance(value, (int, float)) else None


def _dollars(value: Decimal | None) -> str:
    return f"${value:.4f}" if value is not None else "cost unknown"


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


@dataclass
class WriteOutcome:
    imported: int = 0
    skipped: int = 0
    turn_end: Event | None = None
    messages: list[Message] = field(default_factory=list)


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
            outcome = f"ended with {event.subtype}" if event.is_error else "done"
            text = f"{outcome} · {_dollars(event.cost_usd)}"
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
        try:
            with transaction.atomic():
                message.save(force_insert=True)
        except IntegrityError:
            return False
        transaction.on_commit(lambda: message_created.send(sender=Message, message=message))
        return True

    def write(self, event: Event) -> WriteOutcome:
        outcome = WriteOutcome()
        ctx = self.ctx
        if event.session_id and not ctx.session_id:
            ctx.session_id = event.session_id
        if event.kind == EventKind.INIT:
            self._on_init(event)
            return outcome
        if event.kind == EventKind.UNKNOWN:
            self._keep_raw(event.raw)
            return outcome
        if ctx.turn is not None and (activity := self.activity_for(event)):
            self.activity = activity
            self.unflushed_events += 1
        if event.kind == EventKind.TURN_END:
            outcome.turn_end = event
        message = self.message_for(event)
        if message is None:
            return outcome
        if self.insert(message):
            outcome.imported += 1
            outcome.messages.append(message)
        else:
            outcome.skipped += 1
        return outcome

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
    writer = EventWriter(IngestContext(motion=motion, agent=agent, harness="", source="system"))
    return message if writer.insert(message) else None
