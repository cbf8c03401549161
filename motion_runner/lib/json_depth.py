"""How deep a parsed JSON value nests, looked at without recursion (no recursion limit to hit)."""

from __future__ import annotations

from typing import Any


def deeper_than(value: Any, max_depth: int) -> bool:
    """Whether a container in `value` is nested deeper than `max_depth` (the root is 1): one
    level at a time, looking at containers only."""
    level = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > max_depth:
            return True
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
        depth += 1
    return False
