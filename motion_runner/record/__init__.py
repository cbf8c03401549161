"""The one record: every Message the apps write goes through one binding (docs/memory-lane.md).

`MOTION_RUNNER_RECORD` picks it: "own" (the apps' own tables: the standalone default) or
"memory_lane" (the apps' tables as their working index, and memory-lane's `conversations` tables as
the record people read), or a class path. Loaded once per value, as DRF loads its class paths.
This package imports no other app (not wakes, not watchlist).
"""

from __future__ import annotations

from django.utils.module_loading import import_string

from ..conf import app_settings as settings
from .base import RecordBinding

BINDINGS = {
    "own": "motion_runner.record.own.OwnRecord",
    "memory_lane": "motion_runner.memory_lane.binding.MemoryLaneRecord",
}

_loaded: dict[str, RecordBinding] = {}


def binding() -> RecordBinding:
    """The configured binding (read at every call, so a test's setting takes effect)."""
    name = settings.MOTION_RUNNER_RECORD
    if name not in _loaded:
        _loaded[name] = import_string(BINDINGS.get(name, name))()
    return _loaded[name]


def poller_fenced_agents() -> set[str]:
    """Agents the wakes app must not wake by a mention or the consider loop: memory-lane's poller
    still decides for them (POLLER_AGENTS), and under a binding that shares memory-lane's record
    every post reaches the poller too. An agent is woken by exactly one decider. Registered as
    the hook `signals.fenced_agent_providers` (MotionRunnerConfig.ready): wakes asks the hook and
    never imports this package."""
    if not binding().shares_memory_lane_record:
        return set()
    return set(settings.POLLER_AGENTS)


__all__ = ["RecordBinding", "binding", "poller_fenced_agents"]
