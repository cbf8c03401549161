"""The thread poll's wake parts (wakes' request cards, typing pings and scram, with the typing
dial) in one statement. Every poll of a thread asks them; the ORM compiles this query's subqueries
and filtered join on every poll in more CPU than the query takes to run (bench/poll_cost.py,
bench/README.md "Issue 21, fifth round"). `pg_read` is the statement, `orm_read` beside it the ORM
reference path; `read` picks one (`fast_paths`), and tests/equivalence/test_wake_parts.py compares
the two.

The cards, pings and dial are wakes' tables, and motion_runner imports nothing of wakes (the
layers: watchlist -> wakes -> motion_runner). So wakes hands its models in (`WakeModels`, as
wakes/consider_loop/noting.py hands `ListenState` to `listen_states`), and both paths name every table and column
through them (`_meta.get_field(name).column`): a renamed field fails here at its first poll, never
as SQL that reads another column.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import NamedTuple

from django.db import connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, FilteredRelation, OuterRef, Q, Subquery

from ..models import Motion, Scram
from . import fast_paths


class WakeModels(NamedTuple):
    """wakes' models the wake parts read, with the fields named here."""

    dials: type[models.Model]  # the one row (pk 1) with `typing_ttl_seconds`
    cards: type[models.Model]  # request cards: `motion`, `status`, `decided_at`
    pings: type[models.Model]  # typing pings: `motion` (its reverse name joins), `who`, `at`


def read(
    connection: BaseDatabaseWrapper,
    wake_models: WakeModels,
    *,
    open_status: str,
    since: datetime,
    reader: str,
    motion_id: str,
) -> list[tuple]:
    """Rows of (typing ttl, any card shows, ping who, ping at, scram reason, by, at), one per ping
    of someone other than `reader` ("": nobody signed in), or one row of NULLs."""
    read_parts = pg_read if fast_paths(connection) else orm_read
    return read_parts(
        connection, wake_models, open_status=open_status, since=since, reader=reader, motion_id=motion_id
    )


def orm_read(
    connection: BaseDatabaseWrapper,
    wake_models: WakeModels,
    *,
    open_status: str,
    since: datetime,
    reader: str,
    motion_id: str,
) -> list[tuple]:
    """The reference path of `pg_read`, in the ORM."""
    dials, cards, pings = wake_models
    holding = Scram.objects.using(connection.alias).filter(holds=True)
    shows = cards._default_manager.filter(motion=OuterRef("pk")).filter(
        Q(status=open_status) | Q(decided_at__gt=since)
    )
    typing = pings._meta.get_field("motion").related_query_name()
    # Everyone's pings but the reader's own. `who <> reader` as `<` or `>`: a negated condition in
    # a FilteredRelation becomes an anti-join that drops every ping (Django's own rule for `~Q`).
    others = Q(**{f"{typing}__who__lt": reader}) | Q(**{f"{typing}__who__gt": reader}) if reader else Q()
    return list(
        Motion.objects.using(connection.alias)
        .filter(pk=motion_id)
        .annotate(
            ttl=Subquery(dials._default_manager.filter(pk=1).values("typing_ttl_seconds")[:1]),
            shows=Exists(shows),
            ping=FilteredRelation(typing, condition=others),
            scram_reason=Subquery(holding.values("reason")[:1]),
            scram_by=Subquery(holding.values("raised_by")[:1]),
            scram_at=Subquery(holding.values("raised_at")[:1]),
        )
        .values_list("ttl", "shows", "ping__who", "ping__at", "scram_reason", "scram_by", "scram_at")
    )


def pg_read(
    connection: BaseDatabaseWrapper,
    wake_models: WakeModels,
    *,
    open_status: str,
    since: datetime,
    reader: str,
    motion_id: str,
) -> list[tuple]:
    """`read` in one statement."""
    params = [open_status, since, reader, reader, motion_id]
    with connection.cursor() as cursor:
        cursor.execute(statement(connection.alias, wake_models), params)
        return cursor.fetchall()


@cache
def statement(alias: str, wake_models: WakeModels) -> str:
    quote = connections[alias].ops.quote_name

    def table(model: type[models.Model]) -> str:
        return quote(model._meta.db_table)

    def column(model: type[models.Model], name: str) -> str:
        return quote(model._meta.get_field(name).column)

    dials, cards, pings = wake_models
    slug = column(Motion, "slug")
    holding = f"FROM {table(Scram)} s WHERE s.{column(Scram, 'holds')}"
    return (
        f"SELECT (SELECT d.{column(dials, 'typing_ttl_seconds')} FROM {table(dials)} d"
        f" WHERE d.{quote(dials._meta.pk.column)} = 1),"
        f" EXISTS (SELECT 1 FROM {table(cards)} r WHERE r.{column(cards, 'motion')} = m.{slug}"
        f" AND (r.{column(cards, 'status')} = %s OR r.{column(cards, 'decided_at')} > %s)),"
        f" p.{column(pings, 'who')}, p.{column(pings, 'at')},"
        f" (SELECT s.{column(Scram, 'reason')} {holding} LIMIT 1),"
        f" (SELECT s.{column(Scram, 'raised_by')} {holding} LIMIT 1),"
        f" (SELECT s.{column(Scram, 'raised_at')} {holding} LIMIT 1)"
        f" FROM {table(Motion)} m LEFT JOIN {table(pings)} p ON p.{column(pings, 'motion')} = m.{slug}"
        f" AND (%s = '' OR p.{column(pings, 'who')} <> %s)"
        f" WHERE m.{slug} = %s"
    )
