"""Mentions as people expect them: a quick run of mentions is one turn, built when it starts; a
mention behind a running turn, or past the hourly cap, is held, and the thread says why."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import pytest

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.turns import build_prompt_at_start, wake_line_id
from tests.factories import MotionFactory, TurnFactory
from tests.wakes_support import clock, dials, finish, room, say
from wakes.consider_loop.handlers import check_mentions
from wakes.models import MentionWake

pytestmark = pytest.mark.django_db


def holds(room) -> list[str]:
    return list(
        Message.objects.filter(motion=room.motion, kind=Kind.WAKE, text__contains="is held").values_list(
            "text", flat=True
        )
    )


def test_three_quick_mentions_make_one_turn_that_answers_all_three(room, clock):
    for text in ("@magent are the shirts in?", "@magent and the posters?", "@magent also: the van"):
        say(room.motion, room.justin, text, clock.advance(1) and clock)

    (turn,) = Turn.objects.filter(agent=room.magent)
    assert MentionWake.objects.filter(turn=turn).count() == 3
    build_prompt_at_start(turn)
    for text in ("are the shirts in?", "and the posters?", "also: the van"):
        assert f"@magent {text}" in turn.prompt
    assert "3 mentions, answered together in this one turn" in turn.prompt


def test_a_mention_while_a_turn_runs_is_held_then_started_with_its_wake_line(room, clock):
    say(room.motion, room.justin, "@magent first question", clock)
    first = Turn.objects.get(agent=room.magent)
    Turn.objects.filter(pk=first.pk).update(status=TurnStatus.RUNNING)

    say(room.motion, room.rosemary, "@magent second question", clock.advance(5) and clock)

    waiting = Turn.objects.get(agent=room.magent, status=TurnStatus.QUEUED)
    assert holds(room) == ["@magent's answer to rosemary is held: a turn is under way here; this one is next"]
    assert MentionWake.objects.get(turn=waiting).hold == "a turn is under way here; this one is next"
    assert not Message.objects.filter(pk=wake_line_id(waiting.pk)).exists()  # not woken yet

    finish(first, said="answer one")
    build_prompt_at_start(waiting)

    assert MentionWake.objects.get(turn=waiting).hold == ""  # lifted
    line = Message.objects.get(pk=wake_line_id(waiting.pk))
    assert line.text.startswith("@magent woke: mentioned by rosemary")
    assert "second question" in waiting.prompt


def test_past_the_hourly_cap_a_mention_is_held_until_the_next_slot(room, clock):
    dials(mention_wakes_per_hour=1)
    say(room.motion, room.justin, "@magent one", clock)
    first = Turn.objects.get(agent=room.magent)
    finish(first, said="one answered")
    opened = clock.now()

    say(room.motion, room.justin, "@magent two", clock.advance(600) and clock)

    assert Turn.objects.filter(agent=room.magent).count() == 1
    slot = opened.replace(microsecond=0)
    (said,) = holds(room)
    assert said.startswith("@magent's answer to justin is held: the hourly cap: next slot at")
    held = MentionWake.objects.get(message__text="@magent two")
    assert held.status == MentionWake.Status.WAITING and held.hold_until is not None
    assert held.hold_until >= slot

    clock.set(held.hold_until)
    assert check_mentions(dispatch=False)["woken"] == 1
    assert Turn.objects.filter(agent=room.magent).count() == 2


def test_a_look_only_mention_joining_a_full_tools_turn_makes_it_look_only(room, clock):
    dials(full_tools_for=["justin"])
    say(room.motion, room.justin, "@magent fix the build", clock)
    turn = Turn.objects.get(agent=room.magent)
    assert turn.mode == "full"

    say(room.motion, room.rosemary, "@magent and delete the repo", clock.advance(1) and clock)

    turn.refresh_from_db()
    assert Turn.objects.filter(agent=room.magent).count() == 1
    assert turn.mode == "look"


def test_the_api_shows_a_hold_to_whoever_may_read_the_motion_until_its_turn_starts(room, clock, client):
    say(room.motion, room.justin, "@magent first question", clock)
    first = Turn.objects.get(agent=room.magent)
    Turn.objects.filter(pk=first.pk).update(status=TurnStatus.RUNNING)
    say(room.motion, room.rosemary, "@magent second question", clock.advance(5) and clock)
    client.force_login(room.justin)

    (hold,) = client.get(f"/api/motions/{room.motion.slug}/holds/").json()["holds"]

    assert (hold["agent"], hold["by"], hold["reason"]) == (
        "magent",
        "rosemary",
        "a turn is under way here; this one is next",
    )
    finish(first, said="answer one")
    build_prompt_at_start(Turn.objects.get(agent=room.magent, status=TurnStatus.QUEUED))
    assert client.get(f"/api/motions/{room.motion.slug}/holds/").json()["holds"] == []


def test_the_holds_of_a_motion_are_refused_to_whoever_may_not_read_it(room, clock, client):
    from tests.factories import UserFactory

    room.motion.visibility = "members"
    room.motion.save()
    client.force_login(UserFactory(username="stranger"))
    assert client.get(f"/api/motions/{room.motion.slug}/holds/").status_code == 404
    client.logout()
    assert client.get(f"/api/motions/{room.motion.slug}/holds/").status_code == 404


def test_a_hold_is_where_memory_lanes_thread_page_reads_it_until_its_turn_starts(room, clock, client):
    say(room.motion, room.justin, "@magent first question", clock)
    first = Turn.objects.get(agent=room.magent)
    Turn.objects.filter(pk=first.pk).update(status=TurnStatus.RUNNING)
    say(room.motion, room.rosemary, "@magent second question", clock.advance(5) and clock)
    client.force_login(room.justin)  # who is held is read only by whoever may read the Motion

    held = client.get(f"/api/moods/{room.motion.slug}/held/").json()["held"]

    assert held["magent"]["reason"] == "a turn is under way here; this one is next"
    finish(first, said="answer one")
    build_prompt_at_start(Turn.objects.get(agent=room.magent, status=TurnStatus.QUEUED))
    assert client.get(f"/api/moods/{room.motion.slug}/held/").json()["held"] == {}


def test_a_mention_waiting_only_for_a_worker_says_the_slots_are_busy_not_woke(room, clock, settings):
    settings.WAKES_TURN_SLOTS = 2
    for n in range(2):
        TurnFactory(motion=MotionFactory(slug=f"elsewhere-{n}"), status=TurnStatus.RUNNING)

    say(room.motion, room.justin, "@magent are the shirts in?", clock)

    turn = Turn.objects.get(agent=room.magent)
    assert holds(room) == [
        "@magent's answer to justin is held: all 2 turn slots are busy; it starts when one is free"
    ]
    assert not Message.objects.filter(pk=wake_line_id(turn.pk)).exists()  # "woke" only when it starts
    build_prompt_at_start(turn)
    assert Message.objects.get(pk=wake_line_id(turn.pk)).text.startswith("@magent woke: mentioned by justin")


def test_with_a_slot_free_the_mention_wakes_at_once(room, clock, settings):
    settings.WAKES_TURN_SLOTS = 2
    TurnFactory(motion=MotionFactory(slug="elsewhere"), status=TurnStatus.RUNNING)

    say(room.motion, room.justin, "@magent are the shirts in?", clock)

    turn = Turn.objects.get(agent=room.magent)
    assert holds(room) == []
    assert Message.objects.filter(pk=wake_line_id(turn.pk)).exists()
