"""The Message table keeps only indexes some query reads (migration 0014): every insert pays for
each one. `motion_id = …` is served by (motion_id, created_at, id); nothing filters a varchar
column of it by a LIKE prefix, which the `varchar_pattern_ops` copies are for."""

from __future__ import annotations

import pytest
from django.db import connection

from motion_runner.models import Message

pytestmark = pytest.mark.django_db


def message_indexes() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [Message._meta.db_table]
        )
        return dict(cursor.fetchall())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's own index kinds")
def test_no_pattern_copies_and_no_lone_motion_index():
    indexes = message_indexes()
    assert not [name for name, sql in indexes.items() if "varchar_pattern_ops" in sql]
    assert not [name for name, sql in indexes.items() if sql.endswith("USING btree (motion_id)")]
    # What the thread, the cursor API and a Motion's deletion read instead.
    assert any(sql.endswith("USING btree (motion_id, created_at, id)") for sql in indexes.values())
    # The lookups by equality stay indexed.
    for column in ("tool_id", "harness_message_id", "session_id", "agent_id", "turn_id"):
        assert any(sql.endswith(f"USING btree ({column})") for sql in indexes.values()), column
