"""The per-turn dollar cap, enforced by the runner from streamed prices, on lines recorded from
the real Pi and Claude Code CLIs (Claude Code's own --max-budget-usd is no hard stop)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from motion_runner.harnesses.pi import PiParser
from tests.factories import AgentFactory, TurnFactory
from tests.recorded import parse_recording
from tests.recordings_util import replay
from wakes.money.spend_guard import SpendGuard

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
    assert guard.spent >= guard.cap
    assert guard.stop_reason.startswith("the turn's dollar cap stopped it")


def test_no_cap_means_no_stop():
    assert watch(SpendGuard(pi_turn(None)), "tool") is None


def claude_turn(cap):
    return TurnFactory(agent=AgentFactory(name="claude-agent", harness="claude-code"), max_budget_usd=cap)


def watch_claude(guard: SpendGuard, scenario: str) -> int | None:
    for index, event in enumerate(parse_recording(scenario)):
        guard.observe(event)
        if guard.stop_reason:
            return index
    return None


def test_claude_codes_own_budget_flag_is_no_hard_stop_so_the_runner_stops_it():
    # Recorded: under --max-budget-usd 0.01 the CLI still spent $0.84 on its first call.
    guard = SpendGuard(claude_turn(Decimal("0.01")))
    assert watch_claude(guard, "max_budget") is not None
    assert guard.spent == Decimal("0.800000")  # 200,000 input tokens at $4 a million, streamed


def test_a_claude_turn_is_stopped_before_one_more_call_like_its_dearest_would_pass_its_cap():
    # tool_call: two calls, 1,200 then 1,300 input tokens ($0.0048, $0.0052 on the input side).
    guard = SpendGuard(claude_turn(Decimal("0.009")))
    tripped_at = watch_claude(guard, "tool_call")
    assert tripped_at is not None
    assert guard.spent == Decimal("0.0048") < guard.cap  # stopped before the second call
    assert "one more call like its dearest" in guard.stop_reason


def test_a_claude_turn_within_its_cap_runs_to_its_end():
    guard = SpendGuard(claude_turn(Decimal("0.02")))
    assert watch_claude(guard, "tool_call") is None
    assert guard.spent == Decimal("0.0100")
