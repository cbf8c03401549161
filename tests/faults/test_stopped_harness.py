"""A fast harness stopped by the turn's dollar cap, a person's stop or a scram: everything it
printed before the stop (still in the pipe when it was killed) is stored and priced, and the ledger
takes that price. Before, the pipe was closed unread: 21-22 printed lines were missing and the
ledger showed $2.06 of $2.45; then a person's stop and a scram still dropped what was drained.

The harness is tests/fakes/fake_harness.py printing, as fast as the pipe takes them, 300 priced
assistant lines made from those the real Claude Code CLI printed (fresh ids each, so each is an API
message of its own); a 64 KiB pipe holds about 90 of them, so the runner is always behind it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import date
from decimal import Decimal

import pytest
from django.db import connection
from django.utils import timezone

from motion_runner.harnesses import Event, EventKind, get_adapter, pricing
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.models import EndedBy, Kind, Message, TurnStatus
from motion_runner.runner.process import PIPE_BYTES
from motion_runner.runner.stopping import raise_scram, stop_turns
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.recorded import CLAUDE_RECORDINGS, fresh_copy, recorded_lines
from wakes.models import Spend

FAKE_HARNESS = str(CLAUDE_RECORDINGS.parents[1] / "fakes" / "fake_harness.py")
LINES = 300

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the ledger's settle runs on the real PostgreSQL (CI has it)"
)


def fast_priced_lines(path) -> list[dict]:
    recorded = recorded_lines("tool_call")
    init, reply = recorded[0], recorded[4]
    session_id = init["session_id"]
    lines = [init] + [fresh_copy(reply, {}, session_id) for _ in range(LINES)] + [recorded[-1]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def price_of(lines: list[dict]) -> Decimal:
    """What these lines cost, priced as they stream (each API message once)."""
    adapter, parser, by_message = get_adapter("claude-code"), ClaudeCodeParser(""), {}
    for line in lines:
        for event in parser.feed(line):
            if (cost := adapter.streamed_cost(event)) is not None and event.message_id:
                by_message[event.message_id] = cost
    return sum(by_message.values(), Decimal(0))


def fast_agent(tmp_path, name: str):
    printed_file = tmp_path / "printed"
    agent = AgentFactory(
        name=name,
        binary=FAKE_HARNESS,
        env={
            "FAKE_HARNESS_LINES": str(tmp_path / "lines.jsonl"),
            "FAKE_HARNESS_PLAN": json.dumps({"printed": str(printed_file), "hang": True}),
        },
    )
    return agent, printed_file


def stop_after_replies(count: int, stop: Callable[[], object]) -> Callable[[Event], None]:
    """An on_event hook that stops the turn (once) when it has read `count` replies."""
    seen = []

    def on_event(event: Event) -> None:
        if event.kind == EventKind.TEXT:
            seen.append(event)
            if len(seen) == count:
                stop()

    return on_event


def reserve(motion, agent, turn) -> Spend:
    return Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=agent,
        turn=turn,
        day=date.today(),
        at=timezone.now(),
        amount=Decimal("3"),
        reserved=Decimal("3"),
    )


def assert_all_printed_kept_and_charged(turn, printed_file, lines, reservation) -> None:
    printed = int(printed_file.read_text())
    assert 1 < printed < len(lines)  # stopped mid-way: the stop did stop it
    replies = Message.objects.filter(turn=turn, kind=Kind.TEXT)
    assert replies.count() == printed - 1  # every reply it printed (the first line is its init)
    assert turn.cost_usd == price_of(lines[:printed])
    reservation.refresh_from_db()
    assert reservation.settled
    assert reservation.amount == turn.cost_usd


@pytest.mark.django_db(transaction=True)
def test_a_persons_stop_stores_and_charges_every_line_the_harness_printed(tmp_path):
    lines = fast_priced_lines(tmp_path / "lines.jsonl")
    motion = MotionFactory(slug="stopped-talk", workspace=str(tmp_path))
    quick, printed_file = fast_agent(tmp_path, "quick")
    turn = enqueue_turn(motion, quick, "Talk fast.", dispatch=False)
    reservation = reserve(motion, quick, turn)

    turn = execute_turn(turn.pk, on_event=stop_after_replies(5, lambda: stop_turns(motion, "maria")))

    assert turn.status == TurnStatus.KILLED and "maria stopped it" in turn.error
    assert_all_printed_kept_and_charged(turn, printed_file, lines, reservation)


@pytest.mark.django_db(transaction=True)
def test_a_scram_stores_and_charges_every_line_the_harness_printed(tmp_path):
    lines = fast_priced_lines(tmp_path / "lines.jsonl")
    motion = MotionFactory(slug="scrammed-talk", workspace=str(tmp_path))
    quick, printed_file = fast_agent(tmp_path, "quick")
    turn = enqueue_turn(motion, quick, "Talk fast.", dispatch=False)
    reservation = reserve(motion, quick, turn)

    turn = execute_turn(turn.pk, on_event=stop_after_replies(5, lambda: raise_scram("ops", "runaway")))

    assert turn.status == TurnStatus.KILLED and "scram: runaway" in turn.error
    assert_all_printed_kept_and_charged(turn, printed_file, lines, reservation)


@pytest.mark.django_db(transaction=True)
def test_a_spend_guard_stop_stores_and_charges_every_line_the_harness_printed(tmp_path):
    lines = fast_priced_lines(tmp_path / "lines.jsonl")
    printed_file = tmp_path / "printed"
    motion = MotionFactory(slug="fast-talk", workspace=str(tmp_path))
    quick = AgentFactory(
        name="quick",
        binary=FAKE_HARNESS,
        env={
            "FAKE_HARNESS_LINES": str(tmp_path / "lines.jsonl"),
            "FAKE_HARNESS_PLAN": json.dumps({"printed": str(printed_file), "hang": True}),
        },
    )
    turn = enqueue_turn(motion, quick, "Talk fast.", dispatch=False, max_budget_usd=Decimal("0.05"))
    reservation = Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=motion,
        agent=quick,
        turn=turn,
        day=date.today(),
        at=timezone.now(),
        amount=Decimal("3"),
        reserved=Decimal("3"),
    )

    turn = execute_turn(turn.pk)

    printed = int(printed_file.read_text())
    assert 1 < printed < len(lines)  # stopped mid-way: the cap did stop it
    assert turn.status == TurnStatus.KILLED and "dollar cap" in turn.error
    replies = Message.objects.filter(turn=turn, kind=Kind.TEXT)
    assert replies.count() == printed - 1  # every reply it printed (the first line is its init)
    assert turn.cost_usd == price_of(lines[:printed])
    reservation.refresh_from_db()
    assert reservation.settled
    assert reservation.amount == turn.cost_usd


@pytest.mark.django_db(transaction=True)
def test_a_harness_faster_than_the_runner_passes_its_cap_by_at_most_two_pipes_of_calls(tmp_path):
    lines = fast_priced_lines(tmp_path / "lines.jsonl")
    motion = MotionFactory(slug="fastest-talk", workspace=str(tmp_path))
    quick, printed_file = fast_agent(tmp_path, "quick")
    cap = Decimal("0.05")
    turn = enqueue_turn(motion, quick, "Talk fast.", dispatch=False, max_budget_usd=cap)

    turn = execute_turn(turn.pk)

    per_call = price_of(lines[:2])  # every reply is one call of the same price
    calls_within_cap = int(cap // per_call)  # the guard stops before the call that would pass it
    calls = int(printed_file.read_text()) - 1
    line_bytes = min(len(json.dumps(line)) + 1 for line in lines[1:-1])
    # What the runner had not read when the guard tripped: the pipe, and the read in hand.
    bound = 2 * PIPE_BYTES // line_bytes + 1
    assert turn.status == TurnStatus.KILLED and "dollar cap" in turn.error
    assert calls - calls_within_cap <= bound, (calls, calls_within_cap, bound)
    assert turn.cost_usd == price_of(lines[: calls + 1])  # and each of them is charged


def the_same_read(times: int) -> list[dict]:
    """The `partials` recording's first API message (a text and a Read, streamed with partials:
    message_start, the blocks, their assistant lines with the message_start usage, then the
    message_delta with the whole usage) and its tool result, `times` over, each a message of its
    own: the loop guard stops the third."""
    recorded = recorded_lines("partials")
    init, message = recorded[0], recorded[2:22]
    lines = [init]
    for n in range(times):
        message_id = f"msg_again{n}"
        for line in message:
            copy = json.loads(json.dumps(line))
            copy["uuid"] = str(uuid.uuid4())
            if copy["type"] == "assistant":
                copy["message"]["id"] = message_id
            if copy["type"] == "stream_event":
                copy["api_message_id"] = message_id
                if copy["event"]["type"] == "message_start":
                    copy["event"]["message"]["id"] = message_id
            lines.append(copy)
    return lines


@pytest.mark.django_db(transaction=True)
def test_a_turn_the_loop_guard_stops_is_charged_the_output_its_messages_streamed(tmp_path):
    """No result line and no transcript: each API message whose message_delta it printed is
    charged that whole usage (output counted), once, not its assistant lines' message_start
    snapshot. (The third's delta may or may not be out before the kill: it is counted if it is.)"""
    lines = the_same_read(3)
    (tmp_path / "lines.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    motion = MotionFactory(slug="looping-talk", workspace=str(tmp_path))
    looper, printed_file = fast_agent(tmp_path, "looper")
    turn = enqueue_turn(motion, looper, "Read it.", dispatch=False)

    turn = execute_turn(turn.pk)

    assert turn.ended_by == EndedBy.LOOP_GUARD
    printed = lines[: int(printed_file.read_text())]
    finished = sum(1 for line in printed if line.get("event", {}).get("type") == "message_delta")
    assert finished >= 2  # the first two messages were whole before the third Read tripped it
    whole = recorded_lines("partials")[19]["event"]["usage"]  # a message_delta's
    started = {**whole, "output_tokens": 0}
    assert whole["output_tokens"] == 40
    expected = finished * pricing.anthropic_cost("claude-opus-5-5", whole)
    expected += (3 - finished) * pricing.anthropic_cost("claude-opus-5-5", started)
    assert turn.cost_usd == expected
