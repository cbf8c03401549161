"""A post's note without locks: what `loop.note_post` reads and writes, in two statements.

Every batch holding a post is noted (the loop's clocks of each listening pair move), so a fresh
stream post paid for the note as much as for its own insert: the states' ensure, the dials'
get_or_create, BEGIN, the states' `SELECT … FOR UPDATE`, the overrides, an UPDATE per state and
COMMIT, each compiled by the ORM (bench/stream_web.py).

Here, on PostgreSQL, one statement reads the Motion's states with everything the note needs beside
them (the dials row, the listening agents still without a state, whether any override could
apply), and one statement writes every state back, each only if its `version` is still the one
read (`UPDATE … FROM (VALUES …) WHERE version = v RETURNING id`). That is the claim rule the loop
already lives by: every write to a state bumps its version, so a state written between the read
and the write is simply not matched, and the note takes it again under lock (`loop.note_post`).
Nothing is held between the two statements, and outside a caller's transaction the write commits
on its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.db import connections, router

from motion_runner.lib.rows import Columns
from motion_runner.models import Agent, Motion

from .models import DialOverride, Dials, ListenState

# What the note changes on a state (loop.advance_clocks); `version` is bumped beside them.
NOTED_FIELDS = (
    "last_said_at",
    "last_post_at",
    "considered_through",
    "last_person_at",
    "idle_level",
    "rested",
    "due_at",
)

STATES = Columns(ListenState, "s")
DIALS = Columns(Dials, "d")


@dataclass
class NoteRead:
    states: list[ListenState]  # the Motion's states, in pk order
    dials: Dials | None  # None: no dials row yet (Dials.load creates it)
    missing: list[int]  # listening agents of the Motion without a state
    overridden: bool  # some override names this Motion or one of the states' agents


def unlocked_notes(alias: str) -> bool:
    """The two-statement note runs where VALUES lists, arrays and RETURNING are PostgreSQL's."""
    return connections[alias].vendor == "postgresql"


@functools.cache
def read_sql(alias: str) -> str:
    connection = connections[alias]
    quote = connection.ops.quote_name
    members = Motion.agents.through
    motion_column = quote(Motion.agents.field.m2m_column_name())
    agent_column = quote(Motion.agents.field.m2m_reverse_name())
    states, dials, agents, overrides, memberships = (
        quote(model._meta.db_table) for model in (ListenState, Dials, Agent, DialOverride, members)
    )
    return (
        f"SELECT {STATES.sql(connection)}, {DIALS.sql(connection)},"
        f" ARRAY(SELECT m.{agent_column} FROM {memberships} m JOIN {agents} a ON a.{quote('id')} = m.{agent_column}"
        f" WHERE m.{motion_column} = %(motion)s AND a.{quote('listening')}"
        f" AND NOT EXISTS (SELECT 1 FROM {states} x WHERE x.{quote('motion_id')} = %(motion)s"
        f" AND x.{quote('agent_id')} = a.{quote('id')})),"
        f" EXISTS (SELECT 1 FROM {overrides} o WHERE o.{quote('motion_id')} = %(motion)s OR o.{quote('agent_id')} IN"
        f" (SELECT y.{quote('agent_id')} FROM {states} y WHERE y.{quote('motion_id')} = %(motion)s))"
        f" FROM (SELECT 1) AS one"
        f" LEFT JOIN {dials} d ON d.{quote('id')} = 1"
        f" LEFT JOIN {states} s ON s.{quote('motion_id')} = %(motion)s"
        f" ORDER BY s.{quote('id')}"
    )


def read_for_note(motion_id: str) -> NoteRead:
    """The Motion's states and what their note needs, in one statement, nothing locked."""
    alias = router.db_for_write(ListenState)
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(read_sql(alias), {"motion": motion_id})
        rows = cursor.fetchall()
    width = len(STATES)
    first = rows[0]  # the LEFT JOINs from one row: there is always one
    states = [state for row in rows if (state := STATES.build(connection, row[:width])) is not None]
    return NoteRead(
        states=states,
        dials=DIALS.build(connection, first[width : width + len(DIALS)]),
        missing=list(first[-2]),
        overridden=first[-1],
    )


@functools.lru_cache(maxsize=64)  # one per count of a Motion's states
def write_sql(alias: str, count: int) -> str:
    connection = connections[alias]
    quote = connection.ops.quote_name
    meta = ListenState._meta
    columns = ("id", "version", *NOTED_FIELDS)
    # Typed placeholders: a VALUES list of NULLs would otherwise have no type to compare or set.
    casts = ", ".join(f"%s::{meta.get_field(name).db_type(connection)}" for name in columns)
    values = ", ".join(f"({casts})" for _ in range(count))
    sets = ", ".join(f"{quote(name)} = v.{quote(name)}" for name in NOTED_FIELDS)
    version, pk, table = quote("version"), quote("id"), quote(meta.db_table)
    # The rows locked first, in pk order, as every writer of several states locks them: two
    # notes of one Motion at once never take each other's rows in opposite orders (a deadlock).
    return (
        f"WITH locked AS (SELECT {pk} FROM {table} WHERE {pk} = ANY(%s::bigint[]) ORDER BY {pk} FOR UPDATE)"
        f" UPDATE {table} AS s SET {sets}, {version} = v.{version} + 1"
        f" FROM (VALUES {values}) AS v({', '.join(quote(name) for name in columns)}), locked"
        f" WHERE s.{pk} = v.{pk} AND locked.{pk} = s.{pk} AND s.{version} = v.{version}"
        f" RETURNING s.{pk}"
    )


def write_noted(states: list[ListenState]) -> set[int]:
    """Write each state's noted fields unless it was written since it was read (its version
    moved); the ids written, their versions bumped on the instances too."""
    if not states:
        return set()
    alias = router.db_for_write(ListenState)
    params: list[Any] = [[state.pk for state in states]]
    for state in states:
        params += [state.pk, state.version, *(getattr(state, name) for name in NOTED_FIELDS)]
    with connections[alias].cursor() as cursor:
        cursor.execute(write_sql(alias, len(states)), params)
        written = {row[0] for row in cursor.fetchall()}
    for state in states:
        if state.pk in written:
            state.version += 1
    return written
