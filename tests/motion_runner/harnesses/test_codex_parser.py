"""The Codex adapter reads what the real `codex exec --json` (0.171) printed: every line here
was recorded by bin/record-harness against the fake OpenAI API."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from motion_runner.harnesses import get_adapter, pricing
from motion_runner.harnesses.base import EventKind
from motion_runner.harnesses.codex import CodexParser
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Kind, Message
from tests.factories import AgentFactory, MotionFactory
from tests.recordings_util import kinds, posted, recorded_lines, replay


def parser(turn_key: str = "turn1", model: str = "gpt-5.5", baseline=None) -> CodexParser:
    return CodexParser(turn_key=turn_key, model=model, baseline=baseline)


def thread_id(scenario: str) -> str:
    return recorded_lines("codex", scenario)[0]["thread_id"]


def test_the_thread_id_starts_the_session():
    events = replay(parser(), "codex", "text")
    assert events[0].kind == EventKind.INIT
    assert events[0].session_id == thread_id("text")


def test_a_text_reply_is_one_text_and_a_turn_end():
    events = replay(parser(), "codex", "text")
    assert kinds(events) == [EventKind.TEXT, EventKind.TURN_END]
    assert posted(events)[0].text == "Hello from the fake model."


def test_a_shell_command_is_a_tool_call_then_its_result_then_the_reply():
    events = posted(replay(parser(), "codex", "tool"))
    assert [e.kind for e in events] == [
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TEXT,
        EventKind.TURN_END,
    ]
    call, result, text, _ = events
    assert call.tool_name == "shell"
    assert "cat notes.txt" in call.tool_input["command"]
    assert result.tool_id == call.tool_id
    assert result.text == "The launch code is 4417.\n"
    assert not result.is_error
    assert "4417" in text.text


def test_cost_is_priced_from_usage_for_the_model():
    end = posted(replay(parser(model="gpt-5.5"), "codex", "tool"))[-1]
    # Two model calls of 1,200 input (200 cached) and 50 output: 2,000 uncached at $5,
    # 400 cached at $0.50, 100 output at $30 per million.
    assert end.usage["input_tokens"] == 2000
    assert end.usage["cache_read_input_tokens"] == 400
    assert end.usage["output_tokens"] == 100
    assert end.cost_usd == Decimal("0.013200")
    assert not end.is_error


def test_an_unknown_model_costs_none_and_the_turn_end_says_why():
    end = posted(replay(parser(model="gpt-imaginary"), "codex", "text"))[-1]
    assert end.cost_usd is None
    assert "no price for model gpt-imaginary" in end.text


@pytest.mark.django_db
def test_the_turn_end_message_shows_the_unknown_price():
    motion = MotionFactory()
    agent = AgentFactory(name="codey", harness="codex")
    writer = EventWriter(IngestContext(motion=motion, agent=agent, harness="codex", source="runner"))
    for event in replay(parser(model="gpt-imaginary"), "codex", "text"):
        writer.write(event)
    end = Message.objects.get(motion=motion, kind=Kind.TURN_END)
    assert (
        end.text
        == "done · cost unknown · no price for model gpt-imaginary in motion_runner/harnesses/pricing.py"
    )


def test_a_resumed_run_is_charged_only_its_own_tokens():
    """turn.completed carries the thread's running total: the resumed run subtracts the
    total at the end of the thread's previous turn."""
    first_total = recorded_lines("codex", "resume.first")[-1]["usage"]
    end = posted(replay(parser(baseline=first_total), "codex", "resume"))[-1]
    # The second run's only model call: 1,500 input of which 1,000 cached, 80 output.
    assert end.usage["input_tokens"] == 500
    assert end.usage["cache_read_input_tokens"] == 1000
    assert end.usage["output_tokens"] == 80
    assert end.cost_usd == Decimal("0.005400")


def test_a_resumed_run_keeps_the_thread_id():
    assert thread_id("resume") == thread_id("resume.first")


def test_replayed_lines_map_to_the_same_ids():
    first = [e.uuid for e in posted(replay(parser("turn7"), "codex", "tool"))]
    again = [e.uuid for e in posted(replay(parser("turn7"), "codex", "tool"))]
    assert all(first)
    assert len(set(first)) == len(first)
    assert first == again


def test_runs_of_one_thread_never_share_ids_although_codex_reuses_item_ids():
    first = posted(replay(parser("turn1"), "codex", "resume.first"))
    second = posted(replay(parser("turn2"), "codex", "resume"))
    assert first[0].raw["item"]["id"] == second[0].raw["item"]["id"] == "item_0"
    assert not {e.uuid for e in first} & {e.uuid for e in second}


def test_a_model_error_ends_the_turn_as_an_error():
    events = replay(parser(), "codex", "error")
    assert kinds(events) == [EventKind.TURN_END]
    end = posted(events)[0]
    assert end.is_error
    assert end.subtype == "turn_failed"
    assert end.text == "The model `nope` does not exist."


def test_retry_noise_only_moves_the_activity_line():
    events = replay(parser(), "codex", "failed")
    noise = [e for e in events if e.kind == EventKind.ACTIVITY and "Reconnecting" in e.text]
    assert noise
    assert kinds(events) == [EventKind.TURN_END]
    assert posted(events)[0].is_error
    assert "The server had an error processing your request." in posted(events)[0].text


def test_a_run_cut_off_while_retrying_says_what_codex_last_complained_about():
    events = replay(parser(), "codex", "unreachable")
    assert kinds(events) == [EventKind.ERROR]
    assert "its last error: Reconnecting" in posted(events)[0].text


def test_a_line_it_does_not_know_is_kept_not_fatal():
    events = parser().feed({"type": "thread.renamed", "name": "x"})
    assert [e.kind for e in events] == [EventKind.UNKNOWN]
    assert events[0].raw == {"type": "thread.renamed", "name": "x"}


def test_the_registry_knows_codex():
    assert get_adapter("codex").harness == "codex"


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-5.5", Decimal("5.00")),
        ("openai/gpt-5.5", Decimal("5.00")),
        ("gpt-5.4-mini-2026-03-17", Decimal("0.75")),
        ("GPT-5.3-Codex", Decimal("1.75")),
    ],
)
def test_prices_are_found_by_model_name(model, expected):
    assert pricing.price_for(model).input == expected


def test_a_model_without_a_price_has_no_cost():
    assert pricing.openai_cost("llama-9", input_tokens=1, cached_input_tokens=0, output_tokens=1) is None


def test_a_file_change_is_an_apply_patch_call_and_its_result():
    events = posted(replay(parser(), "codex", "patch"))
    assert [e.kind for e in events] == [
        EventKind.TOOL_CALL,
        EventKind.TOOL_RESULT,
        EventKind.TEXT,
        EventKind.TURN_END,
    ]
    call, result = events[:2]
    assert call.tool_name == "apply_patch"
    assert call.tool_input["changes"][0]["kind"] == "add"
    assert result.tool_id == call.tool_id
    assert result.text.startswith("add ") and result.text.endswith("/answer.txt")
    assert not result.is_error


def test_reasoning_is_not_posted():
    events = replay(parser(), "codex", "patch")
    assert any(e.kind == EventKind.ACTIVITY and e.text == "thinking…" for e in events)
    assert "Add the file." not in [e.text for e in posted(events)]


def test_writes_refused_by_the_read_only_sandbox_leave_no_line_to_show():
    """Codex tells the model "patch rejected: writing is blocked by read-only sandbox" but
    prints no item for a refused patch or a write the sandbox blocked: the thread shows the
    agent's words about it and nothing else (a gap in Codex's stream, not in the parser)."""
    assert [line["type"] for line in recorded_lines("codex", "denied")] == [
        "thread.started",
        "turn.started",
        "item.completed",
        "turn.completed",
    ]
    assert kinds(replay(parser(), "codex", "denied")) == [EventKind.TEXT, EventKind.TURN_END]


def test_a_model_missing_from_codexs_catalog_is_a_visible_warning_and_an_unpriced_turn():
    events = posted(replay(parser(model="my-local-model"), "codex", "unknown-model"))
    assert [e.kind for e in events] == [EventKind.ERROR, EventKind.TEXT, EventKind.TURN_END]
    assert "Model metadata for `my-local-model` not found" in events[0].text
    assert events[-1].cost_usd is None
    assert not events[-1].is_error


def test_codex_exec_json_prints_the_reply_whole_so_nothing_is_shown_as_typed():
    # Recorded against the fake OpenAI API, which streams the reply word by word
    # (`response.output_text.delta`, tests/fakes/openai_api.py): Codex 0.171.0's `exec --json`
    # prints only the finished `agent_message` item, so its replies reach the page whole.
    lines = recorded_lines("codex", "text")
    assert not any("delta" in json.dumps(line) for line in lines)
    events = replay(CodexParser(), "codex", "text")

    assert EventKind.PARTIAL not in {e.kind for e in events}
    assert [e.text for e in posted(events) if e.kind == EventKind.TEXT] == ["Hello from the fake model."]
