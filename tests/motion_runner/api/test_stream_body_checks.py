"""The body's checks decide and answer as DRF's own JSONParser followed by the full walk, and
StreamBody's events as `ListField(child=JSONField())`, over bodies that hit every check. The
parser reads with `read_json` (orjson, the standard library for what orjson refuses or would read
differently): the values are compared with their types (tests/motion_runner/site/test_json_text.py)."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from motion_runner.api import bounds
from motion_runner.api.bounds import BoundedJSONParser, walk_json
from motion_runner.api.stream_batch import StreamBody
from motion_runner.conf import app_settings
from motion_runner.lib.json_depth import deeper_than
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
    # A string ending in an escaped backslash, then too deep: its closing quote is a real one.
    b'{"a": "x\\\\", "deep": ' + nested(70).encode() + b', "b": "\\"["}',
    # Where orjson reads otherwise than the standard library, or not at all.
    b'{"n": [18446744073709551616, -9223372036854775809, 18446744073709551615, -9223372036854775808]}',
    b'{"n": 123456789012345678901234567890}',  # past 64 bits: kept exact (the standard library reads it)
    b'{"n": [9223372036854775808.0, 1e20, -1e19, 9.2e18, 1.7976931348623157e308]}',
    b'{"n": 1.7976931348623159e308}',  # rounds past the largest float: inf
    b'{"s": "\\ud800", "t": "\\udfff x"}',  # lone surrogates
    b'{"s": "\\ud83d\\ude00"}',  # a pair
    "\ufeff{}".encode(),  # a byte order mark
    b'{"a": 1, "b": 2, "a": 3}',  # a repeated key: the last value, at the first place
    b'{"a": "\x01"}',  # a raw control character
    b"[1,]",
    b"01",
    b'{"a": "\\x"}',
    b"[1] x",
    b" \x0c1",
    b'{"n": -0, "m": -0.0, "k": 5e-324, "j": 2.4703282292062327e-324}',
    b'{"n": 1E400}',
    b'{"e": []}' + b" " * 3,
    ("[" * 1100 + "]" * 1100).encode(),  # past orjson's own depth limit
]


def reference_parse(raw: bytes, replace_nul: bool):
    """What BoundedJSONParser did before: DRF's parse, a lone surrogate refused, then the walk."""
    try:
        data = JSONParser().parse(io.BytesIO(raw), None, {"encoding": "utf-8"})
    except RecursionError as exc:
        raise ParseError(f"the JSON is nested deeper than {app_settings.API_MAX_JSON_DEPTH} levels") from exc
    bounds.refuse_lone_surrogates(data)
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


def typed(value) -> str:
    """A value as JSON text: an int and a float, True and 1, -0.0 and 0.0 all differ (NaN is NaN)."""
    return json.dumps(value)


@pytest.mark.parametrize("replace_nul", [True, False])
@pytest.mark.parametrize("raw", BODIES, ids=range(len(BODIES)))
def test_the_parser_answers_as_drfs_parse_and_the_full_walk(raw, replace_nul):
    assert app_settings.API_MAX_JSON_DEPTH == DEPTH
    expected = outcome(reference_parse, raw, replace_nul)
    got = outcome(new_parse, raw, replace_nul)
    assert got[0] == expected[0]
    if got[0] == "error":
        assert got[1] == expected[1]
    else:
        assert typed(got[1]) == typed(expected[1])


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=30,
)


@given(json_values, st.booleans())
def test_a_generated_body_reads_as_drfs_parse_and_the_walk_read_it(value, ascii_only):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    expected = outcome(reference_parse, raw, True)
    got = outcome(new_parse, raw, True)
    assert got[0] == expected[0]
    assert typed(got[1]) == typed(expected[1])


NUMBER = r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?"


@given(st.from_regex(NUMBER, fullmatch=True))
def test_every_number_reads_as_the_standard_library_reads_it(number):
    raw = f'{{"n": [{number}, -{number.lstrip("-")}]}}'.encode()
    expected = outcome(reference_parse, raw, False)
    got = outcome(new_parse, raw, False)
    assert got[0] == expected[0]
    assert typed(got[1]) == typed(expected[1])


def test_a_plain_body_is_read_by_orjson(monkeypatch):
    raw = BODIES[0]
    expected = typed(json.loads(raw))

    def refuse(*args, **kwargs):
        raise AssertionError("read by the standard library")

    monkeypatch.setattr("motion_runner.lib.json_text.json.loads", refuse)
    assert typed(new_parse(raw, True)) == expected


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
