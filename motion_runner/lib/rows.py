"""Model instances out of a hand-written statement's columns, built as the ORM builds them.

A request's hot path folds several reads into one statement (a join or a data-modifying CTE the
ORM cannot say): `Columns` names a model's columns under a table alias for that statement, and
turns its slice of the row back into an instance through the same converters a QuerySet applies
(so a JSONField is decoded, a timestamp is aware) and `Model.from_db`.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from functools import cached_property
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.core.signals import setting_changed
from django.db import DEFAULT_DB_ALIAS, models, router
from django.db.models.base import ModelState
from django.db.models.fields import NOT_PROVIDED
from django.db.models.signals import post_init, pre_init
from django.utils import timezone

M = TypeVar("M", bound=models.Model)


def column_converters(connection, column) -> list[Any]:
    """The converters a QuerySet applies to `column`'s values, the backend's first."""
    return connection.ops.get_db_converters(column) + column.get_db_converters(connection)


def db_value(connection, model_field: models.Field, value: Any) -> Any:
    """One column's value as a QuerySet would give it (e.g. a JSONField's text decoded)."""
    column = model_field.get_col(model_field.model._meta.db_table)
    for convert in column_converters(connection, column):
        value = convert(value, column, connection)
    return value


class Columns(Generic[M]):
    def __init__(self, model: type[M], alias: str, *, leave_out: Sequence[str] = ()):
        """`leave_out`: attnames not read (deferred on the instance, loaded on first access)."""
        self.model = model
        self.alias = alias
        self.fields = [f for f in model._meta.concrete_fields if f.attname not in leave_out]
        self.attnames = [f.attname for f in self.fields]
        self.pk_at = self.attnames.index(model._meta.pk.attname)
        self._converters: dict[str, list[tuple[int, list[Any], Any]]] = {}

    def __len__(self) -> int:
        return len(self.fields)

    def sql(self, connection) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{self.alias}.{quote(f.column)}" for f in self.fields)

    def converters(self, connection) -> list[tuple[int, list[Any], Any]]:
        """(position, converters, column) as the compiler's get_converters gives them; once per
        database alias (they depend on the backend only)."""
        found = self._converters.get(connection.alias)
        if found is None:
            found = []
            for position, model_field in enumerate(self.fields):
                column = model_field.get_col(self.alias)
                convs = column_converters(connection, column)
                if convs:
                    found.append((position, convs, column))
            self._converters[connection.alias] = found
        return found

    def build(self, connection, values: Sequence[Any]) -> M | None:
        """The instance from this model's slice of a row; None when its primary key is NULL (an
        outer join that found nothing)."""
        if values[self.pk_at] is None:
            return None
        values = list(values)
        for position, convs, column in self.converters(connection):
            value = values[position]
            for convert in convs:
                value = convert(value, column, connection)
            values[position] = value
        return self.model.from_db(connection.alias, self.attnames, values)


@functools.cache
def use_tz() -> bool:
    return settings.USE_TZ


def _forget_use_tz(*, setting: str, **kwargs: Any) -> None:
    if setting == "USE_TZ":
        use_tz.cache_clear()


setting_changed.connect(_forget_use_tz)


def now() -> datetime.datetime:
    """`django.utils.timezone.now()`, with USE_TZ read once until the setting changes: each read
    of a LazySettings attribute goes through LazyObject.__getattribute__ and a caught
    AttributeError (~5 µs; half of building a Message, for its created_at)."""
    return datetime.datetime.now(datetime.UTC if use_tz() else None)


class NewInstances(Generic[M]):
    """New instances as `model(**values)` leaves them, for a batch's hundred rows at a time.

    Model.__init__ pops each of the model's fields from its kwargs and sets it through setattr
    (27 for a Message: most of building one, bench/stream_web.py). Here a plain field's value
    (given, or its default, called as __init__ calls it) goes straight into the instance's
    __dict__, which is all that setattr does for it; a foreign key given as an object still goes
    through its descriptor (its id, the related-object cache, the router's db and checks).
    Anything else (a property, an unknown name, a model with pre_init/post_init listeners) takes
    Django's own way (tests/test_new_instances.py compares the two)."""

    def __init__(self, model: type[M]):
        self.model = model

    @cached_property
    def fields(self) -> tuple[dict[str, Any], list[tuple[str, Any]], list[tuple[str, str, Any]], set[str]]:
        """(the defaults that are the same value every time, by attname; the fields whose default
        is called each time; the foreign keys' names; every name and attname), read once the
        models are loaded; no names for a model with a generated field (__init__ leaves those
        unset)."""
        fields = self.model._meta.concrete_fields
        if any(f.generated for f in fields):
            return {}, [], [], set()
        constant, called = {}, []
        for f in fields:
            if f.has_default() and f.default is timezone.now:
                called.append((f.attname, now))
            elif (f.has_default() and callable(f.default)) or f.db_default is not NOT_PROVIDED:
                called.append((f.attname, f._get_default))
            else:  # Field._get_default hands back this same value (or None, or "") each time
                constant[f.attname] = f.get_default()
        related = [(f.name, f.attname, plain_foreign_key(f)) for f in fields if f.is_relation]
        return constant, called, related, {f.attname for f in fields} | {f.name for f in fields}

    def new(self, values: dict[str, Any]) -> M:
        model = self.model
        constant, called, related, names = self.fields
        if not names.issuperset(values) or pre_init.has_listeners(model) or post_init.has_listeners(model):
            return model(**values)
        instance = model.__new__(model)
        instance._state = ModelState()
        attrs = instance.__dict__
        attrs.update(constant)
        for attname, default in called:
            if attname not in values:
                attrs[attname] = default()
        attrs.update(values)
        for name, attname, plain in related:
            if name in values:  # an object: as its descriptor sets it, as __init__ does
                if attname in values:  # both: __init__ sets the id after the object
                    return model(**values)
                value = attrs.pop(name)
                if plain is None or router.routers or not set_plainly(instance, plain, value):
                    setattr(instance, name, value)
        return instance


def plain_foreign_key(field: Any) -> tuple[str, str, str, type] | None:
    """(attname, the target's attname, the cache's name, the target model) of a ForeignKey on
    one column, which set_plainly may set; None for any other relation."""
    if type(field) is not models.ForeignKey or len(field.related_fields) != 1:
        return None
    ((_, target),) = field.related_fields
    return field.attname, target.attname, field.cache_name, field.remote_field.model._meta.concrete_model


def set_plainly(instance: models.Model, key: tuple[str, str, str, type], value: Any) -> bool:
    """`instance.<fk> = value` on a new instance as ForwardManyToOneDescriptor.__set__ does it when
    no database router is configured (the caller checks): the instance's db from the object's,
    the object's from the instance's, the id, the cache. False (nothing done) for anything it
    would refuse or where the two dbs differ: the descriptor then decides, errors and all."""
    attname, target_attname, cache_name, target = key
    state = instance._state
    if value is None:
        instance.__dict__[attname] = None
        state.fields_cache[cache_name] = None
        return True
    if not isinstance(value, target):
        return False
    db = state.db or value._state.db or DEFAULT_DB_ALIAS  # router.db_for_write without routers
    if (value._state.db or db) != db:
        return False  # router.allow_relation without routers: the same db, else refused
    state.db = db
    value._state.db = db
    instance.__dict__[attname] = getattr(value, target_attname)
    state.fields_cache[cache_name] = value
    return True
