"""The sessions' table: a stream post's claim of its session with the session's newest turn end
read beside it, in one statement.

Why by hand: every stream post (a re-post above all) claims its session, a session already this
Motion's, the agent's own or no one's, with a conditional UPDATE, then reads the raw line of the
session's newest recorded turn end; in the ORM that is two statements, each compiled anew, a
share of a re-post's CPU (bench/repost.py, bench/README.md). Here the UPDATE is a data-modifying
CTE beside the read (`pg_claim_and_read`); `orm_claim_and_read` beside it is the ORM reference
path; `claim_and_read` picks one (`fast_paths`), and tests/equivalence/test_session_claim.py
compares the two.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Q

from ..models import Message, MotionSession
from . import fast_paths

Claimed = tuple[bool, list[Any]]  # whether the session was claimed, [its newest turn end's raw line] or []


def claim_and_read(
    connection: BaseDatabaseWrapper,
    *,
    session_id: str,
    motion_id: str,
    agent_id: int,
    now: datetime,
    end_kind: str,
) -> Claimed:
    """Claim the session if it is already this Motion's and the agent's own or no one's, and read
    its newest turn end."""
    claim = pg_claim_and_read if fast_paths(connection) else orm_claim_and_read
    return claim(
        connection, session_id=session_id, motion_id=motion_id, agent_id=agent_id, now=now, end_kind=end_kind
    )


def orm_claim_and_read(
    connection: BaseDatabaseWrapper,
    *,
    session_id: str,
    motion_id: str,
    agent_id: int,
    now: datetime,
    end_kind: str,
) -> Claimed:
    """The reference path, in two statements: the conditional UPDATE, then the read."""
    claimed = (
        MotionSession.objects.using(connection.alias)
        .filter(pk=session_id, motion_id=motion_id)
        .filter(Q(agent_id=agent_id) | Q(agent__isnull=True))
        .update(last_used_at=now)
    )
    ends = Message.objects.using(connection.alias).filter(session_id=session_id, kind=end_kind)
    return bool(claimed), list(ends.order_by("-created_at").values_list("raw", flat=True)[:1])


def pg_claim_and_read(
    connection: BaseDatabaseWrapper,
    *,
    session_id: str,
    motion_id: str,
    agent_id: int,
    now: datetime,
    end_kind: str,
) -> Claimed:
    """One statement: the UPDATE as a data-modifying CTE, the read beside it."""
    with connection.cursor() as cursor:
        cursor.execute(
            claim_sql(connection.alias), [now, session_id, motion_id, agent_id, session_id, end_kind]
        )
        claimed, newest = cursor.fetchone()
    raw = Message._meta.get_field("raw")
    return bool(claimed), [] if newest is None else [raw.from_db_value(newest, None, connection)]


@functools.cache
def claim_sql(alias: str) -> str:
    quote = connections[alias].ops.quote_name
    sessions, messages = (quote(model._meta.db_table) for model in (MotionSession, Message))
    return (
        f"WITH claimed AS (UPDATE {sessions} SET {quote('last_used_at')} = %s"
        f" WHERE {quote('session_id')} = %s AND {quote('motion_id')} = %s"
        f" AND ({quote('agent_id')} = %s OR {quote('agent_id')} IS NULL) RETURNING 1)"
        f" SELECT EXISTS (SELECT 1 FROM claimed),"
        f" (SELECT {quote('raw')} FROM {messages} WHERE {quote('session_id')} = %s AND {quote('kind')} = %s"
        f" ORDER BY {quote('created_at')} DESC LIMIT 1)"
    )
