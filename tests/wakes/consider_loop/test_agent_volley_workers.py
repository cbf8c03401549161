"""Two agents' volley with a real Celery `turns` worker (issue 32's check): Justin's mention of
@abot, whose reply mentions @bbot, wakes @bbot; their volley stops after six agent-woken turns with
one line naming both; Justin's post lets them go on; during a scram his post answers 423 and nothing
is stored, and `manage.py scram --lift` lifts it.

Each agent's harness is tests/fakes/fake_harness.py, answering every run with "@<the other> over
to you" under fresh line ids; the worker runs the turns and writes their words, and those words
wake the other agent, in the worker, as in production.
"""

from __future__ import annotations

import json
import time
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test import Client

from motion_runner.api.auth import create_key
from motion_runner.celery import app
from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.faults.support import database_url, start_worker, wait_for
from tests.paths import TESTS
from wakes.models import Dials, MentionWake

FAKE = TESTS / "fakes" / "fake_harness.py"

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql" or not settings.CELERY_BROKER_URL.startswith("redis://"),
    reason="a worker in another process needs the real PostgreSQL and Redis (CI always has them)",
)


def answers(agent, text: str, folder) -> None:
    session = f"00000000-0000-4000-8000-{agent.pk:012d}"
    lines = [
        {"type": "system", "subtype": "init", "session_id": session, "tools": ["Read"], "model": "m"},
        {
            "type": "assistant",
            "session_id": session,
            "uuid": "u",
            "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": text}]},
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": session,
            "total_cost_usd": 0.01,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "uuid": "r",
        },
    ]
    path = folder / f"{agent.name}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    agent.binary = str(FAKE)
    agent.env = {"FAKE_HARNESS_PLAN": json.dumps({"lines": str(path), "fresh_ids": True})}
    agent.save()


def chain_lines(motion) -> list[str]:
    return list(
        Message.objects.filter(motion=motion, kind=Kind.WAKE, text__contains="woken each other").values_list(
            "text", flat=True
        )
    )


def settled(motion) -> bool:
    """Nothing queued or running, and a mention held by the chain guard."""
    return (
        not Turn.objects.filter(motion=motion, status__in=(TurnStatus.QUEUED, TurnStatus.RUNNING)).exists()
        and MentionWake.objects.filter(status=MentionWake.Status.CHAINED).exists()
    )


@pytest.mark.django_db(transaction=True)
def test_two_agents_volley_with_a_real_worker_stops_at_six_and_a_person_lets_them_go_on(tmp_path):
    Dials.objects.update_or_create(pk=1, defaults={"mention_gather_seconds": 0.1})
    motion = MotionFactory(slug="volley", workspace=str(tmp_path))
    abot, bbot = AgentFactory(name="abot", listening=False), AgentFactory(name="bbot", listening=False)
    motion.agents.add(abot, bbot)
    answers(abot, "@bbot over to you", tmp_path)
    answers(bbot, "@abot over to you", tmp_path)
    justin = UserFactory(username="justin")

    def justin_says(text: str) -> None:
        post = MessageFactory(
            motion=motion, sender="justin", author=justin, source="web", sign_in="ssh", text=text
        )
        message_created.send(sender=Message, message=post)

    worker = start_worker(
        "turns", database=database_url(), broker=settings.CELERY_BROKER_URL, log=tmp_path / "worker.log"
    )
    try:
        began = time.monotonic()
        justin_says("@abot please start the setlist with bbot")
        wait_for("the volley held by the chain guard", lambda: settled(motion), seconds=180, every=0.5)
        print(
            f"the volley held after {Turn.objects.filter(motion=motion).count()} turns, {time.monotonic() - began:.1f} s"
        )
        ran = list(Turn.objects.filter(motion=motion).order_by("queued_at", "pk"))
        assert [turn.agent.name for turn in ran] == ["abot", "bbot"] * 3 + ["abot"]
        assert all(turn.status == TurnStatus.FINISHED for turn in ran), [t.error for t in ran]
        assert Turn.objects.get(pk=ran[1].pk).woken_by.agent == abot  # @abot's reply woke @bbot
        (line,) = chain_lines(motion)
        assert line.startswith("@abot and @bbot have woken each other 6 times in a row")

        justin_says("thanks both, carry on")
        wait_for("the volley going on", lambda: Turn.objects.filter(motion=motion).count() > 8, seconds=120)

        call_command("scram", reason="enough for today", by="ops", stdout=StringIO())
        client = Client()
        client.force_login(justin)
        refused = client.post(
            f"/api/motions/{motion.slug}/messages/",
            {"text": "@abot one more?"},
            content_type="application/json",
        )
        assert refused.status_code == 423
        assert not Message.objects.filter(text="@abot one more?").exists()

        call_command("scram", lift=True, stdout=StringIO())
        posted = client.post(
            f"/api/motions/{motion.slug}/messages/", {"text": "all clear"}, content_type="application/json"
        )
        assert posted.status_code == 201
    finally:
        worker.terminate()
        worker.wait(30)
        # What the last posts sent and no worker took is not left for another test's worker.
        with app.connection_for_write() as broker:
            broker.default_channel.queue_purge("turns")


def agent_woken(motion) -> int:
    """Mention turns an agent's post woke (the command's turn and the person's asks are not)."""
    return Turn.objects.filter(motion=motion, reason="mention", woken_by__agent__isnull=False).count()


@pytest.mark.django_db(transaction=True)
def test_a_command_first_and_key_posts_outside_turns_are_held_at_six_with_one_line(tmp_path):
    """Issue 39's check: Justin first types `@abot /context` (a mention with no turn of its own,
    which once made the chain guard count nothing), and the agents also post with their keys
    outside their turns, through the API. The volley is held after six agent-woken turns with one
    line naming both; Justin's post lets them go on."""
    Dials.objects.update_or_create(pk=1, defaults={"mention_gather_seconds": 0.1})
    motion = MotionFactory(slug="volley", workspace=str(tmp_path))
    abot, bbot = AgentFactory(name="abot", listening=False), AgentFactory(name="bbot", listening=False)
    motion.agents.add(abot, bbot)
    answers(abot, "@bbot over to you", tmp_path)
    answers(bbot, "@abot over to you", tmp_path)
    keys = {agent.name: create_key(agent)[1] for agent in (abot, bbot)}
    justin = UserFactory(username="justin")
    client = Client()

    def justin_says(text: str) -> None:
        post = MessageFactory(
            motion=motion, sender="justin", author=justin, source="web", sign_in="ssh", text=text
        )
        message_created.send(sender=Message, message=post)

    def key_post(agent: str, text: str) -> None:
        posted = client.post(
            f"/api/motions/{motion.slug}/messages/",
            {"text": text},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {keys[agent]}",
        )
        assert posted.status_code == 201, posted.content

    worker = start_worker(
        "turns", database=database_url(), broker=settings.CELERY_BROKER_URL, log=tmp_path / "worker.log"
    )
    try:
        justin_says("@abot /context")
        command = wait_for(
            "the /context turn", lambda: Turn.objects.filter(motion=motion, reason="command").first()
        )
        wait_for(
            "the /context turn's end", lambda: Turn.objects.get(pk=command.pk).status == TurnStatus.FINISHED
        )
        # Its reply named @bbot; the agents also speak with their keys between their turns.
        key_post("abot", "@bbot and the encore?")
        wait_for("two agent-woken turns", lambda: agent_woken(motion) >= 2, seconds=60)
        key_post("bbot", "@abot your call on the encore")
        wait_for("the volley held by the chain guard", lambda: settled(motion), seconds=180, every=0.5)

        assert agent_woken(motion) == 6
        (line,) = chain_lines(motion)
        named, _, rest = line.partition(" have woken each other ")
        # Whichever agent's mention was the seventh, both are named.
        assert sorted(named.split(" and ")) == ["@abot", "@bbot"] and rest.startswith("6 times in a row")

        justin_says("thanks both, carry on")
        wait_for("the volley going on", lambda: agent_woken(motion) > 6, seconds=120)
    finally:
        worker.terminate()
        worker.wait(30)
        with app.connection_for_write() as broker:
            broker.default_channel.queue_purge("turns")
