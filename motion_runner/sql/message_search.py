"""Full-text search over the Messages' text: one interface (`matching`), each database's own index.

Why here: a full-text index is a vendor's own (issue 35). On PostgreSQL the ORM says it all
(`SearchVector`/`SearchQuery`, a `GinIndex` over the same expression, so the planner finds the
index for the query), and a trigram `GinIndex` serves the author filter (`sender__icontains`).
SQLite (the embedded default) has no such index in the ORM: an FTS5 table kept by triggers,
asked with `MATCH`, is hand-written below. `orm_matching` is the reference path (every word, a
case-insensitive substring: what a developer without either index gets), and
tests/equivalence/test_message_search.py compares it with the indexed path.

Django rebuilds a SQLite table (new table, copy, rename) for some later migrations, which drops
the triggers and renumbers the rows: `ensure_sqlite_index` runs after every migrate
(motion_runner/apps.py) and puts the table, the triggers and the contents back.
"""

from __future__ import annotations

import re

from django.apps import apps as django_apps
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection as default_connection
from django.db.models import Q, QuerySet

from . import is_postgresql, is_sqlite

# Stemmed English: "deploying" finds "deploy". The index and the query must say the same.
CONFIG = "english"
TEXT_INDEX = "message_text_search"
SENDER_INDEX = "message_sender_trgm"
FTS_TABLE = "motion_runner_message_fts"
WORD = re.compile(r"\w+", re.UNICODE)


def text_vector() -> SearchVector:
    return SearchVector("text", config=CONFIG)


def postgres_indexes() -> list[GinIndex]:
    return [
        GinIndex(text_vector(), name=TEXT_INDEX),
        GinIndex(fields=["sender"], opclasses=["gin_trgm_ops"], name=SENDER_INDEX),
    ]


def by_sender(messages: QuerySet, name: str) -> QuerySet:
    """Messages whose sender's name holds `name`, any case (the trigram index on PostgreSQL)."""
    return messages.filter(sender__iregex=re.escape(name.lstrip("@")))


def words(query: str) -> list[str]:
    return WORD.findall(query)


def matching(messages: QuerySet, query: str) -> QuerySet:
    """`messages` narrowed to those whose text holds every word of `query` (stemmed where the
    database's index stems). No words, no messages."""
    if not words(query):
        return messages.none()
    connection = default_connection
    if is_postgresql(connection):
        return pg_matching(messages, query)
    if is_sqlite(connection) and sqlite_index_present(connection):
        return sqlite_matching(messages, query)
    return orm_matching(messages, query)


def pg_matching(messages: QuerySet, query: str) -> QuerySet:
    plain = " ".join(words(query))
    return messages.annotate(search=text_vector()).filter(search=SearchQuery(plain, config=CONFIG))


def orm_matching(messages: QuerySet, query: str) -> QuerySet:
    condition = Q()
    for word in words(query):
        condition &= Q(text__icontains=word)
    return messages.filter(condition)


def sqlite_matching(messages: QuerySet, query: str) -> QuerySet:
    # Each word quoted: FTS5's own syntax (NEAR, AND, column:) is never read from what an agent typed.
    match = " ".join('"' + word.replace('"', '""') + '"' for word in words(query))
    table = messages.model._meta.db_table
    where = f'"{table}".rowid IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)'
    return messages.extra(where=[where], params=[match])


# ---- the indexes, made by migration 0020 and (SQLite) after every migrate ----


def install(apps, schema_editor) -> None:
    """Migration 0020 forwards: PostgreSQL's GIN indexes, or SQLite's FTS5 table."""
    connection = schema_editor.connection
    if is_postgresql(connection):
        model = apps.get_model("motion_runner", "Message")
        for index in postgres_indexes():
            schema_editor.add_index(model, index)
    elif is_sqlite(connection):
        ensure_sqlite_index(connection)


def uninstall(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if is_postgresql(connection):
        model = apps.get_model("motion_runner", "Message")
        for index in postgres_indexes():
            schema_editor.remove_index(model, index)
    elif is_sqlite(connection):
        with connection.cursor() as cursor:
            for trigger in ("ai", "ad", "au"):
                cursor.execute(f"DROP TRIGGER IF EXISTS {FTS_TABLE}_{trigger}")
            cursor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


def sqlite_index_present(connection) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [FTS_TABLE])
        return cursor.fetchone() is not None


def ensure_sqlite_index(connection) -> None:
    """The FTS5 table over the Messages' text, its triggers, and its contents rebuilt (cheap at the
    embedded default's size; a table Django remade has new rowids and no triggers)."""
    if not is_sqlite(connection):
        return
    message = django_apps.get_model("motion_runner", "Message")  # this module loads before the models
    table = message._meta.db_table
    text = message._meta.get_field("text").column
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [table])
        if cursor.fetchone() is None:
            return  # before the first migration made the table
        cursor.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5("
            f"{text}, content='{table}', content_rowid='rowid', tokenize='porter unicode61')"
        )
        cursor.execute(
            f"CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ai AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO {FTS_TABLE}(rowid, {text}) VALUES (new.rowid, new.{text}); END"
        )
        cursor.execute(
            f"CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ad AFTER DELETE ON {table} BEGIN "
            f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {text}) VALUES ('delete', old.rowid, old.{text}); END"
        )
        cursor.execute(
            f"CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_au AFTER UPDATE OF {text} ON {table} BEGIN "
            f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {text}) VALUES ('delete', old.rowid, old.{text}); "
            f"INSERT INTO {FTS_TABLE}(rowid, {text}) VALUES (new.rowid, new.{text}); END"
        )
        cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
