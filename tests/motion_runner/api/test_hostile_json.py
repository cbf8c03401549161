"""Input no server should choke on gets a clear answer, not a 500 (issue 20 item 14; api/bounds.py,
lib/json_depth.py): lone surrogates in a stream line or a hook, JSON nested too deep to read or
to store in an ingested line."""

from __future__ import annotations

import copy
import json

import pytest

from motion_runner.models import Message, MotionSession
from tests import recorded
from tests.stream_support import HOOKS, SESSION, body

pytestmark = pytest.mark.django_db


def with_lone_surrogate(data: dict, marker: str) -> str:
    """`data` as JSON with `marker` (inside one of its strings) written as a lone \\ud800."""

    return json.dumps(data).replace(marker, "\\ud800", 1)


def test_a_lone_surrogate_in_a_stream_line_is_a_400_saying_where(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    events[3]["message"]["content"][0]["text"] = "MARK and the rest"
    response = client.post(
        "/api/motions/harbor/stream/",
        with_lone_surrogate(body(events), "MARK"),
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 400
    assert (
        "$.events[3].message.content[0].text holds a lone UTF-16 surrogate"
        in response.json()["error"]["detail"]
    )
    assert not Message.objects.exists()


def test_a_lone_surrogate_in_a_hook_is_a_400(client, scribe):
    hook = {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": "MARK", "prompt_id": "p1"}
    response = client.post(
        f"{HOOKS}?motion=harbor",
        with_lone_surrogate(hook, "MARK"),
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 400
    assert "$.prompt" in response.json()["error"]["detail"]


def test_a_surrogate_pair_is_a_character_and_kept(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    events[3]["message"]["content"][0]["text"] = "MARK"
    raw = body(events)

    text = json.dumps(raw).replace("MARK", "\\ud83d\\ude00", 1)
    response = client.post(
        "/api/motions/harbor/stream/", text, content_type="application/json", **scribe.headers
    )
    assert response.status_code == 200
    assert Message.objects.filter(text="\U0001f600").exists()


INGEST_KEY = "ingest-key-for-the-hostile-json-tests"


def ingest(client, lines: list[str], username: str = "justin"):
    return client.post(
        "/api/ingest/",
        {"lines": lines, "username": username, "source": "doors"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {INGEST_KEY}",
    )


def test_an_ingested_line_nested_ten_thousand_deep_is_an_error_of_that_line(client, settings, harbor):

    settings.INGEST_API_KEY = INGEST_KEY
    deep = (
        json.dumps({"sessionId": SESSION, "type": "user"})[:-1]
        + ', "x": '
        + "[" * 10_000
        + "]" * 10_000
        + "}"
    )
    response = ingest(client, [deep])
    assert response.status_code == 200
    assert response.json()["errors"] == ["line 0: not a JSON object (nested too deep to read)"]


def test_an_ingested_line_deep_enough_to_read_but_not_to_store_is_an_error_of_that_line(
    client, settings, scribe, harbor
):

    settings.INGEST_API_KEY = INGEST_KEY
    MotionSession.objects.create(session_id=SESSION, motion=harbor, agent=scribe.agent, harness="claude-code")
    reply = next(line for line in recorded.lines("transcript") if line.get("type") == "assistant")
    deep = json.dumps(reply)[:-1] + ', "x": ' + "[" * 900 + "]" * 900 + "}"
    response = ingest(client, [deep])
    assert response.status_code == 200
    assert response.json()["errors"] == ["line 0: nested deeper than 64 levels"]
