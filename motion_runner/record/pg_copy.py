"""PostgreSQL's exactly-once batch insert, without the ORM's per-value work (bench/ingest.py).

Django compiles a bulk insert value by value (27 fields × 100 rows through `pre_save`,
`get_db_prep_save` and the compiler's checks) and quotes each column as a text array on the
client. Here the batch is streamed with `COPY … FROM STDIN (FORMAT BINARY)` (psycopg formats
each row in C) into a temporary table of this connection, and one statement moves it on:

    WITH staged AS (DELETE FROM pg_temp.<stage> RETURNING …)
    INSERT INTO <table> (…) SELECT … FROM staged ORDER BY id ON CONFLICT DO NOTHING RETURNING id

the same `ON CONFLICT DO NOTHING` (no conflict target, as Django writes it) and the same
returned ids, in id order so two writers take the unique index's locks alike. The values are
the ones Django would write: each field's `pre_save` and `get_db_prep_save`, skipped only for
value types where those return the value itself (`identity_types`; tests/test_pg_copy_insert.py
compares the rows column for column).

The stage is created in every transaction that uses it (`CREATE TEMP TABLE IF NOT EXISTS`, one
catalog look-up) rather than remembered per connection: a rolled-back transaction or a pooler
that hands out another server session would otherwise leave the memory wrong. It is emptied by
the statement itself, and `ON COMMIT DELETE ROWS` empties it again at commit.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations

Converter = Callable[[Any], Any]

# Field classes (exactly these, not subclasses, which may override the conversion) and the value
# types each one passes to the database unchanged through pre_save/get_db_prep_save. None is
# listed only where Django turns None into NULL itself (a BooleanField without null refuses it).
IDENTITY_TYPES: dict[type[models.Field], frozenset[type]] = {
    models.CharField: frozenset({str, type(None)}),
    models.SlugField: frozenset({str, type(None)}),
    models.TextField: frozenset({str, type(None)}),
    models.UUIDField: frozenset({uuid.UUID, type(None)}),
    models.IntegerField: frozenset({int, type(None)}),
    models.PositiveIntegerField: frozenset({int, type(None)}),
    models.BigIntegerField: frozenset({int, type(None)}),
    models.AutoField: frozenset({int, type(None)}),
    models.BigAutoField: frozenset({int, type(None)}),
    models.BooleanField: frozenset({bool}),
}


def identity_types(field: models.Field) -> frozenset[type]:
    """The value types `field` writes as they are (none when unsure: the ORM's own path runs)."""
    if type(field) is models.ForeignKey:
        # None is NULL; anything else is the target field's value (ForeignKey.get_db_prep_save).
        return identity_types(field.target_field) | {type(None)}
    if type(field) is models.DateTimeField:
        return frozenset({type(None)})  # an aware datetime is checked in `converter`
    return IDENTITY_TYPES.get(type(field), frozenset())


def converter(field: models.Field, connection: BaseDatabaseWrapper) -> Converter:
    """value -> what Django's insert binds for it: `field.get_db_prep_save(value, connection)`."""
    same = identity_types(field)
    prep = field.get_db_prep_save

    if (
        type(field) is models.DateTimeField
        and type(connection.ops).adapt_datetimefield_value is PostgresOperations.adapt_datetimefield_value
    ):

        def convert_datetime(value: Any) -> Any:
            # An aware datetime passes get_prep_value and PostgreSQL's adapt_datetimefield_value
            # as it is; a naive one is warned about and made aware by Django.
            if type(value) is datetime.datetime and value.utcoffset() is not None:
                return value
            return None if value is None else prep(value, connection)

        return convert_datetime
    if isinstance(field, models.DecimalField):

        def convert_decimal(value: Any) -> Any:
            # Django binds format_number's string (rounded to the field's places); a binary COPY
            # needs the number itself: the same digits and scale as a Decimal.
            prepared = prep(value, connection)
            return decimal.Decimal(prepared) if isinstance(prepared, str) else prepared

        return convert_decimal
    if not same:
        return lambda value: prep(value, connection)

    def convert(value: Any) -> Any:
        return value if type(value) in same else prep(value, connection)

    return convert


class CopyInsert:
    """The COPY insert of one model's rows, its SQL and converters built once per connection alias."""

    def __init__(self, model: type[models.Model], connection: BaseDatabaseWrapper):
        meta = model._meta
        self.fields = list(meta.concrete_fields)
        quote = connection.ops.quote_name
        self.converters = [converter(field, connection) for field in self.fields]
        # Field.pre_save reads the attribute: all of them in one attrgetter call, then the fields
        # with a pre_save of their own (a DateTimeField's, for auto_now) called as Django calls it.
        getter = operator.attrgetter(*(field.attname for field in self.fields))
        self.read = getter if len(self.fields) > 1 else lambda obj: (getter(obj),)
        self.own_pre_save = [
            (index, field)
            for index, field in enumerate(self.fields)
            if type(field).pre_save is not models.Field.pre_save
        ]
        table = quote(meta.db_table)
        self.stage = quote(f"{meta.db_table}_stage")
        columns = ", ".join(quote(field.column) for field in self.fields)
        pk = quote(meta.pk.column)
        self.create_sql = f"CREATE TEMP TABLE IF NOT EXISTS {self.stage} (LIKE {table}) ON COMMIT DELETE ROWS"
        self.copy_sql = f"COPY pg_temp.{self.stage} ({columns}) FROM STDIN (FORMAT BINARY)"
        self.move_sql = (
            f"WITH staged AS (DELETE FROM pg_temp.{self.stage} RETURNING {columns}) "
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM staged ORDER BY {pk} "
            f"ON CONFLICT DO NOTHING RETURNING {pk}"
        )
        self.types_sql = f"SELECT {columns} FROM pg_temp.{self.stage} LIMIT 0"
        self.type_oids: list[int] | None = None

    def rows(self, objs: Sequence[models.Model]) -> list[list[Any]]:
        """Each object's values as Django's insert compiler takes them: `pre_save(obj, add=True)`
        (which may set the attribute, as a `default` or `auto_now` does), then prepared for the db."""
        read, converters, own_pre_save = self.read, self.converters, self.own_pre_save
        rows = []
        for obj in objs:
            values = read(obj)  # what Field.pre_save returns for most fields: the attribute
            if own_pre_save:
                values = list(values)
                for index, field in own_pre_save:
                    values[index] = field.pre_save(obj, True)
            rows.append([convert(value) for convert, value in zip(converters, values, strict=True)])
        return rows

    def insert(self, connection: BaseDatabaseWrapper, objs: Sequence[models.Model]) -> set[Any]:
        """Insert `objs` unless their key exists; the keys this call inserted. Call inside a
        transaction (the stage's rows live in it)."""
        rows = self.rows(objs)
        with connection.cursor() as cursor:
            cursor.execute(self.create_sql)
            if self.type_oids is None:
                cursor.execute(self.types_sql)
                self.type_oids = [column.type_code for column in cursor.description]
            # psycopg's own cursor under Django's wrapper; its errors wrapped as Django's are.
            with connection.wrap_database_errors, cursor.cursor.copy(self.copy_sql) as copy:
                copy.set_types(self.type_oids)
                for row in rows:
                    copy.write_row(row)
            cursor.execute(self.move_sql)
            return {row[0] for row in cursor.fetchall()}


_inserts: dict[tuple[str, type[models.Model]], CopyInsert] = {}


def copy_insert(connection: BaseDatabaseWrapper, model: type[models.Model]) -> CopyInsert:
    key = (connection.alias, model)
    if key not in _inserts:
        _inserts[key] = CopyInsert(model, connection)
    return _inserts[key]


def can_copy(connection: BaseDatabaseWrapper) -> bool:
    """PostgreSQL through psycopg 3 (whose cursors have `copy`); psycopg2 keeps the ORM's insert."""
    return connection.vendor == "postgresql" and connection.Database.__name__ == "psycopg"
