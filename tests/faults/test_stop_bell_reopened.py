"""The stop bell's connection is reopened after it dropped (a PostgreSQL restart, its backend
terminated), so a stop rung afterwards still reaches the runner at once, not at the next lease
renewal (issue 42.7). Before, a dropped bell stayed deaf for the rest of the turn.

The harness is tests/fakes/fake_harness.py: it plays back a recorded Claude Code turn's first
lines and then hangs, as a turn going wrong would; a worker thread runs it, as Celery would.
"""

from __future__ import annotations

import json
import threading

import psycopg
import pytest
from django.db import connection

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.stopping import stop_turns
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import alive, database_url, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recording_path

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"
# A busy 2-core machine can hold a worker thread for seconds; the lease renewal, which also finds
# a stop, looks only every 100 s here, so a stop within this bound came from the bell.
STOP_BOUND_SECONDS = 30.0

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="the stop bell is PostgreSQL's LISTEN/NOTIFY (CI always has it)",
)


def bell_backends(admin: psycopg.Connection, turn_id: int) -> list[int]:
    return [
        pid
        for (pid,) in admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
            [f"motion-runner stop bell {turn_id}"],
        )
    ]


@pytest.mark.django_db(transaction=True)
def test_a_stop_reaches_the_runner_after_its_bells_connection_was_dropped(tmp_path, settings):
    settings.RUNNER_LEASE_SECONDS = 300.0
    motion = MotionFactory(slug="harbor", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps({"no_result": True, "hang": True}),
        },
    )
    motion.agents.add(magent)
    turn = enqueue_turn(motion, magent, "Read the README.", reason="mention", dispatch=False)

    def run():
        try:
            execute_turn(turn.pk)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    with psycopg.connect(database_url(), autocommit=True) as admin:
        wait_for(
            "the harness in its hang", lambda: Message.objects.filter(turn=turn, kind=Kind.TEXT).exists()
        )
        (first,) = wait_for("the bell listening", lambda: bell_backends(admin, turn.pk))
        admin.execute("SELECT pg_terminate_backend(%s)", [first])
        (again,) = wait_for(
            "the bell listening again", lambda: [pid for pid in bell_backends(admin, turn.pk) if pid != first]
        )
        assert again != first
    pgid = Turn.objects.get(pk=turn.pk).pgid

    stop_turns(motion, "justin")

    wait_for("the process group gone", lambda: not alive(pgid), STOP_BOUND_SECONDS)
    thread.join(30)
    turn.refresh_from_db()
    assert turn.status == TurnStatus.KILLED and turn.stopped_by == "justin"
