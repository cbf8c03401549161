"""When the harness misbehaves, the turn still ends clearly: a message in the Motion, nothing lost,
nothing doubled, stderr kept on the Turn.

The harness here is tests/fakes/fake_harness.py playing back lines recorded from the real
Claude Code CLI (tests/recordings/claude-code/tool_call.jsonl: magent says it will read the
README, Reads it, and answers), then misbehaving as each test's plan says.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from django.db import connection
from django.test import override_settings

from motion_runner import signals
from motion_runner.harnesses import EventKind
from motion_runner.models import EndedBy, Kind, Message, MotionSession, Turn, TurnStatus
from motion_runner.runner.monitor import TurnMonitor
from motion_runner.runner.tasks import run_turn
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.paths import TESTS
from tests.recorded import recorded_lines, recording_path

FAKE_HARNESS = TESTS / "fakes" / "fake_harness.py"
PROMPT = "What does the README say?"
SPOKEN = ["Let me read the README first.", "The README says the answer is 42."]


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (PID 1 here may not reap them)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone, or going while read
        return False


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def readme_motion(db, tmp_path):
    return MotionFactory(slug="readme-question", title="What the README says", workspace=str(tmp_path))


@pytest.fixture
def magent(db):
    return AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={"FAKE_HARNESS_LINES": str(recording_path("tool_call"))},
    )


@pytest.fixture
def wake(readme_motion, magent):
    """Wake magent in the Motion with a fake-harness plan and run the turn here."""

    def wake(plan: dict | None = None) -> Turn:
        magent.env = {**magent.env, "FAKE_HARNESS_PLAN": json.dumps(plan or {})}
        magent.save()
        turn = enqueue_turn(readme_motion, magent, PROMPT, dispatch=False)
        ran = execute_turn(turn.pk)
        assert ran is not None, "the turn was claimed"
        return ran

    return wake


def messages(motion, kind=None):
    found = Message.objects.filter(motion=motion).order_by("created_at", "id")
    return list(found.filter(kind=kind) if kind else found)


def assert_nothing_lost(motion, *, texts=SPOKEN, tool_results=1):
    """Every recorded event before the failure is in the thread, once."""
    assert [m.text for m in messages(motion, Kind.TEXT)] == texts
    assert [m.tool_name for m in messages(motion, Kind.TOOL_CALL)] == ["Read"]
    assert len(messages(motion, Kind.TOOL_RESULT)) == tool_results


def the_error(motion) -> Message:
    errors = messages(motion, Kind.ERROR)
    assert len(errors) == 1, [e.text for e in errors]
    return errors[0]


# --- the harness fails --------------------------------------------------------------------


def test_exit_1_without_a_result_fails_the_turn_and_says_so(wake, readme_motion):
    turn = wake({"no_result": True, "exit": 1, "stderr": "Error: the model server went away\n"})

    assert turn.status == TurnStatus.FAILED
    assert turn.exit_code == 1
    assert "the model server went away" in turn.stderr_tail
    error = the_error(readme_motion)
    assert "exited with code 1 without a result event" in error.text
    assert "the model server went away" in error.text
    assert_nothing_lost(readme_motion)
    assert not messages(readme_motion, Kind.TURN_END)


def test_exit_0_without_a_result_still_fails_the_turn(wake, readme_motion):
    turn = wake({"no_result": True})

    assert turn.status == TurnStatus.FAILED
    assert "exited without a result event" in the_error(readme_motion).text
    assert_nothing_lost(readme_motion)


class StopsAtTheFirstCall(TurnMonitor):
    stop_cause = EndedBy.LOOP_GUARD

    def observe(self, event):
        if event.kind == EventKind.TOOL_CALL:
            self.stop_reason = "the watcher stopped it: one call was enough"


def test_a_turn_a_monitor_stopped_is_ended_by_that_monitors_cause(wake, readme_motion, monkeypatch):
    monkeypatch.setattr(signals, "monitor_factories", [StopsAtTheFirstCall])

    turn = wake({"no_result": True, "hang": True})

    assert turn.status == TurnStatus.KILLED
    assert turn.error == "stopped: the watcher stopped it: one call was enough"
    assert turn.ended_by == EndedBy.LOOP_GUARD


def test_a_turn_its_harness_ended_is_ended_by_nobody_in_particular(wake):
    assert wake().ended_by == EndedBy.HARNESS


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=2)
def test_a_hanging_harness_is_stopped_at_the_turn_timeout(wake, readme_motion):
    started = time.monotonic()

    turn = wake({"no_result": True, "hang": True, "stderr": "waiting for something\n"})

    # TIMED_OUT says the timeout stopped it (a hang has no other end); the bound is only a
    # backstop, generous for a busy machine.
    assert time.monotonic() - started < 120
    assert turn.status == TurnStatus.TIMED_OUT
    assert "ran past its 2 s limit" in the_error(readme_motion).text
    assert "waiting for something" in turn.stderr_tail
    assert wait_dead(turn.pid)
    assert_nothing_lost(readme_motion)


def test_lines_that_are_not_json_are_reported_once_each_and_the_turn_goes_on(wake, readme_motion):
    turn = wake({"garbage": ["Debugger listening on ws://127.0.0.1:9229"]})

    assert turn.status == TurnStatus.FINISHED
    error = the_error(readme_motion)
    assert "not a JSON event" in error.text
    assert "Debugger listening" in error.text
    assert_nothing_lost(readme_motion)
    assert len(messages(readme_motion, Kind.TURN_END)) == 1


def test_a_json_line_that_is_not_an_object_is_reported_too(wake, readme_motion):
    turn = wake({"garbage": ['["a", "list"]']})

    assert turn.status == TurnStatus.FINISHED
    assert "a JSON list, not an object" in the_error(readme_motion).text


def test_ten_megabytes_without_a_newline_is_a_flood_that_is_stopped(wake, readme_motion):
    turn = wake({"no_result": True, "flood_bytes": 10 * 1024 * 1024, "hang": True})

    assert turn.status == TurnStatus.FAILED
    assert "flooded its output" in the_error(readme_motion).text
    assert "without a newline" in turn.error
    assert wait_dead(turn.pid)
    assert_nothing_lost(readme_motion)


@override_settings(RUNNER_MAX_OUTPUT_BYTES=64 * 1024)
def test_too_much_output_in_total_is_a_flood_too(wake, readme_motion):
    garbage = ['{"type":"noise","pad":"' + "x" * 1000 + '"}'] * 100

    turn = wake({"garbage": garbage, "hang": True})

    assert turn.status == TurnStatus.FAILED
    assert "more than 65,536 bytes of output" in the_error(readme_motion).text


def test_a_harness_killed_by_a_signal_is_named(wake, readme_motion):
    turn = wake({"no_result": True, "signal": "SIGKILL"})

    assert turn.status == TurnStatus.KILLED
    assert "killed by SIGKILL" in the_error(readme_motion).text
    assert_nothing_lost(readme_motion)


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=2)
def test_a_child_in_the_harness_group_is_killed_with_it(wake, tmp_path):
    child_file = tmp_path / "child.pid"

    turn = wake({"no_result": True, "hang": True, "child": str(child_file)})

    assert turn.status == TurnStatus.TIMED_OUT
    assert wait_dead(int(child_file.read_text()))


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=30)
def test_a_child_holding_stdout_does_not_keep_a_finished_turn_open(wake, readme_motion, tmp_path):
    """A background job left running (it inherited stdout) must not hold the turn to its timeout."""
    child_file = tmp_path / "child.pid"
    started = time.monotonic()

    turn = wake({"child": str(child_file)})

    # FINISHED, not TIMED_OUT: the child did not hold the turn to its 30 s timeout (which would
    # end it TIMED_OUT), whatever the machine's load.
    assert time.monotonic() - started < 30
    assert turn.status == TurnStatus.FINISHED
    assert not messages(readme_motion, Kind.ERROR)
    assert wait_dead(int(child_file.read_text()))


# --- delivered twice, replayed ------------------------------------------------------------


def test_the_same_turn_delivered_twice_runs_once(readme_motion, magent, tmp_path):
    launches = tmp_path / "launches"
    magent.env = {**magent.env, "FAKE_HARNESS_PLAN": json.dumps({"launches": str(launches)})}
    magent.save()
    turn = enqueue_turn(readme_motion, magent, PROMPT, dispatch=False)

    run_turn(turn.pk)
    run_turn(turn.pk)  # the broker delivered it again

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FINISHED
    assert len(launches.read_text().split()) == 1
    assert_nothing_lost(readme_motion)
    assert len(messages(readme_motion, Kind.TURN_END)) == 1


def test_replaying_the_same_lines_twice_makes_no_second_message(wake, readme_motion, tmp_path):
    twice = tmp_path / "twice.jsonl"
    recorded = recording_path("tool_call").read_text()
    twice.write_text(recorded + recorded)

    turn = wake({"lines": str(twice)})

    assert turn.status == TurnStatus.FINISHED
    assert_nothing_lost(readme_motion)
    assert len(messages(readme_motion, Kind.TURN_END)) == 1
    assert not messages(readme_motion, Kind.ERROR)


def test_a_finished_turn_claims_its_session_and_stamps_its_cost(wake, readme_motion):
    result = recorded_lines("tool_call")[-1]

    turn = wake()

    assert turn.status == TurnStatus.FINISHED
    assert turn.session_id == result["session_id"]
    assert MotionSession.objects.get(session_id=result["session_id"]).motion == readme_motion
    assert str(turn.cost_usd) == f"{result['total_cost_usd']:.6f}"
    assert turn.stderr_tail == ""


@pytest.mark.django_db(transaction=True)
def test_two_workers_given_the_same_turn_at_once_launch_it_once(tmp_path):
    launches = tmp_path / "launches"
    motion = MotionFactory(slug="race", workspace=str(tmp_path))
    agent = AgentFactory(
        name="magent",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("tool_call")),
            "FAKE_HARNESS_PLAN": json.dumps({"launches": str(launches), "pace": 0.05}),
        },
    )
    turn = enqueue_turn(motion, agent, PROMPT, dispatch=False)
    barrier = threading.Barrier(2)

    def worker():
        try:
            barrier.wait()
            run_turn(turn.pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FINISHED
    assert len(launches.read_text().split()) == 1
    assert_nothing_lost(motion)
    assert os.path.exists(launches)


def test_a_runner_error_mid_turn_stops_the_harness_and_fails_the_turn(wake, readme_motion, monkeypatch):
    from motion_runner.ingest.writer import EventWriter

    real_write_many = EventWriter.write_many

    def write_many(self, events, **kwargs):
        if any(event.kind == "tool_result" for event in events):
            raise RuntimeError("disk full")
        return real_write_many(self, events, **kwargs)

    monkeypatch.setattr(EventWriter, "write_many", write_many)

    turn = wake({"hang": True, "stderr": "still here\n"})

    assert turn.status == TurnStatus.FAILED
    assert "could not write an event (RuntimeError: disk full)" in the_error(readme_motion).text
    assert "still here" in turn.stderr_tail
    assert wait_dead(turn.pid)
    # What could be written before the failure is kept, in order, once; nothing after the
    # failing batch is.
    spoken = [m.text for m in messages(readme_motion, Kind.TEXT)]
    assert spoken[:1] == SPOKEN[:1] and spoken == SPOKEN[: len(spoken)]


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=60, RUNNER_AFTER_RESULT_GRACE_SECONDS=1)
def test_a_harness_that_lingers_after_its_result_is_stopped_and_the_turn_finishes(wake, readme_motion):
    """Claude Code sometimes prints its result and never exits (anthropics/claude-code#25629)."""
    started = time.monotonic()

    turn = wake({"hang": True})

    # FINISHED, not TIMED_OUT: stopped after the 1 s grace, not at the 60 s timeout.
    assert time.monotonic() - started < 60
    assert turn.status == TurnStatus.FINISHED
    assert turn.error == ""
    assert not messages(readme_motion, Kind.ERROR)
    assert len(messages(readme_motion, Kind.TURN_END)) == 1
    assert wait_dead(turn.pid)
    assert_nothing_lost(readme_motion)


@override_settings(RUNNER_AFTER_RESULT_GRACE_SECONDS=1)
def test_a_failed_result_then_lingering_still_fails_the_turn(wake, readme_motion, magent):
    magent.env = {**magent.env, "FAKE_HARNESS_LINES": str(recording_path("model_error"))}
    magent.save()

    turn = wake({"hang": True})

    assert turn.status == TurnStatus.FAILED
    assert "API Error: 500" in the_error(readme_motion).text


def test_an_error_result_is_said_once_in_the_thread(wake, readme_motion, magent):
    magent.env = {**magent.env, "FAKE_HARNESS_LINES": str(recording_path("max_budget"))}
    magent.save()

    turn = wake({"exit": 1})

    assert turn.status == TurnStatus.FAILED
    assert turn.error == "the turn ended with an error (error_max_budget_usd): Reached maximum budget ($0.01)"
    (end,) = messages(readme_motion, Kind.TURN_END)
    assert "Reached maximum budget ($0.01)" in end.text
    assert not messages(readme_motion, Kind.ERROR)


def test_a_session_the_harness_lost_is_retired_and_the_wake_runs_again_fresh(
    wake, readme_motion, magent, tmp_path
):
    """Resuming a session Claude Code no longer has, though its transcript is here, fails every
    time; the runner retires it."""
    sid = "5d0d3d4c-0000-4000-8000-000000000000"
    MotionSession.objects.create(session_id=sid, motion=readme_motion, agent=magent)
    transcript = tmp_path / "home" / ".claude" / "projects" / "-w" / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    magent.env = {**magent.env, "HOME": str(tmp_path / "home")}
    magent.save()

    turn = wake({"lines": str(recording_path("resume_gone")), "exit": 1})

    assert turn.status == TurnStatus.FAILED
    assert "is gone from claude-code" in turn.error
    assert turn.ended_by == EndedBy.SESSION_GONE
    gone = MotionSession.objects.get(pk=sid)
    assert gone.retired_at is not None
    again = Turn.objects.exclude(pk=turn.pk).get()
    assert (again.status, again.prompt, again.mode) == (TurnStatus.QUEUED, turn.prompt, turn.mode)

    magent.env = {**magent.env, "FAKE_HARNESS_PLAN": "{}"}
    magent.save()
    fresh = execute_turn(again.pk)
    assert fresh.status == TurnStatus.FINISHED
    assert fresh.session_id != gone.session_id


def test_a_session_another_machine_holds_is_kept_and_the_wake_starts_fresh_once(wake, readme_motion, magent):
    """Six sessions claimed from elsewhere: one failed resume, one fresh start, never six."""
    for n in range(6):
        MotionSession.objects.create(
            session_id=f"5d0d3d4c-0000-4000-8000-00000000000{n}", motion=readme_motion, agent=magent
        )

    turn = wake({"lines": str(recording_path("resume_gone")), "exit": 1})

    assert turn.status == TurnStatus.FAILED
    assert "is not on this machine" in turn.error and "woke again once in a fresh session" in turn.error
    assert turn.ended_by == EndedBy.SESSION_ELSEWHERE
    assert not MotionSession.objects.filter(retired_at__isnull=False).exists()  # kept, not replaced
    (said,) = [m for m in messages(readme_motion, Kind.WAKE) if "is not on this machine" in m.text]
    assert said.text.startswith("@magent: its session 5d0d3d4c-")
    again = Turn.objects.exclude(pk=turn.pk).get()
    assert again.start_fresh

    magent.env = {**magent.env, "FAKE_HARNESS_PLAN": "{}"}
    magent.save()
    fresh = execute_turn(again.pk)
    assert fresh.status == TurnStatus.FINISHED
    assert Turn.objects.count() == 2
    assert "--resume" not in (fresh.session_note or "")
    assert fresh.session_id not in {f"5d0d3d4c-0000-4000-8000-00000000000{n}" for n in range(6)}


def test_a_session_is_not_retired_for_an_ordinary_failure(wake, readme_motion, magent):
    MotionSession.objects.create(session_id="still-here", motion=readme_motion, agent=magent)
    turn = wake({"no_result": True, "exit": 1})
    assert turn.status == TurnStatus.FAILED
    assert MotionSession.objects.get(pk="still-here").retired_at is None
    assert Turn.objects.count() == 1
