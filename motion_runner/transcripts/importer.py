"""The import loop: a file read on from its stored offset, chunk by chunk, each in its own
transaction; every configured directory's files; a session assigned from the inbox; a lost
turn's lines recovered from its transcript."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..ingest.announcing import Announcer
from ..ingest.entry import write_read
from ..ingest.fit import announce as announce_messages
from ..ingest.sessions import claim_session, claimed_session
from ..models import Agent, Message, Motion, Source, TranscriptFile, Turn, UnclaimedSession
from .files import locked_record, read_chunk, transcript_dirs, transcript_of
from .lines import TERMINAL_SENDER
from .reader import FileResult, TranscriptReader
from .routing import note_unclaimed

CHUNK_BYTES = 8 * 1024 * 1024


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
            reader = TranscriptReader(record, claimed)
            producer = reader.producer()
            if announce is not None:
                producer.writer.announce = announce
            write_read(producer, reader, chunk[:end].split(b"\n"))
            record.offset += end + 1
            record.updated_at = timezone.now()
            record.save()
            result.imported += reader.result.imported
            result.skipped += reader.result.skipped
            result.lines += reader.result.lines
            if size < CHUNK_BYTES:
                return result


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
