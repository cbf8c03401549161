"""A stream post asks which of its Messages the record holds in the claim's own statement, from the
ids the adapter expects its lines to give (`HarnessAdapter.probable_message_ids`), before the
parse. The guess only decides what is asked early: every parsed id the guess missed is asked after
the parse as before, so a wrong or empty guess changes nothing a post answers or stores."""

from __future__ import annotations

import copy
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from motion_runner import ingest
from motion_runner.api import stream_batch
from motion_runner.harnesses import get_adapter
from motion_runner.harnesses.base import HarnessAdapter
from motion_runner.harnesses.claude_code import ClaudeCodeAdapter, ClaudeCodeParser
from motion_runner.ingest import event_message_id
from motion_runner.models import Message
from tests import recorded

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the known ids ride with the claim on PostgreSQL only"
)
STREAM_RECORDINGS = sorted(
    path
    for path in recorded.CLAUDE_RECORDINGS.glob("*.jsonl")
    if not path.name.endswith((".transcript.jsonl", ".hooks.jsonl"))
)


def post(client, persona, events, session_id=SESSION):
    body = {"harness": "claude-code", "session_id": session_id, "events": events}
    return client.post(
        "/api/motions/harbor/stream/", body, content_type="application/json", **persona.headers
    )


def parsed_ids(lines: list[dict], session_id: str) -> set[uuid.UUID]:
    parser = ClaudeCodeParser(session_id)
    return {
        message_id
        for line in lines
        for event in parser.feed(line)
        if (message_id := event_message_id(event)) is not None
    }


def guessed(lines: list[dict], session_id: str) -> set[uuid.UUID]:
    return {uuid.UUID(text) for text in get_adapter("claude-code").probable_message_ids(lines, session_id)}


@pytest.mark.parametrize("path", STREAM_RECORDINGS, ids=lambda path: path.stem)
def test_the_guess_holds_every_id_the_parser_gives_a_recorded_line(path):
    lines = [line for line in recorded.recorded_lines(path.stem) if line]
    session_id = next((line["session_id"] for line in lines if line.get("session_id")), "")
    ids = parsed_ids(lines, session_id)
    assert ids, path.name  # every recording says something
    assert ids <= guessed(lines, session_id)


def test_the_guess_holds_the_ids_of_every_block_of_a_line():
    line_uuid = str(uuid.uuid4())
    assistant = {
        "type": "assistant",
        "uuid": line_uuid,
        "message": {
            "id": "msg_1",
            "content": [
                {"type": "thinking", "thinking": "…"},
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            ],
        },
    }
    results = {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"},
                {"type": "tool_result", "tool_use_id": "srvtoolu_1", "content": "b"},
            ]
        },
    }
    lines = [assistant, results]
    ids = parsed_ids(lines, SESSION)
    assert len(ids) == 6  # the thinking summary is posted too (collapsed in the thread)
    assert ids <= guessed(lines, SESSION)


def test_an_adapter_without_a_guess_guesses_nothing():
    assert HarnessAdapter.probable_message_ids(get_adapter("codex"), [{"uuid": str(uuid.uuid4())}], "s") == []


def test_a_line_without_a_uuid_of_its_own_is_left_out_of_the_guess():
    line = {"type": "assistant", "message": {"id": "msg_1", "content": [{"type": "text", "text": "hi"}]}}
    assert get_adapter("claude-code").probable_message_ids([line, "not a line", {"uuid": 7}], SESSION) == []


def answers_alike(client, scribe, events) -> dict:
    return post(client, scribe, copy.deepcopy(events)).json()


@postgresql_only
@pytest.mark.parametrize("guess", ["none", "half", "wrong"])
def test_ids_the_guess_missed_are_asked_after_the_parse(client, scribe, monkeypatch, guess):
    events = recorded.lines("stream")
    first = post(client, scribe, events[: len(events) // 2]).json()
    assert first["imported"] > 0
    stored = set(Message.objects.values_list("id", flat=True))
    real = ClaudeCodeAdapter.probable_message_ids

    def partial(self, lines, session_id):
        ids = real(self, lines, session_id)
        if guess == "none":
            return []
        if guess == "half":
            return ids[::2]
        # Not UUIDs, ids of nothing, and the stored ids alone (none of the batch's new ones).
        return ["not-a-uuid", "", str(uuid.uuid4()), *map(str, stored)]

    monkeypatch.setattr(ClaudeCodeAdapter, "probable_message_ids", partial)
    fitted: list[uuid.UUID] = []
    real_fit = ingest.fit_message
    monkeypatch.setattr(ingest, "fit_message", lambda message: fitted.append(message.id) or real_fit(message))
    with CaptureQueriesContext(connection) as queries:
        answer = post(client, scribe, events).json()
    assert answer["imported"] + first["imported"] == Message.objects.count()
    assert answer["skipped"] + answer["imported"] + len(answer["errors"]) == len(events)
    assert not stored & set(fitted)  # a known Message is never built again, guessed or not
    asked_after = [query["sql"] for query in queries if query["sql"].startswith('SELECT "id"')]
    assert len(asked_after) == 1  # the missed ids, in one query after the parse
    assert post(client, scribe, events).json()["imported"] == 0


@postgresql_only
def test_a_repost_answers_alike_with_the_ids_asked_early_or_late(client, scribe, monkeypatch):
    events = recorded.lines("stream")
    post(client, scribe, events[:5])
    early = [answers_alike(client, scribe, events), answers_alike(client, scribe, events)]
    Message.objects.all().delete()
    monkeypatch.setattr(stream_batch, "ONE_STATEMENT_VENDORS", set())
    post(client, scribe, events[:5])
    late = [answers_alike(client, scribe, events), answers_alike(client, scribe, events)]
    assert early == late
    assert early[1]["imported"] == 0 and early[0]["imported"] > 0
