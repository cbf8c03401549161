"""Shadow mode under the memory_lane binding, and `manage.py shadow_report` (issue 40 item 6;
docs/switch-over.md, "Shadow for a day").

In a subprocess with the host project's settings, against its own database
(tests/host/shadow_check.py): a mention on memory-lane's page with WAKES_SHADOW on launches
nothing and is recorded; the poller's turns are read from memory-lane's own turn-result rows.
"""

from __future__ import annotations

import pytest

from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    return host_check("_shadow", "tests.host.shadow_check")


def test_a_mention_on_memory_lanes_page_in_shadow_is_recorded_and_launches_nothing(seen):
    """And an agent still in POLLER_AGENTS is left to the poller: nothing recorded for it."""
    assert (seen["turns"], seen["spends"]) == (0, 0)
    assert seen["decisions"] == [["lobby", "magent", "mention", "mentioned by justin"]]  # codey: fenced


def test_the_report_lays_each_moods_decisions_beside_the_pollers_turns(seen):
    lines = seen["report"]
    lobby = lines[lines.index("== lobby") + 1 : lines.index("== lobby") + 4]
    assert [line.strip().split(" ", 2)[2] for line in lobby[:2]] == [
        "shadow: would wake @magent (mentioned by justin)",
        f"poller: woke @magent at {lobby[1].split()[1]} ($0.12)",  # its session's first row
    ]
    assert lobby[2] == "  agreed 1 · shadow only 0 · poller only 0"


def test_a_wake_only_the_poller_made_is_counted_as_a_difference(seen):
    lines = seen["report"]
    kitchen = lines[lines.index("== kitchen") + 1 :]
    assert "poller: woke @magent" in kitchen[0]
    assert kitchen[1] == "  agreed 0 · shadow only 0 · poller only 1"
    assert lines[-1].startswith("Summary: 2 Mood(s) · agreed 1 · shadow only 0")
    assert "poller only 1" in lines[-1]


def test_one_motion_is_reported_alone(seen):
    assert [line for line in seen["lobby"] if line.startswith("==")] == ["== lobby"]


def test_the_report_reads_memory_lanes_tables_in_a_fixed_number_of_statements(seen):
    assert seen["report_queries"] == seen["report_queries_with_one_more_turn"] == 6
