"""Reading JSON text: the one function every reader of a body or a line goes through."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# A run of 19 digits or more that does not follow a digit or a point: where an integer past 64 bits
# may stand, which orjson would read as the nearest float. A long fraction (a cost's
# 0.00016800000000000002) follows its point; a long number in a string costs only the slower read.
_LONG_INTEGER = re.compile(r"(?<![0-9.])[0-9]{19}")
_LONG_INTEGER_BYTES = re.compile(rb"(?<![0-9.])[0-9]{19}")


def read_json(text: str | bytes, **stdlib: Any) -> Any:
    """The value of a JSON text, read by orjson.

    The contract, where it differs from the standard library's `json.loads`:

    - What orjson refuses — NaN, Infinity, a number past a double (1e999), a lone surrogate
      escape, a byte order mark, nesting past 1,024 levels, bytes that are not UTF-8 — is read by
      `json.loads(text, **stdlib)`, so it is accepted or refused exactly as the standard library
      (with the caller's hooks: DRF's strict constants, a float hook) accepts or refuses it: a
      ValueError for a bad text, a RecursionError for one nested past Python's own limit.
    - A text with a run of 19 digits or more outside a fraction (where an integer past 64 bits may
      stand, which orjson would read as the nearest float) is read by the standard library, so
      every integer is kept exact.
    - Bytes are a line: where orjson refuses them, they are decoded as UTF-8 (an invalid sequence
      becomes U+FFFD) and stripped of whitespace before the standard library reads them, so a
      damaged byte costs that character, not the line. A caller with its own decoding (the API's
      charset) passes text.
    """
    long_integer = _LONG_INTEGER_BYTES if isinstance(text, bytes) else _LONG_INTEGER
    try:
        if long_integer.search(text) is None:
            return orjson.loads(text)
        raise orjson.JSONDecodeError("a long integer: read exactly", "", 0)
    except orjson.JSONDecodeError:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace").strip()
        return json.loads(text, **stdlib)
