"""What tests/motion_runner/memory_lane/test_memory_lane_events.py does inside the host project,
after `migrate` (issue 40 item 4): a handoff here lands in memory-lane's record as its own
`handoff`/`handoff-sent` events (its services/handoff.py), and a sign-in on memory-lane's page (a
new `Device`, its services/mood_auth.py) is an arrival here. Prints one JSON object.

`python -m tests.host.events_check` with DJANGO_SETTINGS_MODULE=tests.host.settings.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.signals import user_logged_in  # noqa: E402
from django.db import transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from motion_runner.ingest.writer import insert_one  # noqa: E402
from motion_runner.models import Agent, Kind, Message, Source, Turn  # noqa: E402
from motion_runner.record import binding  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from wakes.models import Greeting  # noqa: E402
from wakes.turn.handoff import Block, carry, hand_over  # noqa: E402


def handoff_rows(reply: Message) -> list[dict]:
    rows = host.Message.objects.filter(source_file="handoff", content__message=str(reply.id)).order_by(
        "content__type"
    )
    return [{"mood": r.mood.slug, "sender": r.sender_id, "content": r.content} for r in rows]


def sign_in(entity: host.ThinkingEntity, token: str) -> None:
    """What memory-lane's `redeem_login_code` / `enrol_device` write as a sign-in is made."""
    with transaction.atomic():
        host.Device.objects.create(entity=entity, label="phone", token_hash=token * 64)


def greetings() -> list[list]:
    return [
        [g.person.username, g.motion_id, g.agent.name, g.how]
        for g in Greeting.objects.select_related("person", "agent").order_by("at")
    ]


def main() -> dict:
    seen: dict = {}
    for slug in ("harbor", "jams"):
        host.Mood.objects.create(slug=slug, title=slug.title())
    harbor, jams = (binding().motion_for_slug(slug) for slug in ("harbor", "jams"))
    scribe = Agent.objects.create(name="scribe", harness="claude-code")
    harbor.agents.add(scribe)
    jams.agents.add(scribe)

    # 1. A handoff, as the runner carries one out of scribe's reply.
    reply = Message(motion=harbor, sender="scribe", agent=scribe, source=Source.RUNNER, kind=Kind.TEXT)
    reply.text = "Let's take this over."
    assert insert_one(reply)
    block = Block(to="jams", about="the setlist", informs="", context="Settled: three songs.")
    carry(reply, 0, block, origin=harbor, dest=jams, text="↪ Handed over by @scribe")
    seen["handoff_rows"] = handoff_rows(reply)
    # memory-lane's own `from_message` asks this before making the events: it finds them made.
    seen["memory_lane_sees_it_made"] = host.Message.objects.filter(
        source_file="handoff", content__message=str(reply.id)
    ).exists()

    # memory-lane's own receiver (its signals.handoffs_carried) made the events of another reply
    # as that reply landed in its record: the apps' lines of the same handoff are not written again.
    second = Message(motion=harbor, sender="scribe", agent=scribe, source=Source.RUNNER, kind=Kind.TEXT)
    second.text = "And the poster, too."
    assert insert_one(second)
    system = host.ConversationParticipant.objects.get(name="system")
    for kind, mood, where in (("handoff", "jams", "from_mood"), ("handoff-sent", "harbor", "to_mood")):
        with transaction.atomic():
            host.Message.objects.create(
                id=uuid.uuid4(),
                sender=system,
                mood=host.Mood.objects.get(slug=mood),
                source_file="handoff",
                content={"type": kind, "by": "scribe", "message": str(second.id), where: "elsewhere"},
            )
    carry(
        second,
        0,
        Block(to="jams", about="the poster", informs="", context="A3."),
        origin=harbor,
        dest=jams,
        text="↪",
    )
    seen["host_made_first"] = list(
        host.Message.objects.filter(source_file="handoff", content__message=str(second.id))
        .order_by("content__type")
        .values_list("mood__slug", "content__type")
    )
    seen["apps_lines_of_second"] = Message.objects.filter(raw__handoff__message=str(second.id)).count()

    # A block the apps refuse (scribe may not post in the attic), whose events memory-lane's own
    # hook made from the binding's copy of the reply by its own rules (as its signals.handoffs_carried
    # does, made here by hand): the refusal takes them out of its record.
    host.Mood.objects.create(slug="attic", title="Attic")
    binding().motion_for_slug("attic")
    third = Message(motion=harbor, sender="scribe", agent=scribe, source=Source.RUNNER, kind=Kind.TEXT)
    third.text = "Up there.\n\n```handoff\nto: attic\n---\nThe spare keys.\n```"
    assert insert_one(third)
    for kind, mood, where in (("handoff", "attic", "from_mood"), ("handoff-sent", "harbor", "to_mood")):
        with transaction.atomic():
            host.Message.objects.create(
                id=uuid.uuid4(),
                sender=system,
                mood=host.Mood.objects.get(slug=mood),
                source_file="handoff",
                content={
                    "type": kind,
                    "by": "scribe",
                    "message": str(third.id),
                    where: "attic" if kind == "handoff-sent" else "harbor",
                },
            )
    seen["refused_events_before"] = len(handoff_rows(third))
    hand_over(third)  # the apps' rules again, as a reply delivered twice is
    seen["refused_events_after"] = len(handoff_rows(third))
    seen["refused_said"] = Message.objects.filter(
        motion=harbor, text__startswith="Not handed over to “attic”"
    ).count()

    # 2. Sign-ins on memory-lane's page.
    users = get_user_model().objects
    justin = users.create_user("justin", password="x")
    ada = users.create_user("ada", password="x")
    long_ago, lately = timezone.now() - timedelta(hours=13), timezone.now() - timedelta(hours=2)
    for person, at in ((justin, long_ago), (ada, lately)):
        post = Message(motion=harbor, sender=person.username, author=person, source=Source.WEB)
        post.kind, post.text, post.created_at = Kind.TEXT, "Good night, all.", at
        assert insert_one(post)
    entities = {
        name: host.ThinkingEntity.objects.get_or_create(name=name, defaults={"is_biological_human": human})[0]
        for name, human in (("justin", True), ("ada", True), ("scribe", False))
    }
    seen["before"] = greetings()
    sign_in(entities["ada"], "a")  # back after two hours: she never left
    seen["after_ada"] = greetings()
    sign_in(entities["scribe"], "s")  # an agent's device: no person arrived
    seen["after_agent_device"] = greetings()
    sign_in(entities["justin"], "j")  # back after thirteen hours
    seen["after_justin"] = greetings()
    sign_in(entities["justin"], "k")  # his second device, a minute later
    seen["after_second_device"] = greetings()
    # Rosa signs in here first (Django's login), then on memory-lane's page: one greeting.
    rosa = users.create_user("rosa", password="x")
    post = Message(motion=jams, sender="rosa", author=rosa, source=Source.WEB)
    post.kind, post.text, post.created_at = Kind.TEXT, "See you at the jam.", long_ago
    assert insert_one(post)
    rosa_entity = host.ThinkingEntity.objects.get_or_create(
        name="rosa", defaults={"is_biological_human": True}
    )[0]
    user_logged_in.send(sender=type(rosa), request=None, user=rosa)
    seen["rosa_after_login"] = [g for g in greetings() if g[0] == "rosa"]
    sign_in(rosa_entity, "r")
    seen["rosa_after_device"] = [g for g in greetings() if g[0] == "rosa"]
    seen["arrival_turns"] = list(
        Turn.objects.filter(reason="arrival").values_list("agent__name", "motion_id")
    )
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
