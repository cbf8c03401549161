"""The launch room: Ada and Bo read it, @magent is woken in it. Around it, the Motions whose
posts a search from it may or may not show."""

from __future__ import annotations

import pytest

from motion_runner.models import TurnStatus, Visibility
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory


@pytest.fixture
def ada(db):
    return UserFactory(username="ada")


@pytest.fixture
def bo(db):
    return UserFactory(username="bo")


@pytest.fixture
def magent(db):
    return AgentFactory(name="magent")


@pytest.fixture
def launch(ada, bo, magent):
    motion = MotionFactory(slug="launch", visibility=Visibility.MEMBERS)
    motion.people.add(ada, bo)
    motion.agents.add(magent)
    return motion


@pytest.fixture
def running_turn(launch, magent):
    return TurnFactory(motion=launch, agent=magent, status=TurnStatus.RUNNING, mode="look")


def post(motion, text: str, sender: str = "ada"):
    return MessageFactory(motion=motion, text=text, sender=sender)


@pytest.fixture
def rooms(ada, bo, magent):
    """Other Motions: one @magent is not in; one @magent and Ada are in but Bo is not; one open
    to everyone signed in, @magent among its agents."""
    elsewhere = MotionFactory(slug="elsewhere", visibility=Visibility.MEMBERS)
    elsewhere.people.add(ada, bo)
    side = MotionFactory(slug="side-room", visibility=Visibility.MEMBERS)
    side.people.add(ada)
    side.agents.add(magent)
    lobby = MotionFactory(slug="lobby", visibility=Visibility.SIGNED_IN)
    lobby.agents.add(magent)
    return {"elsewhere": elsewhere, "side": side, "lobby": lobby}
