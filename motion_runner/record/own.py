"""The `own` binding: the apps' own Message table is the record (standalone, the default).

The insert moved here unchanged from `ingest.EventWriter`: ids, conflicts and order byte for byte.
"""

from __future__ import annotations

import uuid

from django.db import IntegrityError, connections, router, transaction

from ..models import Message
from ..sql.messages import insert_new, known_ids
from .base import RecordBinding


class OwnRecord(RecordBinding):
    def insert_one(self, message: Message) -> bool:
        try:
            with transaction.atomic():
                message.save(force_insert=True)
        except IntegrityError:
            return False
        return True

    def known_ids(self, ids: list[uuid.UUID]) -> set[uuid.UUID]:
        """The ids of `ids` already stored, by the primary key. A Message is never updated away,
        so an id seen here stays known; the insert's ON CONFLICT still decides the rest."""
        return known_ids(connections[router.db_for_read(Message)], Message, ids)

    def insert_batch(self, batch: list[Message]) -> list[Message]:
        """`INSERT … ON CONFLICT DO NOTHING RETURNING id` tells exactly which rows were new, so two
        writers racing with the same batch each learn their own share (motion_runner/sql/messages.py:
        on PostgreSQL through COPY, the same rows, conflicts and returned ids)."""
        using = router.db_for_write(Message)
        with transaction.atomic(using=using):
            inserted_ids = insert_new(connections[using], Message, batch)
        inserted = [message for message in batch if message.id in inserted_ids]
        for message in inserted:
            message._state.adding = False
            message._state.db = using
        return inserted
