"""recorded_turn_ends reads the newest turn end alone first (every stream post asks for the
running total), and the older ones only when the adapter reads on."""

from __future__ import annotations

import copy
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.harnesses.claude_code import previous_result_total
from motion_runner.ingest.sessions import recorded_turn_ends
from motion_runner.models import Kind
from tests import recorded
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


def result_line() -> dict:
    return copy.deepcopy(next(line for line in recorded.first_run() if line.get("type") == "result"))


def record_end(raw: dict, age_seconds: int) -> None:
    MessageFactory(
        kind=Kind.TURN_END,
        session_id=SESSION,
        raw=raw,
        created_at=timezone.now() - timedelta(seconds=age_seconds),
    )


def test_a_session_without_turn_ends_reads_nothing_in_one_query():
    with CaptureQueriesContext(connection) as queries:
        assert previous_result_total(recorded_turn_ends(SESSION)()) is None
    assert len(queries) == 1


def test_the_newest_total_is_read_alone(db):
    older, newest = result_line(), result_line()
    older["total_cost_usd"] = 0.5
    record_end(older, age_seconds=60)
    record_end(newest, age_seconds=1)
    with CaptureQueriesContext(connection) as queries:
        total = previous_result_total(recorded_turn_ends(SESSION)())
    assert total == Decimal(str(newest["total_cost_usd"]))
    assert len(queries) == 1 and queries[0]["sql"].rstrip().endswith("LIMIT 1")


def test_a_newest_end_without_a_total_reads_on_to_the_older_ones(db):
    older, newest = result_line(), result_line()
    older["total_cost_usd"] = 0.5
    del newest["total_cost_usd"]  # a result line the CLI wrote without its running total
    record_end(older, age_seconds=60)
    record_end(newest, age_seconds=1)
    reader = recorded_turn_ends(SESSION)
    with CaptureQueriesContext(connection) as queries:
        assert previous_result_total(reader()) == Decimal("0.5")
        assert [raw.get("total_cost_usd") for raw in reader()] == [None, 0.5]  # read once, kept
    assert len(queries) == 2
