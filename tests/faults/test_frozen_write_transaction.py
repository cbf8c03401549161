"""A runner frozen inside its write transaction never holds the sweep (issue 42.6).

Its write transaction is bounded: PostgreSQL ends it once it sits idle WRITE_IDLE_SECONDS
(`idle_in_transaction_session_timeout`), releasing its locks and uncommitted rows. The sweep waits
no longer than SWEEP_LOCK_SECONDS for a lock (`lock_timeout`): it leaves that turn running and
takes it the next round, by when the frozen transaction is gone.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from types import SimpleNamespace

import psycopg
import pytest
from django.db import DatabaseError, connection
from django.utils import timezone

from motion_runner.models import Turn, TurnStatus
from motion_runner.runner import reclaim, turn_run
from motion_runner.runner.db_retry import is_outage
from motion_runner.runner.reclaim import reclaim_lapsed_turns
from motion_runner.runner.turn_run import TurnRun
from tests.factories import TurnFactory
from tests.faults.support import database_url, wait_for

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="idle_in_transaction_session_timeout and lock_timeout are PostgreSQL's (CI always has it)",
)


def show(setting: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {setting}")
        return cursor.fetchone()[0]


def lapsed_turn() -> Turn:
    now = timezone.now()
    return TurnFactory(status=TurnStatus.RUNNING, started_at=now, lease_until=now - timedelta(minutes=1))


@pytest.mark.django_db(transaction=True)
def test_the_runners_write_transaction_is_ended_by_the_server_once_idle_past_its_bound():
    seen: list[str] = []
    runner = SimpleNamespace(
        write_many=lambda events: seen.append(show("idle_in_transaction_session_timeout"))
    )

    TurnRun.write_events(runner, [])

    assert seen == [f"{int(turn_run.WRITE_IDLE_SECONDS)}s"]
    assert show("idle_in_transaction_session_timeout") == "0"  # the transaction's alone


@pytest.mark.django_db(transaction=True)
def test_the_sweep_gives_up_a_lock_it_waits_for_and_takes_the_turn_next_round(monkeypatch):
    monkeypatch.setattr(reclaim, "SWEEP_LOCK_SECONDS", 0.5)
    turn = lapsed_turn()
    with psycopg.connect(database_url()) as holder:  # a transaction that keeps the turn's row
        holder.execute("SELECT 1 FROM motion_runner_turn WHERE id = %s FOR UPDATE", [turn.pk])
        started = time.monotonic()
        assert reclaim_lapsed_turns() == 0
        assert time.monotonic() - started < 5
        turn.refresh_from_db()
        assert turn.status == TurnStatus.RUNNING
        assert show("lock_timeout") == "0"  # the session's own value again
        holder.rollback()
    assert reclaim_lapsed_turns() == 1
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED


@pytest.mark.django_db(transaction=True)
def test_a_runner_frozen_in_its_write_transaction_holds_the_sweep_only_until_the_server_ends_it(monkeypatch):
    monkeypatch.setattr(turn_run, "WRITE_IDLE_SECONDS", 1.0)
    monkeypatch.setattr(reclaim, "SWEEP_LOCK_SECONDS", 0.3)
    turn = lapsed_turn()
    holding, outcome = threading.Event(), []

    def frozen_write(events):  # takes the turn's row, then says nothing, as a SIGSTOP'd runner
        Turn.objects.select_for_update().get(pk=turn.pk)
        holding.set()
        time.sleep(6)

    def runner():
        try:
            TurnRun.write_events(SimpleNamespace(write_many=frozen_write), [])
        except DatabaseError as exc:
            outcome.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=runner)
    thread.start()
    try:
        assert holding.wait(10)
        assert reclaim_lapsed_turns() == 0  # held, and not waited for
        started = time.monotonic()
        wait_for("the turn reclaimed", reclaim_lapsed_turns, seconds=5, every=0.2)
        assert time.monotonic() - started < 4  # well before the frozen runner wakes (6 s)
    finally:
        thread.join(15)
    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED and reclaim.LOST in turn.error
    # The woken runner finds its session ended: an outage (its backlog is kept and written anew),
    # not a batch to write again one by one on a dead connection.
    assert len(outcome) == 1 and is_outage(outcome[0])
