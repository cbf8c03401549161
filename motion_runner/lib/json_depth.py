"""How deep a parsed JSON value nests, looked at without recursion (no recursion limit to hit).
The one depth check: the API's parser (api/bounds.py) and memory-lane's watcher's lines
(remote_transcripts.py) ask it."""

from __future__ import annotations

from itertools import chain, compress
from typing import Any

# A parsed value holds plain dicts and lists only: their exact types.
_IS_CONTAINER = frozenset({dict, list}).__contains__


def deeper_than(value: Any, max_depth: int) -> bool:
    """Whether a container in `value` is nested deeper than `max_depth` (the root is 1): one
    level at a time, the per-value work in C (map, compress, chain) rather than a Python loop
    over every value of every post."""
    level = [value]
    depth = 0
    while True:
        containers = list(compress(level, map(_IS_CONTAINER, map(type, level))))
        if not containers:
            return False
        depth += 1
        if depth > max_depth:
            return True
        level = list(chain.from_iterable([c.values() if type(c) is dict else c for c in containers]))
