"""The agent keys' table with the URL's Motion: a keyed request's three reads in one statement.

Why by hand: every agent request to a Motion's URL reads its key (or, for memory-lane's runner
keys, its agent by name), that agent, the Motion and whether the agent is one of its agents;
the ORM needs two statements and compiles an `Exists` and a `select_related` join each time, a
share of every re-post's CPU (bench/repost.py, bench/README.md). `pg_read_with_motion` is one
statement, its SQL made once, the rows built by each model's own `from_db`; `orm_read_with_motion`
beside it is the ORM reference path; `read_with_motion` picks one (`fast_paths`), and
tests/equivalence/test_agent_key_read.py compares the two.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, OuterRef

from ..models import Agent, AgentKey, Motion
from . import fast_paths

Read = tuple[AgentKey | None, Agent | None, Motion | None, bool]
NOTHING: Read = (None, None, None, False)


def read_with_motion(
    connection: BaseDatabaseWrapper, slug: str, *, prefix: str | None, agent_name: str | None
) -> Read:
    """(the key by `prefix`, or None; its agent, or the agent named `agent_name`; the Motion
    `slug`, or None; whether that agent is one of its agents), or all None when no such key or
    agent exists."""
    read = pg_read_with_motion if fast_paths(connection) else orm_read_with_motion
    return read(connection, slug, prefix=prefix, agent_name=agent_name)


def orm_read_with_motion(
    connection: BaseDatabaseWrapper, slug: str, *, prefix: str | None, agent_name: str | None
) -> Read:
    """The reference path, in two statements: the key with its agent and whether that agent is
    one of the Motion's agents, then the Motion."""
    through = Motion.agents.through.objects.using(connection.alias).filter(motion_id=slug)
    if prefix is not None:
        member = Exists(through.filter(agent_id=OuterRef("agent_id")))
        keys = AgentKey.objects.using(connection.alias).select_related("agent")
        key = keys.annotate(member=member).filter(prefix=prefix).first()
        agent, is_member = (key.agent, key.member) if key is not None else (None, False)
    else:
        key = None
        member = Exists(through.filter(agent_id=OuterRef("pk")))
        agent = Agent.objects.using(connection.alias).annotate(member=member).filter(name=agent_name).first()
        is_member = agent.member if agent is not None else False
    if agent is None:
        return NOTHING
    motion = Motion.objects.using(connection.alias).filter(slug=slug).first()
    return key, agent, motion, bool(is_member)


def pg_read_with_motion(
    connection: BaseDatabaseWrapper, slug: str, *, prefix: str | None, agent_name: str | None
) -> Read:
    """`read_with_motion` in one statement."""
    by_key = prefix is not None
    with connection.cursor() as cursor:
        cursor.execute(read_sql(connection.alias, by_key), [slug, prefix if by_key else agent_name])
        row = cursor.fetchone()
    if row is None:
        return NOTHING
    at = 0
    key = None
    if by_key:
        key = build(connection, AgentKey, row[: len(KEY)])
        at = len(KEY)
    agent = build(connection, Agent, row[at : at + len(AGENT)])
    at += len(AGENT)
    motion_row = row[at : at + len(MOTION)]
    motion = None if motion_row[0] is None else build(connection, Motion, motion_row)
    if key is not None:
        key.agent = agent
    return key, agent, motion, bool(row[-1])


def names(model) -> list[str]:
    return [field.attname for field in model._meta.concrete_fields]


KEY, AGENT, MOTION = names(AgentKey), names(Agent), names(Motion)


def build(connection: BaseDatabaseWrapper, model, values: tuple[Any, ...]):
    """An instance as a queryset builds it: each field's `from_db_value` (a JSONField's text
    parsed), then `Model.from_db`."""
    converted = [
        field.from_db_value(value, None, connection) if hasattr(field, "from_db_value") else value
        for field, value in zip(model._meta.concrete_fields, values, strict=True)
    ]
    return model.from_db(connection.alias, names(model), converted)


@functools.cache
def read_sql(alias: str, by_key: bool) -> str:
    connection = connections[alias]
    quote = connection.ops.quote_name
    through = Motion.agents.through._meta

    def columns(model, table: str) -> str:
        return ", ".join(f"{table}.{quote(field.column)}" for field in model._meta.concrete_fields)

    def column(model, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    slug, agent_pk = column(Motion, "slug"), quote(Agent._meta.pk.column)
    member = (
        f"EXISTS (SELECT 1 FROM {quote(through.db_table)} ma"
        f" WHERE ma.{quote(through.get_field('motion').column)} = m.{slug}"
        f" AND ma.{quote(through.get_field('agent').column)} = a.{agent_pk})"
    )
    motion = f"LEFT OUTER JOIN {quote(Motion._meta.db_table)} m ON m.{slug} = %s"
    agents = quote(Agent._meta.db_table)
    selected = f"{columns(Agent, 'a')}, {columns(Motion, 'm')}, {member}"
    if by_key:
        return (
            f"SELECT {columns(AgentKey, 'k')}, {selected} FROM {quote(AgentKey._meta.db_table)} k"
            f" INNER JOIN {agents} a ON a.{agent_pk} = k.{column(AgentKey, 'agent')} {motion}"
            f" WHERE k.{column(AgentKey, 'prefix')} = %s"
        )
    return f"SELECT {selected} FROM {agents} a {motion} WHERE a.{column(Agent, 'name')} = %s"
