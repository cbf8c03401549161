"""Reading JSON text: the one function every reader of a body or a line goes through."""

from __future__ import annotations

import json
from typing import Any

import orjson


def read_json(text: str | bytes, **stdlib: Any) -> Any:
    """The value of a JSON text, read by orjson.

    The contract, where it differs from the standard library's `json.loads`:

    - What orjson refuses — NaN, Infinity, a number past a double (1e999), a lone surrogate
      escape, a byte order mark, nesting past 1,024 levels, bytes that are not UTF-8 — is read by
      `json.loads(text, **stdlib)`, so it is accepted or refused exactly as the standard library
      (with the caller's hooks: DRF's strict constants, a float hook) accepts or refuses it: a
      ValueError for a bad text, a RecursionError for one nested past Python's own limit.
    - An integer past 64 bits is read as the float nearest it (orjson's reading; `json.loads`
      keeps it an int). No harness or transcript writes one; a client that needs one exact sends
      it as a string.
    - Bytes are a line: where orjson refuses them, they are decoded as UTF-8 (an invalid sequence
      becomes U+FFFD) and stripped of whitespace before the standard library reads them, so a
      damaged byte costs that character, not the line. A caller with its own decoding (the API's
      charset) passes text.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace").strip()
        return json.loads(text, **stdlib)
