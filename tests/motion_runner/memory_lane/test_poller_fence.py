"""POLLER_AGENTS, the switch-over's fence (docs/memory-lane.md): under the memory_lane binding an
agent memory-lane's poller still wakes is never woken by the wakes app, neither by a mention nor by
the consider loop; under the own binding (no post reaches the poller) the list changes nothing."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from motion_runner import signals
from motion_runner.memory_lane.binding import MemoryLaneRecord
from motion_runner.memory_lane.fence import poller_fenced_agents
from motion_runner.models import Turn
from motion_runner.record import binding
from motion_runner.record.own import OwnRecord
from tests.wakes_support import clock, loop, room, say
from wakes.models import ListenState

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory_lane(settings, monkeypatch):
    settings.MOTION_RUNNER_RECORD = "memory_lane"
    settings.POLLER_AGENTS = ["magent"]
    # The fence is the subject here: this test project has no host tables to mirror rows into
    # (tests/motion_runner/site/test_host_project.py and tests/motion_runner/memory_lane/test_memory_lane_record.py test the writing).
    monkeypatch.setattr(MemoryLaneRecord, "mirror", lambda self, messages: None)
    return settings


def test_the_binding_is_chosen_by_one_setting_and_own_is_the_default(settings):
    assert isinstance(binding(), OwnRecord) and not isinstance(binding(), MemoryLaneRecord)
    settings.MOTION_RUNNER_RECORD = "memory_lane"
    assert isinstance(binding(), MemoryLaneRecord)


def test_an_unknown_binding_is_an_error_not_a_silent_default(settings):
    settings.MOTION_RUNNER_RECORD = "motion_runner.record.no_such.Binding"
    with pytest.raises(ImportError):
        binding()


def test_a_mention_of_a_poller_agent_wakes_nobody_here(memory_lane, room, clock):
    say(room.motion, room.justin, "@magent what did the deploy log say?", clock)
    assert not Turn.objects.filter(agent=room.magent).exists()


def test_the_consider_loop_skips_a_poller_agent(memory_lane, room, clock, loop):
    say(room.motion, room.justin, "anyone?", clock)
    assert loop.run(60) == []
    assert not Turn.objects.exists()
    assert ListenState.objects.get(agent=room.magent).due_at is None


def test_an_agent_off_the_list_is_woken_as_before(memory_lane, room, clock, settings):
    settings.POLLER_AGENTS = ["someone-else"]
    say(room.motion, room.justin, "@magent ping", clock)
    assert Turn.objects.filter(agent=room.magent, reason="mention").count() == 1


def test_under_the_own_binding_the_list_fences_nobody(room, clock, settings):
    settings.POLLER_AGENTS = ["magent"]
    assert poller_fenced_agents() == set()
    say(room.motion, room.justin, "@magent ping", clock)
    assert Turn.objects.filter(agent=room.magent, reason="mention").count() == 1


def test_the_memory_lane_binding_without_the_hosts_record_says_what_to_set(settings):
    settings.MOTION_RUNNER_RECORD = "memory_lane"
    with pytest.raises(ImproperlyConfigured, match="MOTION_RUNNER_RECORD_MODELS"):
        binding().connect()


def test_the_fence_reaches_wakes_through_the_runners_hook():
    """wakes reads no storage: the record's fence is registered as a hook the wakes app asks."""
    assert poller_fenced_agents in signals.fenced_agent_providers


def test_any_registered_fence_keeps_its_agents_from_the_wakes_app(room, clock, loop, monkeypatch):
    monkeypatch.setattr(signals, "fenced_agent_providers", [set, lambda: {"magent"}])
    say(room.motion, room.justin, "@magent what did the deploy log say?", clock)
    assert loop.run(60) == []
    assert not Turn.objects.filter(agent=room.magent).exists()
