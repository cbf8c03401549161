"""motion_runner/sql/motion_sessions.py: the claim with the newest turn end, in one statement,
claims and reads what the ORM reference path (`orm_claim_and_read`, beside it) does."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from motion_runner.models import Kind, MotionSession
from motion_runner.sql import motion_sessions
from tests.factories import AgentFactory, MessageFactory, MotionFactory

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the fast paths are PostgreSQL's"),
    pytest.mark.django_db,
]

SESSION = "5f0c2b8e-8a44-4c33-9a62-2f1b3c4d5e61"


def both(**asked) -> tuple[tuple, tuple, object]:
    fast = motion_sessions.pg_claim_and_read(connection, end_kind=Kind.TURN_END, **asked)
    fast_used = (
        MotionSession.objects.filter(pk=asked["session_id"]).values_list("last_used_at", flat=True).first()
    )
    orm = motion_sessions.orm_claim_and_read(
        connection, end_kind=Kind.TURN_END, **{**asked, "now": asked["now"] + timedelta(seconds=1)}
    )
    orm_used = (
        MotionSession.objects.filter(pk=asked["session_id"]).values_list("last_used_at", flat=True).first()
    )
    return fast, orm, (fast_used, orm_used)


@pytest.mark.parametrize("owner", ["scribe", "no one", "rival", "elsewhere"])
def test_the_claim_and_the_read_are_the_orms(owner):
    harbor, other = MotionFactory(slug="harbor"), MotionFactory(slug="other")
    scribe, rival = AgentFactory(name="scribe"), AgentFactory(name="rival")
    agent = {"scribe": scribe, "no one": None, "rival": rival, "elsewhere": scribe}[owner]
    motion = other if owner == "elsewhere" else harbor
    MotionSession.objects.create(session_id=SESSION, motion=motion, agent=agent)
    for minutes, total in ((3, 0.5), (1, 1.25)):
        MessageFactory(
            motion=harbor,
            session_id=SESSION,
            kind=Kind.TURN_END,
            raw={"type": "result", "total_cost_usd": total},
            created_at=timezone.now() - timedelta(minutes=minutes),
        )
    now = timezone.now()
    fast, orm, (fast_used, orm_used) = both(
        session_id=SESSION, motion_id="harbor", agent_id=scribe.pk, now=now
    )
    assert fast == orm
    assert fast[1] == [{"type": "result", "total_cost_usd": 1.25}]
    claimed = owner in ("scribe", "no one")
    assert fast[0] is claimed
    assert (fast_used == now, orm_used == now + timedelta(seconds=1)) == (claimed, claimed)


def test_a_session_without_turn_ends_reads_none_both_ways():
    scribe = AgentFactory(name="scribe")
    fast, orm, _ = both(
        session_id=SESSION, motion_id=MotionFactory().pk, agent_id=scribe.pk, now=timezone.now()
    )
    assert fast == orm == (False, [])
