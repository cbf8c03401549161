"""Every post an agent or a person makes moves the consider loop's clocks (wakes.loop.note_post).
Its statements do not grow with the Motion's listening agents, and each agent's own dials, its
Motion's and its pair's overrides included, still decide its due time."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import AgentFactory, MessageFactory, MotionFactory
from wakes.loop import note_post
from wakes.models import DialOverride, ListenState, overrides_for, resolve

pytestmark = pytest.mark.django_db


def motion_with_listeners(slug: str, count: int):
    motion = MotionFactory(slug=slug)
    agents = [AgentFactory(name=f"{slug}-{n}", listening=True) for n in range(count)]
    motion.agents.add(*agents)
    return motion, agents


def statements_of_a_note(motion) -> int:
    note_post(MessageFactory(motion=motion, sender="justin"))  # the states and dials exist before
    post = MessageFactory(motion=motion, sender="justin")
    with CaptureQueriesContext(connection) as queries:
        note_post(post)
    return len(queries)


def test_a_notes_statements_do_not_grow_with_the_listening_agents():
    one, _ = motion_with_listeners("one-listener", 1)
    five, _ = motion_with_listeners("five-listeners", 5)
    # Each state is written (one UPDATE each); nothing else is asked per agent.
    assert statements_of_a_note(five) - statements_of_a_note(one) == 4


def test_the_overrides_read_together_resolve_each_listener_as_its_own_read_does():
    motion, (plain, quieter, paired) = motion_with_listeners("overridden", 3)
    other_motion = MotionFactory(slug="elsewhere")
    DialOverride.objects.create(motion=motion, quiet_seconds=30)
    DialOverride.objects.create(agent=quieter, quiet_seconds=120)
    DialOverride.objects.create(motion=motion, agent=paired, quiet_seconds=300, daily_budget_usd=Decimal("2"))
    DialOverride.objects.create(motion=other_motion, agent=plain, quiet_seconds=999)  # not this Motion's
    DialOverride.objects.create(motion=other_motion, quiet_seconds=777)
    together = overrides_for(motion.pk, [plain.pk, quieter.pk, paired.pk])
    for agent, quiet in ((plain, 30), (quieter, 120), (paired, 300)):
        assert resolve(motion.pk, agent.pk, overrides=together) == resolve(motion.pk, agent.pk)
        assert resolve(motion.pk, agent.pk, overrides=together).quiet_seconds == quiet
    assert resolve(motion.pk, paired.pk, overrides=together).daily_caps[-1] == ("pair", Decimal("2"))


def test_a_note_schedules_each_listener_by_its_own_overrides():
    motion, (plain, quieter) = motion_with_listeners("scheduled", 2)
    DialOverride.objects.create(agent=quieter, quiet_seconds=600)
    note_post(MessageFactory(motion=motion, sender="justin"))
    due = {state.agent_id: state.due_at for state in ListenState.objects.filter(motion=motion)}
    assert due[quieter.pk] > due[plain.pk]
