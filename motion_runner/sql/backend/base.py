"""Django's PostgreSQL DatabaseWrapper, with faster loading of timestamps and dumping of arrays.

Two of psycopg's adapters are pure Python even with psycopg-binary installed, and were the largest
costs after the queries in profiles of the consider loop's look and the stream API (the figures
are in bench/README.md):

- Django loads every `timestamptz` through its own subclass of psycopg's Python loader (the C one
  cannot be subclassed), value by value in Python. `FastTzLoader` hands a UTC session's values to psycopg's
  C loader, which gives the same datetimes (tzinfo `datetime.UTC`); any other session keeps
  Django's loader.
- Django 5.2 bulk-inserts through `UNNEST(%s::type[])`: each column is one text array, quoted by
  psycopg's Python `ListDumper`, which escapes each element with a regex substitution per
  quote: a batch of 100 raw JSON lines is thousands of them. `FastListDumper` escapes with
  `bytes.replace` (C) and produces the same bytes.

A pooled connection is checked before it is used (`get_new_connection`): after a database restart
every idle connection of the pool is dead, and each used to fail one request with a 503.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC
from functools import lru_cache
from typing import Any

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from django.db.backends.postgresql.psycopg_any import BaseTzLoader, get_adapters_template
from psycopg.abc import AdaptContext
from psycopg.adapt import AdaptersMap
from psycopg.pq import Format
from psycopg.types.array import ListDumper
from psycopg_pool import ConnectionPool, PoolTimeout

# psycopg's own timestamptz loader: the C one when psycopg-binary (or psycopg-c) is installed.
PSYCOPG_TZ_LOADER = psycopg.adapters.get_loader(psycopg.postgres.types["timestamptz"].oid, Format.TEXT)


class FastTzLoader(BaseTzLoader):
    """Django's loader, whose whole job in a UTC session is psycopg's: there, psycopg's own
    loader (C) already returns datetimes with tzinfo `datetime.UTC`, what Django's would after
    its `replace`. The row loader calls `self.load`, so the instance's `load` is the C one."""

    timezone = UTC

    def __init__(self, oid: int, context: AdaptContext | None = None):
        super().__init__(oid, context)
        connection = context.connection if context is not None else None
        if self.timezone is UTC and connection is not None and connection.info.timezone is UTC:
            self.load = PSYCOPG_TZ_LOADER(oid, context).load  # type: ignore[method-assign]


class FastListDumper(ListDumper):
    """psycopg's text-format ListDumper with its per-element regex escape done by bytes.replace."""

    def _dump_list(self, obj: list[Any], tokens: list[Any], needs_quotes: Callable[[Any], object]) -> None:
        if not obj:
            tokens.append(b"{}")
            return
        dump = self.sub_dumper.dump if self.sub_dumper else self._dump_item
        delimiter = self.delimiter
        tokens.append(b"{")
        for item in obj:
            if item is None:
                tokens.append(b"NULL")
            elif isinstance(item, list):
                self._dump_list(item, tokens, needs_quotes)
            elif (dumped := dump(item)) is None:
                tokens.append(b"NULL")
            else:
                if needs_quotes(dumped):
                    # Backslashes first, then quotes: what psycopg's `(["\\])` → `\\\1` does.
                    escaped = bytes(dumped).replace(b"\\", b"\\\\").replace(b'"', b'\\"')
                    dumped = b'"' + escaped + b'"'
                tokens.append(dumped)
            tokens.append(delimiter)
        tokens[-1] = b"}"


@lru_cache
def fast_adapters(use_tz: bool, tz: Any) -> AdaptersMap:
    """Django's adapters for this time zone, with the two fast adapters over them."""
    context = AdaptersMap(get_adapters_template(use_tz, tz))
    loader = type("SpecificFastTzLoader", (FastTzLoader,), {"timezone": tz})
    context.register_loader("timestamptz", loader)
    context.register_dumper(list, FastListDumper)
    return context


# After a dead pooled connection, how long to wait for a fresh one before the database counts as
# away (PoolTimeout: a 503); while it is away, every request waits as long at most, not the pool's
# own timeout. Short: a restarted database takes a new connection at once.
FRESH_CONNECTION_SECONDS = 5.0
# The aliases whose database did not give a fresh connection: cleared by the next that answers.
_away: set[str] = set()


def answers(connection: psycopg.Connection) -> bool:
    try:
        ConnectionPool.check_connection(connection)  # one empty round trip
    except psycopg.Error:
        return False
    return True


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        # Carries `timezone` as Django's loader does, so create_cursor keeps it (no per-cursor copy).
        params["context"] = fast_adapters(settings.USE_TZ, self.timezone)
        return params

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        """A pooled connection checked before it is used. psycopg-pool's own `check`
        (CONN_HEALTH_CHECKS) discards a dead connection and backs off a second, two, four… before
        trying the next, so ten dead ones outlast the pool's timeout; here the first dead one has
        the pool check all its idle ones (opened before the same restart) and a fresh one is taken."""
        if self.pool is None or self.settings_dict["CONN_HEALTH_CHECKS"]:
            return super().get_new_connection(conn_params)
        if self.alias not in _away:
            connection = super().get_new_connection(conn_params)
            if answers(connection):
                return connection
            self.pool.putconn(connection)  # broken: the pool closes it and opens another
            self.pool.check()
        return self.fresh_pooled_connection()

    def fresh_pooled_connection(self) -> Any:
        try:
            connection = self.pool.getconn(timeout=FRESH_CONNECTION_SECONDS)
        except PoolTimeout:
            _away.add(self.alias)
            raise
        if not answers(connection):
            self.pool.putconn(connection)
            _away.add(self.alias)
            raise PoolTimeout("the database does not answer on a fresh connection")
        _away.discard(self.alias)
        if self.settings_dict["OPTIONS"].get("isolation_level") is not None:
            connection.isolation_level = self.isolation_level  # as Django's own sets it
        return connection
