"""Posts typed by people."""

from __future__ import annotations

import uuid

from ..ingest.writer import insert_one
from ..models import Message, Motion


class PostIdTaken(Exception):
    """The client's id belongs to a message someone else wrote, or one in another Motion."""


def post_person_message(
    motion: Motion,
    user,
    text: str,
    *,
    sign_in: str,
    source: str = "web",
    message_id: uuid.UUID | None = None,
) -> tuple[Message, bool]:
    """The person's post, and whether this call made it. The page sends a client-chosen id, so a
    double click or a retry after a lost answer lands on the same Message and wakes no one twice."""
    message = Message(
        motion=motion,
        sender=user.get_username(),
        author=user,
        sign_in=sign_in,
        source=source,
        kind="text",
        text=text,
    )
    if message_id is not None:
        message.id = message_id
    if insert_one(message):
        return message, True
    existing = Message.objects.filter(pk=message.id, motion=motion, author=user).first()
    if existing is None:
        raise PostIdTaken("That id is already used by another message.")
    return existing, False
