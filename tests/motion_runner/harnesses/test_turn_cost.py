"""A turn's own cost, pinned on what the real CLIs printed (bin/record-claude resume_three
resume_other_between resume_after_kill read-then-reply max_budget; bin/record-harness codex|pi
resume3): three turns reporting the same tokens cost three equal amounts, never a running total.

What each CLI reports, as recorded:
- Claude Code: `total_cost_usd` (and `modelUsage`) on the result line is the SESSION's running
  total, restored on `--resume` from the transcript's last `cost-state` line (written by every
  process as it exits, a SIGTERM'd one included); `usage` is the process's own but all zeros on
  an error end, and without a compaction's calls.
- Codex: `turn.completed` usage is the THREAD's running token total; no dollars.
- Pi: each assistant message carries its own usage and dollars; `agent_end` lists this run's.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from motion_runner.harnesses import EventKind, pricing
from motion_runner.harnesses.claude_code import ClaudeCodeParser
from motion_runner.harnesses.claude_code_files import MICRO, last_cost_state, transcript_file
from motion_runner.harnesses.codex import CodexParser
from motion_runner.harnesses.pi import PiParser
from tests.recorded import CLAUDE_RECORDINGS
from tests.recordings_util import recorded_lines

# Every turn of the money scenarios: 3,000 input, 200 output, 1,000 cache writes, 5,000 cache
# reads on claude-opus-5-5 ($4 / $20 / $5 / $0.20 a million, Claude Code's own price list).
MONEY_TURN = Decimal("0.022")


def claude_runs(name: str) -> list[list[dict]]:
    """A session scenario's stdout, split into its processes: one ends at its result line, or
    (killed, so without one) where the next one's system/init begins."""
    runs: list[list[dict]] = [[]]
    for line in (CLAUDE_RECORDINGS / f"{name}.stream.jsonl").read_text().splitlines():
        obj = json.loads(line)
        is_init = obj.get("type") == "system" and obj.get("subtype") == "init"
        if is_init and any(o.get("subtype") == "init" for o in runs[-1]):
            runs.append([])
        runs[-1].append(obj)
        if obj.get("type") == "result":
            runs.append([])
    return [run for run in runs if run]


def cost_states(name: str) -> list[Decimal]:
    """The running totals the session's transcript holds, in order: one a process."""
    path = CLAUDE_RECORDINGS / f"{name}.transcript.jsonl"
    return [
        Decimal(str(json.loads(line)["totalCostUSD"])).quantize(MICRO)
        for line in path.read_text().splitlines()
        if '"type":"cost-state"' in line
    ]


def turn_end(run: list[dict], baseline: Decimal | None) -> object:
    parser = ClaudeCodeParser(baseline_usd=baseline)
    events = [event for line in run for event in parser.feed(line)]
    ends = [e for e in events if e.kind == EventKind.TURN_END]
    return ends[-1] if ends else None


def test_claude_codes_result_line_is_the_sessions_running_total():
    totals = [Decimal(str(run[-1]["total_cost_usd"])).quantize(MICRO) for run in claude_runs("resume_three")]
    assert totals == [MONEY_TURN, 2 * MONEY_TURN, 3 * MONEY_TURN]
    assert cost_states("resume_three") == totals


def test_three_equal_claude_code_turns_cost_three_equal_amounts():
    befores = [Decimal(0), *cost_states("resume_three")[:-1]]
    ends = [turn_end(run, before) for run, before in zip(claude_runs("resume_three"), befores, strict=True)]
    assert [end.cost_usd for end in ends] == [MONEY_TURN] * 3
    assert [end.harness_total_usd for end in ends] == [MONEY_TURN, 2 * MONEY_TURN, 3 * MONEY_TURN]


def test_a_claude_code_turn_costs_its_usage_times_the_price():
    run = claude_runs("resume_three")[1]
    end = turn_end(run, MONEY_TURN)
    assert pricing.anthropic_cost("claude-opus-5-5", run[-1]["usage"]) == end.cost_usd


def test_the_running_total_belongs_to_the_session_not_the_workspace():
    a1, b1, a2 = claude_runs("resume_other_between")
    assert turn_end(b1, Decimal(0)).cost_usd == MONEY_TURN  # a new session starts from nothing
    assert (
        Decimal(str(a2[-1]["total_cost_usd"])).quantize(MICRO) == 2 * MONEY_TURN
    )  # A continues A's, not B's
    assert turn_end(a2, MONEY_TURN).cost_usd == MONEY_TURN


def test_a_killed_turn_prints_no_result_but_its_transcript_counts_it():
    first, killed, third = claude_runs("resume_after_kill")
    assert turn_end(killed, MONEY_TURN) is None
    # The SIGTERM'd process still wrote its cost-state, and the next --resume starts from it.
    assert cost_states("resume_after_kill") == [MONEY_TURN, 2 * MONEY_TURN, 3 * MONEY_TURN]
    assert turn_end(third, cost_states("resume_after_kill")[1]).cost_usd == MONEY_TURN


def test_a_compaction_costs_what_its_calls_cost_though_its_usage_says_zero():
    runs = claude_runs("read-then-reply")
    compaction = runs[2]
    assert all(v == 0 for k, v in compaction[-1]["usage"].items() if k.endswith("_tokens"))
    end = turn_end(compaction, Decimal(str(runs[1][-1]["total_cost_usd"])).quantize(MICRO))
    assert end.cost_usd == Decimal("0.00192")


def test_a_turn_that_ran_over_its_budget_costs_what_it_spent_though_its_usage_says_zero():
    run = recorded_lines("claude-code", "max_budget")
    assert all(v == 0 for k, v in run[-1]["usage"].items() if k.endswith("_tokens"))
    assert turn_end(run, Decimal(0)).cost_usd == Decimal("0.84")


def test_a_failed_turn_that_used_no_tokens_costs_nothing_even_late_in_a_session():
    run = recorded_lines("claude-code", "model_error")
    # A running total below the one before means the process restored none: its own is 0.
    assert turn_end(run, Decimal("0.2288")).cost_usd == Decimal(0)


def test_a_resumed_turn_whose_running_total_before_is_unknown_is_priced_from_its_usage():
    run = claude_runs("resume_three")[2]
    end = turn_end(run, None)
    assert end.cost_usd == MONEY_TURN
    assert end.cost_source.startswith("usage × price")


def test_the_running_total_is_read_from_the_sessions_transcript(tmp_path):
    session = claude_runs("resume_three")[0][0]["session_id"]
    folder = tmp_path / ".claude" / "projects" / "-tmp-work"
    folder.mkdir(parents=True)
    shutil.copyfile(CLAUDE_RECORDINGS / "resume_three.transcript.jsonl", folder / f"{session}.jsonl")
    path = transcript_file({"HOME": str(tmp_path)}, session)
    assert path == folder / f"{session}.jsonl"
    assert last_cost_state(path) == 3 * MONEY_TURN


def test_no_transcript_means_no_running_total(tmp_path):
    assert transcript_file({"HOME": str(tmp_path)}, "5d0d3d4c-0000-4000-8000-000000000000") is None
    assert last_cost_state(Path(tmp_path / "missing.jsonl")) is None


def runs_of(harness: str, start_type: str) -> list[list[dict]]:
    runs: list[list[dict]] = []
    for line in recorded_lines(harness, "resume3"):
        if line.get("type") == start_type:
            runs.append([])
        runs[-1].append(line)
    return runs


def test_codex_reports_the_threads_running_tokens_and_three_equal_turns_cost_the_same():
    runs = runs_of("codex", "thread.started")
    totals = [run[-1]["usage"]["input_tokens"] for run in runs]
    assert totals == [1200, 2400, 3600]
    costs, baseline = [], None
    for run in runs:
        parser = CodexParser(turn_key=f"t{len(costs)}", model="gpt-5.5", baseline=baseline)
        end = [e for line in run for e in parser.feed(line) if e.kind == EventKind.TURN_END][-1]
        costs.append(end.cost_usd)
        baseline = run[-1]["usage"]
    assert costs == [Decimal("0.006600")] * 3  # 1,000 × $5 + 200 × $0.50 + 50 × $30 a million


def test_pi_reports_each_runs_own_dollars_and_three_equal_turns_cost_the_same():
    runs = runs_of("pi", "session")
    costs = []
    for run in runs:
        parser = PiParser()
        end = [e for line in run for e in parser.feed(line) if e.kind == EventKind.TURN_END][-1]
        costs.append(end.cost_usd)
    assert costs == [Decimal("0.0025")] * 3


def test_claude_codes_assistant_lines_stream_the_opening_usage_snapshot():
    """What the spend guard can price mid-turn: input and cache tokens are final on the
    assistant line, output is a placeholder until the result line."""
    run = claude_runs("resume_three")[0]
    [assistant] = [line for line in run if line["type"] == "assistant"]
    streamed, final = assistant["message"]["usage"], run[-1]["usage"]
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    assert [streamed[k] for k in keys] == [final[k] for k in keys] == [3000, 1000, 5000]
    assert (streamed["output_tokens"], final["output_tokens"]) == (1, 200)


@pytest.mark.parametrize("scenario", ["text_reply", "tool_call", "two_blocks", "permission_denied"])
def test_the_price_table_gives_the_dollars_claude_code_itself_reported(scenario):
    result = recorded_lines("claude-code", scenario)[-1]
    [model] = result["modelUsage"]
    assert pricing.anthropic_cost(model, result["usage"]) == Decimal(str(result["total_cost_usd"])).quantize(
        MICRO
    )


def test_the_price_table_agrees_with_designs_checked_prices():
    # DESIGN.md: Haiku 4.5 in 1 / out 5 / cache write 1.25 / cache read 0.10; Opus 4.5+ 5 / 25 / 6.25 / 0.50.
    million = {"input_tokens": 10**6}
    for model, (inp, out, write, read) in {
        "claude-haiku-4-5": ("1", "5", "1.25", "0.10"),
        "claude-opus-4-5": ("5", "25", "6.25", "0.50"),
        "claude-opus-5": ("5", "25", "6.25", "0.50"),
    }.items():
        assert pricing.anthropic_cost(model, million) == Decimal(inp)
        assert pricing.anthropic_cost(model, {"output_tokens": 10**6}) == Decimal(out)
        assert pricing.anthropic_cost(model, {"cache_creation_input_tokens": 10**6}) == Decimal(write)
        assert pricing.anthropic_cost(model, {"cache_read_input_tokens": 10**6}) == Decimal(read)


def test_a_model_with_no_price_costs_none_rather_than_a_guess():
    assert pricing.anthropic_cost("claude-unknown-9", {"input_tokens": 10}) is None
