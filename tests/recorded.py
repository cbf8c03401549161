"""Lines recorded from the real Claude Code CLI (tests/recordings/record_claude_code.py)."""

from __future__ import annotations

import json
from pathlib import Path

RECORDINGS = Path(__file__).parent / "recordings" / "claude-code"
SESSION = "read-then-reply"


def lines(kind: str, name: str = SESSION) -> list[dict]:
    """kind: stream | transcript | hooks"""
    path = RECORDINGS / f"{name}.{kind}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def raw_lines(kind: str, name: str = SESSION) -> list[bytes]:
    return [line + b"\n" for line in (RECORDINGS / f"{name}.{kind}.jsonl").read_bytes().splitlines() if line]


def session_id(name: str = SESSION) -> str:
    return next(line["session_id"] for line in lines("stream", name) if line.get("session_id"))


def first_run(name: str = SESSION) -> list[dict]:
    """The stream lines of the first `claude -p` process (up to and including its result)."""
    out = []
    for line in lines("stream", name):
        out.append(line)
        if line.get("type") == "result":
            return out
    return out


def hooks(event: str, name: str = SESSION) -> list[dict]:
    return [h for h in lines("hooks", name) if h["hook_event_name"] == event]
