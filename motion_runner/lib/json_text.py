"""Reading JSON text: the one function every reader of a body or a line goes through."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# Where an integer past 64 bits may stand (orjson would read it as the nearest float): a run of
# 19 digits or more that does not follow a point (a cost's 0.00016800000000000002 follows its
# point; a long number in a string costs only the slower read). Found by mapping every digit to
# "0" and looking for 19 of them: one pass at memory speed, where a regex tries every position.
_LONG_RUN = 19
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_ZEROS = b"0" * _LONG_RUN
_RUN_OF_ZEROS = re.compile(b"0*")
_POINT = ord(".")


def has_long_integer(text: str | bytes) -> bool:
    """True when `text` has a run of 19 digits or more that does not follow a point."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogatepass")  # str.translate is far slower than bytes'
    digits = text.translate(_DIGITS_TO_ZERO)
    start = digits.find(_ZEROS)
    while start >= 0:
        # `find` gives a run's first digit: the byte before it is no digit.
        if start == 0 or digits[start - 1] != _POINT:
            return True
        start = digits.find(_ZEROS, _RUN_OF_ZEROS.match(digits, start).end())  # past this fraction
    return False


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
    try:
        if not has_long_integer(text):
            return orjson.loads(text)
        raise orjson.JSONDecodeError("a long integer: read exactly", "", 0)
    except orjson.JSONDecodeError:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace").strip()
        return json.loads(text, **stdlib)
