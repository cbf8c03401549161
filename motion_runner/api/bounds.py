"""Every bound of the API's input in one place: JSON depth, NUL, numbers, times.

PostgreSQL's text and jsonb cannot hold NUL, Python's json recurses once per nesting level,
and float() accepts nan and inf: each would otherwise be a 500 (or a request held forever).
"""

from __future__ import annotations

import codecs
import math
import re
from datetime import datetime
from typing import Any

from django.http import JsonResponse
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..lib.json_depth import deeper_than
from ..lib.json_text import read_json
from ..signals import MAX_SHOWN_TYPING

NUL = "\x00"
NUL_ESCAPE = "\\u0000"  # how a NUL is written inside a JSON string
# What a NUL becomes where a body may carry one (a harness's tool output): the replacement
# character, so the rest of the line is kept.
NUL_STANDIN = "\ufffd"


def walk_json(value: Any, *, max_depth: int, replace_nul: bool) -> Any:
    """`value` checked for depth, with NUL refused (or replaced). Iterative: no recursion limit."""

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


class BoundedJSONParser(JSONParser):
    """JSON only, nested at most API_MAX_JSON_DEPTH deep, no NUL in any string.

    A view that takes a harness's own lines sets `replace_nul = True`: a NUL there becomes
    U+FFFD instead of losing the whole batch.

    DRF's parse (its decoding of the body, its strict constants and its error words), read by
    `lib.json_text.read_json` (orjson; the standard library for what orjson refuses). A JSON
    string holds a NUL only as the escape `\\u0000` (strict JSON refuses a raw control character
    in a string), so a text without one needs only its depth looked at, containers alone. It
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

        try:
            # DRF's reading of the body: a truncated sequence at its very end is dropped.
            text = codecs.getreader(encoding)(stream).read()
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from exc  # DRF's own words
        try:
            parse_constant = json.strict_constant if self.strict else None
            data = read_json(text, parse_constant=parse_constant, parse_float=parse_float)
        except RecursionError as exc:
            raise ParseError(f"the JSON is nested deeper than {settings.API_MAX_JSON_DEPTH} levels") from exc
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


def names_shown_typing(params) -> list[str] | None:
    """The poll's `typing`: whom the reader shows typing, one name a parameter (a name may hold a
    comma), `typing=` alone for nobody; None when it did not say."""
    if "typing" not in params:
        return None
    names = [name for name in params.getlist("typing") if name]
    if len(names) > MAX_SHOWN_TYPING or any(len(name) > 150 for name in names):
        raise ValidationError({"typing": [f"at most {MAX_SHOWN_TYPING} names of at most 150 characters"]})
    return names
