"""Issue 10, done when: no secret configured in settings appears in any API response, thread page
or stored row. Every configured secret is a canary here; the secrets flow where they would
(a GitHub check with the token, a failing RPC with a key in its URL, an agent printing a `.env`,
a turn failing with a key in its error), then everything a reader can get, and every row, is
searched for them."""

from __future__ import annotations

import copy
import json

import pytest
from django.test import Client

from motion_runner.models import Message, Motion, Turn
from motion_runner.runner.ending import fail_before_launch
from tests import recorded
from tests.factories import TurnFactory, UserFactory, WatchFactory
from watchlist.checker import run_cycle
from watchlist.models import Watch

from .test_http_guard import Echo

pytestmark = pytest.mark.django_db

CANARIES = {
    "WATCH_GITHUB_TOKEN": "ghp_canaryGithubToken0123456789abcdefABCD",
    "WAKES_SCREEN_API_KEY": "canary-screen-key-77e1c0ffee",
    "WIKI_BOT_PASSWORD": "canary-bot-password-5150",
}
RPC_KEY = "canaryRpcKey0123456789abcdef"


@pytest.fixture
def canaries(settings, github):
    for name, value in CANARIES.items():
        setattr(settings, name, value)
    settings.WIKI_BOT_CREDENTIALS = {
        "https://wiki.example/api.php": ("Bot@runner", CANARIES["WIKI_BOT_PASSWORD"])
    }
    return [*CANARIES.values(), RPC_KEY]


def test_no_configured_secret_reaches_a_reader_or_a_row(canaries, github, scribe, harbor, settings, client):
    github.add("cryptograss/merch", 12, "Shirt sizes")
    WatchFactory(motion=harbor, kind="github", target="cryptograss/merch#12")
    with Echo() as rpc:
        settings.WATCH_ETH_RPC_URL = f"{rpc.url}/v3/{RPC_KEY}"
        WatchFactory(motion=harbor, kind="contract", target="0x" + "1" * 40)
        run_cycle()
    events = copy.deepcopy(recorded.first_run())
    assistant = next(e for e in events if e.get("type") == "assistant")
    assistant["message"]["content"][0]["text"] = "\n".join(f"{k}={v}" for k, v in CANARIES.items())
    client.post(
        "/api/motions/harbor/stream/",
        {"harness": "claude-code", "session_id": recorded.session_id(), "events": events},
        content_type="application/json",
        **scribe.headers,
    )
    fail_before_launch(
        TurnFactory(motion=harbor, agent=scribe.agent, status="queued"),
        f"the screen refused x-api-key {CANARIES['WAKES_SCREEN_API_KEY']}",
    )
    reader = Client()
    reader.force_login(UserFactory())

    served = [
        reader.get(path).content.decode()
        for path in (
            "/",
            "/motions/harbor/",
            "/api/motions/",
            "/api/motions/harbor/",
            "/api/motions/harbor/messages/?raw=1",
            "/api/turns/",
            "/api/watches/",
            "/api/schema/",
        )
    ]
    stored = [
        json.dumps(list(model.objects.values()), default=str) for model in (Message, Turn, Watch, Motion)
    ]

    assert Message.objects.filter(kind="text").exists() and Watch.objects.count() == 2
    for secret in canaries:
        assert not any(secret in page for page in served), f"{secret} was served"
        assert not any(secret in rows for rows in stored), f"{secret} was stored"
