"""A person signed in with the wiki (the lowest tier) mentions no agent awake: memory-lane skips
their mentions (`from_wiki_tier`), since mentions are unbudgeted; their post is still a post."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import pytest

from motion_runner.models import Message, Turn
from motion_runner.signals import message_created
from tests.factories import MessageFactory
from tests.wakes_support import clock, room, say
from wakes.models import MentionWake

pytestmark = pytest.mark.django_db


def post_as(room, who, sign_in: str, text: str, clock) -> Message:
    message = MessageFactory(
        motion=room.motion,
        sender=who.username,
        author=who,
        sign_in=sign_in,
        text=text,
        created_at=clock.now(),
    )
    message_created.send(sender=Message, message=message)
    return message


def test_a_wiki_sign_ins_mention_wakes_nobody(room, clock):
    post_as(room, room.rosemary, "wiki", "@magent write me a poem", clock)
    assert not Turn.objects.exists()
    assert not MentionWake.objects.exists()


def test_a_password_sign_ins_mention_wakes_the_agent(room, clock):
    post_as(room, room.rosemary, "password", "@magent write me a poem", clock)
    assert Turn.objects.filter(agent=room.magent, reason="mention").count() == 1
