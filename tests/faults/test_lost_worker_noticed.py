"""A worker killed mid-turn is noticed in seconds with the default settings: its lease
(RUNNER_LEASE_SECONDS, renewed every third of it) lapses and the beat's reclaim (every 2 s) ends
the turn. Before: a 20 s lease and a 15 s sweep, 24-27 s measured (up to ~35 s).

The beat is played here by calling the reclaim task at the period the schedule gives it; the
worker is a real Celery worker in its own process, killed with SIGKILL; the harness is
tests/fakes/fake_harness.py playing back the recorded Claude Code tool_call turn, slowly.
"""

from __future__ import annotations

import json
import signal
import time

import pytest
from django.conf import settings
from django.db import connection

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.turns import enqueue_turn
from motion_runner.schedule import beat_schedule
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import database_url, start_worker, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recording_path

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
NOTICED_WITHIN = 10.0  # seconds, the bound

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


def reclaim_period() -> float:
    (entry,) = [e for e in beat_schedule().values() if e["task"] == "motion_runner.reclaim_turns"]
    return float(entry["schedule"])


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_turn_is_noticed_within_ten_seconds_with_the_defaults(tmp_path, monkeypatch):
    motion = MotionFactory(slug="readme-question", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps({"pace": 1.0, "hang": True}),
        },
    )
    turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
    worker = start_worker(
        "turns", database=database_url(), broker=settings.CELERY_BROKER_URL, log=tmp_path / "worker.log"
    )
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
    killed_at = time.monotonic()
    period = reclaim_period()

    def beat_reclaims() -> bool:
        tasks.reclaim_turns_task()
        return Turn.objects.get(pk=turn.pk).status != TurnStatus.RUNNING

    wait_for("the lost turn ended", beat_reclaims, seconds=60, every=period)
    noticed = time.monotonic() - killed_at

    print(
        f"noticed {noticed:.1f} s after the kill (lease {settings.RUNNER_LEASE_SECONDS:g} s, reclaim every {period:g} s)"
    )
    assert noticed < NOTICED_WITHIN
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED and "the worker running it was lost" in turn.error
