"""Work that failed to reach the broker is sent as soon as the broker answers again, not a minute
later by the sweep: a mention posted while Redis was down ran 61-70 s after it came back.

Redis here is a private redis-server this test starts, stops and starts again on its own port; the
shared one is never touched.
"""

from __future__ import annotations

import base64
import json

import pytest
import redis
from django.conf import settings
from django.db import connection

from motion_runner.models import TurnStatus
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.faults.private_services import PrivateRedis
from tests.faults.support import wait_for
from tests.faults.test_broker_restart import sending_to

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the turn rows live in the real PostgreSQL (CI has it)"
)


def sent_turns(broker: PrivateRedis) -> list[int]:
    """The turn ids of the run_turn tasks waiting in the broker's turns queue."""
    client = redis.Redis(port=broker.port)
    bodies = [json.loads(raw) for raw in client.lrange(settings.TURNS_QUEUE, 0, -1)]
    return [json.loads(base64.b64decode(body["body"]))[0][0] for body in bodies]


@pytest.mark.django_db(transaction=True)
def test_a_wake_queued_while_the_broker_is_down_is_sent_as_soon_as_it_is_back():
    motion = MotionFactory(slug="cryptograss")
    magent = AgentFactory(name="magent")
    broker = PrivateRedis().start()
    try:
        with sending_to(broker.url()):
            broker.stop()
            turn = enqueue_turn(motion, magent, "Say hello", reason="mention")
            assert turn.status == TurnStatus.QUEUED  # the post that woke it did not fail

            broker.start()
            # The sweep would send it only after RUNNER_RESEND_AFTER_SECONDS (60 s).
            assert wait_for("the turn's task in the broker", lambda: sent_turns(broker), seconds=15) == [
                turn.pk
            ]
    finally:
        broker.stop()
