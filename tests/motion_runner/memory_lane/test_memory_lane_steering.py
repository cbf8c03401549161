"""memory-lane's own page in command under the binding (issue 32, item 3; docs/memory-lane.md).

In a subprocess with the host project's settings (tests/host/, the README's block: the
memory_lane binding), against its own PostgreSQL database: memory-lane's settings rows and its AZ5
are written as its page and admin write them, and tests/host/steering_check.py reads what wakes
here on the next tick; the apps' scram and menus are read back as memory-lane's page reads them
(tests/host/conversations/page.py `scram`, `held_in`).
"""

from __future__ import annotations

import pytest

from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    """migrate, then tests/host/steering_check.py, run once for the module."""
    return host_check("_steering", "tests.host.steering_check")


def test_memory_lanes_mentions_only_stops_the_next_ticks_consideration_in_that_mood(seen):
    hushed = seen["mentions_only"]
    assert (hushed["listening"], hushed["porch_listening"]) == ("mentions", "on")
    assert hushed["considered"] == ["porch:magent"]  # the lobby's post is not considered


def test_a_mention_still_wakes_under_memory_lanes_mentions_only(seen):
    assert seen["mentions_only"]["mention"] == "woken"


def test_who_set_memory_lanes_row_and_when_is_shown_here_and_said_in_the_thread(seen):
    assert seen["mentions_only"]["set_by"].startswith("justin, ")
    assert seen["mentions_only"]["said_in_thread"] == [
        "justin (on memory-lane's page) set every agent's listening here to mentions only"
    ]


def test_the_motion_lists_chips_read_memory_lanes_rows(seen):
    assert list(seen["mentions_only"]["hushes"].values()) == ["mentions"]


def test_memory_lanes_az5_raises_the_scram_here_and_nothing_wakes(seen):
    az5 = seen["az5"]
    assert az5["raised"] == ["justin (AZ5 on memory-lane's page)", "runaway agents"]
    # Nothing wakes; a mention made meanwhile is kept for the lift (issue 39.4), as memory-lane keeps it.
    assert az5["tick"] == [] and az5["mention"] == "held"


def test_lifting_memory_lanes_az5_lifts_the_scram_here_without_echoing_rows(seen):
    assert seen["az5"]["lifted"] is True
    assert seen["az5"]["scram_rows"] == 2  # its raise and its lift, nothing written back


def test_this_projects_scram_shows_on_memory_lanes_page_as_its_own_az5(seen):
    shown = seen["scram_here"]
    assert (shown["page_raised"]["by"], shown["page_raised"]["note"]) == ("ops", "deploy went wrong")
    assert shown["page_lifted"] is None


def test_a_change_in_the_menus_here_is_memory_lanes_row_and_no_other(seen):
    menus = seen["menus"]
    assert menus["status"] == 201
    assert menus["host_row"] == [{"mode": "off", "until": None}, "justin"]
    assert menus["steer_rows"] == 0 and menus["menus_listening"] == "off"
    assert menus["menus_changes"][0] == "justin set @magent's listening here to off"


def test_a_widening_change_from_the_menus_still_needs_a_granter(seen):
    assert (seen["menus"]["widening_by_password"], seen["menus"]["model_rows"]) == (403, 0)


def test_a_hold_here_shows_on_memory_lanes_page_and_its_listening_on_wakes_it(seen):
    assert seen["hold"] == {"mention": "held", "page": ["magent"], "after_on": "woken"}


def test_a_widening_row_on_memory_lanes_side_counts_only_when_a_granter_set_it(seen):
    assert seen["trust"] == {"by_visitor": "", "by_justin": "sonnet", "chatty_by_visitor": ""}


def test_memory_lanes_most_specific_row_wins_whatever_its_age(seen):
    assert seen["precedence"] == "terse"  # (Mood, agent) "brief" over the newer Mood-wide "thorough"


def test_a_row_for_every_mood_counts_where_nothing_more_specific_is_set_and_is_said_nowhere(seen):
    # porch's discretion: visitor's "chatty" did not count (widening), so the global row stands there too
    assert seen["every_mood"] == {"lobby": "reserved", "porch": "reserved", "lines_said": 0}


def test_memory_lanes_ultracode_row_counts_only_when_a_granter_set_it(seen):
    assert (seen["ultracode"]["by_visitor"], seen["ultracode"]["by_justin"]) == ("", "on")


def test_memory_lanes_ultracode_row_is_said_in_the_thread(seen):
    assert "justin (on memory-lane's page) set @magent's ultracode here to on" in seen["ultracode"]["said"]


def test_the_menus_ultracode_is_memory_lanes_row_and_no_steer_row(seen):
    ultra = seen["ultracode"]
    assert (ultra["menus_status"], ultra["menus_row"]) == (201, [True, "justin", "magent"])
    assert (ultra["lobby"], ultra["steer_rows"]) == ("on", 0)


def test_memory_lanes_timing_rows_are_the_dials_here_by_its_slot_order(seen):
    # consider_after 40 (Mood), idle_after 600 s = 200 looks of 3 s (Mood, agent), considers_per_hour 2
    # (Mood): visitor's 30 for the pair widens and is not a granter's, so the Mood's 2 stands.
    assert seen["timing"]["resolved"] == [40.0, 200, 2]


def test_another_moods_timing_is_untouched(seen):
    assert seen["timing"]["porch"] == [10.0, 6]


def test_the_timing_api_reads_memory_lanes_rows(seen):
    shown = seen["timing"]["api_read"]
    assert shown["quiet_seconds"] == {"value": 40.0, "own": True}
    assert shown["considerations_per_hour"] == {"value": 2, "own": True}
    assert shown["idle_looks"]["own"] is False  # the Motion's own: only the pair's row is set


def test_the_timing_api_writes_memory_lanes_row_and_no_override(seen):
    written = seen["timing"]["api_write"]
    assert (written["status"], written["row"]) == (201, [25, "justin", None])
    assert (written["resolved"], written["overrides"]) == (25.0, 0)


def test_unprompted_looks_are_written_as_memory_lanes_seconds(seen):
    assert seen["timing"]["api_write"]["idle_after_row"] == [201, 300]  # 100 looks of 3 seconds


def test_a_timing_memory_lane_could_not_keep_or_a_password_sign_in_is_refused_and_nothing_written(seen):
    assert seen["timing"]["refused"] == {
        "fraction": 400,
        "past_its_bounds": 400,
        "by_password": 403,
        "rows": 4,
    }


def test_memory_lanes_consider_usd_per_day_is_the_daily_budget_here_both_ways(seen):
    budget = seen["timing"]["global"]
    assert budget["read"] == ["4.50"]
    assert (budget["status"], budget["row"], budget["api"]) == (201, [12.25, "justin", None, None], "12.25")
    assert budget["dials_untouched"] == "10.00"


def test_a_timing_row_on_memory_lanes_page_is_said_in_the_thread_and_looked_at_again_now(seen):
    assert seen["timing"]["said"] == [
        "justin (on memory-lane's page) set this Motion's debounce here to 40 seconds"
    ]
    assert seen["timing"]["looked_again"] is True


def test_a_timing_row_that_does_not_count_is_said_as_not_applied_never_as_done(seen):
    (line,) = seen["timing"]["said_of_visitors_row"]
    assert line.startswith("Not applied: visitor (on memory-lane's page) set @magent's")
    assert "visitor holds no SSH key here" in line


def test_a_timing_set_back_to_the_default_writes_memory_lanes_default(seen):
    assert seen["timing"]["back_to_default"] == [201, 6, None]
