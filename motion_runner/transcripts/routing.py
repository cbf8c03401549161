"""Routing a transcript to its Motion: only through its session's MotionSession claim (read with
what the importer needs of it in one query), or to the admin's inbox of unclaimed sessions, with
a few of its first lines for the person deciding where it belongs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from ..harnesses.base import json_object
from ..models import Agent, Kind, Message, MotionSession, Source, Turn, UnclaimedSession
from .lines import text_of_user

FIRST_LINES_BYTES = 256 * 1024

RUNNER_SOURCES = (Source.RUNNER, Source.API)


def runner_owned(session_id: str) -> bool:
    """A session the runner or the stream API fed: its prompts came from the thread and its turn
    ends from result lines, so the transcript adds neither."""
    return (
        Turn.objects.filter(session_id=session_id).exists()
        or Message.objects.filter(session_id=session_id, source__in=RUNNER_SOURCES).exists()
    )


@dataclass
class ClaimedSession:
    """What the importer needs of a file's session before reading it, read in one query."""

    session: MotionSession  # with its motion and agent
    fed_by_runner: bool  # runner_owned(session_id)
    newest_end: list[Any]  # [the raw line of its newest recorded turn end], or []


def claimed_session(session_id: str) -> ClaimedSession | None:
    """The session's claim (None: unclaimed) with its Motion and agent, `runner_owned` and the
    newest recorded turn end (what `recorded_turn_ends` reads first), in one query."""
    ends = Message.objects.filter(session_id=OuterRef("pk"), kind=Kind.TURN_END).order_by("-created_at")
    session = (
        MotionSession.objects.select_related("motion", "agent")
        .annotate(
            has_turn=Exists(Turn.objects.filter(session_id=OuterRef("pk"))),
            has_runner_message=Exists(
                Message.objects.filter(session_id=OuterRef("pk"), source__in=RUNNER_SOURCES)
            ),
            newest_end_id=Subquery(ends.values("pk")[:1]),
            newest_end=Subquery(ends.values("raw")[:1], output_field=Message._meta.get_field("raw")),
        )
        .filter(pk=session_id)
        .first()
    )
    if session is None:
        return None
    return ClaimedSession(
        session=session,
        fed_by_runner=session.has_turn or session.has_runner_message,
        newest_end=[] if session.newest_end_id is None else [session.newest_end],
    )


def _first_lines(path: Path) -> tuple[str, str]:
    """A few prompts and replies from the top of a file, for a person deciding where it belongs."""
    shown: list[str] = []
    cwd = ""
    try:
        with path.open("rb") as handle:
            head = handle.read(FIRST_LINES_BYTES)
    except OSError:
        return "", ""
    for raw in head.split(b"\n"):
        try:
            line = json_object(raw)
        except ValueError:
            continue
        cwd = cwd or str(line.get("cwd") or "")
        message = line.get("message") if isinstance(line.get("message"), dict) else {}
        if line.get("type") == "user" and (text := text_of_user(message.get("content")).strip()):
            shown.append(f"> {text[:300]}")
        elif line.get("type") == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text" and block.get("text", "").strip():
                    shown.append(block["text"].strip()[:300])
        if len(shown) >= 6:
            break
    return "\n".join(shown), cwd


def note_unclaimed(
    session_id: str,
    path: Path | str = "",
    *,
    agent: Agent | None = None,
    first_lines: str = "",
    cwd: str = "",
) -> UnclaimedSession:
    now = timezone.now()
    inbox, created = UnclaimedSession.objects.get_or_create(
        session_id=session_id,
        defaults={
            "path": str(path),
            "agent": agent,
            "first_lines": first_lines,
            "cwd": cwd,
            "first_seen_at": now,
        },
    )
    updates: dict[str, Any] = {"last_seen_at": now}
    if path and (created or not inbox.first_lines):
        lines, file_cwd = _first_lines(Path(path))
        updates.update(path=str(path), first_lines=lines or inbox.first_lines, cwd=file_cwd or inbox.cwd)
    UnclaimedSession.objects.filter(pk=session_id).update(**updates)
    return inbox
