"""Full-text search over the Messages' text (issue 35): PostgreSQL's GIN indexes (the text's
English tsvector; a trigram index on the sender's name, with pg_trgm), SQLite's FTS5 table.
What each is, and why it is built here rather than in the model's Meta (a vendor's own index), is in
motion_runner/sql/message_search.py."""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

from motion_runner.sql.message_search import install, uninstall


class Migration(migrations.Migration):
    dependencies = [
        ("motion_runner", "0020_turn_record_pass_and_note_kind"),
    ]

    operations = [
        TrigramExtension(),  # a no-op off PostgreSQL
        migrations.RunPython(install, uninstall),
    ]
