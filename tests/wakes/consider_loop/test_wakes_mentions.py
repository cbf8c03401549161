"""@mentions: memory-lane's rule, web posts wake at once, terminal posts after 10 min unanswered."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from motion_runner.models import Kind, Message, Turn
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.wakes_support import clock, dials, finish, loop, room, say
from wakes.consider_loop.handlers import check_mentions, wake_for_watch
from wakes.decision.mentions import mentioned_names
from wakes.models import MentionWake, Spend
from wakes.money.budget import spent_today

KNOWN = ["magent", "codey", "Pi.bot"]


@pytest.mark.parametrize(
    "text, names",
    [
        ("@magent can you look?", ["magent"]),
        ("hey @MAGENT and @Codey", ["magent", "codey"]),
        ("thanks @magent.", ["magent"]),
        ("@pi.bot, over to you", ["Pi.bot"]),
        ("mail me at justin@magent.org", []),
        ("see ~/src/@magent/notes.md", []),
        ("run `@magent deploy` to try", []),
        ("```\n@magent inside a fence\n```\nnothing outside", []),
        ("@someone-else is not an agent", []),
        ("@magent @magent twice", ["magent"]),
    ],
)
def test_mentions_follow_memory_lanes_rule(text, names):
    assert mentioned_names(text, KNOWN) == names


pytestmark = pytest.mark.django_db


def test_a_persons_web_mention_wakes_the_agent_at_once_at_high_effort(room, clock):
    message = say(room.motion, room.justin, "@magent what did the deploy log say?", clock)
    turn = Turn.objects.get(agent=room.magent)
    assert (turn.reason, turn.effort, turn.woken_by_id) == ("mention", "high", message.pk)
    assert (turn.mode, turn.mode_rule) == ("look", "typed by a person signed in with password")
    assert "what did the deploy log say?" in turn.prompt
    line = Message.objects.get(kind=Kind.WAKE, turn=turn)
    assert line.text.startswith("@magent woke: mentioned by justin")


def test_a_mention_is_not_considered_a_second_time_by_the_loop(room, clock, loop):
    say(room.motion, room.justin, "@magent ping", clock)
    turn = Turn.objects.get(agent=room.magent)
    finish(turn, said="pong")
    assert loop.run(60) == []
    assert Turn.objects.count() == 1


def test_the_same_mention_announced_twice_wakes_once(room, clock):
    message = say(room.motion, room.justin, "@magent hello", clock)
    message_created.send(sender=Message, message=message)
    assert Turn.objects.count() == 1


def test_a_terminal_mention_waits_ten_minutes_and_then_wakes_if_unanswered(room, clock):
    message = say(room.motion, room.justin, "@magent when you have a minute", clock, source="terminal")
    clock.advance(9 * 60 + 59)
    assert check_mentions(dispatch=False) == {"answered": 0, "woken": 0}
    clock.advance(1)
    assert check_mentions(dispatch=False) == {"answered": 0, "woken": 1}
    turn = Turn.objects.get(agent=room.magent, reason="mention")
    assert turn.woken_by_id == message.pk and turn.effort == "high"
    assert "unanswered for 10 min" in Message.objects.get(kind=Kind.WAKE, turn=turn).text
    clock.advance(60)
    assert check_mentions(dispatch=False) == {"answered": 0, "woken": 0}


def test_a_terminal_mention_answered_in_time_wakes_nobody(room, clock):
    say(room.motion, room.justin, "@magent quick one", clock, source="terminal")
    clock.advance(120)
    say(room.motion, room.magent, "on it", clock, source="terminal")
    clock.advance(600)
    assert check_mentions(dispatch=False) == {"answered": 1, "woken": 0}
    assert not Turn.objects.filter(reason="mention").exists()
    assert MentionWake.objects.get().status == MentionWake.Status.ANSWERED


def test_mentions_keep_working_when_the_consideration_budget_is_spent(room, clock):
    dials(daily_budget_usd=Decimal("1.00"))
    Spend.objects.create(
        kind="consideration",
        motion=room.motion,
        agent=room.magent,
        day=clock.now().date(),
        at=clock.now(),
        amount=Decimal("1.00"),
        settled=True,
    )
    say(room.motion, room.justin, "@magent are you there?", clock)
    turn = Turn.objects.get(reason="mention")
    finish(turn, said="yes", cost="0.80")
    assert spent_today(clock.now().date()) == Decimal("1.00")  # the mention is not counted
    mention_row = Spend.objects.get(kind="mention")
    assert (mention_row.amount, mention_row.counted, mention_row.settled) == (Decimal("0.80"), False, True)


def test_a_silent_reply_to_a_mention_is_a_dot(room, clock):
    say(room.motion, room.justin, "@magent fyi, no action needed", clock)
    turn = Turn.objects.get(reason="mention")
    finish(turn, said="<silent>noted, nothing to do</silent>")
    dot = Message.objects.get(turn=turn, source="runner")
    assert dot.kind == Kind.DOT and "noted, nothing to do" in dot.text


def test_a_post_through_the_api_wakes_the_mentioned_agent(
    room, client, django_capture_on_commit_callbacks, monkeypatch
):
    from motion_runner.runner import tasks

    sent = []
    monkeypatch.setattr(tasks.run_turn, "apply_async", lambda args, countdown: sent.append((args, countdown)))
    client.force_login(room.justin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/api/motions/{room.motion.slug}/messages/",
            {"text": "@magent hi"},
            content_type="application/json",
        )
    assert response.status_code == 201
    turn = Turn.objects.get(agent=room.magent, reason="mention")
    # Sent to a worker once the post committed, to start after a moment's gathering of mentions.
    assert sent == [((turn.pk,), 3.0)]


def test_an_old_terminal_post_imported_late_wakes_nobody(room, clock, loop):
    clock.advance(3 * 3600)
    old = MessageFactory(
        motion=room.motion,
        sender="justin",
        source="terminal",
        text="@magent from this morning",
        created_at=clock.now() - timedelta(hours=2),
    )
    message_created.send(sender=Message, message=old)
    assert not MentionWake.objects.exists()
    assert loop.run(60) == []


def test_a_watch_line_with_policy_always_wakes_and_says_so(room, clock):
    line = say(room.motion, room.justin, "✎ Talk:Merch edited by skyler: prices", clock, kind="watch")
    turn = wake_for_watch(line, room.magent, dispatch=False)
    assert (turn.reason, turn.woken_by_id) == ("watch", line.pk)
    assert "@magent woke: a watch: ✎ Talk:Merch" in Message.objects.get(kind=Kind.WAKE, turn=turn).text
    finish(turn, said="<silent>prices look right</silent>", cost="0.12")
    assert Spend.objects.get(kind="watch").amount == Decimal("0.12")


def test_a_watch_line_is_a_post_the_loop_considers(room, clock, loop):
    say(room.motion, room.justin, "✎ Talk:Merch edited by skyler: prices", clock, kind="watch")
    [c] = loop.run(12)
    assert c.kind == "new_posts" and "Talk:Merch" in c.turn.prompt
