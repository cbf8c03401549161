"""A worker frozen (SIGSTOP) inside its write transaction, and left frozen: the sweep reclaims its
turn within 40 s, every line its harness printed is stored once (recovered from its transcript,
the frozen batch's included) and the ledger is settled at what those lines show (issue 42.6).
Before, the frozen transaction's uncommitted rows made the sweep's recovery of the same lines wait
forever: 24 of 45–47 lines lost, the ledger at $0.00 for $0.07 spent.

A real Celery worker in its own process; a sitecustomize in its PYTHONPATH makes its runner stop
itself (SIGSTOP) right after the third batch's INSERT, before that transaction commits. The
harness is tests/fakes/fake_harness.py playing back the recorded Claude Code tool_call turn, its
transcript written beside it (without the cost-state line), carrying on when its reader freezes.
"""

from __future__ import annotations

import json
import signal
import time
from datetime import date
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from motion_runner.models import Kind, Message, Source, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import ROOT, alive, start_turns_worker, wait_for
from tests.faults.test_database_restart import SPOKEN
from tests.faults.test_reclaimed_turn_charged import priced
from tests.recorded import CLAUDE_RECORDINGS, recorded_lines, recording_path
from wakes.models import Spend

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
LEASE_SECONDS = 3

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)

# Run by the worker's interpreter at start (sitecustomize): once the worker is ready (Django set
# up), its runner's third batch stops the whole process inside its open transaction.
FREEZE_IN_THE_THIRD_WRITE = """
import os, signal
from celery.signals import worker_ready

@worker_ready.connect
def freeze_in_the_third_write(**kwargs):
    from motion_runner.runner import turn_run
    write_many, writes = turn_run.TurnRun.write_many, []

    def frozen_write_many(self, events):
        write_many(self, events)
        writes.append(len(events))
        if len(writes) == 3:
            with open({frozen!r}, "w") as handle:
                handle.write(str(len(events)))
            os.kill(os.getpid(), signal.SIGSTOP)

    turn_run.TurnRun.write_many = frozen_write_many
"""


@pytest.mark.django_db(transaction=True)
def test_a_worker_frozen_in_its_write_transaction_never_holds_the_sweep(tmp_path, monkeypatch):
    home, hook, frozen = tmp_path / "home", tmp_path / "hook", tmp_path / "frozen"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FREEZE_IN_THE_THIRD_WRITE.format(frozen=str(frozen)))
    session_id = recorded_lines("tool_call")[0]["session_id"]
    transcript = tmp_path / "transcript.jsonl"
    kept = (CLAUDE_RECORDINGS / "tool_call.transcript.jsonl").read_text().splitlines()
    transcript.write_text("".join(line + "\n" for line in kept if '"cost-state"' not in line))
    plan = {
        "pace": 0.5,
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
    worker = start_turns_worker(tmp_path, LEASE_SECONDS, PYTHONPATH=f"{hook}:{ROOT}")
    monkeypatch.setattr(tasks.run_turn, "delay", lambda turn_id: None)
    try:
        tasks.run_turn.apply_async([turn.pk], queue="turns")
        wait_for("the runner frozen inside its third batch", frozen.exists, 60)
        started = time.monotonic()
        wait_for("the lapsed lease reclaimed", reclaim_lapsed_turns, seconds=40, every=0.5)
        reclaimed_after = time.monotonic() - started
        assert alive(worker.pid)  # still frozen: nothing it did afterwards counts
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED and "the worker running it was lost" in turn.error
    assert reclaimed_after < 40
    said = Message.objects.filter(session_id=session_id).exclude(source=Source.SYSTEM)
    replies = {json.loads(line)["uuid"] for line in kept if json.loads(line).get("type") == "assistant"}
    stored = {str(pk) for pk in said.values_list("id", flat=True)}  # its id is the line's uuid: once
    assert replies <= stored  # every reply, the frozen batch's and the ones printed after it too
    # ... and each once: nothing of it stored again under another id (the recovery's, the runner's)
    texts = said.filter(kind=Kind.TEXT).order_by("created_at", "id").values_list("text", flat=True)
    assert list(texts) == SPOKEN
    assert list(said.filter(kind=Kind.TOOL_CALL).values_list("tool_name", flat=True)) == ["Read"]
    assert said.filter(kind=Kind.TOOL_RESULT).count() == 1
    assert [m.turn_id for m in said] == [turn.pk] * said.count()
    assert turn.cost_usd == priced(said) > 0
    reservation.refresh_from_db()
    assert reservation.settled and reservation.amount == turn.cost_usd
