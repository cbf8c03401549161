"""people/access.py: a Motion's agents are its readers like its people, wherever readers are
counted (`readers_may_read` one by one and `readers_may_read_among` in one query): what a wake of
a Motion shows from another is shown to every agent of it too.

Workshop is members-only: Ada is its one person, @magent and @codey its agents."""

from __future__ import annotations

import pytest

from motion_runner.models import Motion, Visibility
from motion_runner.people.access import MotionAccess
from tests.factories import AgentFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def ada():
    return UserFactory(username="ada")


@pytest.fixture
def magent():
    return AgentFactory(name="magent")


@pytest.fixture
def workshop(ada, magent):
    motion = MotionFactory(slug="workshop", visibility=Visibility.MEMBERS)
    motion.people.add(ada)
    motion.agents.add(magent, AgentFactory(name="codey"))
    return motion


def may_read(motion, target) -> dict[str, bool]:
    """Both forms of the rule, which must agree."""
    among = MotionAccess().readers_may_read_among(motion, Motion.objects.filter(pk=target.pk)).exists()
    return {"one by one": MotionAccess().readers_may_read(motion, target), "among": among}


def test_a_members_motion_another_agent_may_not_read_is_not_every_readers(ada, magent, workshop):
    side = MotionFactory(slug="side", visibility=Visibility.MEMBERS)
    side.people.add(ada)
    side.agents.add(magent)  # @codey may not read it

    assert may_read(workshop, side) == {"one by one": False, "among": False}


def test_a_signed_in_motion_another_agent_may_not_read_is_not_every_readers(magent, workshop):
    lobby = MotionFactory(slug="lobby", visibility=Visibility.SIGNED_IN)
    lobby.agents.add(magent)  # Ada reads it, signed in; @codey, none of its agents, may not

    assert may_read(workshop, lobby) == {"one by one": False, "among": False}


def test_the_agents_of_a_signed_in_motion_are_its_readers_too(magent):
    square = MotionFactory(slug="square", visibility=Visibility.SIGNED_IN)
    square.agents.add(magent, AgentFactory(name="codey"))
    lobby = MotionFactory(slug="lobby", visibility=Visibility.SIGNED_IN)
    lobby.agents.add(magent)

    assert may_read(square, lobby) == {"one by one": False, "among": False}


def test_a_motion_every_agent_and_person_may_read_is_every_readers(ada, workshop):
    side = MotionFactory(slug="side", visibility=Visibility.MEMBERS)
    side.people.add(ada)
    side.agents.add(*workshop.agents.all())

    assert may_read(workshop, side) == {"one by one": True, "among": True}


def test_a_members_motion_with_no_people_is_read_by_its_agents(magent):
    quiet = MotionFactory(slug="quiet", visibility=Visibility.MEMBERS)  # no people
    quiet.agents.add(magent, AgentFactory(name="codey"))
    side = MotionFactory(slug="side", visibility=Visibility.MEMBERS)
    side.agents.add(magent)

    assert may_read(quiet, side) == {"one by one": False, "among": False}
