"""memory-lane's retract as its `services/retract.py` does it (read late 2026), the part that touches
the record: the row's words replaced by a queryset update (so no `post_save` for the row), then a
`MessageChange` row by `update_or_create`. Its sealing, rate limits and poller scrubbing are left
out: they touch nothing the apps read. Written here from those facts, not copied."""

from __future__ import annotations

from .models import Message, MessageChange

DELETED = "[deleted]"


def delete(message: Message, by: str) -> None:
    content = DELETED if isinstance(message.content, str) else [{"type": "text", "text": DELETED}]
    type(message).objects.filter(pk=message.pk).update(content=content)
    MessageChange.objects.update_or_create(
        message=message, defaults={"mood": message.mood, "kind": "deleted", "by": by, "reached": []}
    )


def edit(message: Message, text: str, by: str) -> None:
    type(message).objects.filter(pk=message.pk).update(content=text)
    MessageChange.objects.update_or_create(
        message=message, defaults={"mood": message.mood, "kind": "edited", "by": by, "reached": []}
    )
