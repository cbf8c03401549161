"""A consideration whose worker died mid-run (here in its screen, the one slow step) is given up
in under a minute with the default settings: its reservation goes back and its posts are owed
again. Before, only after ten times WAKES_CONSIDERATION_START_SECONDS (about 300 s).

A real Celery housekeeping worker in its own process, killed with SIGKILL while the screen call it
made to a local fake Messages API hangs; the loop's recovery is run here at the tick's period.
"""

from __future__ import annotations

import signal
import time
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from motion_runner.models import Message
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.fakes.anthropic_api import FakeAnthropic, Hang
from tests.faults.support import database_url, start_worker, wait_for
from wakes.consider_loop.loop import tick
from wakes.consider_loop.recovery import recover_considerations
from wakes.models import Consideration, Dials, Spend

GIVEN_UP_WITHIN = 60.0  # seconds, the bound

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


@pytest.mark.django_db(transaction=True)
def test_a_consideration_whose_worker_died_mid_screen_is_given_up_within_a_minute(tmp_path):
    Dials.objects.update_or_create(pk=1, defaults={"quiet_seconds": 0.2, "screen_enabled": True})
    motion = MotionFactory(slug="cryptograss")
    magent = AgentFactory(name="magent", listening=True)
    motion.agents.add(magent)
    with FakeAnthropic(default=Hang(seconds=120)) as api:
        worker = start_worker(
            settings.HOUSEKEEPING_QUEUE,
            database=database_url(),
            broker=settings.CELERY_BROKER_URL,
            log=tmp_path / "worker.log",
            WAKES_SCREEN_API_BASE=api.url,
            WAKES_SCREEN_API_KEY="sk-test-screen",
        )
        try:
            post = MessageFactory(motion=motion, sender="justin", author=UserFactory(username="justin"))
            message_created.send(sender=Message, message=post)
            time.sleep(0.3)  # the quiet passes
            [claimed] = tick()
            wait_for("the screen asked", lambda: api.message_requests(), seconds=60)
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
        finally:
            if worker.poll() is None:
                worker.kill()
    killed_at = time.monotonic()
    claimed.refresh_from_db()
    assert claimed.status == Consideration.Status.RUNNING
    reservation = Spend.objects.get(consideration=claimed, kind=Spend.Kind.CONSIDERATION)
    assert reservation.reserved > 0 and not reservation.settled

    def recovered() -> bool:
        recover_considerations(timezone.now(), dispatch=False)
        return Consideration.objects.get(pk=claimed.pk).status == Consideration.Status.FAILED

    wait_for("the lost consideration given up", recovered, seconds=GIVEN_UP_WITHIN + 30, every=3.0)
    given_up = time.monotonic() - killed_at

    print(f"given up {given_up:.1f} s after its worker was killed")
    assert given_up < GIVEN_UP_WITHIN
    reservation.refresh_from_db()
    assert reservation.settled and reservation.amount == Decimal(0)
