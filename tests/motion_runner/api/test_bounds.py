"""Issue 10, "every bound bounded": numbers, times, JSON depth, NUL and sizes are answered
with a 400 that says why (or kept whole, cut or replaced where the input is a harness's own
line), never a 500 and never a request that holds a worker."""

from __future__ import annotations

import copy
import time
from datetime import UTC, datetime

import pytest
from django.http import QueryDict
from rest_framework.exceptions import ParseError

from motion_runner.api import cursor
from motion_runner.api.bounds import names_shown_typing
from motion_runner.models import Kind, Message
from tests import recorded
from tests.factories import MessageFactory, WatchFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


def read(client, persona, path, **params):
    return client.get(path, params, **persona.headers)


@pytest.fixture
def a_cursor(harbor):
    message = MessageFactory(motion=harbor)
    return cursor.encode(message.created_at, message.id)


@pytest.mark.parametrize("wait", ["nan", "inf", "-inf", "-1", "1e999"])
def test_a_wait_that_is_no_finite_positive_number_is_a_400_at_once(client, scribe, a_cursor, wait):
    started = time.monotonic()

    response = read(client, scribe, "/api/motions/harbor/messages/", after=a_cursor, wait=wait)

    assert response.status_code == 400 and "wait" in response.json()["error"]["fields"]
    assert time.monotonic() - started < 20  # refused, not waited for (a wait lasts up to 25 s)


def test_a_poll_naming_more_typers_than_a_thread_shows_is_a_400_that_says_so(client, scribe, a_cursor):
    crowd = [f"p{n}" for n in range(51)]

    response = read(client, scribe, "/api/motions/harbor/messages/", after=a_cursor, wait=1, typing=crowd)

    assert response.status_code == 400
    assert "at most 50 names" in str(response.json()["error"]["fields"]["typing"])


def test_the_names_a_poll_shows_typing_are_read_whole_a_comma_in_one_included():
    assert names_shown_typing(QueryDict("typing=ann%2C+jr&typing=bo")) == ["ann, jr", "bo"]
    assert names_shown_typing(QueryDict("typing=")) == []
    assert names_shown_typing(QueryDict("wait=20")) is None


@pytest.mark.parametrize(
    ("name", "value"), [("limit", "nan"), ("limit", "0"), ("overlap", "-5"), ("limit", "2.5")]
)
def test_a_limit_or_overlap_out_of_range_is_a_400(client, scribe, name, value):
    response = read(client, scribe, "/api/motions/harbor/messages/", **{name: value})

    assert response.status_code == 400 and name in response.json()["error"]["fields"]


@pytest.mark.parametrize("path", ["/api/motions/harbor/messages/", "/api/turns/"])
def test_an_impossible_date_is_a_400(client, scribe, path):
    response = read(client, scribe, path, since="2026-13-45T00:00:00Z")

    assert response.status_code == 400 and "since" in response.json()["error"]["fields"]


def test_a_cursor_at_the_start_of_time_with_overlap_is_answered(client, scribe, harbor):
    MessageFactory(motion=harbor)
    start_of_time = cursor.encode(datetime(1, 1, 1, tzinfo=UTC), "00000000-0000-0000-0000-000000000000")

    response = read(client, scribe, "/api/motions/harbor/messages/", after=start_of_time, overlap=5)

    assert response.status_code == 200 and len(response.json()["results"]) == 1


def test_json_nested_a_hundred_thousand_deep_is_a_400(client, scribe):
    deep = "[" * 100_000 + "]" * 100_000
    body = '{"text": "hi", "extra": ' + deep + "}"

    response = client.post(
        "/api/motions/harbor/messages/", body, content_type="application/json", **scribe.headers
    )

    assert response.status_code == 400 and "nested" in response.json()["error"]["detail"]
    assert not Message.objects.exists()


def test_a_nul_in_a_watch_field_is_a_400(client, scribe):
    response = client.post(
        "/api/watches/",
        {"motion": "harbor", "kind": "web_page", "target": "https://example.org/\x00"},
        content_type="application/json",
        **scribe.headers,
    )

    assert response.status_code == 400 and "NUL" in response.json()["error"]["detail"]


def test_a_nul_in_the_query_is_a_400(client, scribe):
    response = read(client, scribe, "/api/motions/harbor/messages/", kind="text\x00")

    assert response.status_code == 400


def test_a_nul_inside_a_stream_events_raw_keeps_the_whole_batch(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    assistant = next(e for e in events if e.get("type") == "assistant")
    assistant["message"]["content"][0]["text"] = "binary \x00 bytes"

    response = client.post(
        "/api/motions/harbor/stream/",
        {"harness": "claude-code", "session_id": SESSION, "events": events},
        content_type="application/json",
        **scribe.headers,
    )

    assert response.status_code == 200, response.content
    assert response.json()["errors"] == []
    assert Message.objects.filter(text__contains="binary \ufffd bytes").exists()


def test_a_ten_megabyte_agent_text_is_cut_not_served_whole(client, scribe, settings):
    events = copy.deepcopy(recorded.first_run())
    assistant = next(e for e in events if e.get("type") == "assistant")
    assistant["message"]["content"][0]["text"] = "x" * 10_000_000

    client.post(
        "/api/motions/harbor/stream/",
        {"harness": "claude-code", "session_id": SESSION, "events": events},
        content_type="application/json",
        **scribe.headers,
    )

    longest = max(len(text) for text in Message.objects.filter(kind=Kind.TEXT).values_list("text", flat=True))
    assert settings.MESSAGE_TEXT_MAX_CHARS < longest < settings.MESSAGE_TEXT_MAX_CHARS + 100


def test_a_form_body_is_refused_with_415(client, scribe):
    response = client.post("/api/motions/harbor/messages/", {"text": "hi"}, **scribe.headers)

    assert response.status_code == 415


def test_a_watch_list_with_a_nul_motion_filter_is_a_400(client, scribe, harbor):
    WatchFactory(motion=harbor, kind="web_page", target="https://example.org/")

    assert read(client, scribe, "/api/watches/", motion="harbor\x00").status_code == 400


@pytest.mark.parametrize(
    "body",
    [
        {"a": [{"b": "x\x00y"}]},  # a NUL deep in a value
        {"a": [{"b\x00": "x"}]},  # in a key
        ["\x00"],
        "\x00",
        {"a": [[[[{"b": 1}]]]]},  # one level too deep (max_depth 5 below)
        [[[[[[]]]]]],
    ],
)
def test_the_walk_refuses_every_nul_and_every_body_too_deep(body):
    from motion_runner.api.bounds import walk_json

    with pytest.raises(ParseError):
        walk_json(copy.deepcopy(body), max_depth=5, replace_nul=False)


@pytest.mark.parametrize("body", [{"a": [{"b": "x"}], "c": None, "d": 1.5}, [[[{"e": []}]]], "plain", 3])
def test_a_body_within_bounds_is_left_as_it_is(body):
    from motion_runner.api.bounds import walk_json

    assert walk_json(copy.deepcopy(body), max_depth=5, replace_nul=False) == body
