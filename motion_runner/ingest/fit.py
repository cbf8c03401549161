"""What makes a Message storable, and how its arrival is announced.

Every writer (ingest's EventWriter, the record bindings, the importer, the agent API) fits a
Message here before inserting it and announces it here after commit, so the rules live once and
the record package needs nothing from ingest (which imports the record).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

from django.core.signals import setting_changed
from django.db import models, transaction

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..models import Kind, Message, Source
from ..record import binding
from ..signals import message_created  # declared in the catalogue, with its arguments
from .redaction import Redactor

log = logging.getLogger(__name__)

# What the consider loop counts as a post (wakes/consider_loop/loop.py): what people and agents say,
# and watches.
POST_KINDS = (Kind.TEXT, Kind.WATCH)


def is_post(message: Message) -> bool:
    return message.kind in POST_KINDS and message.source != Source.SYSTEM


def announce(messages: list[Message]) -> None:
    """`message_created` for each, in order, with `newest_of_batch` on the newest post (else the
    last message): a batch of an agent's lines usually ends with a tool call or the turn's end,
    and flagging that one left the reply before it unseen by the loop's clocks."""
    newest = next((i for i in range(len(messages) - 1, -1, -1) if is_post(messages[i])), len(messages) - 1)
    for index, message in enumerate(messages):
        # Every receiver contained: one that raises (a database gone mid-turn, a bug) is logged and
        # never takes the writer down; the line is stored and the turn goes on to settle.
        answers = message_created.send_robust(
            sender=Message, message=message, newest_of_batch=index == newest
        )
        for receiver, answer in answers:
            if isinstance(answer, Exception):
                log.error(
                    "message_created receiver %r raised on message %s",
                    receiver,
                    message.pk,
                    exc_info=(type(answer), answer, answer.__traceback__),
                )


def insert_one(
    message: Message,
    *,
    redactor: Redactor | None = None,
    announce_with: Callable[[list[Message]], None] = announce,
) -> bool:
    """Write one Message built elsewhere through the one write path: fitted, idempotent on its
    id, and announced once, after commit. True when this call inserted it."""
    fit_message(message, redactor or Redactor())
    if not binding().insert_one(message):
        return False
    transaction.on_commit(lambda: announce_with([message]))
    return True


class BadEvent(ValueError):
    """An event that cannot be written (a malformed id): reported, never fatal to its batch."""


_MAX_POSITIVE_INT = 2**31 - 1


@cache
def bounded_columns() -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """The columns fit_message bounds (text by length, positive integers by range), found once
    rather than among all 27 for every Message."""
    fields = Message._meta.concrete_fields
    chars = tuple(
        (f.attname, f.max_length) for f in fields if isinstance(f, models.CharField) and f.max_length
    )
    ints = tuple(f.attname for f in fields if isinstance(f, models.PositiveIntegerField))
    return chars, ints


def fit_message(message: Message, redactor: Redactor | None = None) -> Message:
    """Make a Message insertable or raise BadEvent, so one bad event never sinks a batch insert.

    A batch's writer passes its Redactor, so each distinct string of the batch is redacted once."""
    try:
        if type(message.id) is not uuid.UUID:  # a UUID made already (take_stream's) is kept
            message.id = uuid.UUID(str(message.id))
    except ValueError as exc:
        raise BadEvent(f"uuid {str(message.id)[:60]!r} is not a UUID") from exc
    char_limits, positive_ints = bounded_columns()
    for attname, limit in char_limits:
        value = getattr(message, attname)
        if isinstance(value, str) and len(value) > limit:
            setattr(message, attname, value[: limit - 1] + "…")
    for attname in positive_ints:
        value = getattr(message, attname)
        if value is not None and (not isinstance(value, int) or not 0 <= value <= _MAX_POSITIVE_INT):
            setattr(message, attname, None)
    if isinstance(message.text, str) and "\x00" in message.text:
        message.text = message.text.replace("\x00", "")  # PostgreSQL text cannot hold NUL
    # Secrets never reach the table (nor so any reader): motion_runner/ingest/redaction.py.
    redactor = redactor or Redactor()
    message.text = redactor.redact(message.text) if isinstance(message.text, str) else message.text
    message.raw = redactor.redact_json(message.raw)
    limit = text_limit(message.kind)
    if isinstance(message.text, str) and len(message.text) > limit:
        # Served on every poll of the thread: a 10 MB line is cut, saying how much was left out.
        message.text = message.text[:limit] + f"\n… ({len(message.text) - limit} more characters not kept)"
    return message


def text_limit(kind: str) -> int:
    text_max, tool_result_max = _text_limits()
    return tool_result_max if kind == Kind.TOOL_RESULT else text_max


@cache
def _text_limits() -> tuple[int, int]:
    """(MESSAGE_TEXT_MAX_CHARS, MESSAGE_TOOL_RESULT_MAX_CHARS), read once rather than through
    django.conf's lookup and the default for every Message fitted. Forgotten
    whenever a setting changes (override_settings, pytest-django's `settings`), as redaction's."""
    return settings.MESSAGE_TEXT_MAX_CHARS, settings.MESSAGE_TOOL_RESULT_MAX_CHARS


def _forget_text_limits(**kwargs: Any) -> None:
    _text_limits.cache_clear()


setting_changed.connect(_forget_text_limits)
