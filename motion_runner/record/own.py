"""The `own` binding: the apps' own Message table is the record (standalone, the default).

The insert moved here unchanged from `ingest.EventWriter`: ids, conflicts and order byte for byte.
"""

from __future__ import annotations

import uuid

from django.db import IntegrityError, connections, router, transaction
from django.db.models.constants import OnConflict

from ..models import Message
from .base import RecordBinding
from .pg_copy import can_copy, copy_insert


class OwnRecord(RecordBinding):
    def insert_one(self, message: Message) -> bool:
        try:
            with transaction.atomic():
                message.save(force_insert=True)
        except IntegrityError:
            return False
        return True

    def known_ids(self, ids: list[uuid.UUID]) -> set[uuid.UUID]:
        """One `SELECT id … WHERE id = ANY(…)` on the primary key. A Message is never updated
        away, so an id seen here stays known; the insert's ON CONFLICT still decides the rest."""
        if not ids:
            return set()
        connection = connections[router.db_for_read(Message)]
        if connection.vendor != "postgresql":
            return set(Message.objects.filter(id__in=ids).values_list("id", flat=True))
        # The ids as one uuid[] literal, where the ORM's `IN (%s, …)` prepares and quotes each of
        # a batch's hundred ids (measured in bench/README.md).
        table, column = (connection.ops.quote_name(name) for name in (Message._meta.db_table, "id"))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {column} FROM {table} WHERE {column} = ANY(%s::uuid[])",
                ["{" + ",".join(map(str, ids)) + "}"],
            )
            return {row[0] for row in cursor.fetchall()}

    def insert_batch(self, batch: list[Message]) -> list[Message]:
        """`INSERT … ON CONFLICT DO NOTHING RETURNING id` tells exactly which rows were new, so two
        writers racing with the same batch each learn their own share. On PostgreSQL the rows go
        through COPY (record/pg_copy.py: the same rows, conflicts and returned ids, for less CPU
        than the ORM's; bench/ingest.py)."""
        using = router.db_for_write(Message)
        connection = connections[using]
        with transaction.atomic(using=using):
            if can_copy(connection):
                inserted_ids = copy_insert(connection, Message).insert(connection, batch)
            else:
                inserted_ids = self.orm_insert(batch, using)
        inserted = [message for message in batch if message.id in inserted_ids]
        for message in inserted:
            message._state.adding = False
            message._state.db = using
        return inserted

    @staticmethod
    def orm_insert(batch: list[Message], using: str) -> set[uuid.UUID]:
        """Django's own bulk `INSERT … ON CONFLICT DO NOTHING RETURNING id` (SQLite, psycopg2)."""
        for message in batch:
            for model_field in Message._meta.concrete_fields:
                model_field.pre_save(message, add=True)
        rows = Message.objects._insert(
            batch,
            fields=list(Message._meta.concrete_fields),
            returning_fields=[Message._meta.pk],
            on_conflict=OnConflict.IGNORE,
            using=using,
        )
        return {row[0] for row in rows}
