"""Lines recorded from the real Claude Code CLI (bin/record-claude), for tests to read and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from motion_runner.harnesses import Event
from motion_runner.harnesses.claude_code import ClaudeCodeParser

CLAUDE_RECORDINGS = Path(__file__).resolve().parent / "recordings" / "claude-code"


def recording_path(scenario: str) -> Path:
    return CLAUDE_RECORDINGS / f"{scenario}.jsonl"


def recorded_lines(scenario: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in recording_path(scenario).read_text().splitlines() if line.strip()]


def transcript_lines(scenario: str) -> list[dict[str, Any]]:
    path = CLAUDE_RECORDINGS / f"{scenario}.transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recording_meta(scenario: str) -> dict[str, Any]:
    return json.loads((CLAUDE_RECORDINGS / f"{scenario}.meta.json").read_text())


def parse_recording(scenario: str, session_id: str = "") -> list[Event]:
    parser = ClaudeCodeParser(session_id)
    events: list[Event] = []
    for line in recorded_lines(scenario):
        events.extend(parser.feed(line))
    events.extend(parser.finish())
    return events
