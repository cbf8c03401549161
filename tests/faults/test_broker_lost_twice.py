"""Redis lost twice in a row under a turns worker: the worker is still there afterwards (it waits
for its broker however long, and docker-compose restarts one that exits anyway:
test_supervision.py), and a turn queued after the second restart runs. Seen before: in 1 of 6
double restarts the worker exited and 4 turns never ran.

Redis here is a private redis-server this test starts and restarts on its own port; the worker is
a real Celery worker in its own process; the harness is tests/fakes/fake_harness.py playing back
the recorded Claude Code text_reply turn.
"""

from __future__ import annotations

import json
import time

import pytest
from django.conf import settings
from django.db import connection

from motion_runner.models import TurnStatus
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.private_services import PrivateRedis
from tests.faults.support import database_url, start_worker, wait_for
from tests.faults.test_broker_restart import sending_to
from tests.recorded import CLAUDE_RECORDINGS, recording_path

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="a worker in another process needs the real PostgreSQL (CI has it)",
)


@pytest.mark.django_db(transaction=True)
def test_a_turns_worker_outlives_two_redis_restarts_in_a_row_and_runs_the_next_turn(tmp_path):
    motion = MotionFactory(slug="cryptograss", workspace=str(tmp_path))
    codey = AgentFactory(
        name="codey",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(recording_path("text_reply")), "FAKE_HARNESS_PLAN": json.dumps({})},
    )
    broker = PrivateRedis().start()
    log = tmp_path / "worker.log"
    worker = start_worker(settings.TURNS_QUEUE, database=database_url(), broker=broker.url(), log=log)
    try:
        wait_for("the worker ready", lambda: "ready" in log.read_text(), seconds=60)
        for _ in range(2):
            broker.stop()
            time.sleep(2.0)  # away long enough for the worker to notice
            broker.start()
        with sending_to(broker.url()):
            turn = enqueue_turn(motion, codey, "Say hello", reason="manual")

        def ran() -> bool:
            turn.refresh_from_db()
            return turn.status == TurnStatus.FINISHED

        wait_for("the turn queued after the restarts run", ran, seconds=90, every=0.5)
        assert worker.poll() is None  # still there
    finally:
        worker.terminate()
        worker.wait(30)
        broker.stop()
