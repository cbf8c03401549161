"""The Pi adapter reads what the real `pi --mode json` (0.73.1) printed: every line here was
recorded by bin/record-harness against the fake OpenAI API (Chat Completions)."""

from __future__ import annotations

from decimal import Decimal

from motion_runner.harnesses import get_adapter
from motion_runner.harnesses.base import EventKind
from motion_runner.harnesses.pi import PiParser
from tests.recordings_util import kinds, posted, recorded_lines, replay


def session_id(scenario: str) -> str:
    return recorded_lines("pi", scenario)[0]["id"]


def test_the_session_line_starts_the_session():
    events = replay(PiParser(), "pi", "text")
    assert events[0].kind == EventKind.INIT
    assert events[0].session_id == session_id("text")


def test_streamed_partials_only_move_the_activity_line():
    events = replay(PiParser(), "pi", "text")
    assert kinds(events) == [EventKind.TEXT, EventKind.TURN_END]
    assert posted(events)[0].text == "Hello from the fake model."
    assert any(e.kind == EventKind.ACTIVITY and e.text == "writing…" for e in events)


def test_text_deltas_give_the_reply_as_typed_so_far():
    partials = [e.text for e in replay(PiParser(), "pi", "text") if e.kind == EventKind.PARTIAL]

    # From the deltas, not the update's `partial` object (printed ahead of them).
    assert partials == [
        "Hello ",
        "Hello from ",
        "Hello from the ",
        "Hello from the fake ",
        "Hello from the fake model.",
    ]


def test_the_last_partial_is_the_posted_text_and_a_new_message_starts_afresh():
    events = replay(PiParser(), "pi", "tool")
    partials = [e.text for e in events if e.kind == EventKind.PARTIAL]
    texts = [e.text for e in posted(events) if e.kind == EventKind.TEXT]

    assert partials and partials[-1] == texts[-1]
    assert all(texts[-1].startswith(p) for p in partials if p[:1] == texts[-1][:1])


def test_a_read_is_a_tool_call_then_its_result_then_the_reply():
    events = posted(replay(PiParser(), "pi", "tool"))
    assert [e.kind for e in events] == [
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TEXT,
        EventKind.TURN_END,
    ]
    call, result, text, _ = events
    assert call.tool_name == "read"
    assert call.tool_input == {"path": "notes.txt"}
    assert result.tool_id == call.tool_id
    assert result.text == "The launch code is 4417.\n"
    assert not result.is_error
    assert "4417" in text.text


def test_pis_per_call_turn_end_does_not_end_our_turn():
    lines = recorded_lines("pi", "tool")
    assert sum(line["type"] == "turn_end" for line in lines) == 2
    assert kinds(replay(PiParser(), "pi", "tool")).count(EventKind.TURN_END) == 1


def test_the_cost_is_pis_own_summed_over_the_run():
    end = posted(replay(PiParser(), "pi", "tool"))[-1]
    # Two assistant messages priced by Pi at $0.0025 each (models.json: $2 in, $8 out,
    # $0.50 cache read per million; 1,000 in + 200 cached + 50 out).
    assert end.cost_usd == Decimal("0.0050")
    assert end.usage == {
        "input_tokens": 2000,
        "output_tokens": 100,
        "cache_read_input_tokens": 400,
        "cache_creation_input_tokens": 0,
    }
    assert end.model == "fake-model"
    assert not end.is_error


def test_a_model_error_that_exits_0_ends_the_turn_as_an_error():
    end = posted(replay(PiParser(), "pi", "error"))[-1]
    assert kinds(replay(PiParser(), "pi", "error")) == [EventKind.TURN_END]
    assert end.is_error
    assert end.subtype == "error"
    assert end.text == "400 The model `nope` does not exist."


def test_a_stream_that_fails_midway_ends_the_turn_as_an_error():
    end = posted(replay(PiParser(), "pi", "failed"))[-1]
    assert end.is_error
    assert end.text == "The server had an error processing your request."


def test_a_resumed_session_keeps_its_id_and_counts_only_this_run():
    assert session_id("resume") == session_id("resume.first")
    end = posted(replay(PiParser(), "pi", "resume"))[-1]
    # This run's one call: 1,500 prompt tokens of which 1,000 cached, 80 out.
    assert end.usage["input_tokens"] == 500
    assert end.cost_usd == Decimal("0.00214")


def test_replayed_lines_map_to_the_same_ids():
    first = [e.uuid for e in posted(replay(PiParser(), "pi", "tool"))]
    again = [e.uuid for e in posted(replay(PiParser(), "pi", "tool"))]
    assert all(first)
    assert len(set(first)) == len(first)
    assert first == again


def test_two_runs_of_one_session_never_share_ids():
    first = {e.uuid for e in posted(replay(PiParser(), "pi", "resume.first"))}
    second = {e.uuid for e in posted(replay(PiParser(), "pi", "resume"))}
    assert not first & second


def test_a_line_it_does_not_know_is_kept_not_fatal():
    events = PiParser().feed({"type": "extension_ui", "what": "x"})
    assert [e.kind for e in events] == [EventKind.UNKNOWN]


def test_the_registry_knows_pi():
    assert get_adapter("pi").harness == "pi"
