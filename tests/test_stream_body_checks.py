"""The body's checks, made cheaper for a re-post (issue 14, item 2), decide and answer exactly as
before: the parser against DRF's own JSONParser followed by the full walk, and StreamBody's
events against `ListField(child=JSONField())`, over bodies that hit every check."""

from __future__ import annotations

import io
import json

import pytest
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from motion_runner.api.bounds import BoundedJSONParser, deeper_than, walk_json
from motion_runner.api.stream_batch import StreamBody
from motion_runner.conf import app_settings
from tests import recorded

SESSION = recorded.session_id()
DEPTH = 64  # API_MAX_JSON_DEPTH's default


class View:
    def __init__(self, replace_nul: bool):
        self.replace_nul = replace_nul


class Request:
    """Stands for DRF's Request: the parser notes on it what it saw."""


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


BODIES: list[bytes] = [
    json.dumps({"harness": "claude-code", "session_id": SESSION, "events": recorded.first_run()}).encode(),
    b'{"events": [{"text": "a\\u0000b", "\\u0000key": 1}]}',  # NUL in a value and in a key
    b'{"events": [{"text": "a\\\\u0000b"}]}',  # an escaped backslash: no NUL at all
    b'{"events": [{"n": 1e999}, {"n": -1e999}, {"n": 1.5}]}',  # numbers past a float: inf
    b'{"events": [{"n": NaN}]}',
    b'{"events": [{"n": Infinity}]}',
    b"{not json",
    b"",
    b'{"a": "\xff"}',  # not UTF-8
    b'{"a": 1}\xe2',  # a truncated sequence at the end
    b'"a string"',
    b"[1, 2]",
    b"12",
    ("[" * 64 + "]" * 64).encode(),
    ("[" * 65 + "]" * 65).encode(),
    ('{"a": ' * 70 + "1" + "}" * 70).encode(),
    ("[" * 5000 + "]" * 5000).encode(),  # past Python's own recursion limit
    b'{"events": [{"a": "\\u0000"}], "deep": ' + nested(70).encode() + b"}",
]


def reference_parse(raw: bytes, replace_nul: bool):
    """What BoundedJSONParser did before: DRF's parse, then the walk."""
    try:
        data = JSONParser().parse(io.BytesIO(raw), None, {"encoding": "utf-8"})
    except RecursionError as exc:
        raise ParseError(f"the JSON is nested deeper than {app_settings.API_MAX_JSON_DEPTH} levels") from exc
    return walk_json(data, max_depth=app_settings.API_MAX_JSON_DEPTH, replace_nul=replace_nul)


def outcome(parse, raw: bytes, replace_nul: bool):
    try:
        return "ok", parse(raw, replace_nul)
    except ParseError as exc:
        return "error", str(exc.detail)


def new_parse(raw: bytes, replace_nul: bool):
    return BoundedJSONParser().parse(
        io.BytesIO(raw), None, {"encoding": "utf-8", "view": View(replace_nul), "request": Request()}
    )


@pytest.mark.parametrize("replace_nul", [True, False])
@pytest.mark.parametrize("raw", BODIES, ids=range(len(BODIES)))
def test_the_parser_answers_as_drfs_parse_and_the_full_walk(raw, replace_nul):
    assert app_settings.API_MAX_JSON_DEPTH == DEPTH
    expected, got = outcome(reference_parse, raw, replace_nul), outcome(new_parse, raw, replace_nul)
    assert got[0] == expected[0]
    if got[0] == "error":
        assert got[1] == expected[1]
    else:  # NaN != NaN: compared as JSON text
        assert json.dumps(got[1]) == json.dumps(expected[1])


def test_the_parser_notes_whether_every_number_came_out_finite():
    def seen(raw: bytes) -> bool:
        request = Request()
        BoundedJSONParser().parse(io.BytesIO(raw), None, {"encoding": "utf-8", "request": request})
        return request.body_is_plain_json

    assert seen(b'{"n": 1.5, "m": 2, "e": 1e300}') is True
    assert seen(b'{"events": [{"n": 1e999}]}') is False
    assert seen(b'{"events": [{"n": -1e400}]}') is False


@pytest.mark.parametrize("levels", [1, 2, 63, 64, 65, 100])
def test_deeper_than_agrees_with_the_walk(levels):
    value = json.loads(nested(levels))
    mixed = {"a": [1, "x", {"b": value}], "c": None}
    for data, depth in ((value, levels), (mixed, levels + 3)):
        assert deeper_than(data, DEPTH) is (depth > DEPTH)
    assert deeper_than("text", 0) is False and deeper_than([], 1) is False and deeper_than([], 0) is True


class ReferenceBody(StreamBody):
    """StreamBody as it was: a plain ListField of JSONFields."""

    events = serializers.ListField(child=serializers.JSONField(), allow_empty=True)


EVENTS_CASES: list[str] = [
    json.dumps({"session_id": SESSION, "events": recorded.first_run()}),
    json.dumps({"session_id": SESSION, "events": []}),
    json.dumps({"session_id": SESSION, "events": [{"a": 1}, None, {"b": 2}, None]}),
    json.dumps({"session_id": SESSION, "events": [None]}),
    '{"session_id": "SESSION", "events": [{"a": 1}, {"n": 1e999}, [1e999], 1e999]}'.replace(
        "SESSION", SESSION
    ),
    json.dumps({"session_id": SESSION, "events": "not a list"}),
    json.dumps({"session_id": SESSION, "events": {"a": 1}}),
    json.dumps({"session_id": SESSION, "events": 3}),
    json.dumps({"session_id": SESSION, "events": None}),
    json.dumps({"session_id": SESSION}),
    json.dumps({"session_id": SESSION, "events": [1, "two", [3], True, {"x": None}]}),
    json.dumps({"session_id": "not-a-uuid", "events": [None]}),
    json.dumps({"harness": "nope", "session_id": SESSION, "events": [{"a": 1}]}),
    json.dumps([1, 2]),
]


@pytest.mark.parametrize("with_request", [True, False])
@pytest.mark.parametrize("text", EVENTS_CASES, ids=range(len(EVENTS_CASES)))
def test_the_events_validate_as_a_list_of_json_fields(text, with_request):
    request = Request()
    data = BoundedJSONParser().parse(
        io.BytesIO(text.encode()), None, {"encoding": "utf-8", "request": request}
    )
    body = StreamBody(data=data, context={"request": request} if with_request else {})
    reference = ReferenceBody(data=data)
    assert body.is_valid() == reference.is_valid()
    assert json.dumps(body.errors) == json.dumps(reference.errors)
    if reference.is_valid():
        assert body.validated_data == reference.validated_data


@pytest.mark.django_db
def test_a_non_finite_number_in_an_event_is_the_same_400_as_before(client, scribe):
    raw = '{"session_id": "SESSION", "events": [{"type": "user"}, {"type": "assistant", "n": 1e999}]}'
    raw = raw.replace("SESSION", SESSION)
    response = client.post(
        "/api/motions/harbor/stream/", raw, content_type="application/json", **scribe.headers
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"events": {"1": ["Value must be valid JSON."]}}
