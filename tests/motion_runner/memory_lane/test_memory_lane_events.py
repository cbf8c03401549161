"""memory-lane's events under the binding (issue 40, item 4): a handoff here is memory-lane's own
`handoff` / `handoff-sent` event in its record (its services/handoff.py `from_message`: sent by
`system`, filed `handoff`), and a sign-in on memory-lane's page (a new `Device`, its
services/mood_auth.py) is an arrival here, greeted as a sign-in once within greet_gap_hours.

In a subprocess with the host project's settings (tests/host/events_check.py), against its own
PostgreSQL database, as test_memory_lane_record.py runs its check.
"""

from __future__ import annotations

import pytest

from tests.motion_runner.memory_lane.host_support import host_check


@pytest.fixture(scope="module")
def seen():
    return host_check("_events", "tests.host.events_check")


def row(seen, kind: str) -> dict:
    [found] = [r for r in seen["handoff_rows"] if r["content"]["type"] == kind]
    return found


# --- handoffs ------------------------------------------------------------------------------------


def test_a_handoff_is_memory_lanes_handoff_event_in_the_mood_it_goes_to(seen):
    event = row(seen, "handoff")
    assert event["mood"] == "jams" and event["sender"] == "system"
    content = dict(event["content"])
    assert content.pop("message")
    assert content == {
        "type": "handoff",
        "by": "scribe",
        "for": "scribe",
        "from_mood": "harbor",
        "about": "the setlist",
        "context": "Settled: three songs.",
    }


def test_the_mood_it_left_gets_memory_lanes_handoff_sent_event(seen):
    event = row(seen, "handoff-sent")
    assert event["mood"] == "harbor" and event["sender"] == "system"
    content = dict(event["content"])
    assert content.pop("message") == row(seen, "handoff")["content"]["message"]
    assert content == {
        "type": "handoff-sent",
        "by": "scribe",
        "for": "scribe",
        "to_mood": "jams",
        "about": "the setlist",
    }


def test_memory_lanes_own_handoff_check_finds_the_events_made(seen):
    assert len(seen["handoff_rows"]) == 2
    assert seen["memory_lane_sees_it_made"] is True


def test_events_memory_lane_made_itself_are_not_written_again(seen):
    assert seen["host_made_first"] == [["jams", "handoff"], ["harbor", "handoff-sent"]]
    assert seen["apps_lines_of_second"] == 1  # the apps' own thread still has its line


# --- sign-ins ------------------------------------------------------------------------------------


def test_events_memory_lanes_hook_made_of_a_handoff_the_apps_refuse_are_withdrawn(seen):
    assert seen["refused_events_before"] == 2
    assert seen["refused_events_after"] == 0 and seen["refused_said"] == 1


def test_a_device_sign_in_after_the_gap_greets_like_a_login(seen):
    assert seen["before"] == []
    assert seen["after_justin"] == [["justin", "harbor", "scribe", "signed_in"]]
    assert ["scribe", "harbor"] in seen["arrival_turns"]


def test_a_second_device_within_the_gap_greets_no_more(seen):
    assert seen["after_second_device"] == seen["after_justin"]


def test_a_person_who_never_left_is_not_greeted_on_sign_in(seen):
    assert seen["after_ada"] == []


def test_an_agents_device_is_no_arrival(seen):
    assert seen["after_agent_device"] == []


def test_a_login_here_then_a_device_there_greets_once(seen):
    assert seen["rosa_after_login"] == [["rosa", "jams", "scribe", "signed_in"]]
    assert seen["rosa_after_device"] == seen["rosa_after_login"]
