"""Ultracode per Motion and agent (issue 33): the room's `ultracode` setting, set in the thread's
menus by someone who may grant full tools (wakes/web/api_steer.py), rides only on a trusted
full-tools mention wake, as memory-lane's poller passes it (`--settings {"ultracode": true}`, the
Claude Code adapter's spelling). A look-only wake, a consideration, a long quiet, a watch, a grant
or a command never carries it: a look-only turn could not run a workflow anyway, and the others
were not asked for real work by a person."""

from __future__ import annotations

from motion_runner.models import Turn

from ..decision.steering import steering_for

RIDES_ON = ("mention",)  # the wake reasons it may ride on


def ultracode_rides(turn: Turn) -> bool:
    """Whether this turn launches with ultracode: a full-tools mention and the pair's setting on."""
    if getattr(turn, "mode", "look") != "full" or getattr(turn, "reason", "") not in RIDES_ON:
        return False
    return steering_for(turn.motion_id, turn.agent_id).ultracode == "on"
