"""The body's checks, made cheaper for a re-post (issue 14, item 2), decide and answer exactly as
before: the parser against DRF's own JSONParser followed by the full walk, and StreamBody's
events against `ListField(child=JSONField())`, over bodies that hit every check. The parser reads
with orjson where it reads alike (bounds.read_alike): the values are compared with their types,
over bodies where orjson and the standard library differ and over generated ones."""

from __future__ import annotations

import io
import json
import re
from contextlib import nullcontext
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from motion_runner.api import bounds
from motion_runner.api.bounds import UNREAD, BoundedJSONParser, deeper_than, read_alike, walk_json
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
    # A string ending in an escaped backslash, then too deep: its closing quote is a real one.
    b'{"a": "x\\\\", "deep": ' + nested(70).encode() + b', "b": "\\"["}',
    # Where orjson reads otherwise than the standard library, or not at all.
    b'{"n": [18446744073709551616, -9223372036854775809, 18446744073709551615, -9223372036854775808]}',
    b'{"n": 123456789012345678901234567890}',  # past 64 bits: orjson gives a float
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


# Which look vouches for orjson's value: the one read_alike picks by the escapes' density, the
# bytes' (whatever the density), or the walk of the value (as for a body of many escapes).
LOOKS = ["chosen", "bytes", "walk"]


def looking(look: str):
    if look == "bytes":
        return mock.patch.object(bounds, "BYTES_PER_ESCAPE", 1)
    if look == "walk":
        return mock.patch.object(bounds.json_bytes, "structure", return_value=None)
    return nullcontext()


def new_parse(raw: bytes, replace_nul: bool, look: str = "chosen"):
    with looking(look):
        return BoundedJSONParser().parse(
            io.BytesIO(raw), None, {"encoding": "utf-8", "view": View(replace_nul), "request": Request()}
        )


@pytest.mark.parametrize("look", LOOKS)
@pytest.mark.parametrize("replace_nul", [True, False])
@pytest.mark.parametrize("raw", BODIES, ids=range(len(BODIES)))
def test_the_parser_answers_as_drfs_parse_and_the_full_walk(raw, replace_nul, look):
    assert app_settings.API_MAX_JSON_DEPTH == DEPTH
    expected = outcome(reference_parse, raw, replace_nul)
    got = outcome(lambda raw, replace_nul: new_parse(raw, replace_nul, look), raw, replace_nul)
    assert got[0] == expected[0]
    if got[0] == "error":
        assert got[1] == expected[1]
    else:  # NaN != NaN: compared as JSON text
        assert json.dumps(got[1]) == json.dumps(expected[1])


def typed(value) -> str:
    """A value as JSON text: an int and a float, True and 1, -0.0 and 0.0 all differ."""
    return json.dumps(value)


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


@given(json_values, st.booleans(), st.sampled_from(LOOKS))
def test_a_generated_body_reads_as_drfs_parse_and_the_walk_read_it(value, ascii_only, look):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    expected = outcome(reference_parse, raw, True)
    got = outcome(lambda raw, replace_nul: new_parse(raw, replace_nul, look), raw, True)
    assert got[0] == expected[0]
    assert typed(got[1]) == typed(expected[1])


NUMBER = r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?"


@given(st.from_regex(NUMBER, fullmatch=True), st.sampled_from(LOOKS))
def test_every_number_reads_as_the_standard_library_reads_it(number, look):
    raw = f'{{"n": [{number}, -{number.lstrip("-")}]}}'.encode()
    expected = outcome(reference_parse, raw, False)
    got = outcome(lambda raw, replace_nul: new_parse(raw, replace_nul, look), raw, False)
    assert got[0] == expected[0]
    assert typed(got[1]) == typed(expected[1])


def test_a_plain_body_is_read_by_orjson(monkeypatch):
    raw = BODIES[0]

    def refuse(*args, **kwargs):
        raise AssertionError("read by the standard library")

    monkeypatch.setattr(bounds.json, "loads", refuse)
    assert typed(new_parse(raw, True)) == typed(json.loads(raw))


@pytest.mark.parametrize("look", LOOKS)
@pytest.mark.parametrize(
    "text",
    [
        "[18446744073709551616]",  # orjson: a float
        '["\\u0000"]',  # a NUL: walked
        '["a\\n", "\\u0000"]',  # a NUL after another escape
        nested(65),  # deeper than the bound: walked
        '{"a": ' + nested(64) + "}",
        "[1e999]",  # orjson refuses
        '"\\ud800"',  # orjson refuses
        "\ufeff[]",  # orjson refuses a byte order mark, as json.loads does
    ],
)
def test_what_orjson_cannot_vouch_for_is_left_to_the_standard_library(text, look):
    with looking(look):
        assert read_alike(text.encode(), DEPTH) is UNREAD


def test_a_float_with_a_long_fraction_is_read_by_orjson():
    """A result line's cost (0.00016800000000000002: a run of 20 digits) is no big integer."""
    for raw in (
        b'{"total_cost_usd": 0.00016800000000000002}',
        b"[12345678901234567890.5, 1234567890123456789012e-3]",
    ):
        assert typed(read_alike(raw, DEPTH)) == typed(json.loads(raw))
    assert read_alike(b"[-12345678901234567890]", DEPTH) is UNREAD
    assert read_alike(b"[1e-12345678901234567890]", DEPTH) is UNREAD  # an exponent's run counts


# A run of 19 digits or more, not after a "." and followed by neither a "." nor an exponent: where
# an integer past 64 bits may be (an exponent's digits, after an "e", count too).
INTEGER_RUN = re.compile(rb"(?<![.0-9])[0-9]{19,}(?![.eE0-9])")


@given(
    st.lists(
        st.sampled_from(["1" * 19, "2" * 20, "0", ".", "e", "E", "-", "+", ",", '"', " ", "x"]), max_size=8
    )
)
def test_the_bytes_see_an_integer_of_19_digits_where_one_may_be(pieces):
    raw = "".join(pieces).encode()
    assert bounds.json_bytes.holds_long_integer(raw) is (INTEGER_RUN.search(raw) is not None)


def test_each_look_leaves_to_the_standard_library_what_it_cannot_tell_apart():
    """The bytes know a float from an integer past 64 bits (only the integer takes a run of 19
    digits), but not a 19-digit integer within 64 bits from one past; the value the other way
    round (orjson's integer is exact, its float at least 2**63 in size may have been one)."""
    assert read_alike(b'{"n": 1e20}', DEPTH) == {"n": 1e20}
    assert read_alike(b"[1000000000000000000]", DEPTH) is UNREAD
    with looking("walk"):
        assert read_alike(b'{"n": 1e20}', DEPTH) is UNREAD
        assert read_alike(b"[1000000000000000000]", DEPTH) == [10**18]


def floats_in(value) -> list[float]:
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [x for item in value for x in floats_in(item)]
    return [value] if isinstance(value, float) else []


@given(json_values, st.integers(min_value=0, max_value=6))
def test_the_look_orjson_needs_is_deeper_thans_with_the_floats_sizes(value, max_depth):
    small = all(abs(x) < 2**63 for x in floats_in(value))
    expected = small and not deeper_than(value, max_depth)
    assert bounds._shallow_with_small_floats(value, max_depth) is expected


def test_orjson_vouches_for_a_plain_body():
    raw = BODIES[0]
    assert typed(read_alike(raw, DEPTH)) == typed(json.loads(raw))
    assert read_alike(nested(64).encode(), DEPTH) == json.loads(nested(64))
    assert read_alike(b'{"a": "]]]]]]]]]]", "b": "\\"[[[[[[[[[[\\\\"}', 2) != UNREAD  # brackets in strings
    assert read_alike(b"[9.2e18, -9.2e18, 184467440737095516, -922337203685477580]", DEPTH) != UNREAD


def test_the_bytes_vouch_for_a_stream_post_and_the_value_for_one_of_many_escapes():
    """Which look answers (BYTES_PER_ESCAPE): the bytes for a body of short values, whose walk
    is dearest; the value's walk for one with an escape every few bytes (code, tool output)."""
    plain = BODIES[0]
    escaped = json.dumps({"events": [{"text": 'print("a")\n' * 300}]}).encode()
    assert bounds.json_bytes.structure(plain, len(plain) // bounds.BYTES_PER_ESCAPE) is not None
    assert bounds.json_bytes.structure(escaped, len(escaped) // bounds.BYTES_PER_ESCAPE) is None
    assert read_alike(escaped, DEPTH) == json.loads(escaped)


# Strings full of what the bytes' look must see through: quotes, backslashes, brackets, NULs.
tricky_text = st.text(alphabet='"\\[]{}\x00u0 a\n\u00e9', max_size=6) | st.text(max_size=4)
tricky_values = st.recursive(
    st.none() | st.integers() | tricky_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(tricky_text, children, max_size=3),
    max_leaves=25,
)


def strings_in(value) -> list[str]:
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key, *strings_in(item)]]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return [value] if isinstance(value, str) else []


@given(tricky_values, st.integers(min_value=0, max_value=6), st.booleans(), st.booleans())
def test_the_bytes_look_finds_the_depth_and_the_nul_the_value_holds(value, max_depth, ascii_only, compact):
    raw = json.dumps(
        value, ensure_ascii=ascii_only, separators=(",", ":") if compact else None, indent=None
    ).encode()
    brackets = bounds.json_bytes.structure(raw, max_escapes=len(raw))
    if any("\x00" in s for s in strings_in(value)):
        assert brackets is None
    else:
        assert brackets is not None
        assert bounds.json_bytes.nested_deeper_than(brackets, max_depth) is deeper_than(value, max_depth)


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
