"""motion_runner/sql/agent_keys.py: the keyed request's one read (`pg_read_with_motion`) gives what
the ORM reference path beside it (`orm_read_with_motion`) gives: the key, its agent, the Motion and the membership,
field for field, for a key or an agent's name, a member or not, a Motion or none."""

from __future__ import annotations

import pytest
from django.db import connection

from motion_runner.api.auth import create_key
from motion_runner.sql import agent_keys
from tests.factories import AgentFactory, MotionFactory

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the fast paths are PostgreSQL's"),
    pytest.mark.django_db,
]


def fields(obj) -> dict | None:
    if obj is None:
        return None
    return {field.attname: getattr(obj, field.attname) for field in type(obj)._meta.concrete_fields}


@pytest.mark.parametrize("slug", ["harbor", "elsewhere", "nowhere"])
@pytest.mark.parametrize("by_key", [True, False])
def test_the_one_read_reads_what_the_orm_reads(slug, by_key):
    scribe = AgentFactory(name="scribe", env={"A": "1"})
    MotionFactory(slug="harbor").agents.add(scribe)
    MotionFactory(slug="elsewhere")
    record, _ = create_key(scribe)
    asked = (
        {"prefix": record.prefix, "agent_name": None} if by_key else {"prefix": None, "agent_name": "scribe"}
    )
    key, agent, motion, member = agent_keys.pg_read_with_motion(connection, slug, **asked)
    orm_key, orm_agent, orm_motion, orm_member = agent_keys.orm_read_with_motion(connection, slug, **asked)
    assert fields(key) == fields(orm_key)
    assert fields(agent) == fields(orm_agent) and agent.env == {"A": "1"}
    assert fields(motion) == fields(orm_motion)
    assert member == orm_member == (slug == "harbor")
    assert key is None or key.agent is agent


def test_no_such_key_reads_nothing():
    for read in (agent_keys.pg_read_with_motion, agent_keys.orm_read_with_motion):
        assert read(connection, "harbor", prefix="nope", agent_name=None) == (None, None, None, False)
