"""What an agent is typing, between its harness's deltas and the thread page: the text of the
block being written, kept in the cache under its turn for a short while (Redis, which every
process shares, in production), read by each poll of the thread for its running turns.

Never a Message: not stored in the database, never priced, never posted; the harness's final
line is the Message, as ever, and its writer drops this first. The key lapses by itself
(TTL_SECONDS) if its runner dies; a poll asks only for running turns, so an ended turn's
leftover is never shown. The cache failing costs the growing text, never the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.core.cache import cache

log = logging.getLogger(__name__)

TTL_SECONDS = 120
# The tail of a long answer (the page shows what is being written; the whole comes at the end).
MOST_CHARACTERS = 20_000


def key(turn_id: int) -> str:
    return f"motion_runner:typed:{turn_id}"


def keep(turn_id: int, text: str) -> bool:
    """The turn's text so far; False when the cache did not take it."""
    try:
        cache.set(key(turn_id), text[-MOST_CHARACTERS:], TTL_SECONDS)
    except Exception as exc:  # a cache down or full: the page waits for the final Message
        log.warning("turn %s: its typed text was not kept (%s)", turn_id, exc)
        return False
    return True


def drop(turn_id: int) -> None:
    try:
        cache.delete(key(turn_id))
    except Exception as exc:
        log.warning("turn %s: its typed text was not dropped (%s); it lapses by itself", turn_id, exc)


def typed(turn_ids: Iterable[int]) -> dict[int, str]:
    """The text each of these turns is typing now, if any (one round trip for them all)."""
    ids = list(turn_ids)
    if not ids:
        return {}
    try:
        found = cache.get_many([key(turn_id) for turn_id in ids])
    except Exception as exc:
        log.warning("the typed text of turns %s could not be read (%s)", ids, exc)
        return {}
    return {turn_id: found[key(turn_id)] for turn_id in ids if found.get(key(turn_id))}
