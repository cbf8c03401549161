"""A turn's lines are one card in the thread, whatever other turns say between them (issue 43.5)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from motion_runner.models import TurnStatus
from tests.browser.conftest import sign_in_as
from tests.browser.test_thread import agent_says
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def woke(turn) -> None:
    MessageFactory(
        motion=turn.motion,
        sender=turn.agent.name,
        source="system",
        kind="wake",
        turn=turn,
        text=f"@{turn.agent.name} woke: mentioned by justin · look-only",
    )


def test_another_agents_wake_between_a_reply_and_its_end_does_not_split_the_turn(live_server, page):
    motion = MotionFactory(slug="pair", title="Pair")
    alpha, beta = AgentFactory(name="alpha"), AgentFactory(name="beta")
    motion.agents.add(alpha, beta)
    MessageFactory(motion=motion, sender="justin", text="@alpha @beta both of you, please")
    first = TurnFactory(motion=motion, agent=alpha, reason="mention", status=TurnStatus.FINISHED)
    second = TurnFactory(motion=motion, agent=beta, reason="mention", status=TurnStatus.RUNNING)
    woke(first)
    agent_says(first, text="Alpha's answer.")
    woke(second)  # beta wakes while alpha's turn is ending
    agent_says(first, kind="turn_end", text="success", cost_usd=Decimal("0.0300"))
    sign_in_as(page, live_server, UserFactory(username="justin"))

    page.goto(f"{live_server.url}/motions/pair/")

    alphas = page.locator(".group.agent", has=page.locator(".meta .sender", has_text="@alpha"))
    expect(alphas).to_have_count(1)
    expect(alphas.locator(".body", has_text="Alpha's answer.")).to_be_visible()
    expect(alphas.locator(".turn-end")).to_contain_text("$0.03")
    expect(page.locator("li.wake", has_text="@beta woke")).to_be_visible()
    assert page.js_errors == []
