"""Fixtures for the watchlist: the protocol fakes on 127.0.0.1 and the people in the stories.

Personas: Justin (a person, signed in) keeps the `cryptograss-merch` Motion, where the agent
@magent listens; @codex-reviewer is a second agent in the same Motion.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from motion_runner.models import Message
from tests.factories import AgentFactory, MotionFactory, UserFactory, WatchFactory
from tests.fakes.github import FakeGitHub
from tests.fakes.jsonrpc import FakeEthNode
from tests.fakes.mediawiki import FakeMediaWiki
from tests.fakes.web import FakeWeb
from watchlist.checker import run_cycle
from watchlist.models import Watch


@pytest.fixture(autouse=True)
def watch_settings(settings):
    # The fakes live on loopback: the SSRF guard must be told, exactly as production would be.
    settings.WATCH_HTTP_ALLOW_NETWORKS = ["127.0.0.0/8"]
    settings.WATCH_HTTP_PER_HOST_INTERVAL = 0.0
    settings.WATCH_HTTP_TIMEOUT_SECONDS = 5.0
    settings.WATCH_GITHUB_TOKEN = ""
    return settings


@pytest.fixture
def wiki(settings):
    with FakeMediaWiki() as fake:
        settings.WATCH_WIKI_API = fake.api
        settings.WATCH_TALK_REPLY_WIKIS = [fake.api]
        yield fake


@pytest.fixture
def github(settings):
    with FakeGitHub() as fake:
        settings.WATCH_GITHUB_API = fake.url
        yield fake


@pytest.fixture
def web():
    with FakeWeb() as fake:
        yield fake


@pytest.fixture
def node(settings):
    with FakeEthNode() as fake:
        settings.WATCH_ETH_RPC_URL = fake.url
        yield fake


@pytest.fixture
def justin():
    return UserFactory(username="justin")


@pytest.fixture
def magent():
    return AgentFactory(name="magent")


@pytest.fixture
def merch(magent):
    motion = MotionFactory(slug="cryptograss-merch", title="Cryptograss merch")
    motion.agents.add(magent)
    return motion


@pytest.fixture
def watch(merch):
    def make(kind: str, target: str, **fields) -> Watch:
        return WatchFactory(motion=merch, kind=kind, target=target, **fields)

    return make


def recheck(**kwargs):
    """Make every enabled watch due and run one cycle."""
    Watch.objects.filter(enabled=True).update(next_due_at=timezone.now() - timedelta(seconds=1))
    return run_cycle(**kwargs)


def lines(motion) -> list[str]:
    return list(
        Message.objects.filter(motion=motion, source="watch")
        .order_by("created_at")
        .values_list("text", flat=True)
    )
