"""motion_runner/sql/wake_parts.py: the thread poll's wake parts in one statement (`pg_read`) read
what the ORM reference path beside it (`orm_read`) reads, for a reader and for nobody signed in."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from motion_runner.models import Scram
from motion_runner.sql import wake_parts
from tests.factories import AgentFactory, MessageFactory, MotionFactory
from wakes.models import Dials, TypingPing, WakeRequest
from wakes.web.api import RECENTLY_ANSWERED
from wakes.web.views import WAKE_PART_MODELS

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the fast paths are PostgreSQL's"),
    pytest.mark.django_db,
]


def both(motion, reader):
    since = timezone.now() - RECENTLY_ANSWERED
    asked = {
        "open_status": WakeRequest.Status.OPEN.value,
        "since": since,
        "reader": reader or "",
        "motion_id": motion.pk,
    }
    fast = wake_parts.pg_read(connection, WAKE_PART_MODELS, **asked)
    orm = wake_parts.orm_read(connection, WAKE_PART_MODELS, **asked)
    return sorted(fast, key=repr), sorted(orm, key=repr)


@pytest.mark.parametrize("reader", ["maria", None])
def test_a_quiet_thread_reads_alike(reader):
    harbor = MotionFactory(slug="harbor")
    fast, orm = both(harbor, reader)
    assert fast == orm and len(fast) == 1


@pytest.mark.parametrize("reader", ["maria", "justin", None])
def test_pings_cards_a_scram_and_the_dial_read_alike(reader):
    harbor, other = MotionFactory(slug="harbor"), MotionFactory(slug="other")
    Dials.objects.update_or_create(pk=1, defaults={"typing_ttl_seconds": 9})
    now = timezone.now()
    for who in ("maria", "carol"):
        TypingPing.objects.create(motion=harbor, who=who, at=now - timedelta(seconds=2))
    TypingPing.objects.create(motion=other, who="justin", at=now)
    card = MessageFactory(motion=harbor, kind="request", tool_name="tools", text="a fix")
    WakeRequest.objects.create(
        motion=harbor, agent=AgentFactory(name="magent"), message=card, kind="tools", to="a fix"
    )
    Scram.objects.create(reason="a runaway", raised_by="justin")

    fast, orm = both(harbor, reader)

    assert fast == orm
    assert {row[2] for row in fast} == {"maria", "carol"} - {reader}
    assert all(row[0] == 9 and row[1] is True and row[4] == "a runaway" for row in fast)
