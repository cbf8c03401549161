"""memory-lane's clocks that rode on its poller's pulse run from the beat (issue 40, item 3;
docs/memory-lane.md, "What the poller did besides waking").

In a subprocess with the host project's settings (the README's block, its `CELERY_BEAT_SCHEDULE`),
against its own database: the beat's entry is run by its task's name, as a worker runs it, with no
page open and no poller; memory-lane's `push.nudge()` and `wiki_feed.nudge()` (stand-ins that count
their looks, tests/host/conversations/services/) are called, each keeping its own pace.
"""

from __future__ import annotations

import pytest
from django.test import override_settings

from motion_runner.memory_lane.pulse import memory_lane_pulse
from motion_runner.schedule import beat_schedule
from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    return host_check("_pulse", "tests.host.pulse_check")


def test_the_readmes_beat_schedule_runs_memory_lanes_pulse_every_five_seconds(seen):
    assert seen["every"] == 5.0


def test_one_beat_with_no_page_open_nudges_push_and_the_wiki_feed(seen):
    assert seen["first"] == {
        "conversations.services.push.nudge": "True",
        "conversations.services.wiki_feed.nudge": "True",
    }
    assert seen["looks_after_first"] == [1, 1]


def test_each_nudge_keeps_its_own_pace_however_often_the_beat_calls(seen):
    assert seen["looks_after_second"] == [1, 1]
    assert seen["looks_after_ten_seconds"] == [2, 1]


def test_the_beat_itself_reads_nothing_of_the_database(seen):
    assert seen["queries"] == 0


def test_standalone_the_pulse_calls_nothing():
    with override_settings(MEMORY_LANE_PULSE_CALLS=["tests.no.such.module.nudge"]):
        assert memory_lane_pulse.apply().get() == {}


def test_the_pulse_period_is_a_parameter_of_the_schedule():
    assert beat_schedule(host_pulse_seconds=2.0)["memory-lane-pulse"]["schedule"] == 2.0
