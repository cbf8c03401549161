"""A non-persistent Redis restarted with work queued: the consider task and a turn's task it held
are gone, and still no wake is lost. The database is the record of what is owed: the tick sends the
lost consideration again (once), the sweep sends the lost turn again (once), a real worker runs
both, and each turn is launched exactly once.

Redis here is a private redis-server this test starts on its own port without persistence; the
shared one is never restarted. The harness is tests/fakes/fake_harness.py playing back turns
recorded from the real Claude Code CLI.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager

import pytest
import redis
from django.conf import settings
from django.db import connection

from motion_runner.celery import app
from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.reclaim import sweep_turns
from motion_runner.runner.turns import enqueue_turn
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.faults.private_services import PrivateRedis, free_port
from tests.faults.support import database_url, start_worker, wait_for
from tests.recorded import CLAUDE_RECORDINGS, recording_path
from wakes.consider_loop.loop import tick
from wakes.models import Consideration, Dials

FAKE_HARNESS = CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py"

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="a worker in another process needs the real PostgreSQL (CI always has it)",
)


@contextmanager
def sending_to(broker_url: str):
    """This process's tasks go to `broker_url` for the block (Celery's pools are rebuilt)."""
    saved = {key: app.conf.get(key) for key in ("broker_url", "broker_write_url", "broker_read_url")}

    def point(values: dict) -> None:
        app.conf.update(values)
        app._pool = None
        app.amqp._producer_pool = None

    point({key: broker_url for key in saved})
    try:
        yield
    finally:
        point(saved)


def queued(broker: PrivateRedis) -> int:
    client = redis.Redis(port=broker.port)
    return sum(client.llen(queue) for queue in (settings.TURNS_QUEUE, settings.HOUSEKEEPING_QUEUE))


@pytest.mark.django_db(transaction=True)
def test_a_broker_restart_with_work_queued_loses_no_wake(tmp_path, settings):
    settings.WAKES_CONSIDERATION_START_SECONDS = 1
    settings.RUNNER_RESEND_AFTER_SECONDS = 1
    Dials.objects.update_or_create(pk=1, defaults={"quiet_seconds": 0.2, "screen_enabled": False})
    launches = tmp_path / "launches"
    motion = MotionFactory(slug="cryptograss", workspace=str(tmp_path))

    def harness_agent(name: str, scenario: str, listening: bool):
        plan = {"launches": str(launches)}
        return AgentFactory(
            name=name,
            listening=listening,
            binary=str(FAKE_HARNESS),
            env={"FAKE_HARNESS_LINES": str(recording_path(scenario)), "FAKE_HARNESS_PLAN": json.dumps(plan)},
        )

    magent = harness_agent("magent", "tool_call", listening=True)
    codey = harness_agent("codey", "text_reply", listening=False)
    motion.agents.add(magent)
    # codey's wake is the other task queued at the restart. It is in a Motion of its own: its
    # reply in magent's Motion would be news for magent, and a consideration of its own.
    elsewhere = MotionFactory(slug="elsewhere", workspace=str(tmp_path))
    elsewhere.agents.add(codey)
    broker = PrivateRedis().start()
    worker = None
    try:
        with sending_to(broker.url()):
            post = MessageFactory(motion=motion, sender="justin", author=UserFactory(username="justin"))
            message_created.send(sender=Message, message=post)
            time.sleep(0.3)  # the quiet passes
            [consideration] = tick()
            waiting = enqueue_turn(elsewhere, codey, "Say hello", reason="manual")
            assert queued(broker) == 2

            broker.restart()  # not persistent: both tasks are gone
            assert queued(broker) == 0

            worker = start_worker(
                f"{settings.TURNS_QUEUE},{settings.HOUSEKEEPING_QUEUE}",
                database=database_url(),
                broker=broker.url(),
                log=tmp_path / "worker.log",
            )
            time.sleep(1.1)

            def everything_ran() -> bool:
                tick()
                sweep_turns()
                turns = Turn.objects.all()
                return turns.count() == 2 and all(turn.ended for turn in turns)

            wait_for("both wakes ran", everything_ran, seconds=60, every=0.5)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(30)
        broker.stop()

    # The post was considered and woke magent once: by the lost consideration sent again, or,
    # had that one not started in time either, by the one that took its place.
    [spoke] = Consideration.objects.filter(status=Consideration.Status.SPOKE)
    assert spoke.through == consideration.through
    assert spoke.turn.status == TurnStatus.FINISHED
    assert Turn.objects.filter(agent=magent).count() == 1
    waiting.refresh_from_db()
    assert waiting.status == TurnStatus.FINISHED
    assert len(launches.read_text().split()) == 2  # each turn launched once
    texts = [m.text for m in Message.objects.filter(motion=motion, kind=Kind.TEXT).exclude(pk=post.pk)]
    assert sorted(texts) == ["Let me read the README first.", "The README says the answer is 42."]
    assert [m.text for m in Message.objects.filter(motion=elsewhere, kind=Kind.TEXT)] == [
        "Hello from the fake model: nothing to do here."
    ]


@pytest.mark.django_db(transaction=True)
def test_a_wake_while_the_broker_is_down_stays_owed_instead_of_failing_the_post():
    """Sending the task fails; the Turn row is the record, and the sweep sends it later."""
    motion = MotionFactory(slug="cryptograss")
    magent = AgentFactory(name="magent")
    with sending_to(f"redis://127.0.0.1:{free_port()}/0"):  # nobody listens there
        turn = enqueue_turn(motion, magent, "Say hello", reason="mention")

    turn.refresh_from_db()
    assert turn.status == TurnStatus.QUEUED
