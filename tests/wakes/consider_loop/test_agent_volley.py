"""Two agents in a volley, end to end (issue 32): each turn is the runner's, launching a fake harness
that prints the agent's words; the words reach the thread by the runner's own write path, and
their @mention wakes the other agent. Justin's mention of @abot, whose reply mentions @bbot, wakes
@bbot; the volley stops after six agent-woken turns with one line naming both; Justin's post
lets them go on.

The turns run here, one at a time, as a worker would run what was sent to it (the send recorded).
"""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.fake_claude by name; one is autouse)
from __future__ import annotations

import json
import sys
import uuid

import pytest

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.turns import execute_turn
from motion_runner.signals import message_created
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from tests.fake_claude import python_runs_the_fake, sent

pytestmark = pytest.mark.django_db


def harness_says(agent, text: str, folder) -> None:
    """The agent's next run prints `text` (fresh line ids, as a real run's)."""
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, agent.name))
    lines = [
        {"type": "system", "subtype": "init", "session_id": session, "tools": ["Read"], "model": "m"},
        {
            "type": "assistant",
            "session_id": session,
            "uuid": str(uuid.uuid4()),
            "message": {
                "id": f"msg_{uuid.uuid4().hex}",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            },
        },
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
    agent.env = {"FAKE_HARNESS_PLAN": json.dumps({"lines": str(path)})}
    agent.save()


def run_sent(sent, folder, django_capture_on_commit_callbacks, limit: int = 20) -> list[Turn]:
    """Run what was sent, in order, each agent answering by naming the other."""
    ran = []
    while sent and len(ran) < limit:
        turn = Turn.objects.select_related("agent").get(pk=sent.pop(0))
        if turn.status != TurnStatus.QUEUED:
            continue
        other = "bbot" if turn.agent.name == "abot" else "abot"
        harness_says(turn.agent, f"@{other} over to you", folder)
        with django_capture_on_commit_callbacks(execute=True):
            done = execute_turn(turn.pk)
        assert done.status == TurnStatus.FINISHED, done.error
        ran.append(done)
    return ran


def test_two_agents_volley_six_agent_woken_turns_then_wait_for_a_person(
    tmp_path, sent, django_capture_on_commit_callbacks
):
    motion = MotionFactory(slug="volley", workspace=str(tmp_path))
    abot, bbot = AgentFactory(name="abot", listening=False), AgentFactory(name="bbot", listening=False)
    motion.agents.add(abot, bbot)
    justin = UserFactory(username="justin")

    def justin_says(text: str) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            post = MessageFactory(
                motion=motion, sender="justin", author=justin, source="web", sign_in="ssh", text=text
            )
            message_created.send(sender=Message, message=post)

    justin_says("@abot please start the setlist with bbot")
    ran = run_sent(sent, tmp_path, django_capture_on_commit_callbacks)

    assert [turn.agent.name for turn in ran] == ["abot", "bbot"] * 3 + ["abot"]
    assert ran[1].woken_by.agent == abot  # @abot's reply woke @bbot
    (line,) = Message.objects.filter(motion=motion, kind=Kind.WAKE, text__contains="woken each other")
    assert line.text.startswith("@abot and @bbot have woken each other 6 times in a row")

    justin_says("thanks both, carry on")
    again = run_sent(sent, tmp_path, django_capture_on_commit_callbacks, limit=2)

    assert [turn.agent.name for turn in again] == ["bbot", "abot"]
