"""The seams with one answer (a turn's clocks, its tool policy, where the room's settings are kept) are dotted-path settings
(motion_runner/signals.py, `ChosenBySetting`): wakes' by default, a deployment's own where it
names one, and a path that does not load stops the start (`manage.py check`), not a turn."""

from __future__ import annotations

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from motion_runner import signals
from motion_runner.checks import seams_chosen_by_setting
from motion_runner.runner.limits import limits_for
from motion_runner.runner.turns import enqueue_turn
from motion_runner.signals import TurnClocks
from tests.factories import AgentFactory, MotionFactory
from wakes.turn.tool_policy import full_tools_clocks

pytestmark = pytest.mark.django_db


def night_shift_clocks(turn) -> TurnClocks:
    """A deployment's own clocks for full-tools turns, named by MOTION_RUNNER_TURN_CLOCKS below."""
    return TurnClocks(wall=7200.0, silence=90.0)


@pytest.fixture
def full_and_look():
    motion, agent = MotionFactory(slug="workroom"), AgentFactory(name="magent")
    return (
        enqueue_turn(motion, agent, "Do the work.", mode="full", dispatch=False),
        enqueue_turn(motion, agent, "Look.", mode="look", dispatch=False),
    )


def test_wakes_clocks_answer_by_default():
    assert signals.turn_clocks.load() is full_tools_clocks


def test_a_deployment_names_its_own_clocks_for_full_tools_turns(settings, full_and_look):
    settings.MOTION_RUNNER_TURN_CLOCKS = f"{__name__}.night_shift_clocks"
    full, look = full_and_look
    assert (limits_for(full).timeout, limits_for(full).silence) == (7200.0, 90.0)
    assert (limits_for(look).timeout, limits_for(look).silence) == (60, None)  # tests/settings.py


def test_without_wakes_the_runners_settings_give_the_clocks(settings, monkeypatch, full_and_look):
    monkeypatch.setattr(django_apps, "is_installed", lambda app: app != "wakes")
    settings.RUNNER_FULL_TOOLS_TIMEOUT_SECONDS, settings.RUNNER_SILENCE_SECONDS = 3600.0, 120.0
    full, _ = full_and_look
    assert signals.turn_clocks.path() == "motion_runner.runner.limits.settings_clocks"
    assert (limits_for(full).timeout, limits_for(full).silence) == (3600.0, 120.0)


def test_the_defaults_pass_the_check():
    assert seams_chosen_by_setting(None) == []


def test_a_misspelt_path_is_refused_naming_the_setting_and_the_path(settings):
    settings.MOTION_RUNNER_TOOL_POLICY = "wakes.turn.tool_policy.policy_for_trun"
    [error] = seams_chosen_by_setting(None)
    assert error.id == "motion_runner.E030"
    assert "MOTION_RUNNER_TOOL_POLICY = 'wakes.turn.tool_policy.policy_for_trun'" in error.msg
    assert "'wakes.turn.tool_policy.policy_for_turn'" in error.hint  # the default it would have


def test_a_module_that_does_not_exist_is_refused(settings):
    settings.MOTION_RUNNER_TURN_CLOCKS = "nightshift.clocks.full_tools"
    [error] = seams_chosen_by_setting(None)
    assert error.id == "motion_runner.E030"
    assert "No module named 'nightshift'" in error.msg


def test_a_path_to_something_not_callable_is_refused(settings):
    settings.MOTION_RUNNER_TURN_CLOCKS = "motion_runner.runner.limits.FULL"
    [error] = seams_chosen_by_setting(None)
    assert error.id == "motion_runner.E031"


def test_manage_py_check_stops_the_start_on_a_wrong_path(settings):
    settings.MOTION_RUNNER_TOOL_POLICY = "wakes.turn.tool_policy.nothing_here"
    with pytest.raises(SystemCheckError, match="motion_runner.E030"):
        call_command("check")


class NotesOnTheFridge(signals.SteeringSource):
    """A deployment's own steering source: every setting read from one fixed list."""

    def candidates(self, pairs):
        from django.utils import timezone

        return {
            pair: [
                signals.SteerRecord(
                    motion_id=pair[0],
                    agent_id=None,
                    setting="listening",
                    value="off",
                    until=None,
                    by_name="ops",
                    at=timezone.now(),
                    ref="fridge-1",
                )
            ]
            for pair in pairs
        }


FRIDGE = NotesOnTheFridge()


def fridge() -> signals.SteeringSource:
    return FRIDGE


def test_the_own_record_keeps_the_rooms_settings_in_wakes_table():
    assert signals.steering_source() is None


def test_a_deployment_names_where_the_rooms_settings_are_kept(settings):
    from wakes.decision.steering import steering_for

    motion, agent = MotionFactory(slug="kitchen"), AgentFactory(name="magent")
    settings.MOTION_RUNNER_STEERING_SOURCE = "tests.motion_runner.runner.test_one_answer_seams.fridge"

    assert steering_for(motion.pk, agent.pk).listening == "off"
