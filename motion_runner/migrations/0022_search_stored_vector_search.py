"""The record search for every word (issue 41): the text's vector stored in a generated column
with the GIN index on it (PostgreSQL; no recompute when a lossy bitmap rechecks each row), the
newest-first index a window is cut with, and whose posts by the whole name, any case. Why each is
built so: motion_runner/sql/message_search.py."""

import django.db.models.functions.text
from django.db import migrations, models

from motion_runner.sql.message_search import install_stored_vector, remove_stored_vector


class Migration(migrations.Migration):
    dependencies = [
        ("motion_runner", "0021_message_text_search"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="message",
            index=models.Index(
                models.OrderBy(models.F("created_at"), descending=True),
                models.OrderBy(models.F("id"), descending=True),
                name="message_newest",
            ),
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(
                django.db.models.functions.text.Lower("sender"),
                models.OrderBy(models.F("created_at"), descending=True),
                name="message_author_newest",
            ),
        ),
        migrations.RunPython(install_stored_vector, remove_stored_vector),
    ]
