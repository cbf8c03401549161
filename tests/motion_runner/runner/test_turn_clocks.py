"""How long a turn may run, by its mode: look-only keeps its wall clock; full tools have none and
are ended by silence (no line for the silence limit); the prompt reaches the harness on stdin.

The harness is tests/fakes/fake_harness.py playing back the recorded Claude Code tool_call turn
(six lines) at the pace each test's plan sets."""

from __future__ import annotations

import json
import time

import pytest
from django.test import override_settings

from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import AgentFactory, MotionFactory
from tests.motion_runner.runner.test_runner_failures import FAKE_HARNESS, wait_dead
from tests.recorded import recording_path
from wakes.models import Dials

pytestmark = pytest.mark.django_db


@pytest.fixture
def workroom(tmp_path):
    return MotionFactory(slug="workroom", title="Real work", workspace=str(tmp_path))


@pytest.fixture
def magent():
    return AgentFactory(
        name="magent", binary=str(FAKE_HARNESS), env={"FAKE_HARNESS_LINES": str(recording_path("tool_call"))}
    )


@pytest.fixture
def run(workroom, magent):
    def run(plan: dict, *, mode: str, prompt: str = "Do the work."):
        magent.env = {**magent.env, "FAKE_HARNESS_PLAN": json.dumps(plan)}
        magent.save()
        return execute_turn(enqueue_turn(workroom, magent, prompt, mode=mode, dispatch=False).pk)

    return run


def silence_limit(seconds: float | None, wall: float | None = None) -> None:
    dials = Dials.load()
    dials.full_tools_silence_seconds = seconds
    dials.full_tools_timeout_seconds = wall
    dials.save()


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=2)
def test_a_full_tools_turn_that_keeps_printing_outlives_the_look_only_clock(run):
    silence_limit(30)
    started = time.monotonic()

    turn = run({"pace": 0.7}, mode="full")  # six lines, 0.7 s apart: past 2 s

    assert time.monotonic() - started > 2
    assert turn.status == TurnStatus.FINISHED, turn.error


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=2)
def test_a_look_only_turn_keeps_its_wall_clock(run, workroom):
    turn = run({"pace": 0.7}, mode="look")

    assert turn.status == TurnStatus.TIMED_OUT
    assert "ran past its 2 s limit" in turn.error


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=600)
def test_a_full_tools_turn_that_goes_silent_is_ended_at_the_silence_limit(run, workroom):
    silence_limit(2)
    started = time.monotonic()

    turn = run({"no_result": True, "hang": True}, mode="full")

    assert time.monotonic() - started < 60
    assert turn.status == TurnStatus.TIMED_OUT
    assert "went silent" in turn.error and "nothing printed for 2 s" in turn.error
    said = Message.objects.get(motion=workroom, kind=Kind.ERROR)
    assert "silence limit" in said.text
    assert wait_dead(turn.pid)


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=600)
def test_a_wall_clock_for_full_tools_turns_is_a_dial(run):
    silence_limit(60, wall=2)

    turn = run({"pace": 0.7}, mode="full")

    assert turn.status == TurnStatus.TIMED_OUT
    assert "ran past its 2 s limit" in turn.error


def test_the_harness_reads_a_megabyte_prompt_on_stdin(run, tmp_path):
    received = tmp_path / "stdin.txt"
    prompt = "Read this: " + "x" * (1024 * 1024)

    turn = run({"stdin_to": str(received)}, mode="look", prompt=prompt)

    assert turn.status == TurnStatus.FINISHED, turn.error
    assert received.read_text() == turn.prompt
    assert prompt in received.read_text()  # whole (a first wake's opening may come before it)


@override_settings(RUNNER_TURN_TIMEOUT_SECONDS=600, RUNNER_SILENCE_SECONDS=2)
def test_with_the_dial_blank_the_runners_silence_setting_answers(run):
    silence_limit(None)

    turn = run({"no_result": True, "hang": True}, mode="full")

    assert turn.status == TurnStatus.TIMED_OUT
    assert "nothing printed for 2 s" in turn.error


def test_by_default_a_full_tools_turn_has_no_wall_clock_and_1500_s_of_silence(workroom, magent):
    from motion_runner.runner.limits import limits_for

    turn = enqueue_turn(workroom, magent, "Do the work.", mode="full", dispatch=False)
    limits = limits_for(turn)
    assert (limits.timeout, limits.silence) == (None, 1500.0)
    look = enqueue_turn(workroom, magent, "Look.", mode="look", dispatch=False)
    assert (limits_for(look).timeout, limits_for(look).silence) == (60, None)  # tests/settings.py
