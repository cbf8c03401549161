"""A handoff with a real Celery `turns` worker (issue 33's check): Justin asks @magent in
"cryptograss" to take the setlist to "jams"; the worker runs the turn, writes @magent's reply with
its ```handoff block (for @jambot, the agent of "jams"), and the block lands in "jams" (a line
naming where it came from) and is said in "cryptograss"; Justin's mention of @jambot in "jams"
wakes it with the context carried.

Each agent's harness is tests/fakes/fake_harness.py, answering every run with one reply under
fresh ids, in a session of its own.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection

from motion_runner.celery import app
from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.faults.support import database_url, start_worker, wait_for
from tests.wakes.consider_loop.test_agent_volley_workers import answers
from wakes.models import Dials

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)

REPLY = (
    "Taking it over.\n\n```handoff\nto: jams\nabout: the Saturday setlist\nfor: jambot\n---\n"
    "Settled: open with Salt Creek. Open: who brings the banjo.\n```"
)


def finished(motion) -> list[Turn]:
    turns = list(Turn.objects.filter(motion=motion))
    return turns if turns and all(t.status == TurnStatus.FINISHED for t in turns) else []


@pytest.mark.django_db(transaction=True)
def test_a_handoff_reaches_the_named_motion_and_its_next_wake_with_a_real_worker(tmp_path):
    Dials.objects.update_or_create(pk=1, defaults={"mention_gather_seconds": 0.1})
    cryptograss = MotionFactory(slug="cryptograss", title="Cryptograss", workspace=str(tmp_path))
    jams = MotionFactory(slug="jams", title="Jams", workspace=str(tmp_path))
    magent = AgentFactory(name="magent", listening=False)
    cryptograss.agents.add(magent)
    jams.agents.add(magent)
    jambot = AgentFactory(name="jambot", listening=False)
    jams.agents.add(jambot)
    answers(magent, REPLY, tmp_path)
    answers(jambot, "Salt Creek first; the banjo is still open.", tmp_path)
    justin = UserFactory(username="justin")

    def justin_says(motion, text: str) -> None:
        post = MessageFactory(
            motion=motion, sender="justin", author=justin, source="web", sign_in="ssh", text=text
        )
        message_created.send(sender=Message, message=post)

    worker = start_worker(
        "turns", database=database_url(), broker=settings.CELERY_BROKER_URL, log=tmp_path / "worker.log"
    )
    try:
        justin_says(cryptograss, "@magent please take the setlist to jams")
        line = wait_for(
            "the handoff in jams",
            lambda: Message.objects.filter(motion=jams, raw__handoff__isnull=False).first(),
            seconds=120,
            every=0.5,
        )
        assert line.text.startswith("↪ Handed over by @magent from “Cryptograss” — the Saturday setlist")
        reply = Message.objects.get(motion=cryptograss, agent=magent, kind=Kind.TEXT, source="runner")
        assert f"/motions/cryptograss/#m-{reply.pk}" in line.text
        wait_for("the turn in cryptograss ended", lambda: finished(cryptograss), seconds=60)
        assert Message.objects.filter(
            motion=cryptograss, kind=Kind.WAKE, text__startswith="@magent took this to “Jams”"
        ).exists()

        justin_says(jams, "@jambot what did we settle for Saturday?")
        [turn] = wait_for("the turn in jams ended", lambda: finished(jams), seconds=120, every=0.5)
        assert turn.agent == jambot
        assert "Context handed to you here from another Motion" in turn.prompt
        assert "Settled: open with Salt Creek." in turn.prompt
        assert Message.objects.filter(motion=jams, raw__handoff__isnull=False).count() == 1
        assert not Message.objects.filter(text__startswith="Not handed over").exists()
    finally:
        worker.terminate()
        worker.wait(30)
        with app.connection_for_write() as broker:
            broker.default_channel.queue_purge("turns")
