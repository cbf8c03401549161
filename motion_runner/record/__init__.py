"""The one record: every Message the apps write goes through one binding (docs/memory-lane.md).

`MOTION_RUNNER_RECORD` picks it: "own" (the apps' own tables: the standalone default) or
"memory_lane" (the apps' tables as their working index, and memory-lane's `conversations` tables as
the record people read: motion_runner/memory_lane/, a room of its own), or a class path. Loaded
once per value, as DRF loads its class paths. `base` is the interface, `own` the default.
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


def steering_source():
    """The configured binding's steering source (`signals.steering_source`'s default)."""
    return binding().steering_source()


__all__ = ["RecordBinding", "binding", "steering_source"]
