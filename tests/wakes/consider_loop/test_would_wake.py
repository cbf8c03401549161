"""`manage.py would_wake` (issue 24): what the loop would wake now and why, without waking."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.models import Message, Scram, Turn, TurnStatus
from tests.factories import MessageFactory
from tests.wakes_support import clock, dials, loop, room, say
from wakes.consider_loop.loop import tick
from wakes.models import BudgetDay, Consideration, Dials, ListenState, MentionWake, Spend, Steer

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


# --- a post's mentions (`--post`): the mention path's own verdict, nothing written --------------


def unannounced(room, clock, text: str, **fields) -> Message:
    """A post stored but not yet handed to the mention path (as if its signal had not run)."""
    fields = {"sender": "justin", "author": room.justin, "sign_in": "password", "source": "web", **fields}
    return MessageFactory(motion=room.motion, text=text, kind="text", created_at=clock.now(), **fields)


def test_a_posts_mention_would_wake_and_nothing_is_written(room, clock):
    post = unannounced(room, clock, "@magent what did jams settle?")
    Dials.load()  # the dials row is there in any running install

    with CaptureQueriesContext(connection) as queries:
        printed = would_wake("--post", str(post.pk))

    assert "WAKE  cryptograss @magent: mentioned by justin" in printed
    writes = [q["sql"] for q in queries if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert writes == []
    assert not MentionWake.objects.exists() and not Turn.objects.exists()


def test_a_posts_mention_while_listening_is_off_says_it_would_be_held(room, clock):
    Steer.objects.create(
        motion=room.motion, agent=room.magent, setting="listening", value="off", by_name="justin"
    )
    post = unannounced(room, clock, "@magent are you there?")

    assert "no    cryptograss @magent: held (listening): hushed until its listening is back on" in would_wake(
        "--post", str(post.pk)
    )


def test_a_post_answered_already_says_so(room, clock):
    post = say(room.motion, room.justin, "@magent what did jams settle?", clock)

    assert "no    cryptograss @magent: decided already for this post (woken)" in would_wake(
        "--post", str(post.pk)
    )


def test_an_unknown_post_is_a_clear_error(room):
    with pytest.raises(CommandError, match="No post has the id 'nope'"):
        would_wake("--post", "nope")


# --- a watch line whose policy is `always` (`--post`): the watch path's own verdict ------------


def always_line(room, clock, text: str = "✎ Talk:Merch edited by skyler: prices") -> Message:
    """An `always` watch line stored but not yet handed to the watch path (as checker.py posts it)."""
    return MessageFactory(
        motion=room.motion,
        text=text,
        kind="watch",
        source="watch",
        sender="watch",
        raw={"watch": 1, "kind": "wiki", "wake": "always", "key": "k1"},
        created_at=clock.now(),
    )


def test_an_always_watch_line_would_wake_and_nothing_is_written(room, clock):
    line = always_line(room, clock)
    Dials.load()  # the dials row is there in any running install

    with CaptureQueriesContext(connection) as queries:
        printed = would_wake("--post", str(line.pk))

    assert "WAKE  cryptograss @magent: a watch: ✎ Talk:Merch edited by skyler: prices" in printed
    writes = [q["sql"] for q in queries if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert writes == []
    assert not Turn.objects.exists() and not Spend.objects.exists() and not BudgetDay.objects.exists()


def test_an_always_watch_line_past_the_daily_cap_says_it_is_refused_and_says_nothing_in_the_thread(
    room, clock
):
    dials(daily_budget_usd=Decimal("2.00"))
    Spend.objects.create(
        kind="consideration",
        motion=room.motion,
        agent=room.magent,
        day=timezone.localdate(clock.now()),
        at=clock.now(),
        amount=Decimal("2.00"),
        settled=True,
    )
    line = always_line(room, clock)

    printed = would_wake("--post", str(line.pk))

    assert (
        "no    cryptograss @magent: refused (cap): the daily budget ($2.00) is spent or reserved" in printed
    )
    assert not Message.objects.filter(kind="wake").exists()


def test_an_always_watch_line_when_the_room_set_mentions_only_says_why_not(room, clock):
    Steer.objects.create(
        motion=room.motion, agent=room.magent, setting="listening", value="mentions", by_name="justin"
    )
    line = always_line(room, clock)

    assert "no    cryptograss @magent: the room set its listening here to mentions" in would_wake(
        "--post", str(line.pk)
    )
