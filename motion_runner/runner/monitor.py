"""The base of a turn monitor: what the runner asks of every watcher of a turn's events."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: a monitor module imports neither the models nor the runner
    from ..harnesses import Event
    from ..models import Turn


class TurnMonitor:
    """Watches a turn's events as they are written; a non-empty stop_reason ends the turn.

    wakes/ adds the tool-loop guard and the spend guard through `signals.monitor_factories`.
    `stop_cause` is what the turn's `ended_by` says when this monitor stopped it (an
    `EndedBy` value; "" says no more than the error does).
    """

    stop_cause: str = ""

    def __init__(self, turn: Turn):
        self.turn = turn
        self.stop_reason: str | None = None

    def observe(self, event: Event) -> None:
        pass
