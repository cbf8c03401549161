"""Thinking summaries (issue 24): Claude Code's `thinking` block is posted as its own step,
collapsed in the thread and redacted like every text; a `redacted_thinking` block (ciphertext)
posts nothing."""

from __future__ import annotations

import uuid

import pytest

from motion_runner.harnesses import EventKind
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.ingest.redaction import MARK
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Kind, Message
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory, TurnFactory, UserFactory
from tests.fakes.anthropic_api import Reply, Text, Thinking, Usage

GITHUB_TOKEN = "ghp_" + "A1b2C3d4" * 5


def assistant(*blocks) -> dict:
    return {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "session_id": "s1",
        "message": {
            "id": "msg_1",
            "model": "claude-opus-5-5",
            "content": list(blocks),
            "usage": {"input_tokens": 9},
        },
    }


def test_a_thinking_block_is_a_thinking_event_before_the_text():
    events = ClaudeCodeParser("s1").feed(
        assistant(
            {"type": "thinking", "thinking": "The README is short; read it whole.", "signature": "sig"},
            {"type": "text", "text": "Reading it."},
        )
    )

    said = [(e.kind, e.text) for e in events if e.kind != EventKind.ACTIVITY]
    assert said == [
        (EventKind.THINKING, "The README is short; read it whole."),
        (EventKind.TEXT, "Reading it."),
    ]


def test_redacted_thinking_and_empty_thinking_post_nothing():
    events = ClaudeCodeParser("s1").feed(
        assistant({"type": "redacted_thinking", "data": "EuYBCkQ…"}, {"type": "thinking", "thinking": "  "})
    )

    assert [e for e in events if e.kind == EventKind.THINKING] == []


@pytest.mark.django_db
def test_a_thinking_summary_is_stored_redacted_and_served_as_markdown(client):
    turn = TurnFactory(motion=MotionFactory(slug="studio"), agent=AgentFactory(name="magent"))
    writer = EventWriter(
        IngestContext(motion=turn.motion, agent=turn.agent, harness="claude-code", source="runner", turn=turn)
    )
    for event in ClaudeCodeParser("s1").feed(
        assistant(
            {"type": "thinking", "thinking": f"The **token** in .env is {GITHUB_TOKEN}; never repeat it."}
        )
    ):
        writer.write(event)

    stored = Message.objects.get(kind=Kind.THINKING)
    assert GITHUB_TOKEN not in stored.text and MARK in stored.text
    assert stored.turn == turn
    client.force_login(UserFactory(username="justin"))
    served = client.get("/api/motions/studio/messages/").json()["results"]
    [thinking] = [m for m in served if m["kind"] == "thinking"]
    assert "<strong>token</strong>" in thinking["html"] and GITHUB_TOKEN not in thinking["html"]


@pytest.mark.e2e
@pytest.mark.django_db
def test_the_real_cli_s_thinking_lands_as_one_thinking_step(claude_on_fake, claude_binary, tmp_path):
    claude_on_fake.script(
        Reply(
            Thinking("The README holds the answer."),
            Text("It says 42."),
            usage=Usage(input_tokens=90, output_tokens=9),
        )
    )
    motion = MotionFactory(slug="studio", workspace=str(tmp_path))
    queued = enqueue_turn(motion, AgentFactory(name="magent"), "What does the README say?", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == "finished", turn.error
    kinds = list(Message.objects.filter(turn=turn).exclude(source="system").values_list("kind", "text"))
    assert (Kind.THINKING, "The README holds the answer.") in kinds
    assert (Kind.TEXT, "It says 42.") in kinds
