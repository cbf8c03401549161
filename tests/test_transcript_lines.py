"""The importer's quick read of a line it drops (`skipped_line`, orjson) against the standard
library's reading of the same line, which decides what a bad line is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from motion_runner.harnesses.base import json_object
from motion_runner.models import Message, TranscriptFile
from motion_runner.sessions import claim_session
from motion_runner.transcripts import (
    SKIPPED_SYSTEM_SUBTYPES,
    SKIPPED_TYPES,
    import_file,
    lines_of,
    orjson_reads_exactly,
    quick_object,
    skipped_line,
)
from tests import recorded

SESSION = recorded.session_id()


def stdlib_reading(raw: bytes) -> str | tuple[str, str]:
    """What TranscriptReader made of a line before the quick read: 'bad', 'empty', 'kept' (goes on
    to the parser) or the (promptId, entrypoint) of a line dropped by its type."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return "empty"
    try:
        line = json_object(text)
    except ValueError:
        return "bad"
    kind = line.get("type")
    try:
        dropped = kind in SKIPPED_TYPES or (
            kind == "system" and line.get("subtype") in SKIPPED_SYSTEM_SUBTYPES
        )
    except TypeError:  # an unhashable type: the old path counted the line as unreadable
        return "bad"
    if not dropped:
        return "kept"
    return (
        str(line["promptId"]) if line.get("promptId") else "",
        str(line["entrypoint"]) if line.get("entrypoint") else "",
    )


# Values where orjson and json.loads part ways: big integers, non-finite and long floats, lone
# surrogates (escaped or as invalid UTF-8), NUL, non-ASCII.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**62, max_value=2**80),
    st.integers(max_value=-(2**62), min_value=-(2**80)),
    st.floats(),
    st.text(st.characters(categories=["L", "N", "P", "Z", "Cc", "Cs"]), max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)
kinds = st.sampled_from(sorted(SKIPPED_TYPES) + ["system", "user", "assistant", "cost-state", "x"]) | values
subtypes = st.sampled_from(sorted(SKIPPED_SYSTEM_SUBTYPES) + ["compact_boundary"]) | values
ids = st.sampled_from(["p-1", "", "cli", "sdk-py"]) | values


@st.composite
def lines(draw: Any) -> bytes:
    line: dict[str, Any] = {}
    for key, strategy in (("type", kinds), ("subtype", subtypes), ("promptId", ids), ("entrypoint", ids)):
        if draw(st.booleans()):
            line[key] = draw(strategy)
    line.update(draw(st.dictionaries(st.text(max_size=4), values, max_size=3)))
    if draw(st.booleans()):
        line = draw(values)  # not always an object
    text = json.dumps(line, ensure_ascii=draw(st.booleans()))
    raw = text.encode("utf-8", "surrogatepass")
    # Now and then a damaged line: cut short, or a few bytes spliced in.
    if draw(st.booleans()):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(
            st.sampled_from([b"", b"\xff", b"\x00", b" ", b"\r", b"\x0c", b"}", b"NaN", b"\xc2\xa0"])
        )
    return raw


@hypothesis_settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
def test_a_line_read_quickly_reads_as_the_standard_library_reads_it(raw):
    quick = skipped_line(raw)
    if quick is not None:
        assert quick == stdlib_reading(raw)


@given(st.binary(max_size=60) | st.lists(st.sampled_from([b"", b"a", b"{}", b"\r", b"\xff"])).map(b"\n".join))
def test_lines_of_a_chunk_are_its_split(chunk):
    chunk += b"\n"  # a chunk read up to its last full line
    end = chunk.rfind(b"\n")
    assert [bytes(view) for view in lines_of(chunk, end)] == chunk[:end].split(b"\n")


def identical(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1.0 == 1 is not enough; NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    return repr(a) == repr(b)


@hypothesis_settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
def test_a_kept_line_read_by_orjson_is_exactly_what_json_loads_gives(raw):
    line = quick_object(raw)
    if line is not None and orjson_reads_exactly(raw):
        assert identical(line, json.loads(raw.decode("utf-8", "replace").strip()))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 18446744073709551616}',
        b'{"a": -9223372036854775809}',
        b'{"a": [1, {"b": 99999999999999999999999}]}',
    ],
)
def test_an_integer_past_64_bits_is_left_to_json_loads(raw):
    line = quick_object(raw)
    assert line is not None and not identical(line, json.loads(raw))
    assert not orjson_reads_exactly(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type": "cost-state", "totalCostUSD": 0.00016800000000000002}',
        b'{"type": "result", "total_cost_usd": 12.345678901234567891, "n": 1e20}',
    ],
)
def test_a_float_with_a_long_fraction_is_read_by_orjson_as_json_loads_reads_it(raw):
    assert orjson_reads_exactly(raw)
    assert identical(quick_object(raw), json.loads(raw))


def test_the_dropped_lines_of_a_real_transcript_are_read_quickly():
    """Not vacuous: every line the recording drops by its type takes the quick read."""
    dropped = [raw for raw in recorded.raw_lines("transcript") if isinstance(stdlib_reading(raw), tuple)]
    assert len(dropped) > 30
    for raw in dropped:
        assert skipped_line(raw) == stdlib_reading(raw)
    kept = [raw for raw in recorded.raw_lines("transcript") if stdlib_reading(raw) == "kept"]
    assert kept and all(skipped_line(raw) is None for raw in kept)


@pytest.mark.parametrize(
    "raw, reading",
    [
        # An integer past 64 bits: orjson would make it a float, so the line goes the old way.
        (
            b'{"type": "attachment", "promptId": 123456789012345678901234567890}',
            ("123456789012345678901234567890", ""),
        ),
        (b'{"type": "attachment", "promptId": "p", "entrypoint": "cli"}', ("p", "cli")),
        (b'{"type": "system", "subtype": "turn_duration", "promptId": "p"}', ("p", "")),
        (b'{"type": "attachment", "x": NaN}', ("", "")),  # json.loads takes NaN: not a bad line
        (b'{"type": "attachment", "x": "\xff"}', ("", "")),  # invalid UTF-8 is decoded with U+FFFD
        (b'{"type": "attachment", "x": "\\ud800"}', ("", "")),  # a lone surrogate
        (b'\x0c{"type": "attachment"}', ("", "")),  # str.strip's whitespace, not JSON's
        (b'{"type": "attachment", "x": 1', "bad"),
        (b'{"type": ["attachment"]}', "bad"),
        (b'["attachment"]', "bad"),
        (b'{"type": "system", "subtype": "compact_boundary"}', "kept"),
        (b'{"type": "cost-state", "totalCostUSD": 0.1}', "kept"),
    ],
)
def test_awkward_lines_read_as_before(raw, reading):
    assert stdlib_reading(raw) == reading
    quick = skipped_line(raw)
    assert quick is None or quick == reading


@pytest.mark.django_db
def test_dropped_lines_still_carry_the_prompt_and_entrypoint_and_bad_ones_are_counted(
    tmp_path, harbor, scribe
):
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    path = tmp_path / "-tmp-work" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    lines = recorded.raw_lines("transcript")
    junk = [
        b'{"type": "attachment", "promptId": 98765432109876543210987654321, "entrypoint": "cli-long-'
        + b"x" * 40
        + b'"}\n',
        b'{"type": "attachment", "attachment": {"x": "\xff\xfe"}}\n',
        b'{"type": "attachment", "attachment": {"x": 1}\n',
    ]
    path.write_bytes(b"".join(lines + junk))
    import_file(path)
    record = TranscriptFile.objects.get()
    assert record.last_prompt_id == "98765432109876543210987654321"
    assert record.entrypoint == ("cli-long-" + "x" * 40)[:32]
    assert record.bad_lines == 1
    assert record.lines == len(lines) + len(junk)
    assert Message.objects.count() == 9


@pytest.mark.django_db
def test_a_line_nested_too_deep_for_json_loads_is_a_bad_line_not_the_end_of_the_import(
    tmp_path, harbor, scribe
):
    """It raised RecursionError out of the import, on every run: the file never got past it."""
    claim_session(SESSION, harbor, scribe.agent, "claude-code")
    path = tmp_path / "-tmp-work" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    deep = b'{"type": "attachment", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n"
    lines = recorded.raw_lines("transcript")
    path.write_bytes(b"".join(lines[:3] + [deep] + lines[3:]))
    import_file(path)
    record = TranscriptFile.objects.get()
    assert record.bad_lines == 1
    assert record.offset == path.stat().st_size
    assert Message.objects.count() == 9
