"""A worker frozen (SIGSTOP) past its lease: the sweep ends the turn as lost and charges what was
stored by then; when the worker wakes, it stores what its harness had printed meanwhile (still in
the pipe), ends nothing twice, and the turn and the ledger are charged what those lines show,
never less. Before, the woken runner dropped every line it read after finding its lease taken.

A real Celery worker in its own process; the harness is tests/fakes/fake_harness.py playing back
the recorded Claude Code tool_call turn (its result line says $0.01104).
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

from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import database_url, start_worker, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recording_path
from wakes.models import Spend

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
LEASE_SECONDS = 3
PRINTED_COST = Decimal("0.01104")

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


@pytest.mark.django_db(transaction=True)
def test_a_worker_frozen_past_its_lease_stores_what_was_printed_and_the_turn_is_charged_for_it(tmp_path):
    launches, printed = tmp_path / "launches", tmp_path / "printed"
    motion = MotionFactory(slug="readme-question", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps(
                {"pace": 0.3, "launches": str(launches), "printed": str(printed)}
            ),
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
    log = tmp_path / "worker.log"
    worker = start_worker(
        "turns",
        database=database_url(),
        broker=settings.CELERY_BROKER_URL,
        log=log,
        RUNNER_LEASE_SECONDS=str(LEASE_SECONDS),
    )
    try:
        sent = tasks.run_turn.apply_async([turn.pk], queue="turns")
        wait_for(
            "the first words stored", lambda: Message.objects.filter(turn=turn, kind=Kind.TEXT).exists(), 60
        )
        worker.send_signal(signal.SIGSTOP)
        lines = len(recording_path("tool_call").read_text().splitlines())
        wait_for(
            "the harness done printing", lambda: printed.exists() and int(printed.read_text()) == lines, 30
        )
        wait_for("the lapsed lease reclaimed", reclaim_lapsed_turns, seconds=LEASE_SECONDS + 30, every=0.2)
        turn.refresh_from_db()
        charged_by_the_sweep = turn.cost_usd
        worker.send_signal(signal.SIGCONT)
        # This task's own line: the shared broker may hold other tests' tasks, run first.
        done = f"{sent.id}] succeeded"
        wait_for("the woken worker done with the turn", lambda: done in log.read_text(), seconds=60)
    finally:
        worker.send_signal(signal.SIGCONT)
        worker.kill()
        worker.wait(10)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED and "the worker running it was lost" in turn.error
    assert len(launches.read_text().split()) == 1
    said = Message.objects.filter(turn=turn)
    assert [m.text for m in said.filter(kind=Kind.TEXT).order_by("created_at", "id")] == [
        "Let me read the README first.",
        "The README says the answer is 42.",
    ]
    assert said.filter(kind=Kind.TURN_END).count() == 1
    assert said.filter(kind=Kind.ERROR).count() == 1  # ended once
    assert charged_by_the_sweep < PRINTED_COST
    assert turn.cost_usd == PRINTED_COST
    reservation.refresh_from_db()
    assert reservation.settled and reservation.amount == PRINTED_COST
    assert Spend.objects.filter(turn=turn).count() == 1
