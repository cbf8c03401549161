"""The runner's end of a wake: finish_turn's turn_finished hook, and the Celery tasks' wiring.

The turns here run tests/fakes/fake_harness.py, which prints stream-json lines; what is under
test is the hook after the turn ends (the dot, the ledger, the loop), not the line format (the
Claude Code adapter's own tests use recorded lines for that).
"""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from motion_runner.models import Kind, Message, Turn
from motion_runner.runner.turns import execute_turn
from tests.fake_claude import python_runs_the_fake
from tests.paths import TESTS
from tests.wakes_support import clock, loop, room, say
from wakes.models import Consideration, ListenState, Spend

pytestmark = pytest.mark.django_db


def lines(tmp_path, text: str | None, cost: float = 0.0421) -> str:
    session = "7d0c6c52-4a4e-4d55-9d0e-5b0b4f0c2a11"
    out = [{"type": "system", "subtype": "init", "session_id": session, "tools": ["Read"], "model": "m"}]
    if text is not None:
        out.append(
            {
                "type": "assistant",
                "session_id": session,
                "uuid": "0b7e1c55-0c55-4c1c-9f55-1d5f0d1e2a01",
                "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": text}]},
            }
        )
    out.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": session,
            "total_cost_usd": cost,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "uuid": "0b7e1c55-0c55-4c1c-9f55-1d5f0d1e2a02",
        }
    )
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in out) + "\n")
    return str(path)


@pytest.fixture
def harnessed(room, tmp_path):
    def use(text: str | None, cost: float = 0.0421) -> None:
        room.magent.binary = sys.executable
        room.magent.env = {"FAKE_HARNESS_PLAN": json.dumps({"lines": lines(tmp_path, text, cost)})}
        room.magent.save()

    return use


def test_a_silent_turn_run_by_the_runner_becomes_a_dot_and_settles_its_spend(room, clock, loop, harnessed):
    harnessed("<silent>nothing new for me</silent>", cost=0.0421)
    say(room.motion, room.justin, "the van is packed", clock)
    [c] = loop.run(12)
    turn = execute_turn(c.turn.pk)
    assert turn.status == "finished", turn.error
    dot = Message.objects.get(turn=turn, kind=Kind.DOT)
    assert dot.text == "<silent>nothing new for me</silent>"
    assert Consideration.objects.get(pk=c.pk).status == "silent"
    assert Spend.objects.get(turn=turn).amount == Decimal("0.0421")
    assert ListenState.objects.get().busy_until is None  # the pair is free again


def test_a_turn_that_could_not_start_frees_the_pair_too(room, clock, loop):
    room.magent.binary = "/nonexistent/claude"
    room.magent.save()
    say(room.motion, room.justin, "hello", clock)
    [c] = loop.run(12)
    turn = execute_turn(c.turn.pk)
    assert turn.status == "failed"
    assert Consideration.objects.get(pk=c.pk).status == "failed"
    assert ListenState.objects.get().busy_until is None
    assert not Message.objects.filter(kind=Kind.DOT).exists()


def test_the_beat_tick_sends_each_claim_to_a_worker_once_committed(
    room, clock, monkeypatch, django_capture_on_commit_callbacks, settings
):
    from motion_runner.runner import tasks as runner_tasks
    from wakes import tasks

    settings.WAKES_SCREEN_API_KEY = ""  # no screen here (never the real API from a test)

    considered, launched = [], []
    monkeypatch.setattr(tasks.consider, "delay", lambda pk: considered.append(pk) or tasks.consider(pk))
    monkeypatch.setattr(runner_tasks.run_turn, "delay", launched.append)
    say(room.motion, room.justin, "anyone?", clock)
    clock.advance(11)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.tick() == 1
    [c] = Consideration.objects.all()
    assert considered == [c.pk] and launched == [c.turn_id]
    tasks.consider(c.pk)  # delivered twice: nothing more happens
    assert Turn.objects.count() == 1
