"""Every post an agent or a person makes moves the consider loop's clocks (wakes.loop.note_post).
On PostgreSQL that is two statements whatever the Motion's listening agents (wakes/noting.py),
nothing locked between them; a state someone wrote in between is noted under its lock, and
nobody's write is lost. Each agent's own dials, its Motion's and its pair's overrides included,
still decide its due time."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import AgentFactory, MessageFactory, MotionFactory
from wakes import loop, noting
from wakes.loop import note_post
from wakes.models import DialOverride, ListenState
from wakes.models.dials import overrides_for, resolve

pytestmark = pytest.mark.django_db
# The read-then-conditional-write note is PostgreSQL's (wakes/noting.unlocked_notes); on SQLite,
# which serializes its writers, every note is the locked one (pinned below too).
unlocked_note_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="the two-statement note is PostgreSQL's; SQLite notes under lock",
)

# Posts an hour ahead: the states' own created_at (now) never decides a twin's due time.
AT = timezone.now() + timedelta(hours=1)


def motion_with_listeners(slug: str, count: int):
    motion = MotionFactory(slug=slug)
    agents = [AgentFactory(name=f"{slug}-{n}", listening=True) for n in range(count)]
    motion.agents.add(*agents)
    return motion, agents


def statements_of_a_note(motion) -> int:
    note_post(MessageFactory(motion=motion, sender="justin"))  # the states and dials exist before
    post = MessageFactory(motion=motion, sender="justin")
    with CaptureQueriesContext(connection) as queries:
        note_post(post)
    return len(queries)


@unlocked_note_only
def test_a_note_is_two_statements_whatever_the_listening_agents():
    one, _ = motion_with_listeners("one-listener", 1)
    five, _ = motion_with_listeners("five-listeners", 5)
    # One read (states, dials, missing states, overrides at all), one conditional write of every state.
    assert statements_of_a_note(one) == statements_of_a_note(five) == 2


@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL's note is the two statements above")
def test_a_locked_note_adds_one_update_per_further_listening_agent():
    one, _ = motion_with_listeners("one-listener", 1)
    five, _ = motion_with_listeners("five-listeners", 5)
    assert statements_of_a_note(five) - statements_of_a_note(one) == 4


def test_a_listening_agent_without_a_state_gets_one_and_is_noted():
    motion, (codey,) = motion_with_listeners("joined-late", 1)
    note_post(MessageFactory(motion=motion, sender="justin"))
    magent = AgentFactory(name="magent", listening=True)
    motion.agents.add(magent)
    post = MessageFactory(motion=motion, sender="justin")
    note_post(post)
    noted = {state.agent_id: state.last_post_at for state in ListenState.objects.filter(motion=motion)}
    assert noted == {codey.pk: post.created_at, magent.pk: post.created_at}


def claims_codey_after_each_read(monkeypatch, motion, codey, times: int) -> None:
    """A tick that writes codey's state (a claim bumps its version) right after each of the first
    `times` reads of a note, before the note's write."""
    real_read, claims = noting.read_for_note, iter(range(times))

    def read_then_a_tick_claims_codey(motion_id):
        read = real_read(motion_id)
        if next(claims, None) is not None:
            ListenState.objects.filter(motion=motion, agent=codey).update(
                considered_at=CONSIDERED_AT, version=F("version") + 1
            )
        return read

    monkeypatch.setattr(loop, "read_for_note", read_then_a_tick_claims_codey)


CONSIDERED_AT = timezone.now() - timedelta(minutes=5)


@unlocked_note_only
@pytest.mark.parametrize("claims", [1, loop.UNLOCKED_NOTE_TRIES])  # read again; then under lock
def test_a_state_written_between_the_read_and_the_write_keeps_that_write_and_still_gets_the_note(
    monkeypatch, claims
):
    motion, (codey, magent) = motion_with_listeners("raced", 2)
    note_post(MessageFactory(motion=motion, sender="justin"))
    claims_codey_after_each_read(monkeypatch, motion, codey, claims)
    before = dict(ListenState.objects.filter(motion=motion).values_list("agent_id", "version"))
    post = MessageFactory(motion=motion, sender="justin")
    note_post(post)
    states = {state.agent_id: state for state in ListenState.objects.filter(motion=motion)}
    assert states[codey.pk].considered_at == CONSIDERED_AT  # the tick's write is kept
    assert states[codey.pk].last_post_at == states[magent.pk].last_post_at == post.created_at
    # Each of the tick's claims bumped codey's version, then the note did, once; magent's, once.
    assert states[codey.pk].version == before[codey.pk] + claims + 1
    assert states[magent.pk].version == before[magent.pk] + 1


@unlocked_note_only
def test_a_note_read_again_after_a_claim_writes_only_the_state_it_missed(monkeypatch):
    motion, (codey, magent) = motion_with_listeners("read-again", 2)
    note_post(MessageFactory(motion=motion, sender="justin"))
    claims_codey_after_each_read(monkeypatch, motion, codey, 1)
    post = MessageFactory(motion=motion, sender="justin")
    with CaptureQueriesContext(connection) as queries:
        note_post(post)
    # The note's read, the tick's claim, the note's write (of magent's: codey's moved on), its
    # read again and its write of codey's: never the locked note's SELECT … FOR UPDATE.
    kinds = [query["sql"].split(None, 1)[0] for query in queries]
    assert kinds == ["SELECT", "UPDATE", "WITH", "SELECT", "WITH"]


def test_the_unlocked_note_leaves_every_state_as_the_locked_note_does():
    results: dict[str, dict] = {"unlocked": {}, "locked": {}}
    for label in results:
        motion, (codey, magent, quieter) = motion_with_listeners(f"{label}-twin", 3)
        DialOverride.objects.create(agent=quieter, quiet_seconds=600)
        DialOverride.objects.create(motion=motion, agent=magent, quiet_seconds=45)
        note_post(MessageFactory(motion=motion, sender="justin", created_at=AT - timedelta(minutes=10)))
        posts = (
            MessageFactory(motion=motion, sender="justin", created_at=AT),
            MessageFactory(motion=motion, sender="codey", agent=codey, created_at=AT + timedelta(seconds=9)),
        )
        for post in posts:
            if label == "unlocked":
                note_post(post, consumed_by={magent.pk})
            else:
                loop.note_locked(post, {magent.pk}, loop.clock.now())
        names = {codey.pk: "codey", magent.pk: "magent", quieter.pk: "quieter"}
        for state in ListenState.objects.filter(motion=motion):
            results[label][names[state.agent_id]] = {
                name: getattr(state, name) for name in (*noting.NOTED_FIELDS, "version")
            }
    assert results["unlocked"] == results["locked"]
    assert results["unlocked"]["quieter"]["due_at"] > results["unlocked"]["codey"]["due_at"]


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
