"""A mention waiting only for a free worker says so: "all 4 turn slots are busy", as memory-lane
says it ("all 8 turn slots are busy"), not "woke" while its turn sits in the queue.

The slots are the `turns` workers' concurrency (WAKES_TURN_SLOTS, bin/serve's WORKERS); a turn
bound for a named queue (an agent's or a Motion's own machine) is not judged here: that
worker's concurrency is not known to this one.
"""

from __future__ import annotations

from motion_runner.models import Agent, Motion, Turn, TurnStatus

from ..conf import app_settings as settings


def slots_full(motion: Motion, agent: Agent) -> str | None:
    """Why a new turn of `agent` in `motion` would wait for a worker, or None if one is free."""
    slots = int(settings.WAKES_TURN_SLOTS or 0)
    if slots <= 0 or (motion.turn_queue or agent.turn_queue or "").strip():
        return None
    running = Turn.objects.filter(
        status=TurnStatus.RUNNING, motion__turn_queue="", agent__turn_queue=""
    ).count()
    if running < slots:
        return None
    return f"all {slots} turn slots are busy; it starts when one is free"
