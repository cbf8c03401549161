"""motion_runner/sql/message_search.py on the embedded default: the hand-written FTS5 path finds
what the ORM reference path beside it finds, for whole words, and the index survives a migrate
that rebuilds the table. Run on SQLite; on PostgreSQL (CI) the last test runs this file again in a
process of its own on the embedded default, so the SQLite path never goes unchecked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from motion_runner.models import Message
from motion_runner.sql import message_search
from tests.equivalence.search_support import QUERIES, long_thread, windows_agree
from tests.factories import MessageFactory, MotionFactory
from tests.paths import ROOT

on_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 table is SQLite's")

POSTS = [
    "The harbor gate opens at dawn",
    "gate code changed",
    "Nothing about it here",
    "HARBOR lights, harbor boats",
    "the dawn patrol met at the gate",
]


def posted() -> None:
    harbor = MotionFactory(slug="harbor")
    for text in POSTS:
        MessageFactory(motion=harbor, text=text)


@on_sqlite
@pytest.mark.django_db
@pytest.mark.parametrize("query", ["harbor", "gate dawn", "GATE", "lights boats", "absent"])
def test_the_fts_table_finds_what_the_orm_finds(query):
    posted()
    messages = Message.objects.all()
    assert message_search.sqlite_index_present(connection)
    indexed = set(message_search.sqlite_matching(messages, query).values_list("id", flat=True))
    reference = set(message_search.orm_matching(messages, query).values_list("id", flat=True))
    assert indexed == reference


@on_sqlite
@pytest.mark.django_db
def test_a_rebuilt_table_gets_its_index_and_contents_back():
    posted()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {message_search.FTS_TABLE}")  # as a table rebuild leaves it
    message_search.ensure_sqlite_index(connection)
    found = message_search.sqlite_matching(Message.objects.all(), "harbor").values_list("text", flat=True)
    assert sorted(found) == ["HARBOR lights, harbor boats", "The harbor gate opens at dawn"]


@on_sqlite
@pytest.mark.django_db
@pytest.mark.parametrize("query", QUERIES)
def test_the_newest_windows_answer_as_the_whole_search(monkeypatch, query):
    long_thread()
    found, reference = windows_agree(monkeypatch, query)
    assert found == reference


@on_sqlite
@pytest.mark.django_db
def test_a_window_finds_a_post_made_at_the_cut_itself():
    long_thread()  # two posts share minute 30: a window may end between them
    messages = Message.objects.all()
    for size in range(1, 41):
        cut = messages.order_by(*message_search.NEWEST_FIRST).values_list("created_at", flat=True)[size - 1]
        windowed = set(
            message_search.sqlite_matching(messages, "gate", since=cut).values_list("id", flat=True)
        )
        reference = set(message_search.orm_matching(messages, "gate", since=cut).values_list("id", flat=True))
        assert windowed == reference, size


@on_sqlite
@pytest.mark.django_db
def test_the_author_filter_is_the_whole_name_any_case():
    harbor = MotionFactory(slug="harbor")
    MessageFactory(motion=harbor, sender="magent", text="one")
    MessageFactory(motion=harbor, sender="MAgent2", text="two")
    found = message_search.by_sender(Message.objects.all(), "@MAGENT").values_list("text", flat=True)
    assert list(found) == ["one"]


@pytest.mark.skipif(connection.vendor == "sqlite", reason="this is that run")
def test_the_sqlite_path_is_checked_on_the_embedded_default_too(tmp_path):
    drop = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "MOTION_RUNNER_REQUIRE_SERVICES", "CI"}
    env = {key: value for key, value in os.environ.items() if key not in drop}
    env["MOTION_RUNNER_DATA_DIR"] = str(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "13 passed, 1 skipped" in run.stdout, run.stdout[-2000:]
