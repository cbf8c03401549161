"""memory-lane's own retract under the binding (issue 40 item 1; docs/memory-lane.md).

In a subprocess with the host project's settings (tests/host/, the README's block: the
memory_lane binding), against its own PostgreSQL database: a post deleted or edited as memory-lane's
`services/retract.py` does it (a queryset update of the row, no `post_save`, then a `MessageChange`
row: tests/host/conversations/retract.py), and tests/host/retract_check.py reads what the apps
still say: the post is in no later wake, record search or read.
"""

from __future__ import annotations

import pytest

from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    """migrate, then tests/host/retract_check.py, run once for the module."""
    return host_check("_retract", "tests.host.retract_check")


def test_before_the_delete_the_words_are_here_to_be_taken(seen):
    before = seen["before"]
    assert before["copy"] == "the door code is 4471, come in"
    assert before["prompt_has_it"] and len(before["search"]) == 1


def test_memory_lanes_delete_takes_the_apps_copy_back(seen):
    deleted = seen["deleted"]
    assert deleted["host_row"] == "[deleted]"
    assert deleted["copy"] == "[deleted]"
    assert deleted["taken_back"] == ["deleted", "justin", ["magent"]]


def test_the_next_wake_reads_the_post_as_it_now_stands(seen):
    deleted = seen["deleted"]
    assert not deleted["next_wake_has_it"] and deleted["next_wake_reads"]


def test_the_record_servers_search_and_read_no_longer_have_it(seen):
    deleted = seen["deleted"]
    assert deleted["search"] == []
    assert deleted["read"] == ["[deleted]"] and not deleted["read_motion_has_it"]


def test_the_stored_prompt_and_its_echo_in_memory_lanes_record_lose_it(seen):
    deleted = seen["deleted"]
    assert not deleted["stored_prompt_has_it"] and not deleted["echo_has_it"]
    assert deleted["anywhere_here"] == 0


def test_the_agents_note_of_it_loses_the_code_here_and_in_memory_lanes_record(seen):
    deleted = seen["deleted"]
    assert deleted["note"] == "Justin's door code: [deleted] (front door)"
    assert "4471" not in str(deleted["note_in_host"])


def test_memory_lanes_edit_is_what_the_next_wake_reads(seen):
    edited = seen["edited"]
    assert edited["copy"] == "meet at the gate"
    assert edited["next_wake_has_new"] and not edited["next_wake_has_old"]
    assert edited["search_old"] == []


def test_a_change_no_receiver_heard_is_taken_back_by_the_beats_sweep_once(seen):
    swept = seen["swept"]
    assert swept["before_sweep"] == "the wifi password is hunter2x"
    assert (swept["applied"], swept["after_sweep"], swept["again"]) == (1, "[deleted]", 0)


def test_taken_back_here_is_taken_back_in_memory_lanes_row_with_its_change(seen):
    here = seen["from_here"]
    assert here["status"] == 200 and here["copy"] == "[deleted]"
    assert here["host_row"] == "[deleted]" and here["host_change"] == ["deleted", "justin"]
