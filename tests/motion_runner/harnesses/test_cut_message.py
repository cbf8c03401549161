"""A Claude Code API message cut off before its message_delta (docs/money.md, "A message cut
off"): the parser estimates its output from the bytes its deltas streamed, from the real CLI's
recording (tests/recordings/claude-code/partials.jsonl) cut after some of its deltas."""

from __future__ import annotations

from decimal import Decimal

from motion_runner.harnesses import EventKind, pricing
from motion_runner.harnesses.claude_code import ClaudeCodeAdapter, ClaudeCodeParser
from tests.recorded import recorded_lines

MODEL = "claude-opus-5-5"  # the recording's model: $4 in / $20 out a million tokens


def fed(count: int) -> ClaudeCodeParser:
    parser = ClaudeCodeParser()
    for line in recorded_lines("partials")[:count]:
        parser.feed(line)
    return parser


def delta_bytes(lines) -> int:
    total = 0
    for line in lines:
        delta = (line.get("event") or {}).get("delta") or {}
        for key in ("text", "thinking", "partial_json"):
            total += len((delta.get(key) or "").encode())
    return total


def test_a_message_cut_after_some_of_its_tool_input_is_estimated_from_the_bytes_it_streamed():
    lines = recorded_lines("partials")
    cut_at = 16  # through 'k/README.md"': the first message's text and most of its tool input
    streamed = delta_bytes(lines[:cut_at])
    assert streamed == len(
        b'Let me read the README first.{"file_path": "/tmp/record-partials-31k_o2t1/work/README.md"'
    )

    cut = fed(cut_at).cut_message()

    assert cut is not None and cut.kind == EventKind.USAGE
    assert cut.message_id == lines[2]["event"]["message"]["id"]
    tokens = -(-streamed // pricing.ESTIMATE_BYTES_PER_TOKEN)
    assert cut.usage["output_tokens"] == cut.usage["output_tokens_estimated"] == tokens
    assert cut.usage["input_tokens"] == 1200  # the message_start's, final
    price = ClaudeCodeAdapter().streamed_cost(cut)
    assert price == (Decimal(1200) * 4 + Decimal(tokens) * 20) / 1_000_000


def test_a_message_whose_message_delta_came_is_never_estimated():
    lines = recorded_lines("partials")
    after_first = next(
        i for i, line in enumerate(lines) if (line.get("event") or {}).get("type") == "message_delta"
    )
    assert fed(after_first + 1).cut_message() is None  # the first message's whole usage came
    assert fed(len(lines)).cut_message() is None  # and the second's


def test_a_message_cut_right_after_its_message_start_is_its_input_alone():
    lines = recorded_lines("partials")
    second_start = 24  # the second message_start, before any of its deltas
    assert lines[second_start - 1]["event"]["type"] == "message_start"

    cut = fed(second_start).cut_message()

    assert cut is not None and cut.usage["input_tokens"] == 1300
    assert cut.usage["output_tokens"] == 0
