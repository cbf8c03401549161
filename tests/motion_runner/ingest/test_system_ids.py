"""Issue 10, finding 7: the runner's own lines (wake lines, request cards, watch lines, cap
notices) have ids no client can compute, and a collision is an error, never a silent drop."""

from __future__ import annotations

import logging
from decimal import Decimal

import pytest

from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import stable_uuid, system_uuid
from motion_runner.models import Kind, Message, Turn
from wakes.turn.wake import wake

pytestmark = pytest.mark.django_db


def next_turn_pk() -> int:
    last = Turn.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    return last + 1


def test_an_agent_that_pre_posts_under_the_old_wake_line_id_does_not_hide_the_wake_line(
    client, scribe, rival, harbor
):
    guessed = stable_uuid("wake", next_turn_pk())  # what the id used to be: anyone could compute it
    client.post(
        "/api/motions/harbor/messages/",
        {"text": "nothing to see here", "id": guessed},
        content_type="application/json",
        **rival.headers,
    )

    wake(
        harbor,
        scribe.agent,
        prompt="hi",
        reason="mention",
        why="mentioned",
        effort="",
        cap=Decimal("1"),
        woken_by=None,
        dispatch=False,
    )

    assert Message.objects.filter(motion=harbor, kind=Kind.WAKE, text__startswith="@scribe woke").count() == 1


def test_a_system_id_depends_on_the_secret_key(settings):
    first = system_uuid("wake", 7)
    settings.SECRET_KEY = "another-secret-key-for-this-test-only-0123456789"

    assert system_uuid("wake", 7) != first
    assert first != stable_uuid("wake", 7)


def test_a_collision_is_logged_and_the_line_is_said_under_a_new_id(harbor, caplog):
    taken = system_uuid("cap", harbor.pk)
    Message.objects.create(id=taken, motion=harbor, sender="someone", source="api", kind=Kind.TEXT, text="x")

    with caplog.at_level(logging.ERROR, logger="motion_runner.ingest.writer"):
        said = post_system_message(harbor, "the daily cap is reached", message_id=taken)

    assert said is not None and str(said.id) != taken
    assert Message.objects.filter(motion=harbor, text="the daily cap is reached").count() == 1
    assert "is taken by another message" in caplog.text


def test_the_same_line_said_twice_is_said_once(harbor, caplog):
    line_id = system_uuid("cap", harbor.pk)

    post_system_message(harbor, "the daily cap is reached", message_id=line_id)
    again = post_system_message(harbor, "the daily cap is reached", message_id=line_id)

    assert again is None and Message.objects.filter(motion=harbor).count() == 1
    assert "taken" not in caplog.text
