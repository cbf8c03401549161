"""A statement-level trigger that NOTIFYs `motion_messages` with each Motion a statement wrote
messages to (motion_runner/thread/bell.py wakes the long-poll readers). PostgreSQL only:
SQLite has no NOTIFY, and its readers poll."""

from django.db import migrations

CREATE_FUNCTION = """
CREATE OR REPLACE FUNCTION motion_runner_message_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('motion_messages', motion_id::text)
    FROM (SELECT DISTINCT motion_id FROM new_messages) AS written;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql
"""

CREATE_TRIGGER = """
CREATE TRIGGER motion_runner_message_notify
AFTER INSERT ON motion_runner_message
REFERENCING NEW TABLE AS new_messages
FOR EACH STATEMENT EXECUTE FUNCTION motion_runner_message_notify()
"""

DROP_TRIGGER = "DROP TRIGGER IF EXISTS motion_runner_message_notify ON motion_runner_message"
DROP_FUNCTION = "DROP FUNCTION IF EXISTS motion_runner_message_notify()"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE_FUNCTION)
        schema_editor.execute(CREATE_TRIGGER)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_TRIGGER)
        schema_editor.execute(DROP_FUNCTION)


class Migration(migrations.Migration):
    dependencies = [("motion_runner", "0009_motion_visibility_and_people")]

    operations = [migrations.RunPython(create, drop)]
