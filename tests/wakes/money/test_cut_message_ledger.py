"""A real turn (tests/fakes/fake_harness.py playing the real Claude Code CLI's partials.jsonl)
ended in the middle of an API message, after its message_start and some deltas but before its
message_delta: its cost is that message's message_start usage and its output estimated from the
bytes it streamed (docs/money.md, "A message cut off"), said as an estimate, and its ledger row
is that cost."""

from __future__ import annotations

import json
import threading
import time
from decimal import Decimal

import pytest
from django.db import connection
from django.test import override_settings

from motion_runner.harnesses import pricing
from motion_runner.models import Turn, TurnStatus
from motion_runner.runner.stopping import stop_turns
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.paths import TESTS
from tests.recorded import recorded_lines, recording_path
from wakes.models import Spend

FAKE_HARNESS = TESTS / "fakes" / "fake_harness.py"
CUT_AT = 16  # lines printed: the first message's text and its tool input through 'README.md"'
STREAMED = b'Let me read the README first.{"file_path": "/tmp/record-partials-31k_o2t1/work/README.md"'


def estimate() -> Decimal:
    """Priced here from what was printed: 1,200 input tokens ($4 a million) and the output
    estimated at pricing.ESTIMATE_BYTES_PER_TOKEN bytes a token ($20 a million)."""
    tokens = -(-len(STREAMED) // pricing.ESTIMATE_BYTES_PER_TOKEN)
    return (Decimal(1200) * 4 + Decimal(tokens) * 20) / 1_000_000


def a_turn(tmp_path, plan: dict) -> Turn:
    motion = MotionFactory(slug="harbor", title="Harbor", workspace=str(tmp_path))
    agent = AgentFactory(
        name="scribe",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(recording_path("partials")), "FAKE_HARNESS_PLAN": json.dumps(plan)},
    )
    motion.agents.add(agent)
    return enqueue_turn(motion, agent, "What does the README say?", reason="manual", dispatch=False)


def assert_charged_the_estimate(turn: Turn) -> None:
    assert turn.cost_usd == estimate() > Decimal("0.0048")  # more than the message_start's lower bound
    assert "estimated" in turn.cost_source, turn.cost_source
    assert turn.usage["output_tokens_estimated"] == turn.usage["output_tokens"] == 30
    assert Spend.objects.get(turn=turn).amount == turn.cost_usd


@pytest.mark.django_db(transaction=True)
def test_a_turn_stopped_mid_message_is_charged_its_estimate_and_the_ledger_says_so(tmp_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    printed = tmp_path / "printed"
    turn = a_turn(tmp_path, {"gate": str(gate), "printed": str(printed)})
    runner = threading.Thread(target=lambda: (execute_turn(turn.pk), connection.close()), daemon=True)
    runner.start()
    for index in range(CUT_AT):
        (gate / str(index)).touch()
    deadline = time.monotonic() + 30
    while not (printed.exists() and printed.read_text() == str(CUT_AT)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert recorded_lines("partials")[CUT_AT]["event"]["type"] == "content_block_delta"  # mid-message

    stop_turns(turn.motion, by="rosemary")  # ■: its harness is killed, its pipe drained
    runner.join(60)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.KILLED
    assert_charged_the_estimate(turn)


@pytest.mark.django_db
@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=2)
def test_a_turn_timed_out_mid_message_is_charged_its_estimate(tmp_path):
    lines = tmp_path / "cut.jsonl"
    lines.write_text("".join(json.dumps(line) + "\n" for line in recorded_lines("partials")[:CUT_AT]))
    turn = a_turn(tmp_path, {"lines": str(lines), "hang": True})

    ended = execute_turn(turn.pk)

    assert ended.status == TurnStatus.TIMED_OUT
    assert_charged_the_estimate(ended)
