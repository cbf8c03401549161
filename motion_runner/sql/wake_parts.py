"""The thread poll's wake parts (wakes' request cards, typing pings and scram, with the typing
dial) in one statement. Every poll of a thread asks them; the ORM compiles this query's subqueries
and filtered join on every poll in more CPU than the query takes to run (bench/poll_cost.py,
bench/README.md "Issue 21, fifth round"). The tables are wakes', named by the caller (this package
imports no app above motion_runner). The ORM reference path is `wakes.views.orm_wake_parts`;
tests/equivalence/test_wake_parts.py compares the two.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache

from django.db.backends.base.base import BaseDatabaseWrapper


@cache
def statement(quote, dials: str, cards: str, pings: str, motions: str, scrams: str) -> str:
    q = quote
    dials, cards, pings, motions, scrams = (q(table) for table in (dials, cards, pings, motions, scrams))
    holding = f"FROM {scrams} s WHERE s.{q('holds')}"
    return (
        f"SELECT (SELECT d.{q('typing_ttl_seconds')} FROM {dials} d WHERE d.{q('id')} = 1),"
        f" EXISTS (SELECT 1 FROM {cards} r WHERE r.{q('motion_id')} = m.{q('slug')}"
        f" AND (r.{q('status')} = %s OR r.{q('decided_at')} > %s)),"
        f" p.{q('who')}, p.{q('at')},"
        f" (SELECT s.{q('reason')} {holding} LIMIT 1), (SELECT s.{q('raised_by')} {holding} LIMIT 1),"
        f" (SELECT s.{q('raised_at')} {holding} LIMIT 1)"
        f" FROM {motions} m LEFT JOIN {pings} p ON p.{q('motion_id')} = m.{q('slug')}"
        f" AND (%s = '' OR p.{q('who')} <> %s)"
        f" WHERE m.{q('slug')} = %s"
    )


def read(
    connection: BaseDatabaseWrapper,
    tables: tuple[str, str, str, str, str],
    *,
    open_status: str,
    since: datetime,
    reader: str,
    motion_id: str,
) -> list[tuple]:
    """Rows of (typing ttl, any card shows, ping who, ping at, scram reason, by, at), one per ping
    of someone other than `reader` (or one of NULLs), as the ORM reference path gives them."""
    params = [open_status, since, reader, reader, motion_id]
    with connection.cursor() as cursor:
        cursor.execute(statement(connection.ops.quote_name, *tables), params)
        return cursor.fetchall()
