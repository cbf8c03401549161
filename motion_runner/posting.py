"""Posts typed by people."""

from __future__ import annotations

from django.db import transaction

from .ingest import message_created
from .models import Message, Motion


def post_person_message(motion: Motion, user, text: str, *, sign_in: str, source: str = "web") -> Message:
    message = Message.objects.create(
        motion=motion,
        sender=user.get_username(),
        author=user,
        sign_in=sign_in,
        source=source,
        kind="text",
        text=text,
    )
    transaction.on_commit(lambda: message_created.send(sender=Message, message=message))
    return message
