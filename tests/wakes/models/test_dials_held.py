"""A decision reads the dials once (wakes/models/dials.py `dials_held`): every gate inside answers
from that one reading, and a change made meanwhile takes effect from the next decision."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from motion_runner.models import Message
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from wakes.models import Dials, MentionWake
from wakes.models.dials import current_dials, dials_held, reading_dials_once

pytestmark = pytest.mark.django_db


def test_inside_a_decision_the_dials_are_read_once(django_assert_num_queries):
    Dials.load()
    with django_assert_num_queries(1), dials_held():
        Dials.load()
        Dials.load()
        current_dials()


def test_a_change_made_meanwhile_is_read_by_the_next_decision():
    Dials.objects.filter(pk=Dials.load().pk).update(agent_chain_turns=6)

    @reading_dials_once
    def decide() -> int:
        seen = Dials.load().agent_chain_turns
        Dials.objects.filter(pk=1).update(agent_chain_turns=9)
        assert Dials.load().agent_chain_turns == seen  # one version for the whole decision
        return seen

    assert decide() == 6
    assert decide() == 9


def test_a_posts_handling_reads_the_dials_once_a_receiver():
    """A person's mention, handled (the mention's gates, its wake, its prompt; the arrivals'):
    the dials row is read once by each of the two receivers, not at every gate (about 20 before)."""
    motion = MotionFactory(slug="once")
    motion.agents.add(AgentFactory(name="onebot", listening=False, binary="/bin/true"))
    person = UserFactory(username="ruth")
    message = MessageFactory(motion=motion, sender="ruth", author=person, source="web", text="@onebot hello")
    Dials.load()

    with CaptureQueriesContext(connection) as queries:
        message_created.send(sender=Message, message=message)

    assert MentionWake.objects.filter(message=message).exists()  # it was handled
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "wakes_dials"' in q["sql"]]
    assert len(reads) <= 2, reads
