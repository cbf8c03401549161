"""motion_runner/sql/listen_states.py: a note's reads (locked and not) and its writes (guarded by
each state's version and not) on PostgreSQL give what the ORM reference path gives
(`orm_read_states`, `orm_update_bumped`, bulk_update): the same states, dials and missing
agents read, the same rows written and refused, the same rows left behind."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from motion_runner.sql.listen_states import orm_read_states, pg_read_states, update_bumped
from tests.factories import AgentFactory, MessageFactory, MotionFactory
from wakes.consider_loop.noting import NOTED_FIELDS, note_post
from wakes.models import DialOverride, Dials, ListenState

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the fast paths are PostgreSQL's"),
    pytest.mark.django_db,
]

AT = timezone.now() + timedelta(hours=1)


def motion_with_listeners(slug: str, count: int):
    motion = MotionFactory(slug=slug)
    agents = [AgentFactory(name=f"{slug}-{n}", listening=True) for n in range(count)]
    motion.agents.add(*agents)
    return motion, agents


@pytest.mark.parametrize("lock", [True, False])
def test_the_read_reads_what_the_orm_reads(lock):
    motion, (codey, magent, late) = motion_with_listeners("read", 3)
    note_post(MessageFactory(motion=motion, sender="justin"))
    ListenState.objects.filter(motion=motion, agent=late).delete()  # a listener without a state
    DialOverride.objects.create(agent=codey, quiet_seconds=600)
    Dials.load()
    with transaction.atomic():
        models = {"states": ListenState, "dials": Dials, "overrides": DialOverride, "lock": lock}
        fast = pg_read_states(connection, motion.pk, **models)
        orm = orm_read_states(connection, motion.pk, **models)
    fields = [field.attname for field in ListenState._meta.concrete_fields]
    assert [[getattr(s, f) for f in fields] for s in fast.states] == [
        [getattr(s, f) for f in fields] for s in orm.states
    ]
    assert fast.dials.pk == orm.dials.pk == 1
    assert fast.missing == orm.missing == [late.pk]
    assert fast.overridden


def test_a_note_leaves_the_rows_the_orm_path_leaves(settings):
    results: dict[bool, dict[str, dict]] = {}
    for fast in (True, False):
        settings.MOTION_RUNNER_SQL_FAST_PATHS = fast
        motion, (codey, magent, quieter) = motion_with_listeners(f"twin-{fast}", 3)
        DialOverride.objects.create(agent=quieter, quiet_seconds=600)
        DialOverride.objects.create(motion=motion, agent=magent, quiet_seconds=45)
        note_post(MessageFactory(motion=motion, sender="justin", created_at=AT - timedelta(minutes=10)))
        note_post(MessageFactory(motion=motion, sender="justin", created_at=AT), consumed_by={magent.pk})
        note_post(
            MessageFactory(motion=motion, sender="codey", agent=codey, created_at=AT + timedelta(seconds=9))
        )
        names = {codey.pk: "codey", magent.pk: "magent", quieter.pk: "quieter"}
        results[fast] = {
            names[state.agent_id]: {name: getattr(state, name) for name in (*NOTED_FIELDS, "version")}
            for state in ListenState.objects.filter(motion=motion)
        }
    assert results[True] == results[False]
    assert results[True]["quieter"]["due_at"] > results[True]["codey"]["due_at"]


def test_the_guarded_write_writes_and_refuses_the_rows_the_orm_path_does(settings):
    results = {}
    for fast in (True, False):
        settings.MOTION_RUNNER_SQL_FAST_PATHS = fast
        motion, (codey, magent, written_since) = motion_with_listeners(f"guarded-{fast}", 3)
        note_post(MessageFactory(motion=motion, sender="justin", created_at=AT))
        states = list(ListenState.objects.filter(motion=motion).order_by("pk"))
        ListenState.objects.filter(pk=states[2].pk).update(version=states[2].version + 1)  # the loop's claim
        for state in states:
            state.idle_level, state.version = 7, state.version + 1
        written = update_bumped(connection, states, ["idle_level", "version"])
        left = dict(ListenState.objects.filter(motion=motion).values_list("agent_id", "idle_level"))
        results[fast] = (
            written == {states[0].pk, states[1].pk},
            [left[codey.pk], left[magent.pk], left[written_since.pk]],
        )
    assert results[True] == results[False] == (True, [7, 7, 0])
