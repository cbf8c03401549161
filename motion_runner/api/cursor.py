"""Opaque cursors over (created_at, id): stable under inserts, unlike offsets."""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime

from rest_framework.exceptions import ValidationError


def encode(created_at: datetime, message_id: uuid.UUID | str) -> str:
    raw = f"{created_at.isoformat()}|{message_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str, field: str = "after") -> tuple[datetime, uuid.UUID]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, message_id = base64.urlsafe_b64decode(padded).decode().split("|", 1)
        return datetime.fromisoformat(created), uuid.UUID(message_id)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError({field: [f"not a cursor this API gave out: {cursor[:40]!r}"]}) from exc


# Before every message: the `next` of a thread with none yet, so that its readers long-poll for the
# first one instead of asking again and again.
START = encode(datetime.min.replace(tzinfo=UTC), uuid.UUID(int=0))
