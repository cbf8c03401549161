"""A wake's hold: an agent's next turn in a Motion is held, and why.

The wakes app holds a mention's turn while a turn is under way, at the hourly cap, or while the
agent's listening is off (wakes/consider_loop/mention_turns.py, wakes/decision/steering.py, wakes/consider_loop/handlers.py), and lets
it go when its turn starts or the mention is let go. Its own record of that is `MentionWake.hold`
(`GET …/holds/`); what is kept and lifted here is how the hold is shown to whoever shows holds,
told through `signals.hold_changed`: memory-lane's clients (`GET …/held/`) and, under the
`memory_lane` binding, memory-lane's own page. wakes imports nothing of the runner's HTTP modules
nor of memory-lane's room for it (import-linter's contracts).
"""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from motion_runner import signals
from motion_runner.models import Agent, Motion

log = logging.getLogger(__name__)


def keep_hold(motion: Motion, agent: Agent, reason: str, until: str | None, lasts: int) -> dict[str, Any]:
    """Hold `agent`'s next turn in `motion` for `lasts` seconds (said again to renew it), and why;
    `until` (ISO time or None) is when it is to end, if known."""
    hold = {"agent": agent.name, "reason": reason, "until": until, "at": timezone.now().isoformat()}
    tell(motion, agent, hold, lasts)
    return hold


def lift_hold(motion: Motion, agent: Agent) -> None:
    tell(motion, agent, None, 0)


def tell(motion: Motion, agent: Agent, hold: dict[str, Any] | None, lasts: int) -> None:
    # Only how the hold is shown: a receiver's failure must not lose the mention or the stop its
    # caller is in the middle of (release_held, let_go).
    for _receiver, error in signals.hold_changed.send_robust(
        sender=Motion, motion=motion, agent=agent, hold=hold, lasts=lasts
    ):
        if isinstance(error, Exception):
            log.error("the hold of @%s in %s could not be shown: %r", agent.name, motion.pk, error)
