"""A turn the wake rules queue is stamped on their clock, the one its post was written on.

CI once ran the suite at 00:20, before the tests' clock (9:00): a turn stamped by the machine's
clock looked older than the post that woke it, so taking the post back missed the turn's prompt and
an agent's reply "answered" nobody. These tests put the rules' clock hours from the machine's, both
ways, so the mismatch shows at any hour the suite runs.
"""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from motion_runner.models import Message, Turn
from motion_runner.retract import take_back
from motion_runner.runner.turns import build_prompt_at_start
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.wakes_support import clock, room, say

pytestmark = pytest.mark.django_db

CODE = "the door code is 4471, come in"

AHEAD, BEHIND = timedelta(hours=8), -timedelta(hours=8)


@pytest.mark.parametrize("offset", [AHEAD, BEHIND], ids=["clock ahead", "clock behind"])
def test_a_mention_turn_is_queued_when_its_post_was_written(room, clock, offset):
    clock.set(timezone.now() + offset)

    post = say(room.motion, room.justin, "@magent shirts?", clock)

    assert Turn.objects.get(agent=room.magent).queued_at == post.created_at


@pytest.mark.parametrize("offset", [AHEAD, BEHIND], ids=["clock ahead", "clock behind"])
def test_a_command_turn_is_queued_when_its_post_was_written(room, clock, offset):
    clock.set(timezone.now() + offset)

    post = MessageFactory(  # commands are for people who may grant full tools: signed with a key
        motion=room.motion,
        sender="justin",
        author=room.justin,
        sign_in="ssh",
        text="@magent /context",
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=post)

    assert Turn.objects.get(agent=room.magent, reason="command").queued_at == post.created_at


@pytest.mark.parametrize("offset", [AHEAD, BEHIND], ids=["clock ahead", "clock behind"])
def test_taking_back_reaches_the_turn_it_woke_whatever_the_machines_hour(room, clock, offset):
    clock.set(timezone.now() + offset)
    post = say(room.motion, room.justin, CODE, clock)
    clock.advance(1)
    say(room.motion, room.justin, "@magent what did I say a moment ago?", clock)
    turn = Turn.objects.get(agent=room.magent)
    build_prompt_at_start(turn)
    Turn.objects.filter(pk=turn.pk).update(prompt=turn.prompt)
    assert "4471" in Turn.objects.get(pk=turn.pk).prompt

    take_back(post, "justin")

    assert "4471" not in Turn.objects.get(pk=turn.pk).prompt
