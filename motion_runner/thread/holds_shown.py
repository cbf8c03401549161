"""The holds a thread shows (an agent's next turn held, and why: wakes/holds.py tells them
through `signals.hold_changed`), kept per Motion in the cache so that each poll of the thread
reads them without a query; each change rings the thread's readers. How things stand, like
typing: each hold lapses unless said again."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache import cache

from .bell import ring_on_commit

log = logging.getLogger(__name__)


def key(motion_id: str) -> str:
    return f"motion_runner:holds:{motion_id}"


def current(kept: dict[str, Any] | None, now: float) -> dict[str, Any]:
    return {name: hold for name, hold in (kept or {}).items() if hold.get("expires", 0) > now}


def keep_shown(sender, motion, agent, hold: dict[str, Any] | None, lasts: int, **kwargs) -> None:
    """`signals.hold_changed`: the Motion's holds as they now stand (None: lifted)."""
    now = time.time()
    try:
        holds = current(cache.get(key(motion.pk)), now)
        before = said(holds)
        if hold is None:
            holds.pop(agent.name, None)
        else:
            holds[agent.name] = {
                "reason": str(hold.get("reason") or ""),
                "until": hold.get("until"),
                "expires": now + lasts,
            }
        longest = max((h["expires"] - now for h in holds.values()), default=0)
        if holds:
            cache.set(key(motion.pk), holds, timeout=int(longest) + 1)
        else:
            cache.delete(key(motion.pk))
    except Exception as exc:  # the cache down: the thread shows no hold, the hold itself stands
        log.warning("the holds of %s could not be shown (%s)", motion.pk, exc)
        return
    if said(holds) != before:  # a hold said again (renewed) is no news to the thread
        ring_on_commit(motion.pk)


def said(holds: dict[str, Any]) -> dict[str, tuple]:
    return {name: (hold["reason"], hold["until"]) for name, hold in holds.items()}


def shown(motion_id: str) -> list[dict[str, Any]]:
    """The Motion's holds now, by agent name: what its thread's poll says (`holds`)."""
    try:
        holds = current(cache.get(key(motion_id)), time.time())
    except Exception as exc:
        log.warning("the holds of %s could not be read (%s)", motion_id, exc)
        return []
    return [{"agent": name, "reason": h["reason"], "until": h["until"]} for name, h in sorted(holds.items())]
