"""Taking back a post while a worker takes the turn that reads it: each on its own connection.

The take-back reads a waiting turn's status in the same instant a worker claims it. Counted as
still waiting, it would be one that never read the post; but the worker's claim is committed
first, and the turn makes its prompt from the record as it then stands (the words still there)."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, connections, transaction

from motion_runner.harnesses import Event, EventKind
from motion_runner.ingest.sessions import latest_session
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import TakenBack, Turn, TurnStatus
from motion_runner.retract import take_back
from motion_runner.runner.turns import claim_turn
from tests.wakes_support import clock, dials, room, say

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="the race needs PostgreSQL's row locks; the SQLite fallback serializes every writer",
    ),
]

CODE = "the door code is 4471, come in"
BOUND = 120  # seconds: generous for a busy machine; only a hang reaches it


def until(condition) -> bool:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def waiting_on_a_row_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def test_a_turn_a_worker_claims_as_the_post_is_taken_back_counts_as_having_read_it(room, clock):
    post = say(room.motion, room.justin, CODE, clock)
    say(room.motion, room.justin, "@magent remember that", clock.advance(1) and clock)
    turn = Turn.objects.filter(agent=room.magent, reason="mention").latest("pk")
    claimed, let_go = threading.Event(), threading.Event()
    taker: dict[str, int] = {}
    errors: list[BaseException] = []

    def worker() -> None:  # claims the turn; its commit waits until the take-back is under way
        try:
            with transaction.atomic():
                assert claim_turn(turn.pk) is not None
                claimed.set()
                let_go.wait(BOUND)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)
        finally:
            claimed.set()
            connections.close_all()

    def person() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                taker["pid"] = cursor.fetchone()[0]
            take_back(post, "justin")
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker), threading.Thread(target=person)]
    threads[0].start()
    assert claimed.wait(BOUND)
    threads[1].start()
    # The take-back has read the turn and waits for the worker's claim to commit.
    assert until(lambda: "pid" in taker and waiting_on_a_row_lock(taker["pid"]))
    let_go.set()
    for thread in threads:
        thread.join(BOUND)
    assert not errors, errors
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.RUNNING

    # It started before the post left: it may have read it, and the thread says so.
    assert TakenBack.objects.get(message=post).reached == ["magent"]
    context = IngestContext(
        motion=room.motion, agent=room.magent, harness=room.magent.harness, source="runner"
    )
    context.turn = Turn.objects.get(pk=turn.pk)
    EventWriter(context).write(Event(EventKind.INIT, session_id="s-raced"))
    assert latest_session(room.motion, room.magent) is None
