"""A Celery worker killed with SIGKILL while its harness streams a long answer: the API message's
assistant line (its text, the message_start usage) is out and stored, its message_delta (the
output count) never comes. The API bills all that output; the sweep charges the turn its input
and its output estimated from the stored text (2 bytes a token, docs/money.md), once, says it is
an estimate, and the ledger takes that figure. Before, it was charged the message_start usage
alone: no output at all.

The harness is tests/fakes/fake_harness.py printing the recorded Claude Code lines of an API
message (tests/recordings/claude-code/partials.jsonl) with a long text, then hanging as a model
still streaming does, and carrying on when its reader dies, as the real CLI did.
"""

from __future__ import annotations

import json
import math
import signal

import pytest
from django.conf import settings
from django.db import connection

from motion_runner.harnesses import pricing
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import start_turns_worker, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recorded_lines
from wakes.models import Spend

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
LEASE_SECONDS = 3
LONG_ANSWER = "The README, read closely, says the answer is 42; here is why, at length. " * 100

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


def a_long_answer_cut_before_its_message_delta(path) -> dict:
    """init, message_start and the text block's assistant line of a recorded API message, its text
    made long; no message_delta. Returns the assistant line."""
    recorded = recorded_lines("partials")
    init, start, line = recorded[0], recorded[2], json.loads(json.dumps(recorded[7]))
    line["message"]["content"][0]["text"] = LONG_ANSWER
    path.write_text("".join(json.dumps(each) + "\n" for each in (init, start, line)))
    return line


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_before_a_long_answers_message_delta_is_charged_its_estimated_output_once(tmp_path):
    line = a_long_answer_cut_before_its_message_delta(tmp_path / "lines.jsonl")
    plan = {"lines": str(tmp_path / "lines.jsonl"), "hang": True, "survive_lost_stdout": True}
    motion = MotionFactory(slug="long-answer", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_PLAN": json.dumps(plan), "HOME": str(tmp_path / "home")},
    )
    turn = enqueue_turn(motion, magent, "What does the README say, at length?", dispatch=False)
    worker = start_turns_worker(tmp_path, LEASE_SECONDS)
    try:
        tasks.run_turn.apply_async([turn.pk], queue="turns")
        wait_for(
            "the long answer stored",
            lambda: Message.objects.filter(motion=motion, kind=Kind.TEXT).exists(),
            seconds=60,
        )
        worker.send_signal(signal.SIGKILL)
        worker.wait(60)
    finally:
        if worker.poll() is None:
            worker.kill()

    # Reclaimed once the lease lapsed (a bound generous for a busy machine, not a timing assert).
    wait_for("the lapsed lease reclaimed", reclaim_lapsed_turns, seconds=LEASE_SECONDS + 120, every=0.2)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    started = {k: v for k, v in line["message"]["usage"].items() if k != "output_tokens"}
    estimated = math.ceil(len(LONG_ANSWER.encode()) / 2)
    charged = pricing.anthropic_cost("claude-opus-5-5", {**started, "output_tokens": estimated})
    assert turn.cost_usd == charged
    assert turn.cost_usd > pricing.anthropic_cost("claude-opus-5-5", started)  # what it was charged before
    assert "estimated" in turn.cost_source
    assert turn.usage["output_tokens_estimated"] == estimated
    (row,) = Spend.objects.filter(turn=turn)
    assert row.amount == turn.cost_usd
    said = Message.objects.get(pk=system_uuid("turn-error", turn.pk))
    assert f"${turn.cost_usd:.4f}" in said.text and "estimated" in said.text
    assert reclaim_lapsed_turns() == 0  # charged once
