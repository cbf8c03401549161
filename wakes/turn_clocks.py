"""The full-tools turn's clocks from the dials (the runner's `turn_clock_providers` hook)."""

from __future__ import annotations

from motion_runner.models import Turn
from motion_runner.signals import TurnClocks

from .models import Dials


def full_tools_clocks(turn: Turn) -> TurnClocks:
    dials = Dials.load()
    return TurnClocks(wall=dials.full_tools_timeout_seconds, silence=dials.full_tools_silence_seconds)
