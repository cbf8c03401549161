"""Five of the Message table's fourteen indexes that no query reads, each paid for by every insert.

- `motion_id` alone: `(motion_id, created_at, id)` serves every `motion_id = …` (the thread, the
  cursor API, a Motion's deletion); the field says `db_index=False` now.
- The `varchar_pattern_ops` copies PostgreSQL's backend adds beside a varchar's index (for
  `LIKE 'x%'`) on `motion_id`, `tool_id`, `harness_message_id` and `session_id`: nothing filters
  those columns by a prefix (the admin's search is `UPPER(…) LIKE '%x%'`, which no btree serves).

Django's own AlterField would drop and re-add the foreign key's constraint (re-checking every
row); only the indexes go here, by the names Django gave them, so the migration is instant.
"""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models

TABLE = "motion_runner_message"
MOTION_INDEX = "motion_runner_message_motion_id_86855cca"
LIKE_INDEXES = {
    "motion_id": "motion_runner_message_motion_id_86855cca_like",
    "tool_id": "motion_runner_message_tool_id_951927f2_like",
    "harness_message_id": "motion_runner_message_harness_message_id_c90fa8e0_like",
    "session_id": "motion_runner_message_session_id_643fc762_like",
}


def drop(apps, schema_editor) -> None:
    quote = schema_editor.quote_name
    schema_editor.execute(f"DROP INDEX IF EXISTS {quote(MOTION_INDEX)}")
    if schema_editor.connection.vendor == "postgresql":
        for name in LIKE_INDEXES.values():
            schema_editor.execute(f"DROP INDEX IF EXISTS {quote(name)}")


def restore(apps, schema_editor) -> None:
    quote = schema_editor.quote_name
    schema_editor.execute(f"CREATE INDEX {quote(MOTION_INDEX)} ON {quote(TABLE)} ({quote('motion_id')})")
    if schema_editor.connection.vendor == "postgresql":
        for column, name in LIKE_INDEXES.items():
            schema_editor.execute(
                f"CREATE INDEX {quote(name)} ON {quote(TABLE)} ({quote(column)} varchar_pattern_ops)"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("motion_runner", "0013_message_session_turn_end"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="message",
                    name="motion",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="messages",
                        to="motion_runner.motion",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop, restore)],
        ),
    ]
