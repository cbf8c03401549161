"""memory-lane's settings values and the menus' values, both ways (motion_runner/memory_lane/steering.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from motion_runner.memory_lane.steering import value_here, value_there
from motion_runner.memory_lane.timing import dial_value, knob_value
from motion_runner.signals import SteeringRefused

SIX = datetime(2026, 12, 2, 18, 0, tzinfo=UTC)


def test_memory_lanes_listening_with_an_end_is_the_menus_listening_and_its_until():
    assert value_here("listening", {"mode": "mentions", "until": "2026-12-02T18:00:00Z"}) == ("mentions", SIX)


def test_the_menus_listening_with_an_until_is_memory_lanes_listening_object():
    assert value_there("listening", "off", SIX) == {"mode": "off", "until": SIX.isoformat()}


def test_verbosity_names_are_translated_both_ways():
    assert value_here("verbosity", "thorough") == ("full", None)
    assert value_there("verbosity", "terse", None) == "brief"


def test_a_reads_choice_past_memory_lanes_bound_is_written_at_its_bound():
    assert value_there("reads", "40000", None) == 24000


def test_an_end_time_on_a_setting_memory_lane_keeps_none_for_is_refused():
    with pytest.raises(SteeringRefused, match="only for listening"):
        value_there("model", "opus", SIX)


def test_back_to_the_default_writes_memory_lanes_default():
    assert value_there("mention_effort", "", None) == "high"
    assert value_there("listening", "", None) == {"mode": "on", "until": None}


def test_a_value_memory_lane_could_not_have_stored_is_read_past():
    assert value_here("listening", {"mode": "asleep"}) is None
    assert value_here("verbosity", "epic") is None


def test_memory_lanes_ultracode_is_the_menus_on_or_off_both_ways():
    assert (value_here("ultracode", True), value_here("ultracode", False)) == (("on", None), ("off", None))
    assert (value_there("ultracode", "on", None), value_there("ultracode", "off", None)) == (True, False)
    assert value_there("ultracode", "", None) is False  # memory-lane's default


def test_an_ultracode_memory_lane_could_not_have_stored_is_read_past():
    assert value_here("ultracode", "yes") is None


def test_idle_after_seconds_are_looks_of_the_tick_both_ways():
    assert dial_value("idle_after", 600, 3.0) == 200
    assert knob_value("idle_looks", 200, 3.0) == 600


def test_a_short_idle_after_is_one_look_not_never():
    assert dial_value("idle_after", 1, 3.0) == 1
    assert dial_value("idle_after", 0, 3.0) == 0  # 0: never, on both sides


def test_consider_after_is_the_debounce_in_whole_seconds():
    assert dial_value("consider_after", 40, 3.0) == 40.0
    with pytest.raises(SteeringRefused, match="whole seconds"):
        knob_value("quiet_seconds", 2.5, 3.0)


def test_a_timing_past_memory_lanes_bounds_is_refused_not_clamped():
    with pytest.raises(SteeringRefused, match="from 0 to 60"):
        knob_value("considerations_per_hour", 90, 3.0)
    with pytest.raises(SteeringRefused, match="from 0 to 604800"):
        knob_value("idle_looks", 300_000, 3.0)


def test_a_timing_value_memory_lane_could_not_have_stored_is_read_past():
    assert dial_value("considers_per_hour", "six", 3.0) is None
    assert dial_value("considers_per_hour", True, 3.0) is None
    assert dial_value("consider_after", 99_999, 3.0) is None
