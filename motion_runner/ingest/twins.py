"""Matching twins: one event written under two ids (a hook knows a tool call's tool_use id, never
its transcript line uuid; the Stop hook's reply has no ids at all). The hooks endpoint and the
transcript importer ask here before inserting, so the second copy fills the first's blanks and
never becomes a second row."""

from __future__ import annotations

import uuid
from contextlib import contextmanager

from django.db import connection, transaction

from ..models import Kind, Message
from ..record import binding
from ..sql import locks
from .display import HOOK_STOP_TEXT, turn_end_text

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
    advisory lock does it (motion_runner/sql/locks.py), SQLite serializes writers by itself.
    Inside a caller's transaction (the importer's, a file's) no savepoint: the lock is held to the caller's end whatever happens, and
    an error here fails the caller's transaction as it would anyway (no writer catches one and
    goes on in the same transaction): two round trips less a file.
    """
    with transaction.atomic(savepoint=False):
        if session_id:
            locks.hold_for_transaction(connection, session_id)
        yield


def without_twins(messages: list[Message], motion_id: str, *, fill_in_blanks: bool) -> list[Message]:
    """Drop the messages already stored under another id, filling in those twins' blanks.

    A tool call or result is the same one when (session, kind, tool id) match; a reply the
    Stop hook posted (it has no ids) is the same as the transcript's when the words match.
    Two queries per batch, whatever its size.
    """
    sessions = {m.session_id for m in messages if m.session_id}
    if not sessions:
        return messages
    # The batch's own rows (a file read again) are not their own twins. Left out here rather than
    # by `NOT IN` a few hundred ids in SQL: psycopg split and quoted each placeholder in Python
    # (about half of the importer's twin check).
    own = {m.id if isinstance(m.id, uuid.UUID) else uuid.UUID(str(m.id)) for m in messages}
    tool_ids = {m.tool_id for m in messages if m.tool_id and m.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT)}
    by_tool: dict[tuple[str, str, str], Message] = {}
    if tool_ids:
        # Message's own ordering (created_at, id): the first stored copy is the twin.
        for stored in stored_like(
            motion_id, sessions, [Kind.TOOL_CALL, Kind.TOOL_RESULT], "tool_id", tool_ids, ("created_at", "id")
        ):
            if stored.pk not in own:
                by_tool.setdefault((stored.session_id, stored.kind, stored.tool_id), stored)
    texts = {m.text for m in messages if m.kind == Kind.TEXT}
    by_words: dict[tuple[str, str, bool], list[Message]] = {}
    hook_words = any(m.source_file == HOOK_STOP_TEXT for m in messages) or (
        texts and hook_replies_stored(sessions)
    )
    if texts and hook_words:
        for stored in stored_like(motion_id, sessions, [Kind.TEXT], "text", texts, ("created_at",)):
            if stored.pk in own:
                continue
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
        elif fill_in_blanks:
            fill_in(message, existing=twin)
    return fresh


def stored_like(
    motion_id: str,
    sessions: set[str],
    kinds: list[str],
    column: str,
    values: set[str],
    order: tuple[str, ...],
) -> list[Message]:
    """The stored Messages of these sessions and kinds whose `column` is one of `values`."""
    lookups = {"motion_id": motion_id, "session_id__in": sessions, "kind__in": kinds, f"{column}__in": values}
    return list(Message.objects.filter(**lookups).order_by(*order))


def hook_replies_stored(sessions: set[str]) -> bool:
    """Whether the Stop hook posted a reply in one of `sessions` (its copy has no ids)."""
    return Message.objects.filter(session_id__in=sessions, source_file=HOOK_STOP_TEXT).exists()


def fill_in(message: Message, existing: Message | None = None) -> bool:
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
    binding().fill_in(message, existing, changed)  # the host's copy of the row too (memory_lane)
    return bool(changed)
