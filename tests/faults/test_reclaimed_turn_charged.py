"""A turn whose worker was killed is charged for everything its harness said: the lines the sweep
recovers from its transcript belong to the turn, and its cost (and the ledger's row) counts them.
Before, recovered lines were stored with no turn and the turn was charged only for what its runner
had stored: $0.16 settled where the harness spent about $0.60.

The harness is tests/fakes/fake_harness.py playing back the recorded Claude Code tool_call turn
one line a second, its transcript written beside it (without the cost-state line, as when the CLI
is killed before it writes one), carrying on when its reader dies.
"""

from __future__ import annotations

import json
import signal
from datetime import date
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from motion_runner.harnesses import get_adapter
from motion_runner.models import Kind, Message, Source, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import start_turns_worker, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recorded_lines, recording_path
from wakes.models import Spend

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
LEASE_SECONDS = 3
SECOND_CALL = "msg_fake00040af12d5ec0474e52"  # the reply's API message: printed last

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


def priced(messages) -> Decimal:
    adapter, by_message = get_adapter("claude-code"), {}
    for message in messages.exclude(harness_message_id=""):
        if (cost := adapter.message_cost(message)) is not None:
            key = message.harness_message_id
            by_message[key] = max(by_message.get(key, Decimal(0)), cost)
    return sum(by_message.values(), Decimal(0))


@pytest.mark.django_db(transaction=True)
def test_a_reclaimed_turn_owns_and_is_charged_for_the_lines_recovered_from_its_transcript(
    tmp_path, monkeypatch
):
    home = tmp_path / "home"
    session_id = recorded_lines("tool_call")[0]["session_id"]
    transcript = tmp_path / "transcript.jsonl"
    kept = (CLAUDE_RECORDINGS / "tool_call.transcript.jsonl").read_text().splitlines()
    transcript.write_text("".join(line + "\n" for line in kept if '"cost-state"' not in line))
    plan = {
        "pace": 1.0,
        "hang": True,
        "survive_lost_stdout": True,
        "transcript": {
            "from": str(transcript),
            "to": str(home / ".claude" / "projects" / "-work" / f"{session_id}.jsonl"),
        },
    }
    motion = MotionFactory(slug="readme-question", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps(plan),
            "HOME": str(home),
        },
    )
    turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
    reservation = Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=magent,
        turn=turn,
        day=date.today(),
        at=timezone.now(),
        amount=Decimal("3"),
        reserved=Decimal("3"),
    )
    worker = start_turns_worker(tmp_path, LEASE_SECONDS)
    try:
        tasks.run_turn.apply_async([turn.pk], queue="turns")
        wait_for(
            "the first words stored", lambda: Message.objects.filter(turn=turn, kind=Kind.TEXT).exists(), 60
        )
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert not Message.objects.filter(harness_message_id=SECOND_CALL).exists()  # not printed yet
    monkeypatch.setattr(tasks.run_turn, "delay", lambda turn_id: None)

    wait_for("the lapsed lease reclaimed", reclaim_lapsed_turns, seconds=LEASE_SECONDS + 20, every=0.2)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    said = Message.objects.filter(session_id=session_id).exclude(source=Source.SYSTEM)
    assert said.filter(harness_message_id=SECOND_CALL).exists()  # recovered from the transcript
    assert [m.turn_id for m in said] == [turn.pk] * said.count()
    assert turn.cost_usd == priced(said) > priced(said.exclude(harness_message_id=SECOND_CALL))
    reservation.refresh_from_db()
    assert reservation.settled and reservation.amount == turn.cost_usd
