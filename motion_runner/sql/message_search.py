"""Full-text search over the Messages' text: one interface (`newest`, `matching`), each database's
own index.

Why here: a full-text index is a vendor's own (issue 35). On PostgreSQL the text's English
`tsvector` is a stored generated column (`text_search`, migration 0022) with a GIN index on it:
a query on a common word whose bitmap goes lossy rechecks each row against the stored vector
instead of computing `to_tsvector` again (issue 41: 18 s at 3M messages before). SQLite (the
embedded default) has no such index in the ORM: an FTS5 table kept by triggers, asked with
`MATCH`, is hand-written below. `orm_matching` is the reference path (every word, a
case-insensitive substring: what a developer without either index gets), and
tests/equivalence/test_message_search*.py compare it with each indexed path;
`pg_expression_matching` is the PostgreSQL reference for the stored column (the same vector,
computed).

Newest first, and stop at ten (`newest`): a common word matches most of the table, and sorting
millions of matches for the newest ten is the slow part, not finding them. So the search first
looks among the newest `WINDOWS[0]` messages (cut with the `message_newest` index), then
the newest `WINDOWS[1]`, then everything (the GIN index alone, which is what a rare word wants).
A window's answer is exact once it holds `limit` matches: every message outside it is older.

Of several words, the GIN index is asked only for those that narrow (`narrowing`: rarest first
by ANALYZE's counts, until together they match few rows); the common ones are checked on the
rows found, against the stored vector. A common word's posting list is most of the table,
and intersecting it cost as much as the table is long, in a window (the planner took the GIN
index there too, for a phrase it thought rare) and again in the whole index.

The author filter is the whole name, any case (`message_author_newest`, on `LOWER(sender)` and
the time), so "whose posts" is an index range walked newest first, on both databases.

Django rebuilds a SQLite table (new table, copy, rename) for some later migrations, which drops
the triggers and renumbers the rows: `ensure_sqlite_index` runs after every migrate
(motion_runner/apps.py) and puts the table, the triggers and the contents back. On PostgreSQL a
later migration that changes the `text` column's type must drop `text_search` first (PostgreSQL
refuses to alter a column a generated column reads).
"""

from __future__ import annotations

import datetime as dt
import re
import time

from django.apps import apps as django_apps
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchQuery, SearchVector, SearchVectorField
from django.db import connection as default_connection
from django.db import connections
from django.db.models import Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower

from . import is_postgresql, is_sqlite

# Stemmed English: "deploying" finds "deploy". The index and the query must say the same.
CONFIG = "english"
TEXT_INDEX = "message_text_search"
SENDER_INDEX = "message_sender_trgm"  # migration 0021's; dropped by 0022
STORED_COLUMN = "text_search"
NEWEST_INDEX = "message_newest"
AUTHOR_INDEX = "message_author_newest"
FTS_TABLE = "motion_runner_message_fts"
WORD = re.compile(r"\w+", re.UNICODE)
NEWEST_FIRST = ("-created_at", "-id")
# The newest messages looked at before the whole index: a common word has its ten in the first;
# a word seen every few hundred posts in the second; a rare one falls through to the GIN index.
WINDOWS = (2_000, 50_000)


def text_vector() -> SearchVector:
    return SearchVector("text", config=CONFIG)


def postgres_indexes() -> list[GinIndex]:
    """Migration 0021's indexes (the expression GIN, the trigram on the sender's name)."""
    return [
        GinIndex(text_vector(), name=TEXT_INDEX),
        GinIndex(fields=["sender"], opclasses=["gin_trgm_ops"], name=SENDER_INDEX),
    ]


def by_sender(messages: QuerySet, name: str) -> QuerySet:
    """Messages by `name`: the whole name, any case, a leading @ ignored (`message_author_newest`)."""
    return messages.alias(sender_lower=Lower("sender")).filter(
        sender_lower=Lower(Value(name.strip().lstrip("@")))
    )


def words(query: str) -> list[str]:
    return WORD.findall(query)


def newest(messages: QuerySet, query: str, limit: int) -> list:
    """The newest `limit` of `messages` whose text holds every word of `query`, newest first."""
    if not words(query):
        return []
    # Cut from the whole table, not the scope: an index-only walk of `message_newest`, which the
    # planner takes every time (cut through the scope's filters it chose a scan and a sort).
    everything = messages.model._base_manager.using(messages.db).order_by(*NEWEST_FIRST)
    for window in WINDOWS:
        cut = list(everything.values_list("created_at", flat=True)[window - 1 : window])
        if not cut:
            break  # fewer messages than the window: the whole search is as small
        found = list(matching(messages, query, since=cut[0]).order_by(*NEWEST_FIRST)[:limit])
        if len(found) >= limit:
            return found
        if not found:
            # Nothing among the newest: a larger window is unlikely to hold `limit` either (a
            # phrase, a rare word), and the whole index answers those fastest.
            break
    return list(matching(messages, query).order_by(*NEWEST_FIRST)[:limit])


def matching(messages: QuerySet, query: str, since: dt.datetime | None = None) -> QuerySet:
    """`messages` (from `since` on, if given) narrowed to those whose text holds every word of
    `query` (stemmed where the database's index stems). No words, no messages."""
    if not words(query):
        return messages.none()
    connection = default_connection
    if is_postgresql(connection):
        return pg_matching(messages, query, since)
    if is_sqlite(connection) and sqlite_index_present(connection):
        return sqlite_matching(messages, query, since)
    return orm_matching(messages, query, since)


def _from(messages: QuerySet, since: dt.datetime | None) -> QuerySet:
    return messages if since is None else messages.filter(created_at__gte=since)


def pg_matching(messages: QuerySet, query: str, since: dt.datetime | None = None) -> QuerySet:
    """The stored column against the query (the GIN index, or a window's newest rows). The index
    is asked only for the words that narrow (`narrowing`); the rest are checked on the rows it
    finds, against the same stored vector."""
    table = messages.model._meta.db_table
    every = words(query)
    asked = narrowing(every, messages.db)
    stored = RawSQL(f'"{table}"."{STORED_COLUMN}"', [], output_field=SearchVectorField())
    found = (
        _from(messages, since).alias(search=stored).filter(search=SearchQuery(" ".join(asked), config=CONFIG))
    )
    if len(asked) == len(every):
        return found
    # The same vector in a form no index serves (coalesce of a non-null column: the value itself),
    # so the planner cannot fold these words back into the GIN scan.
    checked = RawSQL(
        f'coalesce("{table}"."{STORED_COLUMN}", \'\'::tsvector)', [], output_field=SearchVectorField()
    )
    return found.alias(checked=checked).filter(checked=SearchQuery(" ".join(every), config=CONFIG))


# The index is asked for words, rarest first, until the rows they match together are estimated
# at most this share of the messages (their shares multiplied); the other words, the common ones,
# are checked on those rows. A common word's posting list is most of the table: intersecting it
# cost as much as the table is long (issue 41: a remembered phrase holding one grew 2.1x from 1M
# to 3M messages, while its rare words alone matched a handful of rows).
RECHECK_SHARE = 0.0005
# The share of each frequent lexeme, as ANALYZE last counted it (pg_stats), kept this long.
STATS_SECONDS = 600.0
_shares: dict[str, tuple[float, dict[str, float]]] = {}


def narrowing(every: list[str], using: str = "default") -> list[str]:
    """Of a query's words, those to ask the index for (see RECHECK_SHARE), in the query's order.
    One word, no statistics yet, or every word needed: every word."""
    if len(every) < 2:
        return every
    shares = lexeme_shares(using)
    if not shares:
        return every
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT w, array(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, w))) "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS q(w, n) ORDER BY n",
            [CONFIG, every],
        )
        lexemes = dict(cursor.fetchall())
    rarest_counted = min(shares.values())  # a lexeme not among the counted is at most this common
    share = {
        word: max(shares.get(lexeme, rarest_counted) for lexeme in lexemes[word])
        for word in every
        if lexemes.get(word)  # a stop word has no lexeme: no query asks for it
    }
    asked: set[str] = set()
    left = 1.0
    for word in sorted(share, key=share.__getitem__):
        if left <= RECHECK_SHARE:
            break
        asked.add(word)
        left *= share[word]
    if len(asked) == len(share):
        return every
    return [word for word in every if word in asked]


def lexeme_shares(using: str = "default") -> dict[str, float]:
    """Each frequent lexeme's share of the messages (the stored vector's `most_common_elems`: the
    thousand or so most frequent, down to a fraction of a percent), read at most every
    `STATS_SECONDS`. Empty before the table was first analyzed."""
    now = time.monotonic()
    kept = _shares.get(using)
    if kept and now - kept[0] < STATS_SECONDS:
        return kept[1]
    with connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
            "WHERE tablename = %s AND attname = %s AND schemaname = current_schema()",
            [django_apps.get_model("motion_runner", "Message")._meta.db_table, STORED_COLUMN],
        )
        row = cursor.fetchone()
    shares = dict(zip(row[0], row[1], strict=False)) if row and row[0] else {}
    _shares[using] = (now, shares)
    return shares


def pg_expression_matching(messages: QuerySet, query: str, since: dt.datetime | None = None) -> QuerySet:
    """The reference for `pg_matching`: the same vector computed from the text, not stored."""
    plain = " ".join(words(query))
    return _from(messages, since).alias(search=text_vector()).filter(search=SearchQuery(plain, config=CONFIG))


def orm_matching(messages: QuerySet, query: str, since: dt.datetime | None = None) -> QuerySet:
    condition = Q()
    for word in words(query):
        condition &= Q(text__icontains=word)
    return _from(messages, since).filter(condition)


def sqlite_matching(messages: QuerySet, query: str, since: dt.datetime | None = None) -> QuerySet:
    # Each word quoted: FTS5's own syntax (NEAR, AND, column:) is never read from what an agent typed.
    match = " ".join('"' + word.replace('"', '""') + '"' for word in words(query))
    table = messages.model._meta.db_table
    if since is None:
        where = f'"{table}".rowid IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)'
        return messages.extra(where=[where], params=[match])
    # A window: FTS5 walks only the rowids from the window's oldest on (a rowid range it serves
    # from its own index), a superset that the time filter then makes exact. The oldest rowid is
    # read off the window's index range (`INDEXED BY`): left to itself, SQLite walked every rowid
    # from the first, testing each row's time.
    where = (
        f'"{table}".rowid IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s AND rowid >= '
        f'(SELECT coalesce(min(rowid), 0) FROM "{table}" INDEXED BY {NEWEST_INDEX} WHERE created_at >= %s))'
    )
    from_when = default_connection.ops.adapt_datetimefield_value(since)
    return _from(messages, since).extra(where=[where], params=[match, from_when])


# ---- the indexes, made by migrations 0021 and 0022 and (SQLite) after every migrate ----


def install(apps, schema_editor) -> None:
    """Migration 0021 forwards: PostgreSQL's GIN indexes, or SQLite's FTS5 table."""
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


def install_stored_vector(apps, schema_editor) -> None:
    """Migration 0022 forwards, PostgreSQL only: the text's vector stored in a generated column,
    the GIN index moved onto it, and 0021's trigram index dropped (the author filter is now the
    whole name, served by `message_author_newest` in the model's Meta)."""
    connection = schema_editor.connection
    if not is_postgresql(connection):
        return
    table = connection.ops.quote_name(apps.get_model("motion_runner", "Message")._meta.db_table)
    schema_editor.execute(f"DROP INDEX IF EXISTS {TEXT_INDEX}")
    schema_editor.execute(f"DROP INDEX IF EXISTS {SENDER_INDEX}")
    schema_editor.execute(
        f"ALTER TABLE {table} ADD COLUMN {STORED_COLUMN} tsvector GENERATED ALWAYS AS "
        f"(to_tsvector('{CONFIG}'::regconfig, coalesce(text, ''))) STORED"
    )
    schema_editor.execute(f"CREATE INDEX {TEXT_INDEX} ON {table} USING gin ({STORED_COLUMN})")


def remove_stored_vector(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if not is_postgresql(connection):
        return
    model = apps.get_model("motion_runner", "Message")
    table = connection.ops.quote_name(model._meta.db_table)
    schema_editor.execute(f"DROP INDEX IF EXISTS {TEXT_INDEX}")
    schema_editor.execute(f"ALTER TABLE {table} DROP COLUMN IF EXISTS {STORED_COLUMN}")
    for index in postgres_indexes():
        schema_editor.add_index(model, index)
