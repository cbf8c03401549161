"""MOTION_RUNNER_SQL_FAST_PATHS: one setting turns every hand-written fast path of
motion_runner/sql/ off, and the ORM reference path beside each runs instead."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from motion_runner.models import Message, Source
from motion_runner.record.own import OwnRecord
from motion_runner.sql import fast_paths
from tests.factories import MotionFactory

pytestmark = pytest.mark.django_db


def test_off_no_connection_takes_a_fast_path(settings):
    settings.MOTION_RUNNER_SQL_FAST_PATHS = False
    assert not fast_paths(connection)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the fast paths are PostgreSQL's")
def test_on_postgresql_they_are_on_by_default():
    assert fast_paths(connection)


def test_off_a_batch_is_inserted_by_djangos_own_insert(settings):
    settings.MOTION_RUNNER_SQL_FAST_PATHS = False
    motion = MotionFactory()
    batch = sorted(
        (Message(motion=motion, sender=name, source=Source.WEB) for name in "ab"), key=lambda m: m.id
    )
    with CaptureQueriesContext(connection) as queries:
        inserted = OwnRecord().insert_batch(batch)
    assert [m.id for m in inserted] == [m.id for m in batch]
    assert not any("COPY" in query["sql"] or "_stage" in query["sql"] for query in queries)
