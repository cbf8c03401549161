from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from hypothesis import settings as hypothesis_settings


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
    if connection.vendor != "postgresql":
        problems.append("DATABASE_URL is not PostgreSQL")
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        problems.append("CELERY_BROKER_URL is not Redis")
    if not _answers(5432):
        problems.append("PostgreSQL does not answer on 127.0.0.1:5432")
    if not _answers(6379):
        problems.append("Redis does not answer on 127.0.0.1:6379")
    if problems:
        pytest.exit("real services required (CI): " + "; ".join(problems), returncode=3)


# A busy machine (CI, or eight runs on two cores) can take hypothesis's 200 ms deadline on any
# example: the property tests bound their examples' size, not their speed.
hypothesis_settings.register_profile("busy-machine", deadline=None)
hypothesis_settings.load_profile("busy-machine")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """A check CI depends on (`reported_when_skipped`) that was skipped is named at the end of the
    run, loudly, with its reason: a green run must not hide that it was not checked."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "reported_when_skipped" in getattr(report, "keywords", {})
    ]
    if not skipped:
        return
    terminalreporter.section("CHECKS THIS RUN DEPENDS ON THAT DID NOT RUN", sep="!", red=True, bold=True)
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        terminalreporter.write_line(f"{report.nodeid}\n    {reason}", red=True)


def pytest_configure(config):
    from tests import flush

    flush.install()  # the flush after a transactional test, tried again after a deadlock (tests/flush.py)


@pytest.fixture(scope="session", autouse=True)
def message_bell_closed_before_the_database_is_dropped(django_db_setup):
    """The long-poll listener holds a connection to the test database: close it first."""
    from motion_runner.thread.bell import bell

    yield
    bell.stop()


@pytest.fixture
def uses_real_services() -> bool:
    return connection.vendor == "postgresql"


# --- the real harness CLIs against the fake model server ---------------------------------


@pytest.fixture
def fake_anthropic():
    """A fake Anthropic Messages API on 127.0.0.1 (tests/fakes/anthropic_api.py)."""
    from tests.fakes.anthropic_api import FakeAnthropic

    with FakeAnthropic() as api:
        yield api


@pytest.fixture
def claude_on_fake(fake_anthropic, tmp_path, settings):
    """Every harness process this test launches talks to the fake model, from a fresh HOME
    (so its transcripts land in tmp_path/home/.claude/projects/)."""
    home = tmp_path / "home"
    home.mkdir()
    settings.RUNNER_EXTRA_ENV = {**fake_anthropic.env(), "HOME": str(home)}
    return fake_anthropic


def _in_ci() -> bool:
    return settings.REQUIRE_REAL_SERVICES or os.environ.get("CI") == "true"


def require_cli(name: str) -> str:
    """A pinned harness CLI from node_modules: a failure in CI when it is missing, a skip
    (saying why) elsewhere."""
    binary = Path(settings.BASE_DIR) / "node_modules" / ".bin" / name
    if not binary.is_file():
        reason = f"the {name} CLI is not installed at {binary} (run `npm ci`)"
        if _in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    return str(binary)


@pytest.fixture
def claude_binary() -> str:
    return require_cli("claude")


@pytest.fixture
def fake_openai():
    """A fake OpenAI API (Responses and Chat Completions) on 127.0.0.1 (tests/fakes/openai_api.py)."""
    from tests.fakes.openai_api import FakeOpenAI

    with FakeOpenAI() as fake:
        yield fake


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


@pytest.fixture
def person_signed_in_with_ssh(db):
    """Justin, signed in to the site with his SSH key, as an API client (`.person` is the user)."""
    from rest_framework.test import APIClient

    from tests.factories import UserFactory

    client = APIClient()
    client.person = UserFactory(username="justin")
    client.force_login(client.person)
    session = client.session
    session["sign_in"] = "ssh"
    session.save()
    return client


# The thread's live state kept in the cache (typed words by turn, holds by Motion) outlives a
# test's database: one test's hold in "harbor" would show in the next test's "harbor". Only these
# keys go (the cache shares its Redis database with the Celery broker: never a FLUSHDB).
LIVE_STATE_KEYS = ("motion_runner:typed:", "motion_runner:holds:")


@pytest.fixture(autouse=True)
def no_live_state_left() -> Iterator[None]:
    yield
    from django.core.cache import cache

    client = getattr(getattr(cache, "_cache", None), "get_client", None)
    if client is None:  # in memory: this process's alone
        cache.clear()
        return
    redis = client(None, write=True)
    for prefix in LIVE_STATE_KEYS:
        for key in redis.scan_iter(match=f"*{prefix}*", count=1000):
            redis.delete(key)
