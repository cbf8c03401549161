"""What the record server's tools answer, scoped by the turn that started it.

The scope: a Motion the woken agent may read, whose every reader may also read it where the
answer lands (people/access.py: `readable` for the agent, then `readers_may_read` from the woken
Motion): nothing is shown in the woken thread to a reader who could not read it where it was
said. Each answer names its posts by link (`/motions/<slug>/#m-<id>`) so the agent can cite them;
every text is redacted again on the way out (a secret pasted before a redaction rule knew it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from ..ingest.fit import insert_one
from ..ingest.redaction import redact
from ..models import Kind, Message, Motion, Source, Turn
from ..people.access import access
from ..people.principal import AgentPrincipal
from ..sql.message_search import by_sender, newest, words

# What `search` looks in by default: what people and agents said, and the agents' notes (not
# tool steps, whose outputs are long and are never quoted by a wake either).
SAID_KINDS = (Kind.TEXT, Kind.NOTE)
SEARCHABLE_KINDS = (Kind.TEXT, Kind.NOTE, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.REQUEST, Kind.WATCH)
MOST_RESULTS = 50
MOST_AROUND = 20
SNIPPET_CHARS = 300
NOTE_CHARS = 4000


class RecordError(ValueError):
    """Bad input from the agent: said back to it as the tool's error, nothing done."""


def link(message: Message) -> str:
    return f"{reverse('motion-thread', args=[message.motion_id])}#m-{message.id}"


def scope(turn: Turn) -> QuerySet[Motion]:
    """The Motions `turn`'s agent may search from its woken Motion (one query, never a list)."""
    policy = access()
    readable = policy.readable(AgentPrincipal(turn.agent), Motion.objects.all())
    return policy.readers_may_read_among(turn.motion, readable) | readable.filter(slug=turn.motion_id)


def _when(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    parsed = parse_datetime(value)
    if parsed is None:
        raise RecordError(f"{name}: not a date and time (ISO 8601, e.g. 2026-11-30T14:00:00Z): {value!r}")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed, timezone.utc)


def _line(message: Message, text: str) -> dict:
    return {
        "id": str(message.id),
        "link": link(message),
        "motion": message.motion_id,
        "author": message.sender,
        "kind": message.kind,
        "at": message.created_at.isoformat(),
        "text": redact(text),
    }


def _snippet(text: str, words: list[str]) -> str:
    lowered = text.lower()
    hits = [lowered.find(w.lower()) for w in words if lowered.find(w.lower()) >= 0]
    start = max(0, min(hits) - SNIPPET_CHARS // 3) if hits else 0
    piece = text[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(text) else "")


@dataclass(frozen=True)
class SearchFilters:
    motion: str = ""
    author: str = ""
    kind: str = ""
    since: str = ""
    until: str = ""
    limit: int = 10


def _filtered(
    messages: QuerySet[Message], reach: QuerySet[Motion], filters: SearchFilters
) -> QuerySet[Message]:
    if filters.motion:
        reach = reach.filter(slug=filters.motion)  # not there, or not for this thread: alike
    messages = messages.filter(motion_id__in=reach.values("slug"))
    if filters.kind:
        if filters.kind not in SEARCHABLE_KINDS:
            raise RecordError(f"kind: one of {', '.join(SEARCHABLE_KINDS)}")
        messages = messages.filter(kind=filters.kind)
    else:
        messages = messages.filter(kind__in=SAID_KINDS)
    if filters.author:
        messages = by_sender(messages, filters.author)
    if since := _when(filters.since, "since"):
        messages = messages.filter(created_at__gte=since)
    if until := _when(filters.until, "until"):
        messages = messages.filter(created_at__lt=until)
    return messages


def search(turn: Turn, query: str, filters: SearchFilters = SearchFilters()) -> dict:
    """The newest Messages in scope holding every word of `query`."""
    if not words(query):
        raise RecordError("query: say at least one word to look for")
    limit = max(1, min(int(filters.limit), MOST_RESULTS))
    found = newest(_filtered(Message.objects.all(), scope(turn), filters), query, limit)
    looked_for = words(query)
    return {"query": query, "results": [_line(m, _snippet(m.text, looked_for)) for m in found]}


def read(turn: Turn, message_id: str = "", motion: str = "", after: str = "", around: int = 5) -> dict:
    """A message with the posts around it (`message_id`), or a Motion's posts from a cursor (the
    time `after`, oldest first), bounded; only in scope."""
    reach = scope(turn).values("slug")
    around = max(0, min(int(around), MOST_AROUND))
    said = Message.objects.filter(kind__in=SAID_KINDS)
    if message_id:
        center = Message.objects.filter(pk=_uuid(message_id), motion_id__in=reach).first()
        if center is None:
            raise RecordError("message_id: no such message in your reach")
        thread = said.filter(motion_id=center.motion_id)
        key = (center.created_at, center.id)
        before = thread.filter(created_at__lte=key[0]).exclude(pk=center.pk).order_by("-created_at", "-id")
        later = thread.filter(created_at__gte=key[0]).exclude(pk=center.pk).order_by("created_at", "id")
        lines = [*reversed(before[:around]), center, *later[:around]]
        return {"motion": center.motion_id, "messages": [_line(m, m.text) for m in lines]}
    slug = motion or turn.motion_id
    if not scope(turn).filter(slug=slug).exists():
        raise RecordError("motion: no such Motion in your reach")
    thread = said.filter(motion_id=slug).order_by("created_at", "id")
    if since := _when(after, "after"):
        thread = thread.filter(created_at__gt=since)
    lines = list(thread[: max(1, around * 2)])
    cursor = lines[-1].created_at.isoformat() if lines else after
    return {"motion": slug, "messages": [_line(m, m.text) for m in lines], "next_after": cursor}


def _uuid(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise RecordError(f"message_id: not a message id: {value!r}") from None


def remember_allowed(turn: Turn) -> bool:
    """`remember` is a write: on a look-only wake only while the dial allows it (the default,
    as seed 001 decided: an agent may keep its notes without being granted tools)."""
    return turn.mode == "full" or bool(getattr(settings, "WAKE_MEMORY_REMEMBER_ON_LOOK", True))


def remember(turn: Turn, text: str) -> dict:
    """A note of the agent's own, kept in the woken Motion as a Message of kind `note`, written
    as every other line is (`insert_one`)."""
    if not remember_allowed(turn):
        raise RecordError("remember is off on look-only wakes here (WAKE_MEMORY_REMEMBER_ON_LOOK)")
    text = (text or "").strip()
    if not text:
        raise RecordError("text: say what to remember")
    if len(text) > NOTE_CHARS:
        raise RecordError(f"text: at most {NOTE_CHARS} characters")
    note = Message(
        motion=turn.motion,
        sender=turn.agent.name,
        agent=turn.agent,
        source=Source.RUNNER,
        kind=Kind.NOTE,
        text=text,
        turn=turn,
        session_id=turn.session_id,
    )
    # Through the one write path (ingest/fit.py): fitted and redacted, stored by the record
    # binding (under memory-lane's, in its tables too) and announced (`message_created`).
    insert_one(note)
    return {"kept": _line(note, note.text)}
