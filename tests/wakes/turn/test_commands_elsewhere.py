"""`@agent /context`, `/usage`, `/compact` for Codex and Pi, whose CLIs have no such command
headless: /context and /usage answered from the runner's record (no turn, no cost), /compact
refused with why. Justin signs in with his SSH key (he may grant full tools)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from motion_runner.models import Kind, Message, Turn, TurnStatus
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.consider_loop.handlers import handle_message

pytestmark = pytest.mark.django_db


@pytest.fixture
def harbor():
    motion = MotionFactory(slug="harbor")
    motion.agents.add(AgentFactory(name="codey", harness="codex"), AgentFactory(name="pia", harness="pi"))
    return motion


def command(motion, text: str, sign_in: str = "ssh") -> str:
    justin = UserFactory(username="justin")
    message = MessageFactory(motion=motion, sender="justin", author=justin, sign_in=sign_in, text=text)
    assert handle_message(message, dispatch=False) == []
    return Message.objects.filter(motion=motion, kind=Kind.WAKE).latest("created_at").text


def test_codex_usage_is_answered_from_the_turns_costs_and_wakes_nothing(harbor):
    codey = harbor.agents.get(name="codey")
    for cost in ("0.40", "0.35"):
        TurnFactory(
            motion=harbor,
            agent=codey,
            status=TurnStatus.FINISHED,
            cost_usd=Decimal(cost),
            ended_at=timezone.now(),
        )
    line = command(harbor, "@codey /usage")
    assert line.startswith("@codey /usage here: today 2 turns, $0.75; in all 2 turns, $0.75")
    assert "Codex has no /usage headless" in line
    assert Turn.objects.filter(motion=harbor).count() == 2  # none new


def test_pi_context_without_a_session_says_so(harbor):
    assert (
        command(harbor, "@pia /context")
        == "@pia /context: no session of @pia here yet, so nothing is in its context."
    )


def test_codex_compact_is_refused_with_why(harbor):
    line = command(harbor, "@codey /compact keep the tour dates")
    assert line.startswith("@codey /compact was not run: Codex has no /compact headless")


def test_someone_who_may_not_grant_is_still_refused_first(harbor):
    line = command(harbor, "@codey /usage", sign_in="password")
    assert "commands are for people who may grant full tools" in line
