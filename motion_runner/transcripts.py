"""The Claude Code transcript importer.

Reads `~/.claude/projects/<cwd-munged>/<session>.jsonl` files from where it last stopped
(TranscriptFile keeps each file's inode and byte offset), routes a session to its Motion only
through its MotionSession claim (an unclaimed one waits in the admin's inbox), and writes
through EventWriter like the runner and the stream API: a transcript line's uuid is the
Message id the runner or the stream API already used for it (stream-json and the transcript
share uuids), so nothing is said twice, and what only the transcript knows (model, effort,
cwd, tokens, cost) fills in the blanks of the Messages already there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from .announcing import Announcer
from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .harnesses import Event, EventKind, get_adapter
from .harnesses.base import json_object
from .harnesses.env import harness_environment
from .ingest import EventWriter, IngestContext
from .lib.ids import stable_uuid
from .message_fit import announce as announce_messages
from .message_fit import fit_message
from .models import (
    Agent,
    Kind,
    Message,
    Motion,
    MotionSession,
    Source,
    TranscriptFile,
    Turn,
    UnclaimedSession,
    recorded_turn_ends,
)
from .sessions import claim_session

log = logging.getLogger(__name__)

HARNESS = "claude-code"
CHUNK_BYTES = 8 * 1024 * 1024
WRITE_BATCH = 500
FIRST_LINES_BYTES = 256 * 1024

# Transcript bookkeeping lines that carry nothing for the thread.
SKIPPED_TYPES = {
    "queue-operation",
    "attachment",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "last-prompt",
    "atis-latch",
    "tools-used",
    "mode",
    "file-history-snapshot",
    "summary",
    "custom-title",
}
SKIPPED_SYSTEM_SUBTYPES = {"stop_hook_summary", "turn_duration", "local_command", "informational"}
# What Claude Code itself writes into user lines around a slash command: not a person's words.
COMMAND_MARKERS = ("<command-name>", "<local-command-", "<command-message>")


def prompt_uuid(session_id: str, prompt_id: str) -> str:
    """The id of a typed prompt: the UserPromptSubmit hook and the transcript both know prompt_id."""
    return stable_uuid(HARNESS, "prompt", session_id, prompt_id)


def turn_end_uuid(session_id: str, prompt_id: str) -> str:
    """The id of a terminal turn's end: the Stop hook and the transcript's cost line agree on it."""
    return stable_uuid(HARNESS, "turn-end", session_id, prompt_id)


TERMINAL_SENDER = "terminal"


def prompt_message(motion: Motion, session_id: str, prompt_id: str, text: str, cwd: str = "") -> Message:
    """A prompt typed at a terminal, as its own Message (sender 'terminal': no signed-in person)."""
    return fit_message(
        Message(
            id=prompt_uuid(session_id, prompt_id),
            motion=motion,
            sender=TERMINAL_SENDER,
            source=Source.TERMINAL,
            kind=Kind.TEXT,
            text=text,
            session_id=session_id,
            cwd=cwd,
        )
    )


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


def locked_record(path: Path) -> TranscriptFile:
    """The file's TranscriptFile, its row locked until this transaction ends; created when new.

    One statement for a file read before, three for a new one, in the transaction that reads it.
    Two imports of one new file at once: the second's insert does nothing; its lock then waits
    for the first's commit and finds the row as the first left it.
    """
    files = TranscriptFile.objects.select_for_update()
    record = files.filter(path=str(path)).first()
    if record is None:
        TranscriptFile.objects.bulk_create(
            [TranscriptFile(path=str(path), session_id=path.stem)], ignore_conflicts=True
        )
        record = files.get(path=str(path))
    return record


def _text_of_user(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return ""
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def typed_prompt(line: dict[str, Any]) -> str:
    """The text of a prompt a person typed, or '' for tool results, summaries and command noise."""
    if line.get("isMeta") or line.get("isCompactSummary") or line.get("isSidechain"):
        return ""
    if line.get("promptSource") == "sdk":
        return ""  # a headless run: its prompt came from the thread
    text = _text_of_user((line.get("message") or {}).get("content")).strip()
    if not text or text.startswith(COMMAND_MARKERS):
        return ""
    return text


@dataclass
class FileResult:
    path: str
    imported: int = 0
    skipped: int = 0
    lines: int = 0
    unclaimed: bool = False
    missing: bool = False
    rotated: bool = False


@dataclass
class ImportTotals:
    files: int = 0
    imported: int = 0
    skipped: int = 0
    lines: int = 0
    unclaimed: int = 0
    results: list[FileResult] = field(default_factory=list)

    def add(self, result: FileResult) -> None:
        self.files += 1
        self.imported += result.imported
        self.skipped += result.skipped
        self.lines += result.lines
        self.unclaimed += int(result.unclaimed)
        self.results.append(result)


class TranscriptReader:
    """Turns one transcript file's lines into Messages for one claimed session."""

    def __init__(
        self,
        record: TranscriptFile,
        session: MotionSession,
        *,
        fed_by_runner: bool | None = None,
        newest_end: list[Any] | None = None,
    ):
        """`fed_by_runner` and `newest_end`: what `claimed_session` read with the session; asked
        here when not given."""
        self.record = record
        self.session = session
        self.owned_by_runner = runner_owned(session.session_id) if fed_by_runner is None else fed_by_runner
        self.parser = get_adapter(HARNESS).new_parser(
            session.session_id, recorded_ends=recorded_turn_ends(session.session_id, newest_read=newest_end)
        )
        self.writer = EventWriter(
            IngestContext(
                motion=session.motion,
                agent=session.agent,
                harness=HARNESS,
                source=Source.TERMINAL,
                session_id=session.session_id,
                source_file=record.path,
                match_twins=True,
                fill_in=True,
            )
        )
        self.pending: list[Message] = []
        self.result = FileResult(path=record.path)

    @property
    def headless(self) -> bool:
        """A `claude -p` run: whoever launched it has its stdout, with the prompt and the result
        event; the transcript adds neither, or a second turn end would stand beside the result's."""
        return self.record.entrypoint.startswith("sdk")

    def _note(self, reason: str) -> None:
        """A line skipped: counted on the file, the latest reason kept for the admin, logged."""
        self.record.last_error = reason[:500]
        log.info("transcript %s: %s", self.record.path, reason)

    def feed(self, raw: bytes) -> None:
        record = self.record
        record.lines += 1
        self.result.lines += 1
        if not raw.strip():
            return
        try:
            line = json_object(raw)
        except (ValueError, RecursionError) as exc:  # nested too deep for json.loads: bad too
            record.bad_lines += 1
            self._note(f"line {record.lines} is not a JSON object ({exc})")
            return
        try:
            self._line(line)
        except Exception as exc:  # an unexpected shape must not stop the file
            record.bad_lines += 1
            log.exception("transcript %s line %s", record.path, record.lines)
            self._note(f"line {record.lines} could not be read: {exc}")
        if len(self.pending) >= WRITE_BATCH:
            self.flush()

    def _line(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        session_id = self.session.session_id
        if line.get("promptId"):
            self.record.last_prompt_id = str(line["promptId"])
        if line.get("entrypoint"):
            self.record.entrypoint = str(line["entrypoint"])[:32]
        if kind == "cost-state":
            self._cost(line)
            return
        if kind in SKIPPED_TYPES:
            return
        if kind == "system" and line.get("subtype") in SKIPPED_SYSTEM_SUBTYPES:
            return
        if kind == "system" and line.get("subtype") == "compact_boundary" and "compact_metadata" not in line:
            meta = line.get("compactMetadata") or {}
            line = dict(
                line, compact_metadata={"trigger": meta.get("trigger"), "pre_tokens": meta.get("preTokens")}
            )
        if kind == "user" and not (self.owned_by_runner or self.headless) and line.get("promptId"):
            if text := typed_prompt(line):
                message = prompt_message(
                    self.session.motion, session_id, str(line["promptId"]), text, str(line.get("cwd") or "")
                )
                message.source_file = self.record.path
                self.pending.append(message)
                return
        events = self.parser.feed(line)
        self.writer.ctx.effort = str(line.get("effort") or "")
        for event in events:
            if event.kind == EventKind.UNKNOWN:
                self.record.unknown_lines += 1
                self._note(
                    f"line {self.record.lines}: a {kind}/{line.get('subtype', '')} line this importer does not know; skipped",
                )
                continue
            event.cwd = event.cwd or str(line.get("cwd") or "")
            message = self.writer.prepare(event)
            if message is not None:
                self.pending.append(message)

    def _cost(self, line: dict[str, Any]) -> None:
        """cost-state holds the session's running total: the growth since the last one is the
        cost of the turn that just ended, stamped on that turn's end for a terminal session."""
        record = self.record
        try:
            total = Decimal(str(line.get("totalCostUSD")))
        except (InvalidOperation, ValueError):
            return
        previous = record.cost_usd if record.cost_usd is not None and record.cost_usd <= total else Decimal(0)
        record.cost_usd = total
        if self.owned_by_runner or self.headless or not record.last_prompt_id:
            return
        event = Event(
            EventKind.TURN_END,
            uuid=turn_end_uuid(self.session.session_id, record.last_prompt_id),
            session_id=self.session.session_id,
            subtype="success",
            cost_usd=total - previous,
            raw=line,
        )
        message = self.writer.prepare(event)
        if message is not None:
            self.pending.append(message)

    def flush(self) -> None:
        if not self.pending:
            return
        outcome = self.writer.write_many([], prepared=self.pending)
        self.result.imported += outcome.imported
        self.result.skipped += outcome.skipped
        self.pending = []


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
        if line.get("type") == "user" and (text := _text_of_user(message.get("content")).strip()):
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


def read_chunk(path: Path, offset: int, size: int) -> bytes:
    """Up to `size` bytes of `path` from `offset`."""
    with path.open("rb") as handle:
        handle.seek(offset)
        return handle.read(size)


def import_file(
    path: Path | str,
    *,
    announce: Callable[[list[Message]], None] | None = None,
) -> FileResult:
    """Read one transcript file on from its stored offset. Safe to call any time, twice at once,
    or after the file was rotated, truncated mid-line or deleted. `announce`: what is called on
    commit with the Messages written (default: announced at once, `message_fit.announce`)."""
    path = Path(path)
    result = FileResult(path=str(path))
    while True:
        with transaction.atomic():
            record = locked_record(path)
            try:
                stat = path.stat()
            except FileNotFoundError:
                if record.missing_since is None:
                    TranscriptFile.objects.filter(pk=record.pk).update(missing_since=timezone.now())
                result.missing = True
                return result
            if record.inode != stat.st_ino or stat.st_size < record.offset:
                # Rotated or rewritten: read the new file from its start; ids keep it single.
                result.rotated = record.inode is not None
                record.inode, record.offset, record.cost_usd, record.last_prompt_id = stat.st_ino, 0, None, ""
            record.size, record.missing_since = stat.st_size, None
            if stat.st_size == record.offset:
                record.updated_at = timezone.now()
                record.save()
                return result
            claimed = claimed_session(record.session_id)
            if claimed is None:
                record.save()
                note_unclaimed(record.session_id, path)
                result.unclaimed = True
                return result
            # What the stat saw, up to a chunk: lines written since wait for the next read.
            chunk = read_chunk(path, record.offset, min(CHUNK_BYTES, stat.st_size - record.offset))
            size = len(chunk)
            end = chunk.rfind(b"\n")
            if end < 0:
                # Only a line still being written: leave it for the next read.
                record.save()
                return result
            reader = TranscriptReader(
                record, claimed.session, fed_by_runner=claimed.fed_by_runner, newest_end=claimed.newest_end
            )
            if announce is not None:
                reader.writer.announce = announce
            for raw in chunk[:end].split(b"\n"):
                reader.feed(raw)
            reader.flush()
            record.offset += end + 1
            record.updated_at = timezone.now()
            record.save()
            result.imported += reader.result.imported
            result.skipped += reader.result.skipped
            result.lines += reader.result.lines
            if size < CHUNK_BYTES:
                return result


def transcript_dirs() -> list[Path]:
    return [Path(d).expanduser() for d in settings.TRANSCRIPT_DIRS]


def allowed_path(path: str) -> Path | None:
    """A transcript path a hook named, if it lies inside a configured transcript directory."""
    try:
        resolved = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    for directory in transcript_dirs():
        if resolved.suffix == ".jsonl" and resolved.is_relative_to(directory.resolve()):
            return resolved
    return None


def import_all(dirs: list[Path] | None = None) -> ImportTotals:
    totals = ImportTotals()
    paths = [path for directory in dirs or transcript_dirs() for path in sorted(directory.glob("*/*.jsonl"))]
    announcer = Announcer()  # a batch per Motion, at most every announcing.NOTE_SECONDS
    try:
        for path in paths:
            totals.add(import_file(path, announce=announcer))
    finally:
        # After the files' own announcements: at once, or at the commit of a caller's transaction
        # (whose on-commit callbacks run in the order they were registered).
        transaction.on_commit(announcer.flush)
    # Files that were read before and are gone now: marked, their Messages kept.
    seen = {str(path) for path in paths}
    for record in TranscriptFile.objects.filter(missing_since__isnull=True).only("path"):
        if record.path not in seen and any(record.path.startswith(str(d)) for d in dirs or transcript_dirs()):
            if not Path(record.path).exists():
                TranscriptFile.objects.filter(pk=record.pk).update(missing_since=timezone.now())
    return totals


def assign_session(inbox: UnclaimedSession, motion: Motion, agent: Agent | None) -> FileResult | None:
    """A person put an unclaimed session in a Motion: claim it, then import what it said."""
    claim_session(inbox.session_id, motion, agent, inbox.harness)
    paths = set(TranscriptFile.objects.filter(session_id=inbox.session_id).values_list("path", flat=True))
    if inbox.path:
        paths.add(inbox.path)
    UnclaimedSession.objects.filter(pk=inbox.pk).delete()
    result = None
    for path in sorted(paths):
        result = import_file(path)
    return result


def transcript_of(turn: Turn) -> Path | None:
    """Where Claude Code kept a runner turn's transcript: under the HOME its harness ran with
    (`.claude/projects/<cwd-munged>/<session>.jsonl`), or a configured transcript directory."""
    if turn.agent.harness != HARNESS or not turn.session_id:
        return None
    home = harness_environment(turn.agent).get("HOME")
    roots = ([Path(home) / ".claude" / "projects"] if home else []) + transcript_dirs()
    for root in roots:
        for path in sorted(root.glob(f"*/{turn.session_id}.jsonl")):
            return path
    return None


# How far before a turn's start a line of its session may be stamped and still be its own (the
# harness's clock against this host's).
RECOVERY_CLOCK_SLACK = timedelta(seconds=5)


def recover_turn_lines(turn: Turn) -> int:
    """A turn whose runner was lost: what its harness said but nobody stored is in its transcript.
    Read through the importer, so a line already stored from stdout (same id) is not stored again.
    What it adds belongs to the turn (its cost is summed from the turn's lines), as do the
    session's lines the periodic import took before the sweep came (no turn, stamped since the
    turn started). Returns how many Messages were added. Other harnesses keep no transcript we
    read yet: 0."""
    path = transcript_of(turn)
    if path is None:
        return 0
    written: list[Message] = []
    result = import_file(path, announce=written.extend)
    ids = [message.pk for message in written]
    strays = Message.objects.filter(
        motion_id=turn.motion_id,
        session_id=turn.session_id,
        turn__isnull=True,
        source=Source.TERMINAL,
        created_at__gte=(turn.started_at or turn.queued_at) - RECOVERY_CLOCK_SLACK,
    ).exclude(sender=TERMINAL_SENDER)  # a prompt typed at a terminal is no turn's output
    Message.objects.filter(Q(pk__in=ids, turn__isnull=True) | Q(pk__in=strays.values("pk"))).update(
        turn=turn, source=Source.RUNNER
    )
    for message in written:
        if message.turn_id is None:
            message.turn, message.source = turn, Source.RUNNER
    announce_messages(written)
    return result.imported
