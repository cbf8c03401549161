"""Background tasks a turn starts (issue 24): the real Claude Code CLI stays up after its result
while a `run_in_background` shell runs, and answers the task's end with another turn; the runner
keeps the turn open until then (bounded by the turn's timeout), and the thread shows the task's
start and its end."""

from __future__ import annotations

import pytest

from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.fakes.anthropic_api import Reply, Text, ToolUse, Usage

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]


def test_a_background_task_is_shown_until_its_end(claude_on_fake, claude_binary, tmp_path, settings):
    # Shorter than the task: only the open task keeps the turn up after its first result.
    settings.RUNNER_AFTER_RESULT_GRACE_SECONDS = 0.5
    claude_on_fake.script(
        Reply(
            Text("Starting the build in the background."),
            ToolUse(
                "Bash", {"command": "sleep 2; echo built", "run_in_background": True, "description": "build"}
            ),
            usage=Usage(input_tokens=100, output_tokens=10),
        ),
        Reply(Text("It runs in the background."), usage=Usage(input_tokens=120, output_tokens=10)),
        Reply(Text("The build finished."), usage=Usage(input_tokens=130, output_tokens=10)),
    )
    motion = MotionFactory(slug="studio", workspace=str(tmp_path))
    magent = AgentFactory(name="magent", harness="claude-code")
    queued = enqueue_turn(motion, magent, "Build it.", mode="full", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    tasks = [m.text for m in Message.objects.filter(turn=turn, kind=Kind.TASK).order_by("created_at", "id")]
    assert tasks[0] == "background task started: build"
    assert len(tasks) == 2 and "completed" in tasks[1]
    said = list(Message.objects.filter(turn=turn, kind=Kind.TEXT).values_list("text", flat=True))
    assert "The build finished." in said  # its answer to the task's end, in the same turn
    ends = list(Message.objects.filter(turn=turn, kind=Kind.TURN_END).order_by("created_at", "id"))
    assert len(ends) == 2  # the turn's cost is the session's total after the last of them
    assert str(turn.cost_usd) == f"{ends[-1].raw['total_cost_usd']:.6f}"
