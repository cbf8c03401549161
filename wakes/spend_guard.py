"""The per-turn dollar cap for harnesses that do not enforce one themselves.

Claude Code gets the cap as `--max-budget-usd` and stops itself. Pi prices every API message as
it ends (usage.cost), so the runner adds those up as they stream and ends the turn once the
spend passes the cap. Codex reports usage only when its turn completes: nothing streams to
enforce a cap on mid-turn, so for Codex the cap is checked at the end and the turn's timeout is
the bound in between (README, "What is not enforced").
"""

from __future__ import annotations

from decimal import Decimal

from motion_runner.harnesses import Event, EventKind
from motion_runner.runner.turns import TurnMonitor

SPEND_GUARD_PREFIX = "the turn's dollar cap stopped it"
SELF_ENFORCING = {"claude-code"}


class SpendGuard(TurnMonitor):
    def __init__(self, turn):
        super().__init__(turn)
        cap = getattr(turn, "max_budget_usd", None)
        harness = turn.agent.harness if turn is not None else ""
        self.cap: Decimal | None = cap if harness not in SELF_ENFORCING else None
        self.by_message: dict[str, Decimal] = {}

    @property
    def spent(self) -> Decimal:
        return sum(self.by_message.values(), Decimal(0))

    def observe(self, event: Event) -> None:
        if self.cap is None or self.stop_reason or event.kind == EventKind.TURN_END:
            return
        if event.cost_usd is None or not event.message_id:
            return
        # One API message spans several events that all carry its price: count it once.
        self.by_message[event.message_id] = max(
            self.by_message.get(event.message_id, Decimal(0)), event.cost_usd
        )
        if self.spent > self.cap:
            self.stop_reason = f"{SPEND_GUARD_PREFIX}: ${self.spent:.4f} spent, the cap is ${self.cap:.2f}"
