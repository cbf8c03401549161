"""A person's notices as the header and GET /api/notices/ show them: newest first, only in
Motions they may still read."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from motion_runner.models import Motion
from motion_runner.people.access import access
from motion_runner.thread.markup import plain_text

from ..models import Notice

SHOWN = 20  # the header's list and one page of the API
SNIPPET_CHARS = 140


def notices_of(person: Any):
    readable = access().readable(person, Motion.objects.all()).values("pk")
    return Notice.objects.filter(person=person, motion__in=readable)


def unseen_count(person: Any) -> int:
    return notices_of(person).filter(seen_at__isnull=True).count()


def shown(person: Any, limit: int = SHOWN) -> list[dict]:
    rows = notices_of(person).select_related("motion", "agent", "answer")[:limit]
    return [as_dict(notice) for notice in rows]


def as_dict(notice: Notice) -> dict:
    words = " ".join(
        plain_text(notice.answer.text or "", in_a_turn=notice.answer.turn_id is not None).split()
    )  # its Markdown's words (43.4)
    return {
        "id": notice.pk,
        "motion": notice.motion_id,
        "motion_title": notice.motion.title,
        "kind": notice.kind,
        "says": notice.get_kind_display(),
        "from": notice.answer.sender,
        "agent": notice.agent.name if notice.agent_id else None,
        "mention": str(notice.mention_id) if notice.mention_id else None,
        "answer": str(notice.answer_id),
        "snippet": words[:SNIPPET_CHARS],
        "url": reverse("motion-thread", args=[notice.motion_id]) + f"#m-{notice.answer_id}",
        "created_at": notice.created_at.isoformat(),
        "seen": notice.seen_at is not None,
    }
