"""Transcript lines posted from another machine, as memory-lane's transcript watcher sends them.

memory-lane's watcher (watcher/conversation_watcher.py, remote mode) tails Claude Code's JSONL files
and posts batches of raw lines to `/api/ingest/`. Each line names its session (`sessionId`); a line
is read exactly as the local importer reads it (transcripts.reader.TranscriptReader: same ids, same twin
matching, same fill-in), so a line posted here, read from a local file and streamed by a runner
still lands once.

A session no Motion has claimed yet cannot be shown in the apps' thread, but its lines must not be
lost: the watcher drops a batch once it got a 200. They are kept, byte for byte, in a spool file per
session (INGEST_SPOOL_DIR/<session>.jsonl) which the admin's inbox of unclaimed sessions points at;
when the session is assigned (or claimed by a runner and posted again) the spool is read like any
transcript. A record binding that keeps such lines before a claim (`keeps_unclaimed`: memory-lane's,
whose own importer stores them with no Mood) gets them at once too, read exactly as the spool will
be read (`UnclaimedReader`: same ids, same shaping, redacted), so the claim's read writes the apps'
index rows and finds the record's rows there already.

Every line is counted in exactly one of imported (it wrote something new), skipped (nothing new:
already there, bookkeeping, or kept for an unclaimed session) and errors (it could not be read).
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from ..conf import app_settings
from ..harnesses.base import json_object
from ..ingest.entry import Line, Producer, Written
from ..ingest.sessions import ClaimedSession, claimed_session, runner_owned, spool_path
from ..lib.json_depth import deeper_than
from ..models import Agent, Motion, MotionSession, TranscriptFile
from ..record import binding
from ..transcripts.importer import import_file
from ..transcripts.lines import HARNESS
from ..transcripts.reader import TranscriptReader
from ..transcripts.routing import note_unclaimed

log = logging.getLogger(__name__)

# Who speaks an unclaimed session's assistant lines when no agent shares the watcher's user name:
# memory-lane's own importer's assistant ("magent is always the AI assistant").
UNCLAIMED_ASSISTANT = "magent"
MAX_ERRORS_SHOWN = 10  # memory-lane answers at most 10; its watcher logs the first 3
_SESSION_ID = re.compile(r"^[A-Za-z0-9-]{1,200}$")


@dataclass
class IngestAnswer:
    imported: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    unclaimed_sessions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "skipped": self.skipped,
            "errors": self.errors[:MAX_ERRORS_SHOWN],
            "error_count": self.error_count,
            "unclaimed_sessions": self.unclaimed_sessions,
        }

    def error(self, index: int, reason: str) -> None:
        self.error_count += 1
        self.errors.append(f"line {index}: {reason}")


def spool(session_id: str, lines: list[str]) -> Path:
    """Append lines to the session's spool file, whole lines in one locked write."""
    path = spool_path(session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line.rstrip("\n") + "\n" for line in lines).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # transcripts may hold secrets
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, data)
    finally:
        os.close(fd)
    return path


class LineReader(TranscriptReader):
    """TranscriptReader for posted lines: written once, after all are read, knowing which posted
    line wrote what."""

    def __init__(self, record: TranscriptFile, claimed: ClaimedSession, source: str):
        super().__init__(record, claimed)
        self.source_file = f"ingest-{source}"[:500]

    def producer(self) -> Producer:
        producer = super().producer()
        producer.context.source_file = self.source_file
        return producer

    def read_all(self, numbered: list[tuple[int, str]], answer: IngestAnswer) -> list[Line]:
        """The posted lines read, each failure said in the answer; `self.posted_as` maps the
        record's line numbers back to the lines' indexes in the post."""
        self.posted_as: dict[int, int] = {}
        self.failed: set[int] = set()
        lines = []
        for index, text in numbered:
            bad = self.record.bad_lines
            line = self.read(text.encode())
            if self.record.bad_lines != bad:
                self.failed.add(index)
                answer.error(index, self.record.last_error)
                continue
            self.posted_as[self.record.lines] = index
            if line is not None:
                lines.append(line)
        return lines

    def take(self, numbered: list[tuple[int, str]], answer: IngestAnswer) -> None:
        lines = self.read_all(numbered, answer)
        written = Written()
        if lines:
            written = self.producer().write(lines)
            self.wrote(written)
        failed, posted_as = self.failed, self.posted_as
        for (number, _), reason in zip(written.errors, written.reasons, strict=True):
            failed.add(posted_as[number])
            answer.error(posted_as[number], reason)
        wrote = {posted_as[number] for number in written.wrote if number in posted_as} - failed
        answer.imported += len(wrote)
        answer.skipped += len(numbered) - len(wrote) - len(failed)


class UnclaimedReader(LineReader):
    """An unclaimed session's posted lines, read as the spool will be read once the session is
    claimed (same ids, same shaping, redacted), handed to the record binding alone: the apps' own
    index has no Motion to put them in yet."""

    def __init__(self, session_id: str, agent: Agent, source: str):
        record = TranscriptFile(path=f"ingest:{session_id}", session_id=session_id)  # never saved
        # No Motion yet: a placeholder never saved (its lines are the record binding's alone).
        session = MotionSession(session_id=session_id, motion=Motion(), agent=agent, harness=HARNESS)
        super().__init__(record, ClaimedSession(session, runner_owned(session_id), newest_end=None), source)

    def keep(self, lines: list[str]) -> None:
        read = [line for line in (self.read(text.encode()) for text in lines) if line is not None]
        if read:
            # It claims no session (an init line names one only).
            producer = Producer(self.producer().context, claims_sessions=False)
            producer.keep_unclaimed(read, self.session.session_id)


def ingest_lines(lines: list[Any], *, username: str, source: str) -> IngestAnswer:
    """Read posted transcript lines into the sessions' Motions; see the module docstring."""
    answer = IngestAnswer()
    by_session: dict[str, list[tuple[int, str]]] = {}
    for index, line in enumerate(lines):
        if not isinstance(line, str):
            answer.error(index, f"a line is a string of JSON, not a {type(line).__name__}")
            continue
        try:
            parsed = json_object(line)
            if deeper_than(parsed, app_settings.API_MAX_JSON_DEPTH):
                # Stored, it would nest past what a writer walks (a 900-deep line was a 500).
                answer.error(index, f"nested deeper than {app_settings.API_MAX_JSON_DEPTH} levels")
                continue
            session_id = str(parsed.get("sessionId") or "")
        except ValueError as exc:
            answer.error(index, f"not a JSON object ({exc})")
            continue
        except RecursionError:
            answer.error(index, "not a JSON object (nested too deep to read)")
            continue
        if not session_id:
            answer.skipped += 1  # bookkeeping lines (summaries, snapshots) name no session
            continue
        if not _SESSION_ID.match(session_id):
            answer.error(index, f"sessionId {session_id[:60]!r} is not a session id")
            continue
        by_session.setdefault(session_id, []).append((index, line))
    for session_id, numbered in by_session.items():
        ingest_session(session_id, numbered, username=username, source=source, answer=answer)
    return answer


def continued_from(spooled: TranscriptFile | None, session_id: str) -> dict[str, Any]:
    """A new ingest record goes on where the spool stopped: cost-state lines hold the session's
    running total, so starting again from zero would count the spooled turns' dollars twice."""
    fields: dict[str, Any] = {"session_id": session_id}
    if spooled is not None:
        fields.update(
            cost_usd=spooled.cost_usd, last_prompt_id=spooled.last_prompt_id, entrypoint=spooled.entrypoint
        )
    return fields


def ingest_session(
    session_id: str, numbered: list[tuple[int, str]], *, username: str, source: str, answer: IngestAnswer
) -> None:
    claimed = claimed_session(session_id)
    if claimed is None:
        path = spool(session_id, [line for _, line in numbered])
        # The inbox names the agent the watcher's OS user shares a name with, for the admin; that
        # agent's key may not claim it for that (ingest/sessions.claim_for: a spooled session).
        agent = Agent.objects.filter(name=username).first()
        note_unclaimed(session_id, path, agent=agent)
        if binding().keeps_unclaimed:
            try:
                with transaction.atomic():
                    reader = UnclaimedReader(session_id, agent or Agent(name=UNCLAIMED_ASSISTANT), source)
                    reader.keep([line for _, line in numbered])
            except Exception:  # the lines are spooled: the claim writes them; a non-200 is re-sent forever
                log.exception("the lines of unclaimed session %s did not reach the record", session_id)
        answer.skipped += len(numbered)
        answer.unclaimed_sessions.append(session_id)
        return
    held = spool_path(session_id)
    spooled = None
    if held.exists():
        # Kept while the session was unclaimed: read first, so the thread keeps its order.
        import_file(held)
        spooled = TranscriptFile.objects.filter(path=str(held)).first()
    with transaction.atomic():
        record, _ = TranscriptFile.objects.select_for_update().get_or_create(
            path=f"ingest:{session_id}", defaults=continued_from(spooled, session_id)
        )
        reader = LineReader(record, claimed, source)
        reader.take(numbered, answer)
        record.save()
    if reader.result.imported:
        log.info("ingest from %s: %s new messages in session %s", source, reader.result.imported, session_id)
