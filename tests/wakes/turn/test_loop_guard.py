"""The tool-loop guard trips on exactly the patterns the seed names, and on no others."""

from __future__ import annotations

from motion_runner.harnesses import Event, EventKind
from wakes.models.dials import DEFAULTS
from wakes.turn.loop_guard import LoopGuard


def call(name: str = "Read", **tool_input) -> Event:
    return Event(EventKind.TOOL_CALL, tool_name=name, tool_input=tool_input or {"file_path": "a"})


def guard(**overrides) -> LoopGuard:
    return LoopGuard(turn=None, dials=DEFAULTS | overrides)


def feed(monitor: LoopGuard, events: list[Event]) -> int | None:
    """The index of the call that tripped the guard, or None."""
    for index, event in enumerate(events):
        monitor.observe(event)
        if monitor.stop_reason:
            return index
    return None


def test_the_third_identical_call_in_a_row_trips_it():
    monitor = guard()
    assert feed(monitor, [call(), call(), call(), call()]) == 2
    assert "3 times in a row" in monitor.stop_reason


def test_key_order_in_the_input_does_not_make_a_call_different():
    monitor = guard()
    events = [call(file_path="a", limit=5), call(limit=5, file_path="a"), call(file_path="a", limit=5)]
    assert feed(monitor, events) == 2


def test_two_in_a_row_then_something_else_does_not_trip_it():
    assert feed(guard(), [call(), call(), call(file_path="b"), call(), call()]) is None


def test_five_of_the_same_call_within_ten_trips_it():
    alternating = []
    for n in range(5):
        alternating += [call(), call(file_path=f"other{n}")]
    monitor = guard()
    assert feed(monitor, alternating) == 8  # the fifth Read of "a"
    assert "5 times in the last" in monitor.stop_reason


def test_the_same_call_spread_wider_than_the_window_is_allowed():
    events = []
    for n in range(6):
        events += [call()] + [call(file_path=f"x{n}-{k}") for k in range(2)]
    assert feed(guard(), events) is None


def test_fifty_different_calls_in_one_turn_trip_it():
    monitor = guard()
    assert feed(monitor, [call(file_path=f"f{n}") for n in range(60)]) == 49
    assert "50 tool calls" in monitor.stop_reason


def test_thresholds_are_dials():
    assert feed(guard(loop_same_call_in_a_row=2), [call(), call()]) == 1
    assert feed(guard(loop_max_calls_per_turn=3), [call(file_path=f"f{n}") for n in range(5)]) == 2


def test_text_and_results_are_not_calls():
    monitor = guard()
    events = [Event(EventKind.TEXT, text="hi"), Event(EventKind.TOOL_RESULT, text="x")] * 30
    assert feed(monitor, events) is None
