from __future__ import annotations

import socket

import pytest
from django.conf import settings


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


def pytest_sessionstart(session):
    """In CI the suite runs against the real services or not at all."""
    if not settings.REQUIRE_REAL_SERVICES:
        return
    problems = []
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        problems.append("DATABASE_URL is not PostgreSQL")
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        problems.append("CELERY_BROKER_URL is not Redis")
    if not _answers(5432):
        problems.append("PostgreSQL does not answer on 127.0.0.1:5432")
    if not _answers(6379):
        problems.append("Redis does not answer on 127.0.0.1:6379")
    if problems:
        pytest.exit("real services required (CI): " + "; ".join(problems), returncode=3)


@pytest.fixture
def uses_real_services() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


# --- Personas for the agent API (agent keys, stream, hooks, transcripts) ------------------------


class Persona:
    """An agent with a key, and the headers its requests carry."""

    def __init__(self, agent, key: str):
        self.agent = agent
        self.key = key
        self.headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}


@pytest.fixture
def harbor(db):
    """The Motion the personas talk in."""
    from tests.factories import MotionFactory

    return MotionFactory(slug="harbor", title="Harbor")


def _persona(name: str, motion) -> Persona:
    from motion_runner.api.auth import create_key
    from tests.factories import AgentFactory

    agent = AgentFactory(name=name)
    motion.agents.add(agent)
    return Persona(agent, create_key(agent)[1])


@pytest.fixture
def scribe(harbor) -> Persona:
    """An agent of Harbor with its own key."""
    return _persona("scribe", harbor)


@pytest.fixture
def rival(harbor) -> Persona:
    """Another agent of Harbor, with another key."""
    return _persona("rival", harbor)


@pytest.fixture
def justin(db):
    """A person signed in to the site."""
    from tests.factories import UserFactory

    return UserFactory(username="justin")
