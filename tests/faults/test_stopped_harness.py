"""A fast harness stopped by the turn's dollar cap: everything it printed before the stop (still
in the pipe when it was killed) is stored and priced, and the ledger takes that price. Before, the
pipe was closed unread: 21-22 printed lines were missing and the ledger showed $2.06 of $2.45.

The harness is tests/fakes/fake_harness.py printing, as fast as the pipe takes them, 300 priced
assistant lines made from those the real Claude Code CLI printed (fresh ids each, so each is an API
message of its own); a 64 KiB pipe holds about 90 of them, so the runner is always behind it.
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from motion_runner.harnesses import get_adapter
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.recorded import CLAUDE_RECORDINGS, fresh_copy, recorded_lines
from wakes.models import Spend

FAKE_HARNESS = str(CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py")
LINES = 300

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the ledger's settle runs on the real PostgreSQL (CI has it)"
)


def fast_priced_lines(path) -> list[dict]:
    recorded = recorded_lines("tool_call")
    init, reply = recorded[0], recorded[4]
    session_id = init["session_id"]
    lines = [init] + [fresh_copy(reply, {}, session_id) for _ in range(LINES)] + [recorded[-1]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def price_of(lines: list[dict]) -> Decimal:
    """What these lines cost, priced as they stream (each API message once)."""
    adapter, parser, by_message = get_adapter("claude-code"), ClaudeCodeParser(""), {}
    for line in lines:
        for event in parser.feed(line):
            if (cost := adapter.streamed_cost(event)) is not None and event.message_id:
                by_message[event.message_id] = cost
    return sum(by_message.values(), Decimal(0))


@pytest.mark.django_db(transaction=True)
def test_a_spend_guard_stop_stores_and_charges_every_line_the_harness_printed(tmp_path):
    lines = fast_priced_lines(tmp_path / "lines.jsonl")
    printed_file = tmp_path / "printed"
    motion = MotionFactory(slug="fast-talk", workspace=str(tmp_path))
    quick = AgentFactory(
        name="quick",
        binary=FAKE_HARNESS,
        env={
            "FAKE_HARNESS_LINES": str(tmp_path / "lines.jsonl"),
            "FAKE_HARNESS_PLAN": json.dumps({"printed": str(printed_file), "hang": True}),
        },
    )
    turn = enqueue_turn(motion, quick, "Talk fast.", dispatch=False, max_budget_usd=Decimal("0.05"))
    reservation = Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=quick,
        turn=turn,
        day=date.today(),
        at=timezone.now(),
        amount=Decimal("3"),
        reserved=Decimal("3"),
    )

    turn = execute_turn(turn.pk)

    printed = int(printed_file.read_text())
    assert 1 < printed < len(lines)  # stopped mid-way: the cap did stop it
    assert turn.status == TurnStatus.KILLED and "dollar cap" in turn.error
    replies = Message.objects.filter(turn=turn, kind=Kind.TEXT)
    assert replies.count() == printed - 1  # every reply it printed (the first line is its init)
    assert turn.cost_usd == price_of(lines[:printed])
    reservation.refresh_from_db()
    assert reservation.settled
    assert reservation.amount == turn.cost_usd
