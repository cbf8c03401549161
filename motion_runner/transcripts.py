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

import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from django.db import connection, connections, models, router, transaction
from django.db.models import Q
from django.db.models.constants import OnConflict
from django.utils import timezone

from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .harnesses import Event, EventKind, get_adapter
from .harnesses.base import json_object
from .harnesses.env import harness_environment
from .ingest import EventWriter, IngestContext
from .lib.ids import stable_uuid
from .lib.json_bytes import holds_long_integer
from .lib.rows import Columns, db_value
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
# What one import_all commits within this long of its last announcement is announced together.
NOTE_SECONDS = 0.25
# Threads (each with its own connection) reading one import_all's files: one parses while the
# other waits on PostgreSQL (import_files).
IMPORT_THREADS = 2

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


def quick_object(raw: bytes | memoryview) -> dict[str, Any] | None:
    """A line parsed by orjson, when it is an object; None when orjson refuses it or it is not
    one, and the standard library's path decides as before.

    orjson accepts a subset of what json.loads accepts (it refuses invalid UTF-8, lone
    surrogates, NaN and Infinity, numbers past a double, a BOM, whitespace JSON does not know,
    nesting past 1,024), and where both accept, strings, floats, key order and a repeated key's
    value come out the same; only an integer past 64 bits differs (a float here). So a line it
    accepts is never a bad line, and its value is json.loads's but for such integers: see
    `dropped_by_type` and `orjson_reads_exactly` for where that matters.
    """
    try:
        line = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return line if type(line) is dict else None


def dropped_by_type(line: dict[str, Any]) -> tuple[str, str] | None:
    """For a line the importer drops by its type, what it still reads: (promptId, entrypoint),
    '' when absent. None for any other line, or when one of those is not a string (a big integer
    would read differently from orjson's value): such a line is read in full."""
    kind = line.get("type")
    if type(kind) is not str:
        return None
    if kind not in SKIPPED_TYPES:
        subtype = line.get("subtype")
        if kind != "system" or type(subtype) is not str or subtype not in SKIPPED_SYSTEM_SUBTYPES:
            return None
    prompt_id, entrypoint = line.get("promptId"), line.get("entrypoint")
    if not (prompt_id is None or type(prompt_id) is str) or not (
        entrypoint is None or type(entrypoint) is str
    ):
        return None
    return prompt_id or "", entrypoint or ""


def skipped_line(raw: bytes) -> tuple[str, str] | None:
    """`dropped_by_type` of a line orjson reads, else None."""
    line = quick_object(raw)
    return dropped_by_type(line) if line is not None else None


def orjson_reads_exactly(raw: bytes) -> bool:
    """Whether orjson's value of `raw` is exactly what json.loads makes of it: yes unless the bytes
    may hold an integer of 19 digits or more (the only place an integer past 64 bits can be; a
    long string of digits is refused too, and read by the standard library). A float's long
    fraction (a cost-state's or result's 0.00016800000000000002) is the same float to both."""
    return not holds_long_integer(raw)


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


SESSION_COLUMNS = Columns(MotionSession, "s")
MOTION_COLUMNS = Columns(Motion, "m")
AGENT_COLUMNS = Columns(Agent, "a")


@cache
def claimed_session_sql(alias: str) -> str:
    """The session `s` with its Motion `m` and agent `a` (outer joined), whether the runner or
    the stream API fed it (runner_owned's two EXISTS), and its newest recorded turn end's id and
    raw line (`e`, outer joined)."""
    connection = connections[alias]
    quote = connection.ops.quote_name

    def column(model: type[models.Model], name: str) -> str:
        return quote(model._meta.get_field(name).column)

    sessions, messages = quote(MotionSession._meta.db_table), quote(Message._meta.db_table)
    session_id = f"s.{column(MotionSession, 'session_id')}"
    fed_by_runner = (
        f"EXISTS (SELECT 1 FROM {quote(Turn._meta.db_table)} t WHERE t.{column(Turn, 'session_id')} = {session_id})"
        f" OR EXISTS (SELECT 1 FROM {messages} x WHERE x.{column(Message, 'session_id')} = {session_id}"
        f" AND x.{column(Message, 'source')} = ANY(%s))"
    )
    newest_end = (
        f"SELECT n.{column(Message, 'id')}, n.{column(Message, 'raw')} FROM {messages} n"
        f" WHERE n.{column(Message, 'session_id')} = {session_id} AND n.{column(Message, 'kind')} = %s"
        f" ORDER BY n.{column(Message, 'created_at')} DESC LIMIT 1"
    )
    return (
        f"SELECT {SESSION_COLUMNS.sql(connection)}, {MOTION_COLUMNS.sql(connection)},"
        f" {AGENT_COLUMNS.sql(connection)}, {fed_by_runner}, e.{column(Message, 'id')}, e.{column(Message, 'raw')}"
        f" FROM {sessions} s"
        f" INNER JOIN {quote(Motion._meta.db_table)} m"
        f" ON m.{quote(Motion._meta.pk.column)} = s.{column(MotionSession, 'motion')}"
        f" LEFT OUTER JOIN {quote(Agent._meta.db_table)} a"
        f" ON a.{quote(Agent._meta.pk.column)} = s.{column(MotionSession, 'agent')}"
        f" LEFT OUTER JOIN LATERAL ({newest_end}) e ON TRUE"
        f" WHERE {session_id} = %s"
    )


def claimed_session(session_id: str) -> ClaimedSession | None:
    """The session's claim (None: unclaimed) with its Motion and agent, `runner_owned` and the
    newest recorded turn end (what `recorded_turn_ends` reads first): one statement where the ORM
    took four reads, and written by hand, as the ORM compiled its subqueries for ~2 ms of CPU a
    file (bench/importer.py)."""
    connection = connections[router.db_for_read(MotionSession)]
    if connection.vendor != "postgresql":
        session = MotionSession.objects.select_related("motion", "agent").filter(pk=session_id).first()
        if session is None:
            return None
        ends = Message.objects.filter(session_id=session_id, kind=Kind.TURN_END).order_by("-created_at")
        newest = list(ends.values_list("raw", flat=True)[:1])
        return ClaimedSession(session=session, fed_by_runner=runner_owned(session_id), newest_end=newest)
    with connection.cursor() as cursor:
        cursor.execute(
            claimed_session_sql(connection.alias), [list(RUNNER_SOURCES), Kind.TURN_END, session_id]
        )
        row = cursor.fetchone()
    if row is None:
        return None
    at = len(SESSION_COLUMNS)
    session = SESSION_COLUMNS.build(connection, row[:at])
    motion = MOTION_COLUMNS.build(connection, row[at : at + len(MOTION_COLUMNS)])
    at += len(MOTION_COLUMNS)
    agent = AGENT_COLUMNS.build(connection, row[at : at + len(AGENT_COLUMNS)])
    assert session is not None and motion is not None  # the FROM and an inner join found them
    session.motion, session.agent = motion, agent
    fed_by_runner, end_id, end_raw = row[-3:]
    newest = [] if end_id is None else [db_value(connection, Message._meta.get_field("raw"), end_raw)]
    return ClaimedSession(session=session, fed_by_runner=bool(fed_by_runner), newest_end=newest)


FILE_COLUMNS = Columns(TranscriptFile, "f")


def locked_known_record(path: str) -> TranscriptFile | None:
    """`TranscriptFile.objects.select_for_update().filter(path=path).first()`, without the ORM's
    ~1 ms of CPU to compile it, once a file and a read."""
    connection = connections[router.db_for_write(TranscriptFile)]
    if connection.vendor != "postgresql":
        return TranscriptFile.objects.select_for_update().filter(path=path).first()
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {FILE_COLUMNS.sql(connection)} FROM {quote(TranscriptFile._meta.db_table)} f"
            f" WHERE f.{quote(TranscriptFile._meta.get_field('path').column)} = %s FOR UPDATE",
            [path],
        )
        row = cursor.fetchone()
    return None if row is None else FILE_COLUMNS.build(connection, row)


@cache
def save_record_sql(alias: str) -> str:
    quote = connections[alias].ops.quote_name
    meta = TranscriptFile._meta
    columns = ", ".join(
        f"{quote(field.column)} = %s" for field in meta.concrete_fields if field is not meta.pk
    )
    return f"UPDATE {quote(meta.db_table)} SET {columns} WHERE {quote(meta.pk.column)} = %s"


def save_record(record: TranscriptFile) -> None:
    """`record.save()` of a row that exists (locked_record's): every column, bound as Django binds
    it (`get_db_prep_save`), in one hand-written UPDATE, where the ORM's save cost ~0.8 ms of CPU
    a file (bench/importer.py). TranscriptFile has no save() of its own nor save signals."""
    connection = connections[router.db_for_write(TranscriptFile)]
    if connection.vendor != "postgresql":
        record.save()
        return
    meta = TranscriptFile._meta
    params = [
        field.get_db_prep_save(getattr(record, field.attname), connection)
        for field in meta.concrete_fields
        if field is not meta.pk
    ]
    with connection.cursor() as cursor:
        cursor.execute(save_record_sql(connection.alias), [*params, record.pk])


def locked_record(path: Path) -> TranscriptFile:
    """The file's TranscriptFile, its row locked until this transaction ends; created when new.

    One statement for a file read before, two for a new one, in the transaction that reads it
    (a `get_or_create` outside it took a transaction and a commit of its own). Two imports of one
    new file at once: the second's insert waits on the first's and does nothing; its lock then
    waits for the first's commit and finds the row as the first left it.
    """
    files = TranscriptFile.objects.select_for_update()
    record = locked_known_record(str(path))
    if record is not None:
        return record
    record = TranscriptFile(path=str(path), session_id=path.stem)
    meta = TranscriptFile._meta
    created = TranscriptFile.objects._insert(
        [record],
        fields=[field for field in meta.concrete_fields if field is not meta.pk],
        returning_fields=[meta.pk],
        on_conflict=OnConflict.IGNORE,
    )
    if not created:
        return files.get(path=str(path))
    record.pk = created[0][0]
    record._state.adding = False
    record._state.db = files.db
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

    def feed(self, raw: bytes | memoryview) -> None:
        record = self.record
        record.lines += 1
        self.result.lines += 1
        line = quick_object(raw)
        if line is not None and (dropped := dropped_by_type(line)) is not None:
            # What _line does with a line of a skipped type (most of the bytes), without the rest.
            prompt_id, entrypoint = dropped
            if prompt_id:
                record.last_prompt_id = prompt_id
            if entrypoint:
                record.entrypoint = entrypoint[:32]
            return
        if type(raw) is memoryview:
            raw = raw.tobytes()  # a kept line (small) or a bad one: the checks below need bytes
        if line is None or not orjson_reads_exactly(raw):
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                return
            try:
                line = json_object(text)
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


class ImportAnnouncer:
    """The Messages one import_all writes, announced at most every NOTE_SECONDS, a batch per Motion.

    `message_created` goes out for every Message once, in order, after its commit, with
    `newest_of_batch` on the newest post of each Motion's batch (`message_fit.announce`): wakes/
    moves that Motion's consider-loop clocks once a batch (`wakes.loop.note_post`, a handful of
    statements). Each file's commit was a batch of its own, so a directory of transcripts in one
    Motion paid the note for every file (about a tenth of bench/importer.py's wall time). Here the
    first commit is announced at once, those within NOTE_SECONDS of the last announcement wait for
    the next commit past it, and `flush` takes the rest when the import ends: mentions and the
    clocks learn of a post at most that much later, as with the runner's own pacing
    (runner/announcing.py, which groups one turn's, always one Motion's).
    """

    def __init__(
        self,
        interval: float | None = None,
        *,
        announce: Callable[[list[Message]], None] = announce_messages,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = NOTE_SECONDS if interval is None else interval
        self._announce = announce
        self._clock = clock
        self.pending: list[Message] = []  # committed, not yet announced
        self._announced_at: float | None = None
        # import_files' threads commit and announce; each batch goes out whole and once. Held
        # while announcing, after the caller's commit: no database lock is held meanwhile.
        self._lock = threading.RLock()

    def __call__(self, messages: list[Message]) -> None:
        """A writer's on-commit announcement of the Messages one write inserted."""
        with self._lock:
            self.pending.extend(messages)
            if self._announced_at is None or self._clock() - self._announced_at >= self.interval:
                self.flush()

    def flush(self) -> None:
        """What waits, now: one batch per Motion, each in the order it was committed."""
        with self._lock:
            pending, self.pending = self.pending, []
            if not pending:
                return
            by_motion: dict[Any, list[Message]] = {}
            for message in pending:
                by_motion.setdefault(message.motion_id, []).append(message)
            for batch in by_motion.values():
                self._announce(batch)
            self._announced_at = self._clock()


class ChunkReader:
    """Reads a file's chunks into one buffer, reused for every file one thread reads.

    A fresh `bytes` of each chunk (5 MB a file in bench/importer.py) was faulted into memory page
    by page every time, ~45 ms of system time over 102 MB; the buffer is faulted in once, and grows
    only for a longer chunk. A chunk is used (its lines fed) before the next read overwrites it."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def read(self, path: Path, offset: int, size: int) -> int:
        """Up to `size` bytes of `path` from `offset` into `buffer`; how many were read."""
        if len(self.buffer) < size:
            self.buffer = bytearray(size)  # a new one: views of the old may still be alive
        view = memoryview(self.buffer)
        read = 0
        with path.open("rb", buffering=0) as handle:
            handle.seek(offset)
            while read < size and (got := handle.readinto(view[read:size])):
                read += got
        return read


def lines_of(chunk: bytes | bytearray, end: int) -> Iterator[memoryview]:
    """The lines of `chunk[:end]` as `split(b"\\n")` gives them, as views: a dropped line is never
    copied out of the chunk (the copies cost ~30 ms per 100 MB, a seventh of parsing it)."""
    view = memoryview(chunk)
    start = 0
    while start <= end:
        stop = chunk.find(b"\n", start, end + 1)
        if stop < 0:
            stop = end
        yield view[start:stop]
        start = stop + 1


def import_file(
    path: Path | str,
    *,
    announce: Callable[[list[Message]], None] | None = None,
    chunks: ChunkReader | None = None,
) -> FileResult:
    """Read one transcript file on from its stored offset. Safe to call any time, twice at once,
    or after the file was rotated, truncated mid-line or deleted. `announce`: what is called on
    commit with the Messages written (default: announced at once, `message_fit.announce`);
    `chunks`: the calling thread's ChunkReader, when it reads several files."""
    path = Path(path)
    result = FileResult(path=str(path))
    chunks = chunks or ChunkReader()
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
                save_record(record)
                return result
            claimed = claimed_session(record.session_id)
            if claimed is None:
                save_record(record)
                note_unclaimed(record.session_id, path)
                result.unclaimed = True
                return result
            # What the stat saw, up to a chunk: lines written since wait for the next read.
            size = chunks.read(path, record.offset, min(CHUNK_BYTES, stat.st_size - record.offset))
            chunk = chunks.buffer
            end = chunk.rfind(b"\n", 0, size)
            if end < 0:
                # Only a line still being written: leave it for the next read.
                save_record(record)
                return result
            reader = TranscriptReader(
                record, claimed.session, fed_by_runner=claimed.fed_by_runner, newest_end=claimed.newest_end
            )
            if announce is not None:
                reader.writer.announce = announce
            for raw in lines_of(chunk, end):
                reader.feed(raw)
            reader.flush()
            record.offset += end + 1
            record.updated_at = timezone.now()
            save_record(record)
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
    announcer = ImportAnnouncer()
    try:
        with collector_spares_what_is_alive():
            results = import_files(paths, announce=announcer)
        for result in results:
            totals.add(result)
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


def files_with_news(paths: list[Path]) -> int:
    """How many of `paths` hold bytes their TranscriptFile has not read (new, grown, rotated or
    rewritten), by their stat and one query. Only a guess for import_files' threads: every file
    is read as before whatever this says."""
    read = {
        path: (inode, offset)
        for path, inode, offset in TranscriptFile.objects.filter(
            path__in=[str(p) for p in paths]
        ).values_list("path", "inode", "offset")
    }
    news = 0
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        if read.get(str(path)) != (stat.st_ino, stat.st_size):
            news += 1
    return news


@contextmanager
def collector_spares_what_is_alive() -> Iterator[None]:
    """What is alive now (Django, the apps, the worker's own) out of the cyclic collector's sight
    until the block ends (`gc.freeze`, then `gc.unfreeze`).

    An import allocates a container for every object and array of every line it parses
    (orjson's, over 102 MB), so the collector runs often, and each full collection walked the
    ~120,000 objects the process had loaded: ~90 ms, about one per 100 MB imported, a tenth of
    bench/importer.py's CPU (~18 ms with them frozen). The import's own objects are collected as
    before; what was alive is in sight again afterwards, in the oldest generation. A process
    that froze what it loaded (wsgi.py) keeps it frozen: then this does nothing.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def import_files(
    paths: list[Path], *, announce: Callable[[list[Message]], None], chunks: ChunkReader | None = None
) -> list[FileResult]:
    """`import_file` of each path, the results in the paths' order; read by IMPORT_THREADS threads,
    each with a ChunkReader of its own (`chunks`: the calling thread's).

    A file's import waits on PostgreSQL for about a quarter of its time (its statements, the
    insert, the commit's flush), and the rest is Python holding the GIL: two threads, each with its
    own connection and transactions, parse one file while the other's waits (bench/importer.py).
    Each file is one transaction as before, and two imports of one file at once were always safe
    (its row lock, the ids): the threads only take the files from one list. Inside a caller's
    transaction every file is read in it, by the caller's thread, as before; SQLite serializes
    its writers anyway.
    """
    threads = min(IMPORT_THREADS, len(paths))
    if (
        threads < 2
        or connection.in_atomic_block
        or connection.vendor != "postgresql"
        or files_with_news(paths) < 2  # a periodic tick: no second connection for nothing
    ):
        chunks = chunks or ChunkReader()
        return [import_file(path, announce=announce, chunks=chunks) for path in paths]
    results: dict[int, FileResult] = {}
    failures: list[BaseException] = []
    todo = iter(enumerate(paths))
    taking = threading.Lock()

    def read_files(chunks: ChunkReader) -> None:
        while not failures:
            with taking:
                index, path = next(todo, (-1, None))
            if path is None:
                return
            try:
                results[index] = import_file(path, announce=announce, chunks=chunks)
            except BaseException as exc:  # the caller's thread raises it, once the others stop
                failures.append(exc)

    def helper() -> None:
        try:
            read_files(ChunkReader())
        finally:
            connections.close_all()  # this thread's own connection(s): Django's are per thread

    helpers = [threading.Thread(target=helper, name=f"import-transcripts-{n}") for n in range(threads - 1)]
    for thread in helpers:
        thread.start()
    try:
        read_files(chunks or ChunkReader())
    finally:
        for thread in helpers:
            thread.join()
    if failures:
        raise failures[0]
    return [results[index] for index in range(len(paths))]


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
