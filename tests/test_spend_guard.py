"""The per-turn dollar cap, enforced by the runner from streamed prices where the harness does
not enforce it itself (Pi), on lines recorded from the real Pi CLI."""

from __future__ import annotations

from decimal import Decimal

import pytest

from motion_runner.harnesses.pi import PiParser
from tests.factories import AgentFactory, TurnFactory
from tests.recordings_util import replay
from wakes.spend_guard import SpendGuard

pytestmark = pytest.mark.django_db


def pi_turn(cap):
    return TurnFactory(agent=AgentFactory(name="pi-agent", harness="pi"), max_budget_usd=cap)


def watch(guard: SpendGuard, scenario: str) -> int | None:
    for index, event in enumerate(replay(PiParser(""), "pi", scenario)):
        guard.observe(event)
        if guard.stop_reason:
            return index
    return None


def test_the_recorded_messages_are_priced_once_each():
    guard = SpendGuard(pi_turn(Decimal("100")))
    assert watch(guard, "tool") is None
    end = [e for e in replay(PiParser(""), "pi", "tool") if e.kind == "turn_end"][0]
    assert guard.spent == end.cost_usd  # the same dollars Pi reports for the whole run
    assert guard.spent > 0


def test_a_pi_turn_past_its_cap_is_stopped_as_it_streams():
    whole_run = SpendGuard(pi_turn(Decimal("100")))
    watch(whole_run, "tool")
    events = replay(PiParser(""), "pi", "tool")
    guard = SpendGuard(pi_turn(None))
    guard.cap = whole_run.spent / 2  # the first API message alone passes it
    tripped_at = watch(guard, "tool")
    assert tripped_at is not None and tripped_at < len(events) - 1  # before the run's end
    assert guard.spent > guard.cap
    assert guard.stop_reason.startswith("the turn's dollar cap stopped it")


def test_no_cap_means_no_stop():
    assert watch(SpendGuard(pi_turn(None)), "tool") is None


def test_claude_code_enforces_its_own_cap():
    turn = TurnFactory(
        agent=AgentFactory(name="claude-agent", harness="claude-code"), max_budget_usd=Decimal("0.01")
    )
    assert SpendGuard(turn).cap is None
