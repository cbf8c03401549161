"""Model instances out of a hand-written statement's columns, built as the ORM builds them.

A request's hot path folds several reads into one statement (a join or a data-modifying CTE the
ORM cannot say): `Columns` names a model's columns under a table alias for that statement, and
turns its slice of the row back into an instance through the same converters a QuerySet applies
(so a JSONField is decoded, a timestamp is aware) and `Model.from_db`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from django.db import models

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
