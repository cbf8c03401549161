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
  guarded by each row's version for the note's first try.
- `agent_keys`: a keyed request's key, agent, URL's Motion and membership in one statement.
- `motion_sessions`: a stream post's claim of its session with the newest turn end read beside
  it (`pg_claim_and_read`, its ORM twin `orm_claim_and_read` beside it).
- `wake_parts`: every thread poll's wake parts (wakes' request cards, typing pings, scram and
  typing dial) in one statement.
- `channels`: the `motion_messages` and `turn_stop` channels (LISTEN/NOTIFY on PostgreSQL, the
  SQLite socket bell's trigger), the listener's own connection, and which of the two a database
  carries a ring by (`carrier`, the bells' one vendor question).
- `locks`: the session lock's transaction-scoped advisory lock, and the bounds on waiting
  (`SET LOCAL idle_in_transaction_session_timeout` on the runner's writes, `lock_timeout` on the
  sweep's recovery: the ORM has no form of either; a no-op on SQLite).
- `message_search`: the record's full-text search (PostgreSQL's stored tsvector and GIN index,
  SQLite's FTS5 table, newest-first windows), beside `orm_matching`, its reference path.
- `server`: what is asked of the database server itself (whether it answers on a connection of
  its own, how long it has been up).
- `backend`: Django's PostgreSQL backend with psycopg's C timestamp loader (the ENGINE the
  standalone settings name; a host may keep Django's own).

A fast path (hand-written where the ORM could do the same) runs only where `fast_paths()` says
so: PostgreSQL through psycopg 3, with `MOTION_RUNNER_SQL_FAST_PATHS` on (the default). Off, the
ORM reference path runs everywhere, which is what a developer on SQLite runs; the two give the
same results (tests/equivalence/). Each module keeps both side by side, the ORM path named
`orm_*` (`pg_read_with_motion` and `orm_read_with_motion`, `copy_insert` and `orm_insert`), with
one function that picks: a caller asks that function, never `fast_paths` nor the connection's
vendor itself (tests/motion_runner/site/test_vendor_questions.py lists what is left outside).

wakes' tables (`listen_states`, `wake_parts`) are here too, though motion_runner imports nothing
of wakes (the layers: watchlist -> wakes -> motion_runner): the SQL of the whole house stays in
one package that names its tables, and wakes hands its models in (`WakeModels`, the `states`,
`dials` and `overrides` arguments). Each table and column is named through those models
(`_meta.get_field(name).column`), never spelled by hand, so a renamed field fails at the first
call, not as SQL reading another column. A `wakes/sql/` beside wakes' models was the other way;
it would make a second home for hand-written SQL, whose reader must then look in two places for
every statement and vendor question.

The vendor questions left outside this package are the settings' (motion_runner/settings.py picks
the backend and SQLite's options from `DATABASES` before any connection exists, and
motion_runner/checks.py warns of SQLite in production from the same setting) and the stream
post's session claim (api/stream_batch.py, until it moves into ingest/).
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
