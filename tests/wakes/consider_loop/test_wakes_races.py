"""Races with parallel workers on PostgreSQL: each thread has its own connection and commits."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection, connections
from django.utils import timezone

from motion_runner.models import Turn
from tests.factories import MessageFactory, MotionFactory
from tests.wakes_support import clock, dials, no_screen, room, say
from wakes.consider_loop.considering import run_consideration
from wakes.consider_loop.loop import tick
from wakes.models import Consideration, ListenState, Spend
from wakes.models.listening import WakeKind

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql",
        reason="races need PostgreSQL's row locks; the SQLite fallback serializes every writer",
    ),
]


def race(workers: int, work: Callable[[int], object]) -> list[object]:
    """Run `work(i)` in `workers` threads released at the same moment; each has its own connection."""
    barrier = threading.Barrier(workers)
    results: list[object] = [None] * workers
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)  # generous for a busy machine; a thread still running fails below
    # Every racer finished: a result left at None by a slow thread would pass the checks vacuously.
    assert not any(thread.is_alive() for thread in threads), "a racer did not finish in 600 s"
    assert not errors, errors
    return results


@pytest.fixture
def slow_budget_reads(monkeypatch):
    """Every budget read takes 50 ms, as under load: without the day's lock, all the racers
    read the same totals before any of them reserves, so a missing lock always shows."""
    from wakes.money import budget

    def slowly(read):
        def wrapper(*args, **kwargs):
            result = read(*args, **kwargs)
            time.sleep(0.05)
            return result

        return wrapper

    monkeypatch.setattr(budget, "spent_today", slowly(budget.spent_today))
    monkeypatch.setattr(budget, "full_in_last_hour", slowly(budget.full_in_last_hour))


def claimed_in(motion, room, clock) -> Consideration:
    state, _ = ListenState.objects.get_or_create(
        motion=motion, agent=room.magent, defaults={"created_at": clock.now()}
    )
    # A person's post to consider: a consideration with nothing new to read launches nothing.
    MessageFactory(
        motion=motion, author=room.justin, sender="justin", text="any news?", created_at=clock.now()
    )
    return Consideration.objects.create(
        state=state,
        motion=motion,
        agent=room.magent,
        kind=WakeKind.NEW_POSTS,
        claim_version=Consideration.objects.count() + 1,
        through=clock.now(),
        created_at=clock.now(),
    )


def test_twenty_considerations_racing_for_the_last_dollars_yield_exactly_one(room, clock, slow_budget_reads):
    Spend.objects.create(
        kind="consideration",
        motion=room.motion,
        agent=room.magent,
        day=timezone.localdate(clock.now()),
        at=clock.now(),
        amount=Decimal("6.50"),
        settled=True,
    )  # $3.50 left: one $3.01 envelope fits, a second would cross $10
    motions = [MotionFactory(slug=f"racer-{i}") for i in range(20)]
    pks = [claimed_in(m, room, clock).pk for m in motions]
    race(20, lambda i: run_consideration(pks[i], dispatch=False, screen=no_screen))
    assert Turn.objects.count() == 1
    statuses = sorted(Consideration.objects.values_list("status", flat=True))
    assert statuses == ["refused"] * 19 + ["woken"]
    total = sum(Spend.objects.filter(counted=True).values_list("amount", flat=True))
    assert total <= Decimal("10.00")


def test_twenty_considerations_racing_for_the_last_hourly_slot_yield_exactly_one(
    room, clock, slow_budget_reads
):
    dials(considerations_per_hour=1)
    pks = [claimed_in(room.motion, room, clock).pk for _ in range(20)]
    race(20, lambda i: run_consideration(pks[i], dispatch=False, screen=no_screen))
    assert Turn.objects.count() == 1


def test_two_ticks_at_once_claim_each_due_pair_once(room, clock):
    motions = [MotionFactory(slug=f"busy-{i}") for i in range(10)]
    for motion in motions:
        motion.agents.add(room.magent)
        say(motion, room.justin, "anyone?", clock)
    clock.advance(11)
    results = race(2, lambda i: tick(dispatch=False))
    assert sum(len(r) for r in results) == 10
    assert Consideration.objects.count() == 10
    assert Consideration.objects.values("state").distinct().count() == 10


def test_the_same_consideration_delivered_to_two_workers_runs_once(room, clock):
    say(room.motion, room.justin, "is the stage booked?", clock)
    clock.advance(11)
    [c] = tick(dispatch=False)
    results = race(2, lambda i: run_consideration(c.pk, dispatch=False, screen=no_screen))
    assert sum(r is not None for r in results) == 1
    assert Turn.objects.count() == 1


def test_a_post_landing_during_a_claim_is_never_lost(room, clock):
    say(room.motion, room.justin, "first", clock)
    clock.advance(11)
    state = ListenState.objects.get()
    results = race(
        2,
        lambda i: tick(dispatch=False) if i == 0 else say(room.motion, room.rosemary, "second", clock),
    )
    state.refresh_from_db()
    second = results[1]
    # Either the claim covered "second", or "second" is still owed to a later consideration.
    covered = Consideration.objects.filter(through__gte=second.created_at).exists()
    assert covered or state.pending


def test_notes_of_one_motion_at_once_lose_no_post_and_never_deadlock():
    """Eight posts noted at once in a Motion of five listening agents (wakes/consider_loop/noting.py: the
    states locked in pk order, then one update): each state ends with the newest post's time and one
    version bump per note, whichever notes were read again or taken under lock."""
    from tests.factories import AgentFactory, MessageFactory
    from wakes.consider_loop.noting import note_post

    motion = MotionFactory(slug="busy")
    agents = [AgentFactory(name=f"listener-{n}", listening=True) for n in range(5)]
    motion.agents.add(*agents)
    note_post(MessageFactory(motion=motion, sender="justin"))
    before = dict(ListenState.objects.filter(motion=motion).values_list("agent_id", "version"))
    started = timezone.now()
    posts = [
        MessageFactory(motion=motion, sender="justin", created_at=started + timedelta(seconds=n))
        for n in range(8)
    ]
    for _ in range(3):
        race(len(posts), lambda i: note_post(posts[i]))
    states = list(ListenState.objects.filter(motion=motion))
    assert len(states) == len(agents)  # a loop over no states would check nothing
    for state in states:
        assert state.last_post_at == state.last_said_at == posts[-1].created_at
        assert state.version == before[state.agent_id] + 3 * len(posts)
