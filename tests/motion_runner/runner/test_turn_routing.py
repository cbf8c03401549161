"""Turns run where their sessions live: an agent (or a Motion) names the queue its turns go to; a
turn whose queue no worker consumes says so in the thread."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner import tasks
from motion_runner.runner.routing import consumed_queues, say_unserved_queues
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.motion_runner.runner.test_runner_failures import FAKE_HARNESS
from tests.recorded import recording_path


@pytest.fixture
def sent(monkeypatch):
    calls = []
    monkeypatch.setattr(tasks.run_turn, "delay", lambda pk: calls.append((pk, None)))
    monkeypatch.setattr(
        tasks.run_turn, "apply_async", lambda args, queue=None, countdown=0: calls.append((args[0], queue))
    )
    return calls


@pytest.mark.django_db
def test_an_agents_turns_go_to_its_queue(sent, django_capture_on_commit_callbacks):
    magent = AgentFactory(name="magent", turn_queue="magent-box")
    with django_capture_on_commit_callbacks(execute=True):
        turn = enqueue_turn(MotionFactory(), magent, "Hello.")
    assert sent == [(turn.pk, "magent-box")]


@pytest.mark.django_db
def test_a_motions_queue_wins_over_its_agents(sent, django_capture_on_commit_callbacks):
    magent = AgentFactory(name="magent", turn_queue="magent-box")
    with django_capture_on_commit_callbacks(execute=True):
        turn = enqueue_turn(MotionFactory(turn_queue="cryptograss-box"), magent, "Hello.")
    assert sent == [(turn.pk, "cryptograss-box")]


@pytest.mark.django_db
def test_with_no_queue_named_the_tasks_own_route_decides(sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        turn = enqueue_turn(MotionFactory(), AgentFactory(name="magent"), "Hello.")
    assert sent == [(turn.pk, None)]


@pytest.mark.django_db
def test_a_turn_whose_queue_no_worker_consumes_says_so_once():
    motion = MotionFactory(slug="workroom")
    turn = enqueue_turn(
        motion, AgentFactory(name="magent", turn_queue="magent-box"), "Hello.", dispatch=False
    )
    Turn.objects.filter(pk=turn.pk).update(queued_at=timezone.now() - timedelta(seconds=40))

    assert say_unserved_queues(timezone.now(), consumed={"turns", "housekeeping"}) == 1
    assert say_unserved_queues(timezone.now(), consumed={"turns", "housekeeping"}) == 0

    (line,) = Message.objects.filter(motion=motion, kind=Kind.WAKE, text__contains="no worker consumes")
    assert "“magent-box”" in line.text and "-Q magent-box" in line.text


@pytest.mark.django_db
def test_a_served_queue_or_a_fresh_turn_says_nothing():
    motion = MotionFactory(slug="workroom")
    agent = AgentFactory(name="magent", turn_queue="magent-box")
    fresh = enqueue_turn(motion, agent, "Hello.", dispatch=False)
    assert say_unserved_queues(timezone.now(), consumed=set()) == 0  # not waiting long yet
    Turn.objects.filter(pk=fresh.pk).update(queued_at=timezone.now() - timedelta(seconds=40))
    assert say_unserved_queues(timezone.now(), consumed={"magent-box"}) == 0
    assert not Message.objects.filter(motion=motion, kind=Kind.WAKE).exists()


@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_agents_queue_runs_its_turn_and_is_seen_consuming_it(tmp_path):
    from celery.contrib.testing.worker import start_worker

    from motion_runner.celery import app

    agent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(recording_path("tool_call")), "FAKE_HARNESS_PLAN": json.dumps({})},
        turn_queue="magent-box",
    )
    motion = MotionFactory(slug="workroom", workspace=str(tmp_path))
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", queues=["magent-box"]):
        # The worker answers the broadcast once its control consumer is up: asked until it does.
        seen = time.monotonic() + 60
        while "magent-box" not in (consumed_queues(timeout=2) or set()) and time.monotonic() < seen:
            pass
        assert "magent-box" in (consumed_queues(timeout=5) or set())
        turn = enqueue_turn(motion, agent, "What does the README say?")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            turn.refresh_from_db()
            if turn.ended:
                break
            time.sleep(0.2)
    assert turn.status == TurnStatus.FINISHED, turn.error


@pytest.mark.django_db(transaction=True)
def test_the_sweep_asks_the_live_workers_and_says_a_queue_nobody_consumes():
    from celery.contrib.testing.worker import start_worker

    from motion_runner.celery import app
    from motion_runner.runner.reclaim import sweep_turns

    motion = MotionFactory(slug="workroom")
    turn = enqueue_turn(
        motion, AgentFactory(name="magent", turn_queue="nobody-box"), "Hello.", dispatch=False
    )
    Turn.objects.filter(pk=turn.pk).update(queued_at=timezone.now() - timedelta(seconds=40))
    with start_worker(
        app, pool="solo", perform_ping_check=False, loglevel="WARNING", queues=["elsewhere-box"]
    ):
        swept = sweep_turns()

    assert swept["unserved"] == 1
    assert Message.objects.filter(
        motion=motion, text__contains="“nobody-box”, which no worker consumes"
    ).exists()
