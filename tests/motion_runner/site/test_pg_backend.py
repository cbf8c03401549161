"""motion_runner/sql/backend: the faster timestamp loader and array dumper give what Django's and
psycopg's own give, byte for byte and value for value, odd inputs first."""

from __future__ import annotations

from datetime import UTC

import pytest
from django.db import DataError, connection, connections, transaction
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg.adapt import PyFormat, Transformer
from psycopg.types.array import ListDumper

from motion_runner.models import Agent, Message, Motion
from motion_runner.sql.backend.base import FastListDumper, FastTzLoader

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the backend is PostgreSQL's (CI always runs it there)"
)

# Every shape a text array element can take: quotes, backslashes, both at once, the delimiter,
# braces, blanks, NULL as a word, JSON, non-ASCII, empty, None, nested lists.
ODD_LISTS = [
    [],
    [None],
    ["", " ", "NULL", "null"],
    ['say "hi"', "C:\\path\\to", '\\"', '"\\', '\\\\""', "a,b", "{x}", "tab\there", "line\nbreak"],
    ['{"type": "assistant", "text": "a \\"quoted\\" word, a \\\\ backslash"}'],
    ["ünïcödé ✓", "日本語", "emoji 🚀"],
    [["nested", 'with "quotes"'], ["and \\ backslashes", None]],
    [1, 2, None, 3],
]


@pytest.mark.parametrize("value", ODD_LISTS, ids=range(len(ODD_LISTS)))
def test_the_list_dumper_writes_psycopgs_bytes(value):
    transformer = Transformer()
    theirs = ListDumper(list, transformer).upgrade(value, PyFormat.TEXT)
    ours = FastListDumper(list, transformer).upgrade(value, PyFormat.TEXT)
    assert type(ours) is FastListDumper
    assert bytes(ours.dump(value)) == bytes(theirs.dump(value))


# BC, the far ends of the range, microseconds and none, a leap day, and infinity.
ODD_TIMESTAMPS = [
    "'0044-03-15 12:00:00+00 BC'::timestamptz",
    "'0001-01-01 00:00:00+00'::timestamptz",
    "'9999-12-31 23:59:59.999999+00'::timestamptz",
    "'2024-02-29 23:59:59.000001+00'::timestamptz",
    "'2026-11-30 19:01:14+05:30'::timestamptz",
    "'2026-11-30 19:01:14.1+00'::timestamptz",
    "now()",
    "NULL::timestamptz",
    "'infinity'::timestamptz",
    "'-infinity'::timestamptz",
]


def load_both(sql: str):
    """The value as this backend loads it, then as Django's own loader does (or the error)."""
    results = []
    for stock in (False, True):
        with connection.cursor() as cursor:
            if stock:
                register_tzloader(connection.timezone, cursor.cursor)
            try:
                with transaction.atomic():
                    cursor.execute(f"SELECT {sql}")
                    results.append(cursor.fetchone()[0])
            except DataError as exc:  # infinity: psycopg refuses it either way, with these words
                results.append(str(exc))
    return results


@postgres_only
@pytest.mark.django_db
@pytest.mark.parametrize("sql", ODD_TIMESTAMPS)
def test_a_timestamp_loads_as_djangos_loader_loads_it(sql):
    ours, stock = load_both(sql)
    assert ours == stock
    if hasattr(ours, "tzinfo"):
        assert ours.tzinfo is stock.tzinfo is UTC


@postgres_only
@pytest.mark.django_db
def test_the_standalone_settings_use_the_backend_and_its_c_loader():
    assert type(connections["default"]).__module__ == "motion_runner.sql.backend.base"
    with connection.cursor() as cursor:
        loader_class = cursor.cursor.adapters.get_loader(1184, 0)  # timestamptz, text
        assert issubclass(loader_class, FastTzLoader)
        loader = loader_class(1184, cursor.cursor)
        # In a UTC session the instance's load is psycopg's own (the C one with psycopg-binary).
        assert loader.load.__qualname__ != FastTzLoader.load.__qualname__


@postgres_only
@pytest.mark.django_db
def test_a_bulk_insert_of_awkward_text_round_trips():
    """bulk_create goes through UNNEST(text[]) on PostgreSQL: the array dumper's escaping."""
    motion = Motion.objects.create(slug="arrays", title="Arrays")
    agent = Agent.objects.create(name="arrayer")
    texts = [text for row in ODD_LISTS[2:6] for text in row]
    raws = [{"line": text, "nested": [text, {"k": text}]} for text in texts]
    Message.objects.bulk_create(
        [
            Message(motion=motion, agent=agent, sender="arrayer", source="api", text=text, raw=raw)
            for text, raw in zip(texts, raws, strict=True)
        ]
    )
    stored = list(
        Message.objects.filter(motion=motion).order_by("text").values_list("text", "raw", "created_at")
    )
    assert sorted(zip(texts, raws, strict=True), key=lambda pair: pair[0]) == [(t, r) for t, r, _ in stored]
    assert {at.tzinfo for _, _, at in stored} == {UTC}
