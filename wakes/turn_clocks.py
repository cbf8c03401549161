"""The full-tools turn's clocks from the dials (the runner's `turn_clock_providers` hook)."""

from __future__ import annotations

from motion_runner.conf import app_settings as runner_settings  # the runner's settings (conf.py)
from motion_runner.models import Turn
from motion_runner.signals import TurnClocks

from .models import Dials


def full_tools_clocks(turn: Turn) -> TurnClocks:
    """The dials where set; blank, the runner's settings (no wall clock, 1500 s of silence)."""
    dials = Dials.load()
    wall = dials.full_tools_timeout_seconds
    silence = dials.full_tools_silence_seconds
    return TurnClocks(
        wall=wall if wall is not None else runner_settings.RUNNER_FULL_TOOLS_TIMEOUT_SECONDS,
        silence=silence if silence is not None else runner_settings.RUNNER_SILENCE_SECONDS,
    )
