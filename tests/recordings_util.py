"""Replaying lines recorded from the real harness CLIs (bin/record-harness) through a parser."""

from __future__ import annotations

import json
from pathlib import Path

from motion_runner.harnesses.base import Event, EventKind, StreamParser

RECORDINGS = Path(__file__).parent / "recordings"
# Events that become Messages (the rest move the activity line or go to the raw log).
POSTED = {EventKind.TEXT, EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.TURN_END, EventKind.ERROR}


def recorded_lines(harness: str, scenario: str) -> list[dict]:
    path = RECORDINGS / harness / f"{scenario}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replay(parser: StreamParser, harness: str, scenario: str) -> list[Event]:
    events: list[Event] = []
    for line in recorded_lines(harness, scenario):
        events.extend(parser.feed(line))
    events.extend(parser.finish())
    return events


def posted(events: list[Event]) -> list[Event]:
    return [event for event in events if event.kind in POSTED]


def kinds(events: list[Event]) -> list[str]:
    return [event.kind for event in posted(events)]
