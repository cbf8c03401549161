"""The switch-over's fence (docs/memory-lane.md): agents memory-lane's poller still wakes
(POLLER_AGENTS) are woken by no one here while the apps share its record."""

from __future__ import annotations

from ..conf import app_settings as settings
from ..record import binding


def poller_fenced_agents() -> set[str]:
    """Agents the wakes app must not wake by a mention or the consider loop: memory-lane's poller
    still decides for them (POLLER_AGENTS), and under a binding that shares memory-lane's record
    every post reaches the poller too. An agent is woken by exactly one decider. Registered as
    the hook `signals.fenced_agent_providers` (MotionRunnerConfig.ready): wakes asks the hook and
    never imports this package."""
    if not binding().shares_memory_lane_record:
        return set()
    return set(settings.POLLER_AGENTS)
