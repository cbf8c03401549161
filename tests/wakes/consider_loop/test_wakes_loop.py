"""The consider loop, driven by a controllable clock: bursts, typing, pauses, long quiets, rest."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta

import pytest

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.wakes_support import clock, dials, finish, loop, room, say
from wakes.consider_loop.loop import tick
from wakes.models import Consideration, ListenState, TypingPing
from wakes.models.listening import WakeKind

pytestmark = pytest.mark.django_db


def ping(room, who, clock):
    TypingPing.objects.update_or_create(motion=room.motion, who=who.username, defaults={"at": clock.now()})


def test_a_burst_is_one_consideration_ten_seconds_after_its_last_post(room, clock, loop):
    for text in ("shall we ship the merch page?", "the shirts are in", "@nobody thoughts?"):
        say(room.motion, room.justin, text, clock)
        assert loop.run(4) == []
    assert loop.run(3) == []  # 7 s after the last post: still the burst
    [consideration] = loop.run(6)
    assert consideration.kind == WakeKind.NEW_POSTS
    assert consideration.turn.reason == "new_posts"
    assert (
        "the shirts are in" in consideration.turn.prompt and "@nobody thoughts?" in consideration.turn.prompt
    )
    assert loop.run(60) == []  # nothing new: nothing more


def test_nobody_is_interrupted_while_typing(room, clock, loop):
    say(room.motion, room.justin, "one thing first", clock)
    for _ in range(8):  # Justin keeps typing for ~24 s
        ping(room, room.justin, clock)
        assert loop.run(3) == []
    considered = loop.run(20)
    assert len(considered) == 1
    # not before the last ping expired and the quiet passed
    assert considered[0].created_at >= clock.now() - timedelta(seconds=20)


def test_a_person_pausing_mid_thought_gets_one_consideration_for_the_whole_thought(room, clock, loop):
    say(room.motion, room.justin, "so I was thinking about the", clock)
    assert loop.run(6) == []
    for _ in range(6):  # a pause longer than the quiet, but Justin is still composing
        ping(room, room.justin, clock)
        assert loop.run(3) == []
    say(room.motion, room.justin, "…tour dates: Portland or Seattle?", clock)
    [consideration] = loop.run(15)
    assert "so I was thinking" in consideration.turn.prompt
    assert "Portland or Seattle" in consideration.turn.prompt


def test_the_agents_own_words_are_not_new_posts_for_it(room, clock, loop):
    say(room.motion, room.magent, "I pushed the fix", clock)
    assert loop.run(30) == []


def test_another_agents_silence_is_no_new_post_and_wakes_nobody(room, clock, loop):
    """Two agents, a room nobody speaks in: one agent's `<silent>` reply is written as its text
    and becomes a dot only when its turn ends, after it moved the other's clock. Tried as a user:
    the two woke each other with "0 new posts" every ~15 s until the hourly cap."""
    room.codey.listening = True
    room.codey.save(update_fields=["listening"])
    room.motion.agents.add(room.codey)
    silence = say(room.motion, room.magent, "<silent>nothing to add</silent>", clock)
    Message.objects.filter(pk=silence.pk).update(kind=Kind.DOT)  # as the turn's end makes it
    considered = loop.run(60)
    assert Turn.objects.count() == 0
    assert [c.status for c in considered] == [Consideration.Status.SILENT]  # looked, nothing to read


def test_new_posts_during_a_running_turn_wait_for_it_to_end(room, clock, loop):
    say(room.motion, room.justin, "@nobody is the build green?", clock)
    [first] = loop.run(12)
    Turn.objects.filter(pk=first.turn.pk).update(status=TurnStatus.RUNNING)
    say(room.motion, room.rosemary, "asking too", clock)
    assert loop.run(60) == []
    finish(first.turn, said="green since 10:02")
    [second] = loop.run(3)
    assert "asking too" in second.turn.prompt
    assert "► [rosemary" in second.turn.prompt  # new to it: posted while it worked
    assert "► [justin" not in second.turn.prompt  # already considered: lead-in, unmarked


def test_a_wake_whose_worker_was_lost_frees_the_pair_once_its_time_passes(room, clock, loop, settings):
    settings.RUNNER_TURN_TIMEOUT_SECONDS = 60
    say(room.motion, room.justin, "hello?", clock)
    [first] = loop.run(12)
    Turn.objects.filter(pk=first.turn.pk).update(status=TurnStatus.FAILED)  # no finish hook came
    say(room.motion, room.justin, "anyone?", clock)
    assert loop.run(300) == []  # in flight until 60 s + 300 s after the claim
    assert len(loop.run(120)) == 1


def test_two_ticks_at_the_same_moment_claim_once(room, clock):
    say(room.motion, room.justin, "ping", clock)
    clock.advance(11)
    assert len(tick(dispatch=False)) == 1
    assert tick(dispatch=False) == []
    assert Consideration.objects.count() == 1


def test_a_long_quiet_considers_once_and_says_how_long_it_has_been(room, clock, loop):
    say(room.motion, room.justin, "back after lunch", clock)
    [burst] = loop.run(12)
    finish(burst.turn, said="enjoy")
    assert loop.run(49 * 60, step=30) == []
    [quiet] = loop.run(3 * 60, step=30)
    assert quiet.kind == WakeKind.QUIET
    assert "50 min" in quiet.turn.prompt
    wake_line = Message.objects.get(turn=quiet.turn, kind=Kind.WAKE)
    assert "a long quiet: nothing said for 50 min" in wake_line.text


def test_idle_backoff_goes_50_100_200_then_rests(room, clock, loop):
    dials(quiet_seconds=10)
    say(room.motion, room.justin, "signing off for the night", clock)
    person_at = clock.now()
    [burst] = loop.run(12)
    finish(burst.turn, said="<silent>good night</silent>")
    moments = []
    while clock.now() < person_at + timedelta(hours=13):
        for quiet in loop.run(60, step=60):
            moments.append(quiet.created_at)
            finish(quiet.turn, said="<silent>still quiet</silent>")
    gaps = [round((b - a).total_seconds() / 60) for a, b in zip(moments, moments[1:], strict=False)]
    assert [round(g / 50) for g in gaps] == [2, 4]  # 100 then 200 minutes
    assert len(moments) == 3  # 50 + 100 + 200 + 400 would pass 12 h: it rests instead
    state = ListenState.objects.get(motion=room.motion, agent=room.magent)
    assert state.rested and state.due_at is None
    assert Message.objects.filter(kind=Kind.WAKE, text__contains="rests here").count() == 1
    assert loop.run(24 * 3600, step=600) == []


def test_a_person_coming_back_wakes_the_rested_motion_and_resets_the_backoff(room, clock, loop):
    say(room.motion, room.justin, "bye", clock)
    [burst] = loop.run(12)
    finish(burst.turn, said="<silent>bye</silent>")
    for _ in range(14 * 60):
        for quiet in loop.run(60, step=60):
            finish(quiet.turn, said="<silent>quiet</silent>")
    state = ListenState.objects.get(motion=room.motion, agent=room.magent)
    assert state.rested and state.idle_level > 0
    say(room.motion, room.rosemary, "morning! who is around?", clock)
    [hello] = loop.run(12)
    assert hello.kind == WakeKind.NEW_POSTS
    finish(hello.turn, said="I am")
    state.refresh_from_db()
    assert not state.rested and state.idle_level == 0
    assert loop.run(49 * 60, step=60) == []
    [quiet] = loop.run(3 * 60, step=60)
    assert quiet.kind == WakeKind.QUIET  # 50 min again, not 400


def test_a_long_quiet_that_ends_in_words_does_not_double_the_wait(room, clock, loop):
    say(room.motion, room.justin, "later", clock)
    [burst] = loop.run(12)
    finish(burst.turn, said="<silent>ok</silent>")
    [quiet] = loop.run(52 * 60, step=60)
    finish(quiet.turn, said="While it is quiet: the deploy script still needs review.")
    state = ListenState.objects.get(motion=room.motion, agent=room.magent)
    assert state.idle_level == 0


def test_an_agent_that_stops_listening_is_not_considered(room, clock, loop):
    say(room.motion, room.justin, "anyone?", clock)
    room.magent.listening = False
    room.magent.save()
    assert loop.run(60) == []
    assert ListenState.objects.get().due_at is None


def test_an_agent_removed_from_the_motion_is_not_considered(room, clock, loop):
    say(room.motion, room.justin, "anyone?", clock)
    room.motion.agents.remove(room.magent)
    assert loop.run(60) == []


def test_a_refused_command_wakes_no_consideration_either(room, clock, loop):
    """`@magent /usage` from someone who may not grant is told who may, and that is all: the post
    was a command for magent, not a post for its loop to spend a consideration on."""
    say(room.motion, room.rosemary, "@magent /usage", clock)

    assert loop.run(60) == []
    assert Message.objects.filter(kind=Kind.WAKE, text__contains="commands are for people who may").exists()


def test_a_wiki_sign_ins_command_wakes_no_consideration_either(room, clock, loop):
    """The wiki tier's @ wakes nobody, and `@magent /usage` is still the whole post: no
    consideration of it either (the command is parsed whatever the mention's gates say)."""
    post = MessageFactory(
        motion=room.motion,
        sender="rosemary",
        author=room.rosemary,
        sign_in="wiki",
        text="@magent /usage",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=post)

    assert loop.run(60) == []


def test_a_command_said_in_a_burst_is_no_new_post_of_its_consideration(room, clock, loop):
    """Tried as a user: `@magent /usage` posted while the room's quiet was running was counted
    among the next consideration's new posts, its prompt opening "demo mentioned you", though a
    command is the whole post and no post for any agent's loop (it stays in the record read)."""
    say(room.motion, room.justin, "shall we ship the merch page?", clock)
    say(room.motion, room.rosemary, "@magent /usage", clock)

    [consideration] = loop.run(30)

    assert consideration.turn.reason_detail.startswith("1 new post ")
    assert "rosemary mentioned you" not in consideration.turn.prompt
