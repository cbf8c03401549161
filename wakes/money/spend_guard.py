"""The per-turn dollar cap, enforced by the runner as the turn streams: a turn is stopped before
its spend passes what it reserved, so the day's reservations hold.

Each API message is priced once from what streams: Pi prices every message as it ends
(usage.cost); Claude Code's assistant lines carry the message's usage as the API's
message_start gave it (input and cache tokens final, output not yet counted), priced from the
price table. Claude Code's own `--max-budget-usd` is still passed, but it is not a hard stop: the
CLI checks it only after a call has been paid for (the max_budget recording spent $0.84 under
$0.01). So the guard stops the turn once its spend reaches the cap, or once one more call like
its dearest so far would pass it (the context only grows, so the next call costs at least as
much input). Codex streams no usage before its turn completes: nothing to enforce mid-turn, so
for Codex the turn's timeout is the bound (README, "What is not enforced").
"""

from __future__ import annotations

from decimal import Decimal

from motion_runner.harnesses import Event, EventKind, get_adapter
from motion_runner.models import EndedBy
from motion_runner.runner.monitor import TurnMonitor

SPEND_GUARD_PREFIX = "the turn's dollar cap stopped it"


class SpendGuard(TurnMonitor):
    stop_cause = EndedBy.SPEND_GUARD

    def __init__(self, turn):
        super().__init__(turn)
        self.cap: Decimal | None = getattr(turn, "max_budget_usd", None)
        self.adapter = get_adapter(turn.agent.harness) if turn is not None else None
        self.by_message: dict[str, Decimal] = {}

    @property
    def spent(self) -> Decimal:
        return sum(self.by_message.values(), Decimal(0))

    def observe(self, event: Event) -> None:
        if self.cap is None or self.stop_reason or event.kind == EventKind.TURN_END or not event.message_id:
            return
        cost = self.adapter.streamed_cost(event) if self.adapter else event.cost_usd
        if cost is None:
            return
        # One API message spans several events that all carry its price: count it once.
        self.by_message[event.message_id] = max(self.by_message.get(event.message_id, Decimal(0)), cost)
        spent, dearest = self.spent, max(self.by_message.values())
        if spent >= self.cap:
            self.stop_reason = f"{SPEND_GUARD_PREFIX}: ${spent:.4f} spent, the cap is ${self.cap:.2f}"
        elif spent + dearest > self.cap:
            self.stop_reason = (
                f"{SPEND_GUARD_PREFIX}: ${spent:.4f} spent of its ${self.cap:.2f} cap, and one more "
                f"call like its dearest (${dearest:.4f}) would pass it"
            )
