"""Arrivals (issue 33 item 3): a person signing in or posting after greet_gap_hours (12) away is
greeted by at most one agent, once, the wake saying why; look-only, counted like a consideration.

Personas (tests/wakes_support.py): Justin last posted in "cryptograss" yesterday evening; Rosemary
posts from the web too; @magent listens in the Motion, @codey joins it where a test says."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

import pytest
from django.test import Client

from motion_runner.models import Kind, Message, Turn
from motion_runner.runner.turns import build_prompt_at_start
from tests.wakes_support import clock, dials, room, say
from wakes.models import Greeting, Spend, Steer
from wakes.models.wake_texts import ARRIVAL_ASK

pytestmark = pytest.mark.django_db


@pytest.fixture
def away(room, clock):
    """Justin said something thirteen hours ago, and nothing since."""
    say(room.motion, room.justin, "Good night, all.", clock)
    clock.advance(hours=13)
    return room


def arrivals(room) -> list[Turn]:
    return list(Turn.objects.filter(motion=room.motion, reason="arrival"))


def test_a_person_posting_after_the_gap_is_greeted_by_one_agent(away, clock):
    say(away.motion, away.justin, "Morning! Did the posters come?", clock)

    [turn] = arrivals(away)
    assert turn.agent == away.magent and turn.mode == "look"
    assert '<motion-wake motion="cryptograss" reason="arrival">' in turn.prompt
    assert "Justin posted after 13 h away. You are the one agent asked to greet them here." in turn.prompt
    assert ARRIVAL_ASK in turn.prompt
    line = Message.objects.get(motion=away.motion, kind=Kind.WAKE, turn=turn)
    assert line.text.startswith("@magent woke: an arrival: justin posted after 13 h away")


def test_the_arrival_is_counted_like_a_consideration(away, clock):
    say(away.motion, away.justin, "Morning!", clock)

    [turn] = arrivals(away)
    [row] = Spend.objects.filter(turn=turn)
    assert row.kind == Spend.Kind.CONSIDERATION and row.counted and row.note == "arrival"


def test_someone_who_never_left_is_not_greeted(room, clock):
    say(room.motion, room.justin, "Posters?", clock)
    clock.advance(hours=2)
    say(room.motion, room.justin, "Posters!", clock)

    assert arrivals(room) == []


def test_a_first_post_ever_is_not_an_arrival(room, clock):
    say(room.motion, room.rosemary, "Hello, I'm new here.", clock)

    assert arrivals(room) == [] and not Greeting.objects.exists()


def test_a_first_sign_in_ever_is_not_an_arrival(room, clock):
    from wakes.consider_loop.arrivals import arrive

    assert arrive(room.rosemary, room.motion, Greeting.How.SIGNED_IN) is None
    assert arrivals(room) == [] and not Greeting.objects.exists()


def test_greeted_within_the_gap_they_are_not_greeted_again(away, clock):
    say(away.motion, away.justin, "Morning!", clock)
    say(away.motion, away.justin, "Anyone?", clock.advance(60) and clock)

    assert len(arrivals(away)) == 1


def test_a_greeting_from_another_device_counts(away, clock):
    say(away.motion, away.justin, "Morning!", clock)
    # Thirteen hours on he is away again; but say he was greeted an hour ago elsewhere.
    clock.advance(hours=13)
    Greeting.objects.update(at=clock.advance(hours=-1))
    clock.advance(hours=1)

    say(away.motion, away.justin, "Evening!", clock)

    assert len(arrivals(away)) == 1


def test_at_most_one_agent_greets(away, clock):
    away.codey.listening = True
    away.codey.save()
    away.motion.agents.add(away.codey)
    say(away.motion, away.codey, "I counted the posters.", clock)  # codey spoke here last

    say(away.motion, away.justin, "Morning!", clock.advance(1) and clock)

    [turn] = arrivals(away)
    assert turn.agent == away.codey
    assert Greeting.objects.count() == 1


def test_a_mentioned_agent_greets_in_its_mentions_wake_and_no_second_turn(away, clock):
    say(away.motion, away.justin, "@magent morning, did the posters come?", clock)

    assert arrivals(away) == []
    turn = Turn.objects.get(motion=away.motion, reason="mention")
    build_prompt_at_start(turn)  # as the runner does when the turn starts
    assert (
        "An arrival: justin posted after 13 h away. You are the one agent asked to greet them." in turn.prompt
    )


def test_a_reserved_agent_does_not_greet_unasked(away, clock):
    Steer.objects.create(
        motion=away.motion, agent=away.magent, setting="discretion", value="reserved", by_name="justin"
    )

    say(away.motion, away.justin, "Morning!", clock)

    assert arrivals(away) == []


def test_the_gap_is_a_dial(away, clock):
    dials(greet_gap_hours=24)
    say(away.motion, away.justin, "Morning!", clock)
    assert arrivals(away) == []


def test_a_gap_of_zero_greets_nobody(away, clock):
    dials(greet_gap_hours=0)
    say(away.motion, away.justin, "Morning!", clock)
    assert arrivals(away) == []


def test_signing_in_after_the_gap_greets_them_where_they_are_going(away, clock):
    away.justin.set_password("banjo-strings")
    away.justin.save()

    response = Client().post(
        "/sign-in/?next=/motions/cryptograss/", {"username": "justin", "password": "banjo-strings"}
    )

    assert response.status_code == 302
    [turn] = arrivals(away)
    assert "Justin signed in after 13 h away." in turn.prompt
    assert Greeting.objects.get().how == Greeting.How.SIGNED_IN


def test_signing_in_then_posting_is_one_greeting(away, clock):
    away.justin.set_password("banjo-strings")
    away.justin.save()
    Client().post("/sign-in/?next=/motions/cryptograss/", {"username": "justin", "password": "banjo-strings"})

    say(away.motion, away.justin, "Morning!", clock.advance(30) and clock)

    assert len(arrivals(away)) == 1


def test_signing_in_soon_after_posting_greets_nobody(room, clock):
    say(room.motion, room.justin, "back in a bit", clock)
    room.justin.set_password("banjo-strings")
    room.justin.save()

    Client().post("/sign-in/?next=/motions/cryptograss/", {"username": "justin", "password": "banjo-strings"})

    assert arrivals(room) == []
