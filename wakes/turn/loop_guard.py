"""The tool-loop guard (seed 001; magenta#295): a turn that repeats the same call 3 times in a
row, or 5 times within its last 10 calls, or makes 50 calls in one turn, is ended by killing
the harness. All three thresholds are dials. The runner compacts the killed session and the
next wake of that agent in that Motion is told why.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from motion_runner.harnesses import Event, EventKind
from motion_runner.models import EndedBy, Turn
from motion_runner.runner.monitor import TurnMonitor

from ..models.dials import current_dials

LOOP_GUARD_PREFIX = "the tool-loop guard stopped it"


def why_stopped(turn: Turn) -> str:
    """The guard's own why ("the same Read call 3 times in a row") of a turn it stopped: the
    turn's error reads "stopped: <LOOP_GUARD_PREFIX>: <why>" (the runner's judge puts "stopped: "
    before the guard's words), and only this module, which wrote it, reads it back."""
    return turn.error.split(f"{LOOP_GUARD_PREFIX}: ", 1)[-1]


def call_key(tool_name: str, tool_input: Any) -> str:
    """Same tool, same input: key order and whitespace do not make a call different."""
    try:
        canonical = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        canonical = repr(tool_input)
    return f"{tool_name}\x1f{canonical}"


class LoopGuard(TurnMonitor):
    stop_cause = EndedBy.LOOP_GUARD

    def __init__(self, turn, dials: dict[str, Any] | None = None):
        super().__init__(turn)
        dials = dials or current_dials()
        self.in_a_row = int(dials["loop_same_call_in_a_row"])
        self.window = int(dials["loop_same_call_window"])
        self.in_window = int(dials["loop_same_call_in_window"])
        self.max_calls = int(dials["loop_max_calls_per_turn"])
        self.recent: deque[str] = deque(maxlen=self.window)
        self.calls = 0
        self.streak = 0
        self.last: str | None = None

    def observe(self, event: Event) -> None:
        if event.kind != EventKind.TOOL_CALL or self.stop_reason:
            return
        key = call_key(event.tool_name, event.tool_input)
        self.calls += 1
        self.streak = self.streak + 1 if key == self.last else 1
        self.last = key
        self.recent.append(key)
        name = event.tool_name
        if self.streak >= self.in_a_row:
            self.stop_reason = f"{LOOP_GUARD_PREFIX}: the same {name} call {self.streak} times in a row"
        elif self.recent.count(key) >= self.in_window:
            self.stop_reason = (
                f"{LOOP_GUARD_PREFIX}: the same {name} call {self.recent.count(key)} times "
                f"in the last {len(self.recent)} calls"
            )
        elif self.calls >= self.max_calls:
            self.stop_reason = f"{LOOP_GUARD_PREFIX}: {self.calls} tool calls in one turn"
