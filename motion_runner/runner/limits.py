"""How long a turn may run, by its mode.

A look-only turn answers a question by looking: it keeps a wall clock
(RUNNER_TURN_TIMEOUT_SECONDS). A full-tools turn was asked for real work by someone trusted with
it, and real work takes as long as it takes: it has no wall clock unless one is set, and is
ended by silence instead (no line on stdout for the silence limit: a hung pipe or a tool that
never returns, not a long think). The spend and loop guards bound both kinds, as monitors.
wakes/ gives the full-tools clocks from its dials through the setting `signals.turn_clocks` names;
without wakes, the runner's settings answer (`settings_clocks`).
"""

from __future__ import annotations

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..models import Turn
from ..signals import TurnClocks, turn_clocks
from .process import Limits

FULL = "full"


def clocks_for(turn: Turn) -> TurnClocks:
    if turn.mode != FULL:
        return TurnClocks(wall=settings.RUNNER_TURN_TIMEOUT_SECONDS, silence=None)
    return turn_clocks(turn)


def settings_clocks(turn: Turn) -> TurnClocks:
    """A full-tools turn's clocks without wakes: the runner's own settings."""
    return TurnClocks(
        wall=settings.RUNNER_FULL_TOOLS_TIMEOUT_SECONDS, silence=settings.RUNNER_SILENCE_SECONDS
    )


def limits_for(turn: Turn) -> Limits:
    clocks = clocks_for(turn)
    return Limits(
        timeout=clocks.wall,
        silence=clocks.silence,
        max_line_bytes=settings.RUNNER_MAX_LINE_BYTES,
        max_output_bytes=settings.RUNNER_MAX_OUTPUT_BYTES,
        stderr_tail_bytes=settings.RUNNER_STDERR_TAIL_BYTES,
        kill_grace=settings.RUNNER_KILL_GRACE_SECONDS,
        after_end_grace=settings.RUNNER_AFTER_RESULT_GRACE_SECONDS,
    )
