"""tests/flush.py: the flush after a transactional test is tried again when another session's locks
made it a deadlock's victim, and only then."""

from __future__ import annotations

import psycopg
import pytest
from django.db import OperationalError, ProgrammingError

from tests import flush


class Flush:
    """Stands in for DatabaseOperations.execute_sql_flush: fails with `errors` first, in order."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self, ops, sql_list):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "flushed"


def django_error(kind: type[BaseException], psycopg_error: Exception) -> BaseException:
    """As Django raises it: its own class, the driver's error (with its SQLSTATE) as the cause."""
    error = kind(str(psycopg_error))
    error.__cause__ = psycopg_error
    return error


def deadlock() -> BaseException:
    return django_error(OperationalError, psycopg.errors.DeadlockDetected("deadlock detected"))


def test_a_flush_chosen_as_a_deadlocks_victim_is_tried_again():
    inner = Flush(deadlock(), deadlock())
    pauses: list[float] = []

    assert flush.retrying(inner, pause=pauses.append)(None, ["TRUNCATE …"]) == "flushed"
    assert inner.calls == 3
    assert pauses == [flush.PAUSE_SECONDS, 2 * flush.PAUSE_SECONDS]


def test_a_flush_that_waited_too_long_for_a_lock_is_tried_again():
    waited = django_error(
        OperationalError, psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")
    )
    inner = Flush(waited)

    assert flush.retrying(inner, pause=lambda seconds: None)(None, []) == "flushed"
    assert inner.calls == 2


def test_a_flush_that_keeps_losing_fails_after_its_last_attempt():
    inner = Flush(*[deadlock() for _ in range(flush.ATTEMPTS)])

    with pytest.raises(OperationalError, match="deadlock"):
        flush.retrying(inner, pause=lambda seconds: None)(None, [])
    assert inner.calls == flush.ATTEMPTS


def test_any_other_error_fails_the_flush_at_once():
    missing = django_error(ProgrammingError, psycopg.errors.UndefinedTable('relation "gone" does not exist'))
    inner = Flush(missing)

    with pytest.raises(ProgrammingError):
        flush.retrying(inner, pause=lambda seconds: None)(None, [])
    assert inner.calls == 1


def test_the_postgresql_flush_in_this_run_is_the_retrying_one():
    from django.db.backends.postgresql.operations import DatabaseOperations

    assert getattr(DatabaseOperations.execute_sql_flush, "retrying", False)
