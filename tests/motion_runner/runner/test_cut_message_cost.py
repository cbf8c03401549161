"""An API message cut off between its assistant line and its `message_delta` (its worker killed,
its harness stopped): the API billed all the output the model made, but the stream never said
how much. It is charged the larger of the reported figure and an estimate from what it did
stream (its text and tool input, 2 UTF-8 bytes a token: docs/money.md), and its cost says so.
Before, it was charged its message_start usage: no output at all."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal

import pytest

from motion_runner.harnesses import Event, EventKind, pricing
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Turn, TurnStatus
from motion_runner.runner.ending import cost_without_result, priced_without_result
from tests.factories import AgentFactory, MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

MODEL = "claude-opus-5-5"  # $4 in / $20 out / $0.20 cache read a million tokens
STARTED = {"input_tokens": 3000, "cache_read_input_tokens": 5000}  # the message_start snapshot
INPUT_COST = Decimal("0.013")  # 3,000 × $4 + 5,000 × $0.20 a million


@pytest.fixture
def turn() -> Turn:
    agent = AgentFactory(name="writer-bot", harness="claude-code")
    return TurnFactory(motion=MotionFactory(slug="long-answer"), agent=agent, status=TurnStatus.RUNNING)


def stored(turn: Turn, *events: Event) -> None:
    """What the runner stored of the stream (the assistant lines carry the message_start usage)."""
    writer = EventWriter(
        IngestContext(motion=turn.motion, agent=turn.agent, harness="claude-code", source="runner", turn=turn)
    )
    writer.write_many(list(events))


def said(text: str, message_id: str = "msg_cut") -> Event:
    line = {"type": "assistant", "uuid": str(uuid.uuid4())}
    line["message"] = {"id": message_id, "content": [{"type": "text", "text": text}], "usage": STARTED}
    return Event(
        EventKind.TEXT,
        uuid=line["uuid"],
        message_id=message_id,
        model=MODEL,
        text=text,
        usage=STARTED,
        raw=line,
    )


def called(name: str, tool_input: dict, message_id: str = "msg_cut") -> Event:
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": tool_input}
    line = {"type": "assistant", "uuid": str(uuid.uuid4())}
    line["message"] = {"id": message_id, "content": [block], "usage": STARTED}
    return Event(
        EventKind.TOOL_CALL,
        uuid=line["uuid"],
        message_id=message_id,
        model=MODEL,
        tool_name=name,
        tool_id="toolu_1",
        tool_input=tool_input,
        usage=STARTED,
        raw=line,
    )


def delta(output_tokens: int, message_id: str = "msg_cut") -> Event:
    return Event(
        EventKind.USAGE, message_id=message_id, model=MODEL, usage={**STARTED, "output_tokens": output_tokens}
    )


def test_a_message_cut_before_its_message_delta_is_charged_the_output_its_text_shows(turn):
    stored(turn, said("a" * 4000))  # 4,000 bytes: 2,000 tokens at 2 bytes a token

    cost, source = cost_without_result(turn)

    assert cost == INPUT_COST + Decimal("0.04")  # + 2,000 × $20 a million
    assert "estimated" in source


def test_a_cut_messages_tool_input_counts_as_output_it_streamed(turn):
    tool_input = {"file_path": "/notes.md", "content": "é" * 500}  # 2 bytes a character
    stored(turn, said("Writing it down."), called("Write", tool_input))

    cost, _ = cost_without_result(turn)

    streamed = "Writing it down." + "Write" + json.dumps(tool_input, ensure_ascii=False)
    tokens = -(-len(streamed.encode()) // 2)
    assert cost == pricing.anthropic_cost(MODEL, {**STARTED, "output_tokens": tokens})
    assert tokens > 500  # every byte of its input counted, not its characters


def test_a_message_whose_message_delta_arrived_is_charged_what_it_reported_not_an_estimate(turn):
    stored(turn, said("a" * 4000), delta(10))

    cost, source = cost_without_result(turn)

    assert cost == pricing.anthropic_cost(MODEL, {**STARTED, "output_tokens": 10})
    assert "estimated" not in source


def test_a_stopped_runs_message_without_its_delta_is_estimated_and_one_with_it_is_not(turn):
    """The live runner's figures (TurnRun.streamed: message_start for the cut message, the whole
    usage for the finished one) and which messages' deltas it heard."""
    stored(turn, said("a" * 4000, "msg_cut"), said("b" * 4000, "msg_whole"), delta(10, "msg_whole"))
    streamed = {
        "msg_cut": INPUT_COST,
        "msg_whole": pricing.anthropic_cost(MODEL, {**STARTED, "output_tokens": 10}),
    }

    priced = priced_without_result(turn, streamed=streamed, finished={"msg_whole"})

    assert priced.cost == INPUT_COST + Decimal("0.04") + streamed["msg_whole"]
    assert priced.usage["output_tokens"] == 2010
    assert priced.usage["output_tokens_estimated"] == 2000  # the estimated part, said where usage is kept


def test_a_cut_message_is_priced_once_however_many_lines_it_stored(turn):
    stored(turn, said("a" * 2000), said("b" * 2000))  # two blocks of one API message

    cost, _ = cost_without_result(turn)

    assert cost == INPUT_COST + Decimal("0.04")  # the input once; 2,000 tokens of output for both
