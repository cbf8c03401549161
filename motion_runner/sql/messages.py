"""The Message table's batch insert and its look-up of known ids: PostgreSQL's COPY and one
array parameter, each with the ORM reference path beside it.

Why by hand: Django compiles a bulk insert value by value (27 fields × 100 rows through
`pre_save`, `get_db_prep_save` and the compiler's checks) and quotes each column as a text array
on the client; a stream post's insert was most of its CPU (bench/ingest.py, bench/README.md).
Here the batch is streamed with `COPY … FROM STDIN (FORMAT BINARY)` (psycopg formats each row in
C) into a temporary table of this connection, and one statement moves it on:

    WITH staged AS (DELETE FROM pg_temp.<stage> RETURNING …)
    INSERT INTO <table> (…) SELECT … FROM staged ORDER BY id ON CONFLICT DO NOTHING RETURNING id

the same `ON CONFLICT DO NOTHING` (no conflict target, as Django writes it) and the same
returned ids, in id order so two writers take the unique index's locks alike. The values are
the ones Django would write: each field's `pre_save` and `get_db_prep_save`, skipped only for
value types where those return the value itself (`identity_types`).

The ORM reference path (`orm_insert`, where `fast_paths` says no) is Django's own bulk
`INSERT … ON CONFLICT DO NOTHING RETURNING id`; tests/equivalence/test_message_insert.py
compares the two rows column for column.

`known_ids`: which of a post's hundred ids are stored, asked with the ids as one `uuid[]`
parameter, where the ORM's `IN (%s, …)` compiles, prepares and quotes a placeholder per id (a
share of every post's CPU, bench/repost.py); the reference path is
`filter(pk__in=…).values_list("pk")`, tests/equivalence/test_message_insert.py compares them.

The stage is created in every transaction that uses it (`CREATE TEMP TABLE IF NOT EXISTS`, one
catalog look-up) rather than remembered per connection: a rolled-back transaction or a pooler
that hands out another server session would otherwise leave the memory wrong. It is emptied by
the statement itself, and `ON COMMIT DELETE ROWS` empties it again at commit.
"""

from __future__ import annotations

import datetime
import decimal
import json
import operator
import uuid
from collections.abc import Callable, Sequence
from types import NoneType
from typing import Any

import orjson
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.db.backends.postgresql.psycopg_any import Jsonb
from django.db.models.constants import OnConflict

from . import fast_paths, is_postgresql

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
    if type(field) is models.JSONField and field.encoder is None and is_postgresql(connection):

        def convert_json(value: Any) -> Any:
            # Django's Jsonb with the standard library's dumps, written by orjson instead where
            # that writes the same jsonb (jsonb_text, the raw lines' most of a post's JSON).
            prepared = prep(value, connection)
            return Jsonb(prepared.obj, dumps=jsonb_text) if type(prepared) is Jsonb else prepared

        return convert_json
    if not same:
        return lambda value: prep(value, connection)

    def convert(value: Any) -> Any:
        return value if type(value) in same else prep(value, connection)

    return convert


# Types orjson writes where the standard library refuses them (or writes them otherwise) are
# handed to `default`, which refuses them too, so that the standard library decides.
ORJSON_AS_STDLIB = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _refuse(value: Any) -> Any:
    raise TypeError(f"left to the standard library: {type(value).__name__}")


def jsonb_text(value: Any) -> bytes | str:
    """A JSON document of `value` that PostgreSQL reads as the same jsonb as `json.dumps(value)`'s.

    orjson writes what json.dumps writes but for the spacing, escapes and exponent spelling (jsonb
    keeps none of them), faster; it refuses what it would write differently (an integer past
    64 bits, a lone surrogate, a key that is not a string, a subclass, a date), which the standard
    library then writes. Where the insert failed before, it may not now: a non-finite float is
    written as null, where json.dumps writes NaN or Infinity, which jsonb refuses, failing the
    whole insert (a harness line holding one is so stored, its NaN as null, instead of losing its
    batch); a UUID is written as its text, where json.dumps refuses it. Parsed JSON holds neither."""
    try:
        return orjson.dumps(value, default=_refuse, option=ORJSON_AS_STDLIB)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value)


def column_identity_types(field: models.Field) -> frozenset[type]:
    """The types a whole column of `field` is written as it is (CopyInsert.rows): identity_types,
    but no datetime (converter() checks each is aware) and a NULL cost (DecimalField's None)."""
    if isinstance(field, models.DateTimeField):
        return frozenset()
    if isinstance(field, models.DecimalField):
        return frozenset({NoneType})  # get_db_prep_save(None) is None
    return identity_types(field)


def plain_pre_save(field: models.Field) -> bool:
    """Whether `field.pre_save(obj, add=True)` only reads the attribute: Field's own, or a date's
    without auto_now or auto_now_add (DateField.pre_save then calls Field's)."""
    pre_save = type(field).pre_save
    if pre_save is models.Field.pre_save:
        return True
    dated = pre_save in (models.DateField.pre_save, models.DateTimeField.pre_save)
    return dated and not field.auto_now and not field.auto_now_add


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
            (index, field) for index, field in enumerate(self.fields) if not plain_pre_save(field)
        ]
        # A datetime is kept as it is only once converter() has seen it is aware: never whole.
        self.same_types = [column_identity_types(field) for field in self.fields]
        # Text columns also keep a str subclass whole (Kind.TEXT, a TextChoices member):
        # CharField.to_python hands back any str as it is.
        self.text_columns = {
            index for index, field in enumerate(self.fields) if str in IDENTITY_TYPES.get(type(field), ())
        }
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

    def rows(self, objs: Sequence[models.Model]) -> list[tuple[Any, ...]]:
        """Each object's values as Django's insert compiler takes them: `pre_save(obj, add=True)`
        (which may set the attribute, as a `default` or `auto_now` does), then prepared for the db.

        Column by column: a column whose values are all of types its field writes as they are
        (most of them: text, ids, integers) is kept whole, found by one `set(map(type, …))`,
        instead of a converter called for each of its values (27 × 100 calls a stream post)."""
        read, converters, same_types, text_columns = (
            self.read,
            self.converters,
            self.same_types,
            self.text_columns,
        )
        columns: list[Sequence[Any]] = list(zip(*map(read, objs), strict=True)) or [()] * len(self.fields)
        for index, field in self.own_pre_save:
            columns[index] = [field.pre_save(obj, True) for obj in objs]
        for index, column in enumerate(columns):
            types = set(map(type, column))
            if types <= same_types[index]:
                continue
            if index in text_columns and all(issubclass(kind, str) or kind is NoneType for kind in types):
                continue
            columns[index] = list(map(converters[index], column))
        return list(zip(*columns, strict=True))

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


def insert_new(
    connection: BaseDatabaseWrapper, model: type[models.Model], batch: Sequence[models.Model]
) -> set[Any]:
    """Insert `batch` unless their keys exist; the keys this call inserted. Inside a transaction."""
    if fast_paths(connection):
        return copy_insert(connection, model).insert(connection, batch)
    return orm_insert(connection, model, batch)


def orm_insert(
    connection: BaseDatabaseWrapper, model: type[models.Model], batch: Sequence[models.Model]
) -> set[Any]:
    """The reference path: Django's own bulk `INSERT … ON CONFLICT DO NOTHING RETURNING id`
    (its manager's `_insert`, as `bulk_create` calls it; `bulk_create(ignore_conflicts=True)`
    would not say which rows were new)."""
    fields = list(model._meta.concrete_fields)
    for obj in batch:
        for model_field in fields:
            model_field.pre_save(obj, add=True)
    rows = model._default_manager._insert(
        list(batch),
        fields=fields,
        returning_fields=[model._meta.pk],
        on_conflict=OnConflict.IGNORE,
        using=connection.alias,
    )
    return {row[0] for row in rows}


def known_ids(connection: BaseDatabaseWrapper, model: type[models.Model], ids: Sequence[Any]) -> set[Any]:
    """The primary keys of `ids` stored in `model`'s table."""
    if not ids:
        return set()
    if not fast_paths(connection):
        return set(
            model._default_manager.using(connection.alias).filter(pk__in=ids).values_list("pk", flat=True)
        )
    quote = connection.ops.quote_name
    table, column = quote(model._meta.db_table), quote(model._meta.pk.column)
    with connection.cursor() as cursor:
        # The ids as one uuid[] literal: its text made by one join, not an adapter per element.
        literal = "{" + ",".join(map(str, ids)) + "}"
        cursor.execute(f"SELECT {column} FROM {table} WHERE {column} = ANY(%s::uuid[])", [literal])
        return {row[0] for row in cursor.fetchall()}
