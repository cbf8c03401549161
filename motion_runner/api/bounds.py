"""Every bound of the API's input in one place: JSON depth, NUL, numbers, times.

PostgreSQL's text and jsonb cannot hold NUL, Python's json recurses once per nesting level,
and float() accepts nan and inf: each would otherwise be a 500 (or a request held forever).
"""

from __future__ import annotations

import codecs
import io
import math
import re
from datetime import datetime
from itertools import chain, compress
from typing import Any

import orjson
from django.http import JsonResponse
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..lib import json_bytes
from ..lib.json_depth import deeper_than

NUL = "\x00"
NUL_ESCAPE = "\\u0000"  # how a NUL is written inside a JSON string
NUL_ESCAPE_BYTES = NUL_ESCAPE.encode()
# What a NUL becomes where a body may carry one (a harness's tool output): the replacement
# character, so the rest of the line is kept.
NUL_STANDIN = "\ufffd"


def needs_walk(value: Any, max_depth: int) -> bool:
    """Whether walk_json has anything to say about `value`: a NUL somewhere, or a container
    deeper than `max_depth`. The common body has neither, and this look (no paths built, no
    tuples) costs a fifth of the walk: a stream post of 100 events spent ~8 % of its time in the
    walk's path strings (bench/ingest.py)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if NUL in item:
                return True
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            return True
        children = item
        if isinstance(item, dict):
            if any(NUL in name for name in item if isinstance(name, str)):
                return True
            children = item.values()
        for child in children:
            if isinstance(child, str):
                if NUL in child:
                    return True
            elif isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def walk_json(value: Any, *, max_depth: int, replace_nul: bool) -> Any:
    """`value` checked for depth, with NUL refused (or replaced). Iterative: no recursion limit."""
    if not needs_walk(value, max_depth):
        return value

    def clean(text: str, where: str) -> str:
        if NUL not in text:
            return text
        if replace_nul:
            return text.replace(NUL, NUL_STANDIN)
        raise ParseError(f"a string at {where} holds a NUL character (\\u0000), which is not accepted")

    root: list[Any] = [value]
    stack: list[tuple[Any, Any, int, str]] = [(root, 0, 1, "$")]
    while stack:
        parent, key, depth, where = stack.pop()
        item = parent[key]
        if isinstance(item, str):
            parent[key] = clean(item, where)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            raise ParseError(f"the JSON is nested deeper than {max_depth} levels (at {where[:80]})")
        if isinstance(item, dict):
            for name in list(item):
                fixed = clean(name, where) if isinstance(name, str) else name
                if fixed != name:
                    item[fixed] = item.pop(name)
                stack.append((item, fixed, depth + 1, f"{where}.{fixed}"))
        else:
            stack.extend((item, index, depth + 1, f"{where}[{index}]") for index in range(len(item)))
    return root[0]


# A surrogate escape (\\ud800 to \\udfff) in a JSON text: json.loads joins a pair into one
# character, but leaves a lone one as a str no UTF-8 (PostgreSQL, a file) can hold.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def refuse_lone_surrogates(value: Any) -> None:
    """A 400 naming where a string holds a lone surrogate, which is no character."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ParseError(
                    f"a string at {where[:80]} holds a lone UTF-16 surrogate ({item[exc.start]!a}),"
                    " which is no character; send U+FFFD in its place"
                ) from None
        elif isinstance(item, dict):
            stack.extend((name, f"{where} (a key)") for name in item)
            stack.extend((child, f"{where}.{name}") for name, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))


# Exact types: a parsed body holds plain dicts, lists and floats only.
_IS_CONTAINER = frozenset({dict, list}).__contains__
_IS_FLOAT = frozenset({float}).__contains__
# orjson reads an integer past 64 bits as a float (the standard library keeps the int): such a
# float is at least 2**63 in size, so a float that size is left to the standard library.
_BIG = 2.0**63
UNREAD = object()  # read_alike's answer when the standard library must read the text
UTF_8 = frozenset({"utf-8", "utf8"})  # the encodings orjson reads (DRF's is settings.DEFAULT_CHARSET)


def _shallow_with_small_floats(value: Any, max_depth: int) -> bool:
    """No container in `value` deeper than `max_depth` (deeper_than's rule) and every float smaller
    than 2**63 in size. One level at a time, the per-value work in C (map, compress, chain): the
    same look as deeper_than's, whose Python loop over every value was ~0.4 ms of a re-post."""
    items = [value]
    depth = 1
    while items:
        types = list(map(type, items))
        if float in types and not all(-_BIG < x < _BIG for x in compress(items, map(_IS_FLOAT, types))):
            return False
        containers = list(compress(items, map(_IS_CONTAINER, types)))
        if not containers:
            return True
        if depth > max_depth:
            return False
        items = list(chain.from_iterable([c.values() if type(c) is dict else c for c in containers]))
        depth += 1
    return True


# The bytes answer for a text with at most one escape in this many bytes: a body of many short
# values (ids, names, times), where the walk is dearest (~60 ns a value: 0.22 ms for a stream post
# of 100 recorded events, 105 KB, against 0.1 ms for the bytes). Past it (code, tool output, a
# transcript's lines: an escape every ~100 bytes) each escape costs the scan a match, and the
# values are fewer and longer. The body's start is counted first (a C count, ~4 us): a body
# dense with escapes goes to the walk without scanning up to its allowance first.
BYTES_PER_ESCAPE = 400
ESCAPES_COUNTED_IN = 16 * 1024


def read_alike(raw: bytes, max_depth: int) -> Any:
    """orjson's value of `raw` (~2.5x faster than json.loads) where it is provably the standard
    library's and needs no walk, else UNREAD. orjson refuses what the standard library reads
    otherwise (NaN, Infinity, 1e999, lone surrogates, a depth past 1024, a byte order mark, bytes
    that are not UTF-8): left to it, with its own errors. It reads alike but for an integer past
    64 bits, which becomes a float at least 2**63 in size: a body that may hold one is left to the
    standard library too, as is one holding a NUL or nested deeper than `max_depth` (the walk's
    cases). Asked of the bytes where their escapes are few (json_bytes: no integer of 19 digits, no
    `\\u0000`, the brackets outside strings no deeper), else of the value."""
    try:
        data = orjson.loads(raw)
    except ValueError:  # orjson.JSONDecodeError
        return UNREAD
    return data if _vouched(raw, data, max_depth) else UNREAD


def _vouched(raw: bytes, data: Any, max_depth: int) -> bool:
    brackets = None
    if raw.count(b"\\", 0, ESCAPES_COUNTED_IN) <= min(len(raw), ESCAPES_COUNTED_IN) // BYTES_PER_ESCAPE:
        brackets = json_bytes.structure(raw, max_escapes=len(raw) // BYTES_PER_ESCAPE)
    if brackets is not None:
        return not json_bytes.holds_long_integer(raw) and not json_bytes.nested_deeper_than(
            brackets, max_depth
        )
    # Many escapes, or a NUL: the value's own look (a float that size is where a big integer went).
    return NUL_ESCAPE_BYTES not in raw and _shallow_with_small_floats(data, max_depth)


class BoundedJSONParser(JSONParser):
    """JSON only, nested at most API_MAX_JSON_DEPTH deep, no NUL in any string.

    A view that takes a harness's own lines sets `replace_nul = True`: a NUL there becomes
    U+FFFD instead of losing the whole batch.

    DRF's parse, with the text kept for a look before the walk: a JSON string holds a NUL only
    as the escape `\\u0000` (strict JSON refuses a raw control character in a string), so a
    text without one needs only the depth looked at, containers alone (a fifth of the walk).
    A UTF-8 body is first read from its bytes by orjson where it reads alike (read_alike), else
    decoded and read as before. It
    also notes on the request (`body_is_plain_json`) whether every number came out finite: then
    each value of the body is one `json.dumps(allow_nan=False)` writes back, which a JSONField
    checks item by item (stream_batch.JSONItems)."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = get_encoding(parser_context)
        finite = True

        def parse_float(text: str) -> float:
            nonlocal finite
            value = float(text)  # what the decoder does without the hook
            if not math.isfinite(value):  # 1e999: json.loads gives inf
                finite = False
            return value

        raw = stream.read()
        # orjson reads UTF-8 bytes as they are, and vouches only for finite numbers, no NUL and no
        # depth past the bound.
        data = read_alike(raw, settings.API_MAX_JSON_DEPTH) if encoding.lower() in UTF_8 else UNREAD
        if data is UNREAD:
            try:
                # DRF's reading of the body: a truncated sequence at its very end is dropped.
                text = codecs.getreader(encoding)(io.BytesIO(raw)).read()
            except ValueError as exc:
                raise ParseError(f"JSON parse error - {exc}") from exc  # DRF's own words
            try:
                parse_constant = json.strict_constant if self.strict else None
                data = json.loads(text, parse_constant=parse_constant, parse_float=parse_float)
            except RecursionError as exc:
                raise ParseError(
                    f"the JSON is nested deeper than {settings.API_MAX_JSON_DEPTH} levels"
                ) from exc
            except ValueError as exc:
                raise ParseError(f"JSON parse error - {exc}") from exc  # DRF's own words
            if SURROGATE_ESCAPE.search(text):
                refuse_lone_surrogates(data)
            if NUL_ESCAPE in text or deeper_than(data, settings.API_MAX_JSON_DEPTH):
                view = parser_context.get("view")
                data = walk_json(
                    data,
                    max_depth=settings.API_MAX_JSON_DEPTH,
                    replace_nul=getattr(view, "replace_nul", False),
                )
        if (request := parser_context.get("request")) is not None:
            request.body_is_plain_json = finite
        return data


def finite_number(params, name: str, default: float, *, low: float, high: float) -> float:
    """A query parameter as a number from `low` up (past `high` it is `high`); nan, inf, a
    negative or something else is a 400 saying so."""
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except (ValueError, OverflowError) as exc:
        raise ValidationError({name: [f"must be a number, not {raw[:40]!r}"]}) from exc
    if not math.isfinite(value) or value < low:
        raise ValidationError({name: [f"must be a finite number of at least {low:g}, not {raw[:40]!r}"]})
    return min(value, high)


def whole_number(params, name: str, default: int, *, low: int, high: int) -> int:
    value = finite_number(params, name, default, low=low, high=high)
    if value != int(value):
        raise ValidationError({name: [f"must be a whole number, not {params.get(name)[:40]!r}"]})
    return int(value)


def parse_time(name: str, value: str) -> datetime:
    """An ISO 8601 time, or a 400 (a well-formed but impossible date too: 2026-13-45)."""
    try:
        moment = parse_datetime(value)
    except ValueError as exc:
        raise ValidationError({name: [f"not a real time: {value[:60]!r} ({exc})"]}) from exc
    if moment is None:
        raise ValidationError({name: [f"not an ISO 8601 time: {value[:60]!r}"]})
    return moment


class RefuseNulInQuery:
    """A NUL in an API request's query string is a 400 before any view sees it (the database
    would refuse it mid-query)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/") and any(
            NUL in key or any(NUL in value for value in values) for key, values in request.GET.lists()
        ):
            body = {"error": {"status": 400, "code": "parse_error", "detail": "a NUL character in the query"}}
            return JsonResponse(body, status=400)
        return self.get_response(request)
