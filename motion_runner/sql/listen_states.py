"""The consider loop's states (wakes' `ListenState`, handed in by wakes/consider_loop/noting.py): a note's one
locked read and its one write of the Motion's states.

Why by hand: every post's note writes every listening state of its Motion, and Django's
`bulk_update` compiles a `CASE WHEN pk = … THEN …` per field and row, which cost a fresh stream
post more CPU than the insert of its hundred Messages (bench/stream_web.py, bench/README.md).
Here it is one `UPDATE … FROM (VALUES …)` with typed placeholders, its SQL made once per model,
fields and row count, the values prepared by each field's own `get_db_prep_save`. The ORM
reference path is `bulk_update` itself; tests/equivalence/test_listen_state_note.py compares
the rows the two leave.

The read (`pg_read_states`): the ORM needs four statements for what a note reads (the missing
states' anti-join, the dials, the states locked, their overrides), each compiled anew, again a
large share of a fresh post's CPU; here they are one, the states (locked in pk order, for the
locked note) inside it. `update_bumped` is the note's first try: a write guarded by each state's
version, outside a transaction, its rows locked in pk order inside the statement; it saves the
locked note's BEGIN, COMMIT and lock wait on every post (bench/README.md, "the note's first try").
Its reference path is `orm_read_states` beside it, which the same equivalence test compares.

The build (`instance_from_row`, wakes' `ListenState.from_db`): the look builds every due pair each
tick, and `Model.__init__` was a third of its time at 1,000 pairs (bench/README.md, "the look");
the row goes straight into the instance's `__dict__`. Its reference path is Django's own
`Model.from_db`, taken with the fast paths off or while anyone listens to `pre_init`/`post_init`;
tests/wakes/test_listen_state_rows.py compares the two.
The states, dials and overrides are wakes' models, handed in by wakes/consider_loop/noting.py (motion_runner
imports nothing of wakes); every column is named through them.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Case, Q, Value, When
from django.db.models.base import ModelState
from django.db.models.functions import Cast
from django.db.models.signals import post_init, pre_init

from ..conf import app_settings
from ..models import Agent, Motion
from . import fast_paths


def update_fields(
    connection: BaseDatabaseWrapper, objs: Sequence[models.Model], fields: Sequence[str]
) -> None:
    """Write `fields` of each of `objs` (rows of one model, by primary key) in one statement."""
    if not objs:
        return
    model = type(objs[0])
    if not fast_paths(connection):
        model._default_manager.using(connection.alias).bulk_update(objs, fields)
        return
    with connection.cursor() as cursor:
        cursor.execute(
            update_sql(connection.alias, model, tuple(fields), len(objs)), _values(connection, objs, fields)
        )


def update_bumped(
    connection: BaseDatabaseWrapper, objs: Sequence[models.Model], fields: Sequence[str]
) -> set[Any]:
    """Write `fields` (`version` among them) of each of `objs` whose row still holds the version
    before the object's (`obj.version - 1`: nobody wrote it since it was read), outside any
    transaction; the primary keys written. The rows are locked in pk order first, as every
    writer of several states locks them. The ORM reference path is `orm_update_bumped`."""
    if not objs:
        return set()
    model = type(objs[0])
    if not fast_paths(connection):
        return orm_update_bumped(connection, objs, fields)
    params = [[obj.pk for obj in objs], *_values(connection, objs, fields)]
    with connection.cursor() as cursor:
        cursor.execute(update_sql(connection.alias, model, tuple(fields), len(objs), guarded=True), params)
        return {row[0] for row in cursor.fetchall()}


def orm_update_bumped(
    connection: BaseDatabaseWrapper, objs: Sequence[models.Model], fields: Sequence[str]
) -> set[Any]:
    """`update_bumped` in the ORM: the rows whose version is the one before the object's, locked
    in pk order, then one `update()` of them, each field a `Case` by pk."""
    model = type(objs[0])
    manager = model._default_manager.using(connection.alias)
    guard = functools.reduce(operator.or_, (Q(pk=obj.pk, version=obj.version - 1) for obj in objs))
    with transaction.atomic(using=connection.alias):
        written = set(manager.select_for_update().filter(guard).order_by("pk").values_list("pk", flat=True))
        if not written:
            return written
        by_pk = {obj.pk: obj for obj in objs if obj.pk in written}
        fields_of = {name: model._meta.get_field(name) for name in fields}
        cast = connection.features.requires_casted_case_in_updates  # as bulk_update casts it
        changes = {}
        for name, field in fields_of.items():
            case = Case(
                *(
                    When(pk=pk, then=Value(getattr(obj, name), output_field=field))
                    for pk, obj in by_pk.items()
                ),
                output_field=field,
            )
            changes[name] = Cast(case, output_field=field) if cast else case
        manager.filter(pk__in=written).update(**changes)  # locked above: their versions hold
        return written


def _values(
    connection: BaseDatabaseWrapper, objs: Sequence[models.Model], fields: Sequence[str]
) -> list[Any]:
    meta = objs[0]._meta
    columns = [meta.pk, *(meta.get_field(name) for name in fields)]
    return [
        field.get_db_prep_save(getattr(obj, field.attname), connection) for obj in objs for field in columns
    ]


def _values_list(
    connection: BaseDatabaseWrapper, model: type[models.Model], fields: tuple[str, ...], count: int
) -> tuple[str, str]:
    """`(VALUES …)` with typed placeholders for `count` rows of the pk and `fields`, and its names."""
    quote = connection.ops.quote_name
    meta = model._meta
    columns = [meta.pk, *(meta.get_field(name) for name in fields)]
    # Typed placeholders: a VALUES list of NULLs would otherwise have no type to set.
    casts = ", ".join(f"%s::{field.db_type(connection)}" for field in columns)
    return ", ".join(f"({casts})" for _ in range(count)), ", ".join(quote(field.column) for field in columns)


@functools.lru_cache(maxsize=64)  # one per model, fields, count of rows and guard
def update_sql(
    alias: str, model: type[models.Model], fields: tuple[str, ...], count: int, guarded: bool = False
) -> str:
    """`guarded`: only the rows whose version is the one before the object's, locked first in pk
    order (two notes of one Motion at once never take each other's rows in opposite orders, a
    deadlock), the ids written returned; its first parameter is the array of the rows' pks."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    meta = model._meta
    values, names = _values_list(connection, model, fields, count)
    sets = ", ".join(
        f"{quote(meta.get_field(name).column)} = v.{quote(meta.get_field(name).column)}" for name in fields
    )
    pk, table, version = quote(meta.pk.column), quote(meta.db_table), quote(meta.get_field("version").column)
    update = f"UPDATE {table} AS t SET {sets} FROM (VALUES {values}) AS v({names})"
    if not guarded:
        return f"{update} WHERE t.{pk} = v.{pk}"
    return (
        f"WITH locked AS (SELECT {pk} FROM {table} WHERE {pk} = ANY(%s::{meta.pk.db_type(connection)}[])"
        f" ORDER BY {pk} FOR UPDATE)"
        f" {update}, locked WHERE t.{pk} = v.{pk} AND locked.{pk} = t.{pk} AND t.{version} = v.{version} - 1"
        f" RETURNING t.{pk}"
    )


@dataclass
class NoteRead:
    """What a note reads, its states locked: `states` in pk order; `dials` None while no row is
    saved; `missing` the listening agents of the Motion without a state; `overridden` whether
    some override names the Motion or one of the states' agents."""

    states: list[models.Model]
    dials: models.Model | None
    missing: list[int]
    overridden: bool


def read_states(
    connection: BaseDatabaseWrapper,
    motion_id: str,
    *,
    states: type[models.Model],
    dials: type[models.Model],
    overrides: type[models.Model],
    lock: bool,
) -> NoteRead:
    """A note's read: the Motion's states in pk order, with `lock` locked (as
    `select_for_update().order_by("pk")` locks them; call it inside a transaction then), with the
    dials row, the listening agents still without a state and whether any override could apply."""
    read = pg_read_states if fast_paths(connection) else orm_read_states
    return read(connection, motion_id, states=states, dials=dials, overrides=overrides, lock=lock)


def orm_read_states(
    connection: BaseDatabaseWrapper,
    motion_id: str,
    *,
    states: type[models.Model],
    dials: type[models.Model],
    overrides: type[models.Model],
    lock: bool,
) -> NoteRead:
    """The reference path of `pg_read_states`, in the ORM (`overridden` is True: the overrides are
    then asked for)."""
    manager = states._default_manager.using(connection.alias)
    stated = manager.filter(motion_id=motion_id).values("agent_id")
    missing = (
        Motion.agents.through.objects.using(connection.alias)
        .filter(motion_id=motion_id, agent__listening=True)
        .exclude(agent_id__in=stated)
        .values_list("agent_id", flat=True)
    )
    return NoteRead(
        states=list(
            (manager.select_for_update() if lock else manager).filter(motion_id=motion_id).order_by("pk")
        ),
        dials=dials._default_manager.using(connection.alias).filter(pk=1).first(),
        missing=list(missing),
        overridden=True,
    )


def pg_read_states(
    connection: BaseDatabaseWrapper,
    motion_id: str,
    *,
    states: type[models.Model],
    dials: type[models.Model],
    overrides: type[models.Model],
    lock: bool,
) -> NoteRead:
    """`read_states` in one statement, the states locked by `FOR UPDATE` in pk order."""
    sql = read_sql(connection.alias, states, dials, overrides, lock)
    with connection.cursor() as cursor:
        cursor.execute(sql, {"motion": motion_id})
        rows = cursor.fetchall()
    state_names = [field.attname for field in states._meta.concrete_fields]
    dial_names = [field.attname for field in dials._meta.concrete_fields]
    width, first = len(state_names), rows[0]  # the LEFT JOINs from one row: there is always one
    alias = connection.alias
    read = [states.from_db(alias, state_names, row[:width]) for row in rows if row[0] is not None]
    dials_row = first[width : width + len(dial_names)]
    return NoteRead(
        states=read,
        dials=None if dials_row[0] is None else dials.from_db(alias, dial_names, dials_row),
        missing=list(first[-2]),
        overridden=bool(first[-1]),
    )


@functools.lru_cache(maxsize=8)
def read_sql(
    alias: str,
    states: type[models.Model],
    dials: type[models.Model],
    overrides: type[models.Model],
    lock: bool,
) -> str:
    connection = connections[alias]
    quote = connection.ops.quote_name
    through = Motion.agents.through
    motion_column = quote(Motion.agents.field.m2m_column_name())
    agent_column = quote(Motion.agents.field.m2m_reverse_name())
    state_table, dials_table, agents, overrides_table, members = (
        quote(model._meta.db_table) for model in (states, dials, Agent, overrides, through)
    )
    state_columns = [quote(field.column) for field in states._meta.concrete_fields]
    dial_columns = ", ".join(f"d.{quote(field.column)}" for field in dials._meta.concrete_fields)
    pk = quote(states._meta.pk.column)
    motion, agent = (quote(states._meta.get_field(name).column) for name in ("motion", "agent"))
    o_motion, o_agent = (quote(overrides._meta.get_field(name).column) for name in ("motion", "agent"))
    agent_pk, listening = quote(Agent._meta.pk.column), quote(Agent._meta.get_field("listening").column)
    dial_pk = quote(dials._meta.pk.column)
    return (
        f"WITH noted AS (SELECT {', '.join(state_columns)} FROM {state_table}"
        f" WHERE {motion} = %(motion)s ORDER BY {pk}{' FOR UPDATE' if lock else ''})"
        f" SELECT {', '.join(f'l.{column}' for column in state_columns)}, {dial_columns},"
        f" ARRAY(SELECT m.{agent_column} FROM {members} m JOIN {agents} a ON a.{agent_pk} = m.{agent_column}"
        f" WHERE m.{motion_column} = %(motion)s AND a.{listening}"
        f" AND NOT EXISTS (SELECT 1 FROM {state_table} x WHERE x.{motion} = %(motion)s AND x.{agent} = a.{agent_pk})),"
        f" EXISTS (SELECT 1 FROM {overrides_table} o WHERE o.{o_motion} = %(motion)s OR o.{o_agent} IN"
        f" (SELECT y.{agent} FROM {state_table} y WHERE y.{motion} = %(motion)s))"
        f" FROM (SELECT 1) AS one LEFT JOIN {dials_table} d ON d.{dial_pk} = 1"
        f" LEFT JOIN noted l ON true ORDER BY l.{pk}"
    )


def instance_from_row(model: type[models.Model], db: str | None, field_names, values) -> Any:
    """A loaded row as the instance `Model.__init__` would leave it (the loaded fields by attname,
    `_state` saved, on `db`); None when Django's own path should build it."""
    if not app_settings.MOTION_RUNNER_SQL_FAST_PATHS or pre_init.receivers or post_init.receivers:
        return None
    new = model.__new__(model)
    new.__dict__.update(zip(field_names, values, strict=True))
    state = new._state = ModelState()
    state.adding, state.db = False, db
    return new
