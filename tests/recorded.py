"""Lines recorded from the real Claude Code CLI (bin/record-claude), for tests to read and replay."""

from __future__ import annotations

import copy
import json
import re
import uuid
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


# The read-then-reply session scenario (bin/record-claude read-then-reply): its stdout, transcript
# and hook payloads as <name>.{stream,transcript,hooks}.jsonl.
RECORDINGS = CLAUDE_RECORDINGS
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


def terminal_transcript(path: Path, name: str = SESSION) -> Path:
    """Write the recorded (headless) transcript to `path` as a terminal session would have
    written it: entrypoint cli, typed prompts."""
    out = []
    for line in lines("transcript", name):
        if line.get("entrypoint"):
            line["entrypoint"] = "cli"
        if line.get("promptSource"):
            line["promptSource"] = "typed"
        out.append(json.dumps(line))
    path.write_text("\n".join(out) + "\n")
    return path


_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|toolu_\w+|msg_\w+")


def fresh_terminal_transcript(path: Path, new_session: str, name: str = SESSION) -> Path:
    """`terminal_transcript` said anew as session `new_session`: every other id replaced too."""
    terminal_transcript(path, name)
    renewed: dict[str, str] = {session_id(name): new_session}

    def renew(match: re.Match[str]) -> str:
        old = match.group(0)
        if old not in renewed:
            new = uuid.uuid4()
            renewed[old] = str(new) if "-" in old else f"{old.split('_')[0]}_{new.hex[:24]}"
        return renewed[old]

    path.write_text(_IDS.sub(renew, path.read_text()))
    return path


def fresh_copy(line: dict, ids: dict[str, str], session_id: str) -> dict:
    """A recorded stream line again, as if said anew: every uuid, message id and tool id
    replaced consistently (`ids` maps old to new across one run)."""
    line = copy.deepcopy(line)

    def renew(value: str, kind: str) -> str:
        if value not in ids:
            ids[value] = {
                "uuid": str(uuid.uuid4()),
                "msg": f"msg_{uuid.uuid4().hex[:24]}",
                "tool": f"toolu_{uuid.uuid4().hex[:24]}",
            }[kind]
        return ids[value]

    for key in ("uuid", "parentUuid"):
        if isinstance(line.get(key), str):
            line[key] = renew(line[key], "uuid")
    if "session_id" in line:
        line["session_id"] = session_id
    message = line.get("message")
    if isinstance(message, dict):
        if isinstance(message.get("id"), str):
            message["id"] = renew(message["id"], "msg")
        for block in message.get("content") or []:
            if isinstance(block, dict):
                if isinstance(block.get("id"), str) and block.get("type") == "tool_use":
                    block["id"] = renew(block["id"], "tool")
                if isinstance(block.get("tool_use_id"), str):
                    block["tool_use_id"] = renew(block["tool_use_id"], "tool")
    return line


def fresh_stream_events(count: int, session_id: str) -> list[dict]:
    """`count` assistant/user lines of the recorded read-then-reply run, with fresh ids."""
    said = [line for line in first_run() if line.get("type") in ("assistant", "user")]
    out: list[dict] = []
    while len(out) < count:
        ids: dict[str, str] = {}
        out.extend(fresh_copy(line, ids, session_id) for line in said)
    return out[:count]
