"""Lines of Claude Code the apps' thread shows differently from memory-lane's record (issues 22 and
24). The model's thinking is a collapsed step of the thread (and a `Thought` in memory-lane's
record); a user line that is no tool result (a `claude -p` prompt's echo, a compaction's summary)
is never in the apps' thread: the own binding drops it unread, and the memory_lane binding writes
it into memory-lane's record (tests/motion_runner/memory_lane/test_memory_lane_record.py)."""

from __future__ import annotations

import json
import uuid

import pytest

from motion_runner.harnesses import EventKind
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.models import Message

SESSION = str(uuid.uuid4())


def thinking_line(text: str = "weighing the README", block_type: str = "thinking") -> dict:
    return {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "session_id": SESSION,
        "message": {
            "id": "msg_1",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [{"type": block_type, "thinking": text, "signature": "sig"}],
        },
    }


def user_line(content) -> dict:
    return {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "session_id": SESSION,
        "message": {"role": "user", "content": content},
    }


def events_of(line: dict):
    return ClaudeCodeParser(SESSION).feed(line)


def test_a_thinking_block_is_a_thinking_event_under_its_lines_id():
    line = thinking_line()
    [event] = events_of(line)
    assert (event.kind, event.text, event.uuid) == (EventKind.THINKING, "weighing the README", line["uuid"])


def test_an_empty_or_redacted_thinking_block_is_nothing():
    assert events_of(thinking_line("")) == []
    assert events_of(thinking_line("x", block_type="redacted_thinking")) == []


@pytest.mark.parametrize("content", ["Answer @justin in the thread.", [{"type": "text", "text": "Answer."}]])
def test_a_user_line_that_is_no_tool_result_is_a_prompt_event(content):
    line = user_line(content)
    [event] = events_of(line)
    assert event.kind == EventKind.PROMPT and event.uuid == line["uuid"] and event.text.startswith("Answer")


def test_a_tool_result_line_is_still_a_tool_result():
    line = user_line([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}])
    assert [event.kind for event in events_of(line)] == [EventKind.TOOL_RESULT]


@pytest.mark.django_db
def test_the_own_record_keeps_the_thinking_and_drops_the_prompts_echo(client, scribe):
    lines = [thinking_line(), user_line("Answer @justin in the thread.")]
    answer = client.post(
        "/api/motions/harbor/stream/",
        json.dumps({"harness": "claude-code", "session_id": SESSION, "events": lines}),
        content_type="application/json",
        **scribe.headers,
    )
    assert answer.status_code == 200
    assert (answer.json()["imported"], answer.json()["skipped"]) == (1, 1)
    assert Message.objects.get(pk=lines[0]["uuid"]).kind == "thinking"
    assert not Message.objects.filter(pk=lines[1]["uuid"]).exists()
