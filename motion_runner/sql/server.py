"""What is asked of the database server itself, not of a table.

Why by hand: the ORM has no expression for `pg_postmaster_start_time()` (the reclaim leaves
leases alone within a lease of the server's own restart, runner/reclaim.py), and the runner's
outage probe must ask on a connection of its own with a short connect timeout, never through
the pool, whose `getconn` waits its own 30 s for a database that is away
(`connection.is_usable()` asks the pooled connection the caller already holds, so it cannot
tell). Neither has an ORM reference path; elsewhere than PostgreSQL both answer "nothing to
say" (None, True).
"""

from __future__ import annotations

from urllib.parse import quote

from django.db.backends.base.base import BaseDatabaseWrapper

from . import is_postgresql

# How long the probe waits for the database to accept a connection.
PROBE_SECONDS = 1.0


def up_for(connection: BaseDatabaseWrapper) -> float | None:
    """Seconds since the database server started; None elsewhere than PostgreSQL."""
    if not is_postgresql(connection):
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT extract(epoch FROM now() - pg_postmaster_start_time())")
        return float(cursor.fetchone()[0])


def answers(connection: BaseDatabaseWrapper, timeout: float = PROBE_SECONDS) -> bool:
    """Whether the database accepts a connection and a query now, on a connection of its own;
    True elsewhere than PostgreSQL (SQLite has no server to lose)."""
    if not is_postgresql(connection):
        return True
    import psycopg  # the postgresql backend's driver; only imported where it is the backend

    params = connection.get_connection_params()
    params["connect_timeout"] = max(1, round(timeout))
    try:
        with psycopg.connect(**params) as probe:
            probe.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def url_for(connection: BaseDatabaseWrapper) -> str:
    """`connection`'s database as a DATABASE_URL, for a process this one starts (the record
    server, motion_runner/recall/passes.py): a test run's own database too, whose name is not the
    one in the environment's DATABASE_URL."""
    params = connection.settings_dict
    if not is_postgresql(connection):
        return f"sqlite:///{params['NAME']}"
    user = quote(params.get("USER") or "", safe="")
    password = quote(params.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    port = f":{params['PORT']}" if params.get("PORT") else ""
    return f"postgres://{auth}{params.get('HOST') or ''}{port}/{params['NAME']}"
