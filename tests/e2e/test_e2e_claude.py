"""End to end: the real Claude Code CLI, woken through the Celery task on a real worker, against
the fake model server, streams its turn into the Motion exactly once.

The fake model is scripted like the recorded tool_call scenario: magent says it will read the
README, calls Read on it, and answers from what it read.
"""

from __future__ import annotations

import json
import os
import time
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from motion_runner.models import Kind, Message, MotionSession, Turn, TurnStatus
from motion_runner.runner.turns import enqueue_turn
from tests.factories import AgentFactory, MotionFactory
from tests.fakes.anthropic_api import Reply, Text, ToolUse, Usage

pytestmark = pytest.mark.e2e

README = "# Demo workspace\n\nThe answer to the demo question is 42.\n"
SAYS = "Let me read the README first."
ANSWERS = "The README says the answer is 42."


@pytest.fixture
def workspace(tmp_path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "README.md").write_text(README)
    return folder


@pytest.fixture
def model_reads_the_readme(claude_on_fake, workspace):
    claude_on_fake.script(
        Reply(
            Text(SAYS),
            ToolUse("Read", {"file_path": str(workspace / "README.md")}),
            usage=Usage(input_tokens=1200, output_tokens=40),
        ),
        Reply(Text(ANSWERS), usage=Usage(input_tokens=1300, output_tokens=12)),
    )
    claude_on_fake.default = None  # a third call would be a bug: answer it with a 500
    return claude_on_fake


@pytest.fixture
def celery_worker_thread(transactional_db):
    """A real Celery worker (in a thread) on the configured broker: Redis in CI."""
    from celery.contrib.testing.worker import start_worker

    from motion_runner.celery import app

    with start_worker(
        app,
        pool="solo",
        perform_ping_check=False,
        shutdown_timeout=60,
        loglevel="WARNING",
        queues=[settings.TURNS_QUEUE, settings.HOUSEKEEPING_QUEUE],
    ):
        yield app


def wait_for_end(turn: Turn, seconds: float = 120) -> Turn:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        turn.refresh_from_db()
        if turn.ended:
            return turn
        time.sleep(0.1)
    raise AssertionError(f"turn {turn.pk} still {turn.status} after {seconds} s: {turn.activity}")


def one(motion, kind) -> Message:
    found = list(Message.objects.filter(motion=motion, kind=kind))
    assert len(found) == 1, f"{kind}: {[m.text for m in found]}"
    return found[0]


@pytest.mark.django_db(transaction=True)
def test_a_woken_claude_code_turn_streams_into_its_motion_exactly_once(
    claude_binary, model_reads_the_readme, celery_worker_thread, workspace, tmp_path
):
    motion = MotionFactory(slug="readme-question", title="What the README says", workspace=str(workspace))
    magent = AgentFactory(name="magent", harness="claude-code")

    turn = enqueue_turn(motion, magent, "What does the README say?")  # sent on commit
    turn = wait_for_end(turn)

    assert turn.status == TurnStatus.FINISHED, turn.error
    texts = list(Message.objects.filter(motion=motion, kind=Kind.TEXT).order_by("created_at"))
    assert [m.text for m in texts] == [SAYS, ANSWERS]
    call = one(motion, Kind.TOOL_CALL)
    assert (call.tool_name, call.text) == ("Read", f"Read {workspace / 'README.md'}")
    result = one(motion, Kind.TOOL_RESULT)
    assert result.tool_id == call.tool_id
    assert "The answer to the demo question is 42." in result.text
    end = one(motion, Kind.TURN_END)
    reported = Decimal(str(end.raw["total_cost_usd"]))
    assert reported > 0
    assert end.cost_usd == turn.cost_usd == reported.quantize(Decimal("0.000001"))
    assert not Message.objects.filter(motion=motion, kind=Kind.ERROR).exists()
    assert Message.objects.filter(motion=motion).count() == 5
    # The session it started is claimed for this Motion and agent, and the next wake resumes it.
    session = MotionSession.objects.get(session_id=turn.session_id)
    assert (session.motion, session.agent) == (motion, magent)
    assert turn.session_id == end.raw["session_id"]
    # The model saw the file's content in the second request, and was asked only twice.
    requests = model_reads_the_readme.message_requests()
    assert len(requests) == 2
    assert "The answer to the demo question is 42." in requests[1].last_user_text()
    # The transcript the CLI wrote has the same ids, so an import of it adds no second copy.
    (transcript,) = (tmp_path / "home" / ".claude" / "projects").glob(f"*/{turn.session_id}.jsonl")
    transcript_uuids = {json.loads(line).get("uuid") for line in transcript.read_text().splitlines()}
    spoken = Message.objects.filter(motion=motion, kind__in=[Kind.TEXT, Kind.TOOL_CALL, Kind.TOOL_RESULT])
    assert {str(m.id) for m in spoken} <= transcript_uuids


@pytest.mark.django_db(transaction=True)
def test_the_second_wake_resumes_the_claimed_session_forked_and_claims_the_fork(
    claude_binary, claude_on_fake, celery_worker_thread, workspace
):
    claude_on_fake.script(Reply(Text("First: hello.")), Reply(Text("Second: I remember.")))
    motion = MotionFactory(slug="two-wakes", workspace=str(workspace))
    magent = AgentFactory(name="magent", harness="claude-code")

    first = wait_for_end(enqueue_turn(motion, magent, "Say hello."))
    second = wait_for_end(enqueue_turn(motion, magent, "Do you remember?"))

    assert (first.status, second.status) == (TurnStatus.FINISHED, TurnStatus.FINISHED)
    # Forked (--fork-session): a person working in the first session in a terminal never gets
    # a turn written underneath; the fork is claimed for the Motion and is the next to resume.
    assert second.session_id and second.session_id != first.session_id
    assert set(MotionSession.objects.filter(motion=motion).values_list("session_id", flat=True)) == {
        first.session_id,
        second.session_id,
    }
    # Resumed: the second request carries the first turn's exchange.
    assert "First: hello." in json.dumps(claude_on_fake.message_requests()[1].messages)


@pytest.mark.django_db
def test_wake_sync_prints_the_events_and_the_outcome(claude_binary, model_reads_the_readme, workspace):
    MotionFactory(slug="readme-question", workspace=str(workspace))
    AgentFactory(name="magent", harness="claude-code")
    out = StringIO()

    call_command(
        "wake", "readme-question", "magent", prompt="What does the README say?", sync=True, stdout=out
    )

    printed = out.getvalue()
    assert SAYS in printed
    assert f"⚙ Read {workspace / 'README.md'}" in printed
    assert "→ 1\t# Demo workspace" in printed
    assert ANSWERS in printed
    turn = Turn.objects.get(motion_id="readme-question")
    assert printed.strip().splitlines()[-1] == f"turn {turn.pk}: finished · ${turn.cost_usd:.4f}"


@pytest.mark.django_db
def test_wake_sync_reports_a_model_that_keeps_failing(claude_binary, claude_on_fake, workspace, settings):
    from django.core.management.base import CommandError

    from tests.fakes.anthropic_api import ApiError

    claude_on_fake.default = ApiError.server()
    settings.RUNNER_EXTRA_ENV = {**settings.RUNNER_EXTRA_ENV, "CLAUDE_CODE_MAX_RETRIES": "1"}
    motion = MotionFactory(slug="broken-model", workspace=str(workspace))
    AgentFactory(name="magent", harness="claude-code")
    out = StringIO()

    with pytest.raises(CommandError, match="failed"):
        call_command("wake", "broken-model", "magent", prompt="Say hello.", sync=True, stdout=out, stderr=out)

    turn = Turn.objects.get(motion=motion)
    assert turn.status == TurnStatus.FAILED
    assert "API Error: 500" in turn.error
    assert "API Error: 500" in out.getvalue()
    assert not Message.objects.filter(motion=motion, kind=Kind.TEXT).exists()


@pytest.mark.django_db
def test_the_flags_the_adapter_builds_are_accepted_and_reach_the_model(
    claude_binary, claude_on_fake, workspace
):
    from motion_runner.runner.turns import execute_turn

    claude_on_fake.script(Reply(Text("Hello.")))
    motion = MotionFactory(slug="flags", workspace=str(workspace))
    magent = AgentFactory(
        name="magent",
        harness="claude-code",
        model="claude-sonnet-4-5",
        system_prompt="You are @magent in a Motion.",
    )
    queued = enqueue_turn(
        motion, magent, "Say hello.", effort="low", max_budget_usd=Decimal("5.00"), dispatch=False
    )

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    (request,) = claude_on_fake.message_requests()
    assert request.model == "claude-sonnet-4-5"
    assert "You are @magent in a Motion." in request.system_text
    assert one(motion, Kind.TEXT).model_backend == "claude-sonnet-4-5"


@pytest.mark.django_db
def test_a_model_that_never_answers_is_stopped_at_the_turn_timeout(
    claude_binary, claude_on_fake, workspace, settings
):
    from motion_runner.runner.turns import execute_turn
    from tests.fakes.anthropic_api import Hang

    claude_on_fake.default = Hang()
    # Long enough for the CLI to reach the model on a loaded machine: with 4 s it once timed out
    # after its init line but before its first request, and with 10 s, in CI's random order on a
    # busy machine, a cold Claude Code start had not printed its init line yet: neither is the case
    # this test is about. The model never answers, so the turn still ends at the limit.
    settings.RUNNER_TURN_TIMEOUT_SECONDS = 30
    motion = MotionFactory(slug="silent-model", workspace=str(workspace))
    magent = AgentFactory(name="magent", harness="claude-code")
    queued = enqueue_turn(motion, magent, "Say hello.", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.TIMED_OUT
    assert turn.session_id  # its init line came before the hang, and its session is claimed
    error = one(motion, Kind.ERROR)
    assert "ran past its 30 s limit" in error.text
    assert claude_on_fake.message_requests()
    with pytest.raises(ProcessLookupError):
        os.killpg(turn.pid, 0)  # nothing is left of its process group
