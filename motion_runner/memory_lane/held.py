"""Holds as memory-lane's clients read them: `GET …/held/` answers who is held in a Motion and why.

A hold is said by the wakes app (`wakes/holds.py`: a mention waiting on a turn under way, the
hourly cap, listening off) or by memory-lane's runner (`POST …/held/`); either way through
`signals.hold_changed`, which this keeps in Django's cache, each hold lapsing unless said again.
Not in the record: it is how things stand, like typing. The `memory_lane` binding hears the same
signal and shows the hold where memory-lane's own page reads holds (`MemoryLaneRecord.show_hold`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import cache
from django.utils import timezone

from .. import signals
from ..models import Agent, Motion

log = logging.getLogger(__name__)

# How long memory-lane's page shows a hold after it was last said (its mood_view.HELD_FOR).
HOST_HELD_SECONDS = 600


def held_key(slug: str, agent: Agent) -> str:
    return f"motion_runner:held:{slug}:{agent.pk}"


def keep_for_clients(
    sender, motion: Motion, agent: Agent, hold: dict[str, Any] | None, lasts: int, **kwargs
) -> None:
    """`signals.hold_changed`: the hold as it now stands, for `GET …/held/` (None: lifted)."""
    if hold is None:
        cache.delete(held_key(motion.slug, agent))
    else:
        cache.set(held_key(motion.slug, agent), hold, timeout=lasts)


def holds_in(motion: Motion) -> dict[str, dict[str, Any]]:
    """How each agent of `motion` is held now, by name."""
    found = cache.get_many([held_key(motion.slug, agent) for agent in motion.agents.all()])
    return {hold["agent"]: hold for hold in found.values()}


def say_hold(motion: Motion, agent: Agent, hold: dict[str, Any] | None, lasts: int) -> None:
    """Send `hold_changed`; a receiver that fails (the host's cache) is logged, never raised."""
    for _receiver, error in signals.hold_changed.send_robust(
        sender=Motion, motion=motion, agent=agent, hold=hold, lasts=lasts
    ):
        if isinstance(error, Exception):
            log.error("the hold of @%s in %s could not be shown: %r", agent.name, motion.pk, error)


class HostHolds:
    """Mixed into `MemoryLaneRecord`: each hold, as `hold_changed` tells it, where memory-lane's
    own page reads holds (connected by the binding's `connect`)."""

    def show_hold(self, sender, motion: Motion, agent: Agent, hold: dict[str, Any] | None, **kwargs) -> None:
        """`signals.hold_changed`: memory-lane's page shows a runner's holds from Django's cache,
        one dict per Mood under `held:<slug>`: `{agent: {reason, until, at (epoch seconds)}}`, each
        lapsing HOST_HELD_SECONDS after its `at` (its `mood_view.set_held` and `held_in`). A read,
        a change and a write, as memory-lane's own writer does."""
        key = f"held:{self.mood_for(motion).slug}"
        now = timezone.now().timestamp()
        state = {
            name: entry
            for name, entry in (cache.get(key) or {}).items()
            if isinstance(entry, dict) and now - float(entry.get("at") or 0) < HOST_HELD_SECONDS
        }
        if hold is None:
            state.pop(agent.name, None)
        else:
            state[agent.name] = {"reason": hold["reason"], "until": hold["until"], "at": now}
        cache.set(key, state, HOST_HELD_SECONDS)
