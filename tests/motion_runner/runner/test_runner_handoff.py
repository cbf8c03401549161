"""When a turn ends, the pair's oldest waiting turn is handed to a worker (and only then)."""

from __future__ import annotations

import json

import pytest

from motion_runner.models import TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.recorded import CLAUDE_RECORDINGS, recording_path

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"

pytestmark = pytest.mark.django_db


def test_a_turn_that_ends_hands_the_pair_to_its_oldest_waiting_turn(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    motion = MotionFactory(slug="readme-question", workspace=str(tmp_path))
    magent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(recording_path("tool_call")), "FAKE_HARNESS_PLAN": json.dumps({})},
    )
    first = enqueue_turn(motion, magent, "What does the README say?", dispatch=False)
    second = enqueue_turn(motion, magent, "And then?", dispatch=False)
    enqueue_turn(motion, magent, "And after that?", dispatch=False)
    sent: list[int] = []
    monkeypatch.setattr(tasks.run_turn, "delay", lambda turn_id: sent.append(turn_id))

    with django_capture_on_commit_callbacks(execute=True):
        ended = execute_turn(first.pk)

    assert ended.status == TurnStatus.FINISHED
    assert sent == [second.pk]
