"""Wakes that survive the broker: the database is the record of what is owed. A consideration
whose task was lost is sent again exactly once; one whose wake never started gives its
reservation back and its posts are considered again."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from tests.wakes_support import clock, dials, finish, loop, room, say
from wakes import tasks
from wakes.consider_loop.considering import run_consideration
from wakes.consider_loop.loop import tick
from wakes.consider_loop.recovery import recover_considerations
from wakes.models import Consideration, ListenState, Spend

pytestmark = pytest.mark.django_db


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run a block as if it committed: what it sends on commit is sent."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def sent(monkeypatch):
    """The consider tasks sent to the broker (as ids), in order."""
    ids: list[int] = []
    monkeypatch.setattr(tasks.consider, "delay", lambda pk: ids.append(pk))
    return ids


def lose_the_task(room, clock, committed) -> Consideration:
    """Justin asks; the tick claims a consideration and sends its task, which the broker loses."""
    say(room.motion, room.justin, "which city first, Portland or Seattle?", clock)
    clock.advance(11)
    with committed():
        [claimed] = tick()
    return claimed


def test_a_consideration_whose_task_was_lost_is_sent_again_once(room, clock, sent, settings, committed):
    settings.WAKES_CONSIDERATION_START_SECONDS = 30
    claimed = lose_the_task(room, clock, committed)
    assert sent == [claimed.pk]

    clock.advance(31)
    with committed():
        tick()
    clock.advance(3)
    with committed():
        tick()

    assert sent == [claimed.pk, claimed.pk]  # once by the tick, once by the recovery: no more
    outcome = run_consideration(claimed.pk, dispatch=False, screen=None)
    assert outcome is not None and outcome.turn is not None
    assert "Portland or Seattle" in outcome.turn.prompt


def test_a_consideration_that_never_starts_is_given_up_and_its_posts_are_owed_again(
    room, clock, sent, settings, committed
):
    settings.WAKES_CONSIDERATION_START_SECONDS = 30
    lost = lose_the_task(room, clock, committed)
    clock.advance(31)
    recover_considerations(clock.now(), dispatch=False)  # sent again; lost again

    clock.advance(31)
    with committed():
        [again] = tick()

    lost.refresh_from_db()
    assert lost.status == Consideration.Status.FAILED
    assert again.pk != lost.pk and again.through == lost.through


def test_a_consideration_whose_worker_died_before_the_wake_gives_its_reservation_back(room, clock, settings):
    settings.WAKES_CONSIDERATION_START_SECONDS = 30
    say(room.motion, room.justin, "are the shirts in yet?", clock)
    clock.advance(11)
    [claimed] = tick(dispatch=False)
    Consideration.objects.filter(pk=claimed.pk).update(status=Consideration.Status.RUNNING)
    envelope = Spend.objects.create(
        kind=Spend.Kind.CONSIDERATION,
        motion=room.motion,
        agent=room.magent,
        consideration=claimed,
        day=clock.now().date(),
        at=clock.now(),
        amount=Decimal("3"),
        reserved=Decimal("3"),
    )  # reserved, then the worker died before the wake

    clock.advance(10 * 30 + 1)
    assert recover_considerations(clock.now(), dispatch=False) == {"resent": 0, "abandoned": 1}

    envelope.refresh_from_db()
    assert envelope.settled and envelope.amount == 0
    state = ListenState.objects.get(motion=room.motion, agent=room.magent)
    assert state.busy_until is None and state.due_at <= clock.now()
    assert state.considered_through == claimed.previous_through
