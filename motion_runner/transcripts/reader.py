"""One chunk of a transcript file's lines turned into Messages for one claimed session, written
through EventWriter like the runner and the stream API."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..harnesses import Event, EventKind, get_adapter
from ..harnesses.base import json_object
from ..ingest.writer import EventWriter, IngestContext
from ..models import Message, MotionSession, Source, TranscriptFile, recorded_turn_ends
from .lines import (
    HARNESS,
    SKIPPED_SYSTEM_SUBTYPES,
    SKIPPED_TYPES,
    prompt_message,
    turn_end_uuid,
    typed_prompt,
)
from .routing import runner_owned

log = logging.getLogger(__name__)

WRITE_BATCH = 500


@dataclass
class FileResult:
    path: str
    imported: int = 0
    skipped: int = 0
    lines: int = 0
    unclaimed: bool = False
    missing: bool = False
    rotated: bool = False


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
