"""A running turn keeps its short lease while its runner lives, even through a harness's silence;
a runner whose lease was taken (the sweep ended its turn while it could not renew) stops its
harness and does not end the turn a second time.

The harness is tests/fakes/fake_harness.py playing back the recorded Claude Code tool_call turn.
"""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.support import alive, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recording_path

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"


def wake_in_a_thread(plan: dict, tmp_path) -> tuple[Turn, threading.Thread, list]:
    motion = MotionFactory(slug="readme-question", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(recording_path("tool_call")), "FAKE_HARNESS_PLAN": json.dumps(plan)},
    )
    turn = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
    ran: list = []

    def runner():
        try:
            ran.append(execute_turn(turn.pk))
        finally:
            connection.close()

    thread = threading.Thread(target=runner)
    thread.start()
    return turn, thread, ran


@pytest.mark.django_db(transaction=True)
@override_settings(RUNNER_LEASE_SECONDS=2.0)
def test_a_silent_harness_keeps_its_lease_while_its_runner_lives(tmp_path):
    turn, runner, ran = wake_in_a_thread({"pace": 2.5}, tmp_path)  # silent longer than the lease
    reclaimed = 0
    while runner.is_alive():
        reclaimed += reclaim_lapsed_turns()
        runner.join(0.2)

    assert reclaimed == 0
    assert ran[0].status == TurnStatus.FINISHED


@pytest.mark.django_db(transaction=True)
@override_settings(RUNNER_LEASE_SECONDS=1.0)
def test_a_runner_whose_turn_was_reclaimed_stops_its_harness_and_says_nothing_more(tmp_path):
    turn, runner, ran = wake_in_a_thread({"pace": 0.3, "hang": True, "no_result": True}, tmp_path)
    wait_for("the harness started", lambda: Turn.objects.filter(pk=turn.pk, pid__isnull=False).exists())
    # As if the runner had not renewed for a while (the database was away) and the sweep ran on
    # another host (so only the runner itself can stop its harness): the sweep ends it.
    Turn.objects.filter(pk=turn.pk).update(lease_until=timezone.now(), runner_host="another-host")
    assert wait_for("reclaimed", reclaim_lapsed_turns) == 1

    runner.join(10)  # far inside the 60 s turn timeout that would otherwise stop it

    assert not runner.is_alive()
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED and "the worker running it was lost" in turn.error
    assert ran[0].status == TurnStatus.FAILED
    assert Message.objects.filter(motion=turn.motion, kind=Kind.ERROR).count() == 1
    assert wait_for("the harness stopped", lambda: not alive(turn.pid), seconds=10)
