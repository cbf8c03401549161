"""`manage.py would_wake` (issue 24): what the loop would wake now and why, without waking."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from motion_runner.models import Scram, Turn, TurnStatus
from tests.wakes_support import clock, loop, room, say
from wakes.consider_loop.loop import tick
from wakes.models import Consideration, ListenState, Steer

pytestmark = pytest.mark.django_db


def would_wake(*args) -> str:
    out = StringIO()
    call_command("would_wake", *args, stdout=out)
    return out.getvalue()


def test_new_posts_past_their_quiet_would_wake_and_nothing_is_claimed(room, clock):
    say(room.motion, room.justin, "shall we ship the merch page?", clock)
    clock.advance(15)
    before = ListenState.objects.values_list("version", "due_at").get()

    printed = would_wake()

    assert "WAKE  cryptograss @magent: a consideration of the new posts" in printed
    assert ListenState.objects.values_list("version", "due_at").get() == before
    assert not Consideration.objects.exists() and not Turn.objects.exists()


def test_posts_still_in_their_quiet_say_when_it_ends(room, clock):
    say(room.motion, room.justin, "one more thing", clock)
    clock.advance(4)

    assert "new posts; the quiet ends in 6 s" in would_wake("--all")


def test_mentions_only_says_why_it_would_not_look(room, clock):
    say(room.motion, room.justin, "hello", clock)
    Steer.objects.create(
        motion=room.motion, agent=room.magent, setting="listening", value="mentions", by_name="justin"
    )
    clock.advance(15)

    assert "no    cryptograss @magent: the room set its listening here to mentions" in would_wake()


def test_a_scram_says_nothing_wakes(room, clock):
    say(room.motion, room.justin, "hello", clock)
    clock.advance(15)
    Scram.objects.create(reason="maintenance", raised_by="ops")

    assert "a scram holds: nothing wakes" in would_wake()


def test_nothing_due_says_so(room, clock):
    assert would_wake() == "Nothing is due: the loop would wake nobody now.\n"


def test_a_pair_whose_turn_ended_unheard_is_told_as_the_loop_then_decides(room, clock, loop):
    """The dry run shares the loop's decision: a wake whose finish hook never came frees the pair
    in both, so neither says a long-quiet consideration is due while the quiet has not passed."""
    say(room.motion, room.justin, "shall we ship the merch page?", clock)
    [c] = loop.run(15)
    Turn.objects.filter(pk=c.turn_id).update(status=TurnStatus.FINISHED)  # its finish hook never came
    clock.advance(400)  # past the wake's in-flight bound: the pair is due again

    printed = would_wake()

    assert "no    cryptograss @magent: nothing new; a long-quiet look in" in printed
    assert tick(dispatch=False) == []
