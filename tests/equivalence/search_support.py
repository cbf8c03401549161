"""What both search equivalence files (PostgreSQL's, SQLite's) check of `newest`'s windows: a
thread longer than the windows, words common and rare, the answer the same as the reference
path's newest-first slice."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from motion_runner.models import Message
from motion_runner.sql import message_search
from tests.factories import MessageFactory, MotionFactory

SMALL_WINDOWS = (3, 12)
QUERIES = ["gate", "harbor", "dawn gate", "lights", "absent"]


def long_thread() -> None:
    """40 posts a minute apart: "gate" in every other, "harbor" in every seventh, "lights" once,
    oldest of all; two posts at the very same time, so a cut may fall between equals."""
    harbor = MotionFactory(slug="harbor")
    start = timezone.now() - dt.timedelta(hours=2)
    for n in range(40):
        text = (
            " ".join(word for word, every in (("gate", 2), ("harbor", 7), ("dawn", 3)) if n % every == 0)
            or "nothing here"
        )
        if n == 0:
            text += " lights"
        at = start + dt.timedelta(minutes=n if n != 31 else 30)
        MessageFactory(motion=harbor, text=text, created_at=at)


def windows_agree(monkeypatch, query: str, limit: int = 5) -> tuple[list, list]:
    monkeypatch.setattr(message_search, "WINDOWS", SMALL_WINDOWS)
    messages = Message.objects.all()
    found = [m.id for m in message_search.newest(messages, query, limit)]
    reference = list(
        message_search.orm_matching(messages, query)
        .order_by(*message_search.NEWEST_FIRST)
        .values_list("id", flat=True)[:limit]
    )
    return found, reference
