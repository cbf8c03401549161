"""Every post an agent or a person makes moves the consider loop's clocks
(wakes.consider_loop.noting.note_post): one place on every backend, the same statements whatever
the Motion's listening agents (one read of the states with the dials and their overrides, one
write guarded by each state's version; a state written in between, and the note is made again
under the states' locks), and nobody's write is lost. Each agent's own dials, its Motion's and its pair's overrides included,
still decide its due time."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.sql import fast_paths
from tests.factories import AgentFactory, MessageFactory, MotionFactory
from wakes.consider_loop import noting
from wakes.consider_loop.noting import note_post
from wakes.models import DialOverride, ListenState
from wakes.models.in_force import resolve
from wakes.models.overrides import overrides_for

pytestmark = pytest.mark.django_db

# Posts an hour ahead: the states' own created_at (now) never decides a twin's due time.
AT = timezone.now() + timedelta(hours=1)
# The read and the guarded write, no transaction: on PostgreSQL one statement each
# (motion_runner/sql/listen_states.py); in the ORM four reads (the missing states, the states, the
# dials, the overrides) and the write's SAVEPOINT, its rows locked, its update, RELEASE.
NOTE_STATEMENTS = 2 if fast_paths(connection) else 8


def motion_with_listeners(slug: str, count: int):
    motion = MotionFactory(slug=slug)
    agents = [AgentFactory(name=f"{slug}-{n}", listening=True) for n in range(count)]
    motion.agents.add(*agents)
    return motion, agents


@pytest.mark.parametrize("listeners", [1, 5])
def test_a_note_costs_the_same_statements_whatever_the_listening_agents(django_assert_num_queries, listeners):
    motion, _ = motion_with_listeners(f"listeners-{listeners}", listeners)
    note_post(MessageFactory(motion=motion, sender="justin"))  # the states and dials exist before
    post = MessageFactory(motion=motion, sender="justin")
    with django_assert_num_queries(NOTE_STATEMENTS):
        note_post(post)


def test_a_note_reads_its_states_in_pk_order_and_writes_them_in_one_guarded_update():
    motion, _ = motion_with_listeners("guarded", 3)
    note_post(MessageFactory(motion=motion, sender="justin"))
    with CaptureQueriesContext(connection) as queries:
        note_post(MessageFactory(motion=motion, sender="justin"))
    sql = [query["sql"] for query in queries]
    read = [s for s in sql if "wakes_listenstate" in s and "agent_id" in s and "ORDER BY" in s]
    assert read and ('ORDER BY "id"' in read[0] or '"wakes_listenstate"."id" ASC' in read[0])
    assert "FOR UPDATE" not in read[0]  # nobody waits on a lock to read
    written = [s for s in sql if "UPDATE" in s and "wakes_listenstate" in s and "SET" in s]
    assert len(written) == 1
    # Guarded by the versions read: in the write itself, or in the read that locks its rows (ORM).
    guarded = [s for s in sql if "WHERE" in s and '"version"' in s.split("WHERE", 1)[1]]
    assert guarded and sql.index(guarded[0]) <= sql.index(written[0])


def test_a_state_written_between_the_read_and_the_write_is_noted_under_the_locks(monkeypatch):
    motion, (codey, magent) = motion_with_listeners("between", 2)
    note_post(MessageFactory(motion=motion, sender="justin", created_at=AT - timedelta(minutes=1)))
    real_read = noting.read_note

    def the_loop_claims_codey_after_the_read(connection_, motion_id, *, lock):
        read = real_read(connection_, motion_id, lock=lock)
        if not lock:  # the loop claims codey's state between this read and the note's write
            ListenState.objects.filter(motion=motion, agent=codey).update(version=F("version") + 1)
        return read

    monkeypatch.setattr(noting, "read_note", the_loop_claims_codey_after_the_read)
    before = dict(ListenState.objects.filter(motion=motion).values_list("agent_id", "version"))
    with CaptureQueriesContext(connection) as queries:
        post = MessageFactory(motion=motion, sender="justin", created_at=AT)
        note_post(post)
    states = {state.agent_id: state for state in ListenState.objects.filter(motion=motion)}
    assert states[codey.pk].last_post_at == states[magent.pk].last_post_at == post.created_at
    assert states[codey.pk].version == before[codey.pk] + 2  # the loop's claim, then the note
    assert states[magent.pk].version == before[magent.pk] + 1  # noted once, by the first write
    if connection.features.has_select_for_update:
        assert any("FOR UPDATE" in query["sql"] and "agent_id" in query["sql"] for query in queries)


def test_a_listening_agent_without_a_state_gets_one_and_is_noted():
    motion, (codey,) = motion_with_listeners("joined-late", 1)
    note_post(MessageFactory(motion=motion, sender="justin"))
    magent = AgentFactory(name="magent", listening=True)
    motion.agents.add(magent)
    post = MessageFactory(motion=motion, sender="justin")
    note_post(post)
    noted = {state.agent_id: state.last_post_at for state in ListenState.objects.filter(motion=motion)}
    assert noted == {codey.pk: post.created_at, magent.pk: post.created_at}


def test_a_note_keeps_what_was_written_before_it_and_bumps_each_version_once():
    motion, (codey, magent) = motion_with_listeners("bumped", 2)
    note_post(MessageFactory(motion=motion, sender="justin"))
    considered_at = timezone.now() - timedelta(minutes=5)
    ListenState.objects.filter(motion=motion, agent=codey).update(considered_at=considered_at)
    before = dict(ListenState.objects.filter(motion=motion).values_list("agent_id", "version"))
    post = MessageFactory(motion=motion, sender="justin")
    note_post(post)
    states = {state.agent_id: state for state in ListenState.objects.filter(motion=motion)}
    assert states[codey.pk].considered_at == considered_at
    assert states[codey.pk].last_post_at == states[magent.pk].last_post_at == post.created_at
    assert {agent: state.version for agent, state in states.items()} == {
        agent: version + 1 for agent, version in before.items()
    }


def test_a_post_consumed_by_a_mention_moves_that_agents_considered_through():
    motion, (codey, magent) = motion_with_listeners("consumed", 2)
    note_post(MessageFactory(motion=motion, sender="justin", created_at=AT - timedelta(minutes=10)))
    post = MessageFactory(motion=motion, sender="justin", created_at=AT)
    note_post(post, consumed_by={magent.pk})
    states = {state.agent_id: state for state in ListenState.objects.filter(motion=motion)}
    assert states[magent.pk].considered_through == post.created_at
    assert states[codey.pk].considered_through != post.created_at


def test_the_overrides_read_together_resolve_each_listener_as_its_own_read_does():
    motion, (plain, quieter, paired) = motion_with_listeners("overridden", 3)
    other_motion = MotionFactory(slug="elsewhere")
    DialOverride.objects.create(motion=motion, quiet_seconds=30)
    DialOverride.objects.create(agent=quieter, quiet_seconds=120)
    DialOverride.objects.create(motion=motion, agent=paired, quiet_seconds=300, daily_budget_usd=Decimal("2"))
    DialOverride.objects.create(motion=other_motion, agent=plain, quiet_seconds=999)  # not this Motion's
    DialOverride.objects.create(motion=other_motion, quiet_seconds=777)
    together = overrides_for(motion.pk, [plain.pk, quieter.pk, paired.pk])
    for agent, quiet in ((plain, 30), (quieter, 120), (paired, 300)):
        assert resolve(motion.pk, agent.pk, overrides=together) == resolve(motion.pk, agent.pk)
        assert resolve(motion.pk, agent.pk, overrides=together).quiet_seconds == quiet
    assert resolve(motion.pk, paired.pk, overrides=together).daily_caps[-1] == ("pair", Decimal("2"))


def test_a_note_schedules_each_listener_by_its_own_overrides():
    motion, (plain, quieter) = motion_with_listeners("scheduled", 2)
    DialOverride.objects.create(agent=quieter, quiet_seconds=600)
    note_post(MessageFactory(motion=motion, sender="justin"))
    due = {state.agent_id: state.due_at for state in ListenState.objects.filter(motion=motion)}
    assert due[quieter.pk] > due[plain.pk]


def test_an_agent_who_joins_before_the_locked_note_is_noted_with_the_states_left(monkeypatch):
    motion, (codey,) = motion_with_listeners("joined-between", 1)
    note_post(MessageFactory(motion=motion, sender="justin", created_at=AT - timedelta(minutes=1)))
    magent = AgentFactory(name="magent-between", listening=True)
    real_read = noting.read_note

    def codey_claimed_and_magent_joins_after_the_read(connection_, motion_id, *, lock):
        read = real_read(connection_, motion_id, lock=lock)
        if not lock and not motion.agents.filter(pk=magent.pk).exists():
            ListenState.objects.filter(motion=motion, agent=codey).update(version=F("version") + 1)
            motion.agents.add(magent)  # joins, still without a state, before the locked note
        return read

    monkeypatch.setattr(noting, "read_note", codey_claimed_and_magent_joins_after_the_read)
    post = MessageFactory(motion=motion, sender="justin", created_at=AT)
    note_post(post)
    noted = dict(ListenState.objects.filter(motion=motion).values_list("agent_id", "last_post_at"))
    assert noted == {codey.pk: post.created_at, magent.pk: post.created_at}
