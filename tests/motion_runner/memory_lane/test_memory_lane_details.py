"""The memory_lane binding's details (issue 32, item 5; docs/memory-lane.md), each against the host
test project: in a subprocess with its settings (tests/host/, the README's block), against its own
PostgreSQL database, tests/host/details_check.py posts what memory-lane's runner posts and reads
the record back as memory-lane keeps it and its page shows it (tests/host/conversations/page.py).
"""

from __future__ import annotations

import pytest

from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    """migrate, then tests/host/details_check.py, run once for the module."""
    return host_check("_details", "tests.host.details_check")


def test_a_mood_with_no_motion_takes_memory_lanes_runner_and_keeps_its_first_turn(seen):
    first = seen["first_post"]
    assert (first["status"], first["errors"], first["agents"]) == (200, [], ["magent"])
    assert first["imported"] > 0 and first["host_rows"] > 0


def test_the_runner_joining_a_motion_is_said_in_its_thread(seen):
    assert seen["first_post"]["said"] == [
        "@magent is now an agent of this Motion: memory-lane's runner posted its turn here, "
        "and the Motion had no agents yet."
    ]


def test_the_projects_own_key_and_a_second_runner_are_still_refused(seen):
    assert (seen["own_key"], seen["other_runner"]) == (403, 403)


def test_every_turn_result_row_carries_its_runs_cost(seen):
    assert seen["turn_result_costs"] == seen["result_costs"] == [0.00192, 0.00384, 0.00576]


def test_a_compaction_stays_below_the_turns_before_it_on_memory_lanes_page(seen):
    kinds = seen["timeline_kinds"]
    assert kinds[-1] == "compaction" and kinds.count("turn") == 4


def test_every_row_of_a_batch_is_in_memory_lanes_order_as_it_was_said(seen):
    # The third run: the compaction's two lines (kept by memory-lane alone), then its result.
    assert seen["order"]["stored"] == seen["order"]["said"]
    assert seen["order"]["stored"][-3:] == ["c7fe2d4d", "52db1837", "0cb1540e"]


def test_the_transcripts_fill_ins_reach_memory_lanes_copy_of_a_streamed_row(seen):
    fill = seen["fill_in"]
    assert fill["before"] == {"75654cbc": [None, None, None], "21a76d47": [None, None, None]}
    # cwd filled; the tool call's parent is the reply memory-lane has, the reply's is a line it
    # never kept (an attachment): looked for, as memory-lane's importer does.
    assert fill["after"] == {"75654cbc": [True, "", "4299206e"], "21a76d47": [True, "75654cbc", ""]}
    assert fill["index_cwd"] is True


def test_a_tool_output_cut_to_memory_lanes_limit_says_how_much_was_not_kept(seen):
    assert seen["cut"] == "line one of \n[15 more characters not kept]"  # TOOL_RESULT_CONTENT_CHARS = 12


def test_a_tool_output_within_the_limit_is_kept_whole_with_no_marker(seen):
    assert seen["short"] == "whole"
