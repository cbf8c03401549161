"""End to end, the money: the real Claude Code CLI against the fake model, woken three times by
the consider loop in one resumed session. Each turn reports the same tokens, so each costs the
same; the ledger holds one row a turn; ledger = turns = usage × price; and the daily cap is
checked against those true figures, not against the session's running total.
"""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db.models import Sum
from django.utils import timezone

from motion_runner.harnesses import pricing
from motion_runner.models import EndedBy, Turn, TurnStatus
from motion_runner.runner.turns import execute_turn
from tests.fakes.anthropic_api import Reply, Text, ToolUse, Usage
from tests.wakes_support import clock, dials, loop, room, say
from wakes.models import Consideration, Spend
from wakes.money.budget import spent_today
from wakes.money.spend_guard import SPEND_GUARD_PREFIX

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

# 3,000 input, 200 output, 1,000 cache writes, 5,000 cache reads on claude-opus-5-5:
# $0.012 + $0.004 + $0.005 + $0.001 = $0.022 at Claude Code's own list price.
EACH_CALL = Usage(
    input_tokens=3000, output_tokens=200, cache_creation_input_tokens=1000, cache_read_input_tokens=5000
)
EACH_TURN = Decimal("0.022")
CENT = Decimal("0.01")


@pytest.fixture
def model_notes_everything(claude_binary, claude_on_fake):
    claude_on_fake.default = lambda request: Reply(Text("Noted."), usage=EACH_CALL)
    return claude_on_fake


def consider_and_run(room, loop, clock, text: str) -> Consideration:
    say(room.motion, room.justin, text, clock)
    [c] = loop.run(12)
    assert c.status == Consideration.Status.WOKEN, c.detail
    turn = execute_turn(c.turn.pk)
    assert turn.status == TurnStatus.FINISHED, turn.error
    c.refresh_from_db()
    return c


def test_three_resumed_turns_cost_the_same_and_the_ledger_is_the_turns(
    room, clock, loop, model_notes_everything, tmp_path
):
    room.motion.workspace = str(tmp_path)
    room.motion.save()
    # Room for a fourth consideration only if the first three are counted at their true $0.066;
    # counted as the session's running totals ($0.022 + $0.044 + $0.066) there would be none.
    dials(
        daily_budget_usd=Decimal("1.10"),
        consideration_cap_usd=Decimal("1.00"),
        min_consideration_usd=Decimal("1.00"),
    )
    considered = [consider_and_run(room, loop, clock, f"question {n}") for n in range(3)]

    turns = [Turn.objects.get(pk=c.turn_id) for c in considered]
    # One session, resumed twice, each time forked (--fork-session): three ids, each claimed here.
    assert len({t.session_id for t in turns}) == 3
    assert [t.cost_usd for t in turns] == [EACH_TURN] * 3
    assert [t.harness_total_before for t in turns] == [Decimal(0), EACH_TURN, 2 * EACH_TURN]
    rows = Spend.objects.exclude(turn=None).order_by("pk")
    assert [(r.turn_id, r.amount, r.settled) for r in rows] == [(t.pk, EACH_TURN, True) for t in turns]
    ledger = rows.aggregate(total=Sum("amount"))["total"]
    turns_total = sum(t.cost_usd for t in turns)
    priced = sum(pricing.anthropic_cost("claude-opus-5-5", t.usage) for t in turns)
    assert abs(ledger - turns_total) < CENT and abs(turns_total - priced) < CENT
    assert ledger == turns_total == priced == 3 * EACH_TURN

    day = timezone.localdate(clock.now())
    assert spent_today(day) == 3 * EACH_TURN
    clock.advance(600)
    fourth = consider_and_run(room, loop, clock, "one more question")
    assert Turn.objects.get(pk=fourth.turn_id).cost_usd == EACH_TURN
    assert spent_today(day) == 4 * EACH_TURN <= Decimal("1.10")


def test_a_turn_that_overspends_is_stopped_at_its_reservation_and_the_day_holds(
    room, clock, loop, claude_binary, claude_on_fake, tmp_path
):
    """The model keeps reading, each call $0.40 of input: Claude Code's own --max-budget-usd
    would let it pass its $1.00 cap (it stops only after the call that crossed it); the runner
    stops it before the call that would."""
    (tmp_path / "README.md").write_text("# Notes\n" * 50)
    calls = iter(range(1000))

    def keeps_reading(request):
        read = ToolUse(
            "Read", {"file_path": str(tmp_path / "README.md"), "offset": next(calls) + 1, "limit": 1}
        )
        return Reply(
            Text("Reading more."), read, usage=Usage(input_tokens=100_000, output_tokens=100), delay=0.05
        )

    claude_on_fake.default = keeps_reading
    room.motion.workspace = str(tmp_path)
    room.motion.save()
    dials(
        daily_budget_usd=Decimal("1.01"),
        consideration_cap_usd=Decimal("1.00"),
        min_consideration_usd=Decimal("1.00"),
    )
    say(room.motion, room.justin, "read everything", clock)
    [c] = loop.run(12)
    turn = execute_turn(c.turn.pk)

    assert turn.max_budget_usd == Decimal("1.00")
    assert turn.status == TurnStatus.KILLED and SPEND_GUARD_PREFIX in turn.error
    assert turn.ended_by == EndedBy.SPEND_GUARD
    assert Decimal("0.40") <= turn.cost_usd <= turn.max_budget_usd
    assert Spend.objects.get(turn=turn).amount == turn.cost_usd
    assert spent_today(timezone.localdate(clock.now())) <= Decimal("1.01")
