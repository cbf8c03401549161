"""A transcript no Motion has claimed: it waits in the admin's inbox of unclaimed sessions, with a
few of its first lines for the person deciding where it belongs. How a session is claimed, and
what the importer reads of a claimed one, is ingest/sessions.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.utils import timezone

from ..harnesses.base import json_object
from ..models import Agent, UnclaimedSession
from .lines import text_of_user

FIRST_LINES_BYTES = 256 * 1024


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
