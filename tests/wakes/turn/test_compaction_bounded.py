"""Compaction after the tool-loop guard is bounded (issue 39.3): a harness that loops even when
asked to compact runs at most one compaction turn after a guard stop, and the thread says the
session is left for a person. The turns run here with the runner and a fake harness, as a worker
would run what was sent to it (the send recorded).

Personas: @magent (a Claude Code agent) in the Motion "launch-room".
"""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.fake_claude by name; one is autouse)
from __future__ import annotations

import json
import sys
import uuid

import pytest

from motion_runner.models import EndedBy, Kind, Message, Turn, TurnStatus
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.fake_claude import python_runs_the_fake, sent
from wakes.turn.compaction import compact_after_loop

pytestmark = pytest.mark.django_db


def always_loops(agent, folder) -> None:
    """Every run of the agent, a compaction's too, calls Read on the same file over and over."""
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, agent.name))
    calls = [
        {
            "type": "assistant",
            "session_id": session,
            "uuid": str(uuid.uuid4()),
            "message": {
                "id": f"msg_{n}",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": "a"}}
                ],
            },
        }
        for n in range(6)
    ]
    lines = [
        {"type": "system", "subtype": "init", "session_id": session, "tools": ["Read"], "model": "m"},
        *calls,
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": session,
            "total_cost_usd": 0.01,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "uuid": str(uuid.uuid4()),
        },
    ]
    path = folder / f"{agent.name}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    agent.binary = sys.executable
    agent.env = {"FAKE_HARNESS_PLAN": json.dumps({"lines": str(path), "fresh_ids": True, "pace": 0.05})}
    agent.save()


def run_sent(sent, django_capture_on_commit_callbacks, limit: int = 10) -> list[Turn]:
    ran = []
    while sent and len(ran) < limit:
        turn = Turn.objects.get(pk=sent.pop(0))
        if turn.status != TurnStatus.QUEUED:
            continue
        with django_capture_on_commit_callbacks(execute=True):
            ran.append(execute_turn(turn.pk))
    return ran


def test_a_harness_that_loops_when_asked_to_compact_runs_one_compaction(
    tmp_path, sent, django_capture_on_commit_callbacks
):
    motion = MotionFactory(slug="launch-room", workspace=str(tmp_path))
    magent = AgentFactory(name="magent", listening=False)
    motion.agents.add(magent)
    always_loops(magent, tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_turn(motion, magent, "tidy the setlist", reason="manual")

    ran = run_sent(sent, django_capture_on_commit_callbacks)

    assert [(turn.reason, turn.ended_by) for turn in ran] == [
        ("manual", EndedBy.LOOP_GUARD),
        ("compact", EndedBy.LOOP_GUARD),
    ]
    assert Turn.objects.filter(reason="compact").count() == 1
    (left,) = Message.objects.filter(motion=motion, text__contains="left for a person")
    assert "while it was being compacted" in left.text


def stopped(motion, agent, reason: str, minutes: int, *, session: str = "s-1") -> Turn:
    from django.utils import timezone

    return TurnFactory(
        motion=motion,
        agent=agent,
        reason=reason,
        status=TurnStatus.KILLED,
        ended_by=EndedBy.LOOP_GUARD,
        error="the tool-loop guard stopped it: the same call 3 times",
        session_id=session,
        queued_at=timezone.now() - timezone.timedelta(minutes=60 - minutes),
    )


def test_a_session_the_guard_stops_twice_in_a_row_is_left_for_a_person(db):
    motion, magent = MotionFactory(slug="launch-room"), AgentFactory(name="magent")
    stopped(motion, magent, "mention", 1)
    stopped(motion, magent, "compact", 2)  # the runner's compaction between does not break the row
    again = stopped(motion, magent, "mention", 3)

    assert compact_after_loop(Turn, turn=again) is None

    assert not Turn.objects.filter(reason="compact", status=TurnStatus.QUEUED).exists()
    (said,) = Message.objects.filter(motion=motion, turn=again, kind=Kind.TEXT, source="system")
    assert "twice in a row" in said.text and "left for a person" in said.text


def test_a_turn_the_guard_let_finish_between_starts_the_count_again(db):
    motion, magent = MotionFactory(slug="launch-room"), AgentFactory(name="magent")
    stopped(motion, magent, "mention", 1)
    finished = stopped(motion, magent, "command", 2)
    Turn.objects.filter(pk=finished.pk).update(status=TurnStatus.FINISHED, ended_by="")
    again = stopped(motion, magent, "mention", 3)

    assert compact_after_loop(Turn, turn=again).reason == "compact"


def test_a_guard_stop_in_another_session_is_not_the_same_row(db):
    motion, magent = MotionFactory(slug="launch-room"), AgentFactory(name="magent")
    stopped(motion, magent, "mention", 1, session="s-0")
    again = stopped(motion, magent, "mention", 3)

    assert compact_after_loop(Turn, turn=again).reason == "compact"
