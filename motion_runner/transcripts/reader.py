"""One chunk of a transcript file's lines read as the events they say, for one claimed session,
and handed to the one way in (ingest.entry) like the stream API's and the hooks'."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..harnesses import Event, EventKind, get_adapter
from ..harnesses.base import json_object
from ..ingest.entry import Line, Producer, Written
from ..ingest.sessions import ClaimedSession
from ..ingest.writer import IngestContext
from ..models import Source, TranscriptFile
from .lines import (
    HARNESS,
    SKIPPED_SYSTEM_SUBTYPES,
    SKIPPED_TYPES,
    prompt_message,
    turn_end_uuid,
    typed_prompt,
)

log = logging.getLogger(__name__)


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
    """One transcript file's lines read as the events (and typed prompts) they say, for one
    claimed session: the importer's adapter, which the one way in (ingest.entry.write_read)
    feeds line by line and tells what it could not write."""

    def __init__(self, record: TranscriptFile, claimed: ClaimedSession):
        """`claimed`: the file's session as `claimed_session` read it."""
        self.record = record
        self.session = claimed.session
        self.owned_by_runner = claimed.fed_by_runner
        self.parser = get_adapter(HARNESS).new_parser(
            self.session.session_id, recorded_ends=claimed.recorded_ends
        )
        self.effort = ""  # the newest line's, as the harness said it
        self.result = FileResult(path=record.path)

    def producer(self) -> Producer:
        """Who writes these lines: the session's agent, from a terminal, matched against the
        hooks' copies of the same lines."""
        session = self.session
        return Producer(
            IngestContext(
                motion=session.motion,
                agent=session.agent,
                harness=HARNESS,
                source=Source.TERMINAL,
                session_id=session.session_id,
                source_file=self.record.path,
                match_twins=True,
                fill_in=True,
            )
        )

    @property
    def headless(self) -> bool:
        """A `claude -p` run: whoever launched it has its stdout, with the prompt and the result
        event; the transcript adds neither, or a second turn end would stand beside the result's."""
        return self.record.entrypoint.startswith("sdk")

    def _note(self, reason: str) -> None:
        """A line skipped: counted on the file, the latest reason kept for the admin, logged."""
        self.record.last_error = reason[:500]
        log.info("transcript %s: %s", self.record.path, reason)

    def read(self, raw: bytes) -> Line | None:
        """The line's events, numbered as the file's line; None for a line that says nothing to
        write or could not be read (counted on the file)."""
        record = self.record
        record.lines += 1
        self.result.lines += 1
        if not raw.strip():
            return None
        try:
            line = json_object(raw)
        except (ValueError, RecursionError) as exc:  # nested too deep for json.loads: bad too
            record.bad_lines += 1
            self._note(f"line {record.lines} is not a JSON object ({exc})")
            return None
        try:
            return self._line(line)
        except Exception as exc:  # an unexpected shape must not stop the file
            record.bad_lines += 1
            log.exception("transcript %s line %s", record.path, record.lines)
            self._note(f"line {record.lines} could not be read: {exc}")
            return None

    def _line(self, line: dict[str, Any]) -> Line | None:
        kind = line.get("type")
        session_id = self.session.session_id
        if line.get("promptId"):
            self.record.last_prompt_id = str(line["promptId"])
        if line.get("entrypoint"):
            self.record.entrypoint = str(line["entrypoint"])[:32]
        if kind == "cost-state":
            return self._cost(line)
        if kind in SKIPPED_TYPES:
            return None
        if kind == "system" and line.get("subtype") in SKIPPED_SYSTEM_SUBTYPES:
            return None
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
                return Line(self.record.lines, built=[message])
        events = self.parser.feed(line)
        self.effort = str(line.get("effort") or "")
        said = []
        for event in events:
            if event.kind == EventKind.UNKNOWN:
                self.record.unknown_lines += 1
                self._note(
                    f"line {self.record.lines}: a {kind}/{line.get('subtype', '')} line this importer does not know; skipped",
                )
                continue
            event.cwd = event.cwd or str(line.get("cwd") or "")
            said.append(event)
        return Line(self.record.lines, said, effort=self.effort) if said else None

    def _cost(self, line: dict[str, Any]) -> Line | None:
        """cost-state holds the session's running total: the growth since the last one is the
        cost of the turn that just ended, stamped on that turn's end for a terminal session."""
        record = self.record
        try:
            total = Decimal(str(line.get("totalCostUSD")))
        except (InvalidOperation, ValueError):
            return None
        previous = record.cost_usd if record.cost_usd is not None and record.cost_usd <= total else Decimal(0)
        record.cost_usd = total
        if self.owned_by_runner or self.headless or not record.last_prompt_id:
            return None
        event = Event(
            EventKind.TURN_END,
            uuid=turn_end_uuid(self.session.session_id, record.last_prompt_id),
            session_id=self.session.session_id,
            subtype="success",
            cost_usd=total - previous,
            raw=line,
        )
        return Line(self.record.lines, [event], effort=self.effort)

    def unreadable(self, number: int, exc: Exception) -> str:
        """A line whose events could not be written: counted on the file, noted, logged; the
        reason, as noted, is returned."""
        self.record.bad_lines += 1
        log.error("transcript %s line %s", self.record.path, number, exc_info=exc)
        self._note(f"line {number} could not be read: {exc}")
        return self.record.last_error

    def wrote(self, written: Written) -> None:
        """What a write of this reader's lines did, counted on its result."""
        written.reasons = [self.unreadable(number, exc) for number, exc in written.errors]
        self.result.imported += written.imported
        self.result.skipped += written.skipped
