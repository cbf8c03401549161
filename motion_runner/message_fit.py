"""What makes a Message storable, and how its arrival is announced.

Every writer (ingest's EventWriter, the record bindings, the importer, the agent API) fits a
Message here before inserting it and announces it here after commit, so the rules live once and
the record package needs nothing from ingest (which imports the record).
"""

from __future__ import annotations

import uuid

from django.db import models

from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .models import Kind, Message
from .redaction import redact, redact_json
from .signals import message_created  # declared in the catalogue, with its arguments


def announce(messages: list[Message]) -> None:
    for index, message in enumerate(messages):
        message_created.send(sender=Message, message=message, newest_of_batch=index == len(messages) - 1)


class BadEvent(ValueError):
    """An event that cannot be written (a malformed id): reported, never fatal to its batch."""


_MAX_POSITIVE_INT = 2**31 - 1


def fit_message(message: Message) -> Message:
    """Make a Message insertable or raise BadEvent, so one bad event never sinks a batch insert."""
    try:
        message.id = uuid.UUID(str(message.id))
    except ValueError as exc:
        raise BadEvent(f"uuid {str(message.id)[:60]!r} is not a UUID") from exc
    for model_field in Message._meta.concrete_fields:
        value = getattr(message, model_field.attname)
        if isinstance(model_field, models.CharField) and isinstance(value, str):
            limit = model_field.max_length
            if limit and len(value) > limit:
                setattr(message, model_field.attname, value[: limit - 1] + "…")
        elif isinstance(model_field, models.PositiveIntegerField) and value is not None:
            if not isinstance(value, int) or not 0 <= value <= _MAX_POSITIVE_INT:
                setattr(message, model_field.attname, None)
    if isinstance(message.text, str) and "\x00" in message.text:
        message.text = message.text.replace("\x00", "")  # PostgreSQL text cannot hold NUL
    # Secrets never reach the table (nor so any reader): motion_runner/redaction.py.
    message.text = redact(message.text) if isinstance(message.text, str) else message.text
    message.raw = redact_json(message.raw)
    limit = text_limit(message.kind)
    if isinstance(message.text, str) and len(message.text) > limit:
        # Served on every poll of the thread: a 10 MB line is cut, saying how much was left out.
        message.text = message.text[:limit] + f"\n… ({len(message.text) - limit} more characters not kept)"
    return message


def text_limit(kind: str) -> int:
    if kind == Kind.TOOL_RESULT:
        return settings.MESSAGE_TOOL_RESULT_MAX_CHARS
    return settings.MESSAGE_TEXT_MAX_CHARS
