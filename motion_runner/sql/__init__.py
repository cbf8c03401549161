"""The one place for hand-written SQL, database-vendor checks and Django internals.

Everything else in the apps speaks the ORM. What is here is here because the ORM has no form of
it (LISTEN/NOTIFY, an advisory lock, the server's start time) or because a bench measured a
target missed without it; each module is named after the table or channel it works on and says
its reason once (the figure is in bench/README.md, never in a docstring):

- `messages`: the Message table's batch insert (COPY into a stage, one `INSERT … SELECT … ON
  CONFLICT DO NOTHING RETURNING id`) and its look-up of known ids (one `uuid[]` parameter), each
  beside its ORM reference path.
- `listen_states`: a post's note of wakes' `ListenState` rows: the states (locked in pk order,
  for the locked note) in one read with what the note needs, and one `UPDATE … FROM (VALUES …)`,
  guarded by each row's version for the note's first try (the ORM paths: wakes/noting.orm_read,
  `orm_update_bumped` and `bulk_update`).
- `agent_keys`: a keyed request's key, agent, URL's Motion and membership in one statement
  (the ORM path: api/auth.orm_read_with_motion).
- `motion_sessions`: a stream post's claim of its session with the newest turn end read beside
  it (the ORM path: ingest/sessions.orm_claim_and_read).
- `wake_parts`: every thread poll's wake parts (wakes' request cards, typing pings, scram and
  typing dial) in one statement (the ORM path: wakes/views.orm_wake_parts).
- `channels`: the `motion_messages` and `turn_stop` channels (LISTEN/NOTIFY on PostgreSQL, the
  SQLite socket bell's trigger), and the listener's own connection.
- `locks`: the session lock's transaction-scoped advisory lock.
- `server`: what is asked of the database server itself (whether it answers on a connection of
  its own, how long it has been up).
- `backend`: Django's PostgreSQL backend with psycopg's C timestamp loader (the ENGINE the
  standalone settings name; a host may keep Django's own).

A fast path (hand-written where the ORM could do the same) runs only where `fast_paths()` says
so: PostgreSQL through psycopg 3, with `MOTION_RUNNER_SQL_FAST_PATHS` on (the default). Off, the
ORM reference path beside it runs everywhere, which is what a developer on SQLite runs; the two
give the same results (tests/equivalence/). Callers ask `fast_paths`, `is_postgresql` or
`is_sqlite` here, never the connection's vendor themselves.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from ..conf import app_settings


def is_postgresql(connection: BaseDatabaseWrapper) -> bool:
    return connection.vendor == "postgresql"


def is_sqlite(connection: BaseDatabaseWrapper) -> bool:
    return connection.vendor == "sqlite"


def fast_paths(connection: BaseDatabaseWrapper) -> bool:
    """Whether the hand-written fast paths run on `connection`: PostgreSQL through psycopg 3 (whose
    cursors have `copy`), and the setting on."""
    return (
        bool(app_settings.MOTION_RUNNER_SQL_FAST_PATHS)
        and is_postgresql(connection)
        and connection.Database.__name__ == "psycopg"
    )
