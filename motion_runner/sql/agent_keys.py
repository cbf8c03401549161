"""The agent keys' table with the URL's Motion: a keyed request's three reads in one statement.

Why by hand: every agent request to a Motion's URL reads its key (or, for memory-lane's runner
keys, its agent by name), that agent, the Motion and whether the agent is one of its agents;
the ORM needs two statements and compiles an `Exists` and a `select_related` join each time, a
share of every re-post's CPU (bench/repost.py, bench/README.md). Here it is one statement, its
SQL made once, the rows built by each model's own `from_db`. The ORM reference path is
motion_runner/api/auth.py's `orm_read_with_motion`; tests/equivalence/test_agent_key_read.py
compares the two.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from ..models import Agent, AgentKey, Motion


def read_with_motion(
    connection: BaseDatabaseWrapper, slug: str, *, prefix: str | None, agent_name: str | None
) -> tuple[AgentKey | None, Agent | None, Motion | None, bool]:
    """(the key by `prefix`, or None; its agent, or the agent named `agent_name`; the Motion
    `slug`, or None; whether that agent is one of its agents), or all None when no such key or
    agent exists."""
    by_key = prefix is not None
    with connection.cursor() as cursor:
        cursor.execute(read_sql(connection.alias, by_key), [slug, prefix if by_key else agent_name])
        row = cursor.fetchone()
    if row is None:
        return None, None, None, False
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

    member = (
        f"EXISTS (SELECT 1 FROM {quote(through.db_table)} ma"
        f" WHERE ma.{quote(through.get_field('motion').column)} = m.{quote('slug')}"
        f" AND ma.{quote(through.get_field('agent').column)} = a.{quote('id')})"
    )
    motion = f"LEFT OUTER JOIN {quote(Motion._meta.db_table)} m ON m.{quote('slug')} = %s"
    agents = quote(Agent._meta.db_table)
    selected = f"{columns(Agent, 'a')}, {columns(Motion, 'm')}, {member}"
    if by_key:
        return (
            f"SELECT {columns(AgentKey, 'k')}, {selected} FROM {quote(AgentKey._meta.db_table)} k"
            f" INNER JOIN {agents} a ON a.{quote('id')} = k.{quote('agent_id')} {motion}"
            f" WHERE k.{quote('prefix')} = %s"
        )
    return f"SELECT {selected} FROM {agents} a {motion} WHERE a.{quote('name')} = %s"
