"""The Claude Code adapter reads what the real CLI prints.

Every line here was recorded from claude-code 2.1.332 against the fake model server
(tests/recordings/claude-code/, re-recorded by bin/record-claude); none is written by hand
except the one line of a type no CLI has printed yet.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from motion_runner.harnesses import EventKind
from motion_runner.harnesses.claude_code import ClaudeCodeAdapter, ClaudeCodeParser
from motion_runner.harnesses.claude_code_files import MICRO
from motion_runner.harnesses.policy import closed_policy
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Kind, Message
from tests.factories import AgentFactory, MotionFactory, TurnFactory
from tests.recorded import parse_recording, recorded_lines, recording_meta, transcript_lines


def kinds(events):
    return [e.kind for e in events if e.kind != EventKind.ACTIVITY]


def only(events, kind):
    found = [e for e in events if e.kind == kind]
    assert len(found) == 1, f"expected one {kind}, got {len(found)}"
    return found[0]


# --- mapping ------------------------------------------------------------------------------


def test_init_line_gives_the_session_tools_and_model():
    init_line = recorded_lines("tool_call")[0]

    event = only(parse_recording("tool_call"), EventKind.INIT)

    assert event.session_id == init_line["session_id"] == recording_meta("tool_call")["session_id"]
    assert "Read" in event.tools
    assert event.model == "claude-opus-5-5"
    assert event.cwd == recording_meta("tool_call")["workspace"]


def test_a_text_reply_is_one_text_event_with_the_lines_own_uuid():
    assistant = next(line for line in recorded_lines("text_reply") if line["type"] == "assistant")

    event = only(parse_recording("text_reply"), EventKind.TEXT)

    assert event.text == "Hello from the fake model: nothing to do here."
    assert event.uuid == assistant["uuid"]
    assert event.message_id == assistant["message"]["id"]


def test_the_tool_turn_maps_to_text_call_result_text_end_in_order():
    assert kinds(parse_recording("tool_call")) == [
        EventKind.INIT,
        EventKind.TEXT,
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TEXT,
        EventKind.TURN_END,
    ]


def test_a_tool_call_carries_its_name_input_and_id():
    workspace = recording_meta("tool_call")["workspace"]

    call = only(parse_recording("tool_call"), EventKind.TOOL_CALL)

    assert call.tool_name == "Read"
    assert call.tool_input == {"file_path": f"{workspace}/README.md"}
    assert call.tool_id.startswith("toolu_")


def test_a_tool_result_names_its_call_and_carries_the_file():
    events = parse_recording("tool_call")
    call = only(events, EventKind.TOOL_CALL)

    result = only(events, EventKind.TOOL_RESULT)

    assert result.tool_id == call.tool_id
    assert result.tool_name == "Read"  # the user line has no name: the parser remembers it
    assert "The answer to the demo question is 42." in result.text
    assert result.is_error is False


def test_a_new_sessions_turn_costs_the_total_the_cli_reported():
    result_line = recorded_lines("tool_call")[-1]

    end = only(parse_recording("tool_call"), EventKind.TURN_END)

    assert end.cost_usd == Decimal(str(result_line["total_cost_usd"]))
    assert end.cost_usd > 0
    assert end.subtype == "success"
    assert end.is_error is False
    assert end.uuid == result_line["uuid"]
    assert end.usage["input_tokens"] == result_line["usage"]["input_tokens"]


def test_lines_of_one_api_message_share_its_message_id_and_keep_their_own_uuids():
    events = [e for e in parse_recording("two_blocks") if e.kind in (EventKind.TEXT, EventKind.TOOL_CALL)]
    first_message = events[:3]

    assert [e.kind for e in first_message] == [EventKind.TEXT, EventKind.TOOL_CALL, EventKind.TOOL_CALL]
    assert len({e.message_id for e in first_message}) == 1
    assert len({e.uuid for e in first_message}) == 3
    assert events[3].message_id != events[0].message_id  # the answer is the next API message


def test_two_calls_in_one_message_get_each_their_own_result():
    events = parse_recording("two_blocks")
    calls = {e.tool_id: e.tool_name for e in events if e.kind == EventKind.TOOL_CALL}

    results = {e.tool_id: e.tool_name for e in events if e.kind == EventKind.TOOL_RESULT}

    assert results == calls
    assert sorted(calls.values()) == ["Glob", "Read"]


def test_every_event_id_is_unique_and_the_same_when_parsed_again():
    first = [e.uuid for e in parse_recording("two_blocks") if e.kind != EventKind.INIT]
    again = [e.uuid for e in parse_recording("two_blocks") if e.kind != EventKind.INIT]

    assert None not in first
    assert len(set(first)) == len(first)
    assert first == again


def test_assistant_usage_drops_the_message_start_placeholder_output_count():
    line = next(line for line in recorded_lines("tool_call") if line["type"] == "assistant")
    assert line["message"]["usage"]["output_tokens"] == 1  # what the CLI prints mid-stream

    text = next(e for e in parse_recording("tool_call") if e.kind == EventKind.TEXT)

    assert "output_tokens" not in text.usage
    assert text.usage["input_tokens"] == line["message"]["usage"]["input_tokens"]


# --- partials -----------------------------------------------------------------------------


def test_partial_stream_events_never_yield_a_message():
    parser = ClaudeCodeParser()
    partial_lines = [line for line in recorded_lines("partials") if line["type"] == "stream_event"]
    assert any((line["event"].get("delta") or {}).get("type") == "text_delta" for line in partial_lines), (
        "the recording has text deltas"
    )

    events = [event for line in partial_lines for event in parser.feed(line)]

    assert events, "block starts move the activity line"
    assert {e.kind for e in events} == {EventKind.ACTIVITY, EventKind.PARTIAL, EventKind.USAGE}


def test_a_message_delta_gives_its_messages_whole_usage_output_counted():
    usage = [e for e in parse_recording("partials") if e.kind == EventKind.USAGE]

    assert [(e.message_id, e.model, e.usage["output_tokens"]) for e in usage] == [
        ("msg_fake0001ec63f2db615a49e9", "claude-opus-5-5", 40),
        ("msg_fake0004303b6b134531474b", "claude-opus-5-5", 12),
    ]
    assert usage[0].usage["input_tokens"] == 1200


def test_a_message_delta_with_only_output_keeps_the_message_starts_input():
    parser = ClaudeCodeParser()
    start = {"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": 9}}}
    parser.feed({"type": "stream_event", "event": start})

    (event,) = parser.feed(
        {"type": "stream_event", "event": {"type": "message_delta", "usage": {"output_tokens": 5}}}
    )

    assert (event.message_id, event.usage) == ("msg_1", {"input_tokens": 9, "output_tokens": 5})


def test_text_deltas_give_each_text_block_as_typed_so_far():
    partials = [e.text for e in parse_recording("partials") if e.kind == EventKind.PARTIAL]

    assert partials == [
        "Let me read ",
        "Let me read the README f",
        "Let me read the README first.",
        "The README s",
        "The README says the answ",
        "The README says the answer is 42.",
    ]


def test_a_blocks_last_partial_is_its_final_text():
    events = parse_recording("partials")
    finals = [e.text for e in events if e.kind == EventKind.TEXT]
    last_partials = [
        e.text
        for e, after in zip(events, events[1:] + [None], strict=True)
        if e.kind == EventKind.PARTIAL and (after is None or after.kind != EventKind.PARTIAL)
    ]

    assert last_partials == finals


def test_tool_input_deltas_are_not_typed_text():
    parser = ClaudeCodeParser()
    json_deltas = [
        line
        for line in recorded_lines("partials")
        if (line.get("event", {}).get("delta") or {}).get("type") == "input_json_delta"
    ]
    assert json_deltas, "the recording has a tool call's input deltas"

    assert [event for line in json_deltas for event in parser.feed(line)] == []


@pytest.mark.django_db
def test_the_runner_asks_claude_code_for_partial_messages():
    assert "--include-partial-messages" in recording_meta("partials")["argv"]  # how it was recorded
    turn = TurnFactory(prompt="hello")

    launch = ClaudeCodeAdapter().build_launch(turn, resume_session=None, policy=closed_policy(turn))

    assert "--include-partial-messages" in launch.argv


def test_a_turn_with_partials_posts_the_same_text_as_one_without():
    def texts(scenario):
        return [e.text for e in parse_recording(scenario) if e.kind in (EventKind.TEXT, EventKind.TOOL_CALL)]

    assert texts("partials") == texts("tool_call")


def test_partials_move_the_activity_line_once_a_block():
    activity = [e.text for e in parse_recording("partials") if e.kind == EventKind.ACTIVITY]

    assert activity == ["writing…", "calling Read…", "writing…"]


# --- errors and ends ----------------------------------------------------------------------


def test_an_api_failure_is_an_error_not_the_agent_speaking():
    events = parse_recording("model_error")

    error = only(events, EventKind.ERROR)

    assert EventKind.TEXT not in kinds(events)
    assert error.text.startswith("API Error: 500")


def test_an_api_failure_ends_the_turn_as_an_error_named_by_its_terminal_reason():
    result_line = recorded_lines("model_error")[-1]
    assert (result_line["subtype"], result_line["is_error"]) == ("success", True)  # as printed

    end = only(parse_recording("model_error"), EventKind.TURN_END)

    assert end.is_error is True
    assert end.subtype == "api_error"
    assert "API Error: 500" in end.text
    assert recording_meta("model_error")["returncode"] == 1


def test_a_retry_moves_the_activity_line():
    activity = [e.text for e in parse_recording("model_overloaded") if e.kind == EventKind.ACTIVITY]

    assert activity == ["API error 529, retrying (1 of 1)…"]


def test_a_prompt_too_long_is_named_as_such():
    end = only(parse_recording("model_invalid_request"), EventKind.TURN_END)

    assert end.subtype == "prompt_too_long"
    assert "Prompt is too long" in end.text


def test_the_budget_cap_ends_the_turn_with_its_subtype_error_and_cost():
    result_line = recorded_lines("max_budget")[-1]

    end = only(parse_recording("max_budget"), EventKind.TURN_END)

    assert end.subtype == "error_max_budget_usd"
    assert end.is_error is True
    assert end.text == "Reached maximum budget ($0.01)"
    assert end.cost_usd == Decimal(str(result_line["total_cost_usd"])).quantize(MICRO) > Decimal("0.01")


def test_permission_denials_are_carried_to_the_turn_end():
    workspace = recording_meta("permission_denied")["workspace"]

    end = only(parse_recording("permission_denied"), EventKind.TURN_END)

    assert [d["tool_name"] for d in end.permission_denials] == ["Write"]
    assert end.permission_denials[0]["tool_input"]["file_path"] == f"{workspace}/written.txt"


def test_a_denied_call_comes_back_as_an_error_result():
    result = only(parse_recording("permission_denied"), EventKind.TOOL_RESULT)

    assert result.is_error is True
    assert result.tool_name == "Write"


def test_a_tool_outside_the_allowlist_is_refused_with_an_error_result():
    assert recording_meta("tool_not_offered")["requests"][0]["tools"] == [
        "Glob",
        "Grep",
        "DeferredToolPlaceholder",
        "Read",
    ]

    result = only(parse_recording("tool_not_offered"), EventKind.TOOL_RESULT)

    assert result.is_error is True
    assert "No such tool available: Bash" in result.text


def test_a_resumed_turn_keeps_its_session_id():
    first, second = recording_meta("resume")["sessions"]

    init = only(parse_recording("resume", session_id=first), EventKind.INIT)

    assert init.session_id == first == second


def test_an_unknown_line_type_is_unknown_not_fatal():
    parser = ClaudeCodeParser("s1")

    (event,) = parser.feed({"type": "hologram", "session_id": "s1", "shape": "cube"})

    assert event.kind == EventKind.UNKNOWN
    assert event.raw == {"type": "hologram", "session_id": "s1", "shape": "cube"}


# --- the transcript -----------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["tool_call", "two_blocks", "permission_denied", "model_error"])
def test_transcript_lines_carry_the_same_uuids_and_message_ids(scenario):
    """DESIGN: "Transcript line uuids and message.ids equal those in stream-json" (for
    assistant and user lines; init, system and result lines are not in the transcript)."""
    transcript = {line["uuid"]: line for line in transcript_lines(scenario) if line.get("uuid")}
    streamed = [line for line in recorded_lines(scenario) if line["type"] in ("assistant", "user")]

    assert streamed
    for line in streamed:
        assert line["uuid"] in transcript
        assert transcript[line["uuid"]]["message"].get("id") == line["message"].get("id")


# --- through the write path ---------------------------------------------------------------


@pytest.fixture
def magent_turn(db):
    motion = MotionFactory(slug="readme-question")
    agent = AgentFactory(name="magent")
    return TurnFactory(motion=motion, agent=agent, prompt="What does the README say?")


def write_recording(turn, scenario):
    writer = EventWriter(
        IngestContext(motion=turn.motion, agent=turn.agent, harness="claude-code", source="runner", turn=turn)
    )
    for event in parse_recording(scenario):
        writer.write(event)


def test_the_recorded_tool_turn_lands_as_four_messages(magent_turn):
    write_recording(magent_turn, "tool_call")

    messages = list(Message.objects.filter(motion=magent_turn.motion).order_by("created_at"))

    assert [m.kind for m in messages] == [
        Kind.TEXT,
        Kind.TOOL_CALL,
        Kind.TOOL_RESULT,
        Kind.TEXT,
        Kind.TURN_END,
    ]
    assert messages[1].text.startswith("Read ")
    assert messages[-1].cost_usd == Decimal(str(recorded_lines("tool_call")[-1]["total_cost_usd"]))


def test_writing_the_recorded_turn_twice_makes_each_message_once(magent_turn):
    write_recording(magent_turn, "tool_call")
    write_recording(magent_turn, "tool_call")

    assert Message.objects.filter(motion=magent_turn.motion).count() == 5


def test_an_unknown_line_is_kept_in_the_turns_raw_log_and_posts_nothing(magent_turn):
    writer = EventWriter(
        IngestContext(
            motion=magent_turn.motion,
            agent=magent_turn.agent,
            harness="claude-code",
            source="runner",
            turn=magent_turn,
        )
    )

    for event in ClaudeCodeParser("s1").feed({"type": "hologram", "shape": "cube"}):
        writer.write(event)

    magent_turn.refresh_from_db()
    assert magent_turn.raw_log == [{"type": "hologram", "shape": "cube"}]
    assert not Message.objects.filter(motion=magent_turn.motion).exists()


def test_the_turn_end_message_says_how_many_calls_were_denied(magent_turn):
    write_recording(magent_turn, "permission_denied")

    end = Message.objects.get(motion=magent_turn.motion, kind=Kind.TURN_END)

    assert "1 call(s) denied" in end.text
