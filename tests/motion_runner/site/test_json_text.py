"""`read_json`'s contract: orjson's reading, and the standard library's for what orjson refuses or
would read differently (an integer past 64 bits, kept exact). Every reader of a body or a line goes through it
(the API's parser, harness and transcript lines)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from motion_runner.lib.json_text import has_long_integer, read_json


def typed(value) -> str:
    """A value as JSON text: an int and a float, True and 1, -0.0 and 0.0 all differ."""
    return json.dumps(value)


within_64_bits = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=30,
)


@given(within_64_bits, st.booleans())
def test_a_value_within_64_bits_reads_as_the_standard_library_reads_it(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert typed(read_json(text)) == typed(json.loads(text))
    assert typed(read_json(text.encode())) == typed(json.loads(text))


@pytest.mark.parametrize("number", [2**64, -(2**63) - 1, 123456789012345678901234567890])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_an_integer_past_64_bits_is_kept_exact(number, as_bytes):
    text = f'{{"n": {number}, "cost": 0.00016800000000000002}}'
    value = read_json(text.encode() if as_bytes else text)
    assert typed(value) == typed({"n": number, "cost": 0.00016800000000000002})


@pytest.mark.parametrize("as_bytes", [False, True])
def test_an_integer_past_64_bits_after_a_long_fraction_is_kept_exact(as_bytes):
    number = 2**64
    text = f'{{"cost": 0.000168000000000000020000000000000001, "n": {number}}}'
    value = read_json(text.encode() if as_bytes else text)
    assert typed(value) == typed(json.loads(text))
    assert value["n"] == number


@pytest.mark.parametrize(
    "text", ['{"n": 12345678901234567890123}', "12345678901234567890123", "[0.1,12345678901234567890123]"]
)
def test_a_long_integer_at_the_start_or_after_a_comma_is_kept_exact(text):
    assert typed(read_json(text)) == typed(json.loads(text))


@given(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text())
def test_any_integer_beside_a_float_and_a_string_reads_as_the_standard_library_reads_it(n, x, words):
    text = json.dumps({"n": n, "x": x, "words": words})
    assert typed(read_json(text)) == typed(json.loads(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[NaN, Infinity, -Infinity]", "[NaN, Infinity, -Infinity]"),
        ("[1e999]", "[Infinity]"),
        ('"\\ud800"', '"\\ud800"'),  # a lone surrogate
    ],
)
def test_what_orjson_refuses_the_standard_library_reads(text, expected):
    assert typed(read_json(text)) == expected


def test_the_standard_librarys_hooks_decide_what_orjson_refused():
    def refuse(name: str):
        raise ValueError(f"{name} is not JSON")

    with pytest.raises(ValueError, match="NaN is not JSON"):
        read_json("[NaN]", parse_constant=refuse)
    assert read_json("[1.5]", parse_constant=refuse) == [1.5]  # orjson's: the hook is not asked


@pytest.mark.parametrize("text", ["{not json", "", "[1,]", "01", "[1] x", "\ufeff{}"])
def test_a_bad_text_is_a_value_error(text):
    with pytest.raises(ValueError):
        read_json(text)


def test_a_text_nested_past_pythons_own_limit_is_a_recursion_error():
    with pytest.raises(RecursionError):
        read_json("[" * 100_000 + "]" * 100_000)


def test_a_line_of_bytes_keeps_what_a_damaged_byte_leaves():
    assert read_json(b'{"x": "a\xffb"}') == {"x": "a\ufffdb"}
    assert read_json(b'\x0c{"x": 1} ') == {"x": 1}  # whitespace JSON does not know, around a line


# The rule `has_long_integer` keeps, written as the regex it replaced: 19 digits that follow
# neither a digit nor a point.
LONG_INTEGER_RULE = re.compile(r"(?<![0-9.])[0-9]{19}")


@given(st.text(alphabet="0123456789.e-x é", max_size=80))
def test_the_long_integer_look_finds_what_the_rule_says(text):
    expected = LONG_INTEGER_RULE.search(text) is not None
    assert has_long_integer(text) is expected
    assert has_long_integer(text.encode()) is expected
