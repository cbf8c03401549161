"""A post's note: every listening pair's clocks of its Motion moved, in one place.

A post (the newest of a batch written together, once per Motion after its commit: the
announcer, motion_runner/ingest/announcing.py) moves each listening pair's clocks and its due time.
Here, and only here: one read of the Motion's states in pk order with the dials, the listening
agents still without a state and whether an override could apply; then one write of the noted
fields with each state's `version` bumped (the claim rule the loop lives by: wakes/consider_loop/loop.py),
guarded by that version and made without a transaction. Once: if a state was written between the
read and the write, or an agent has no state yet, the note of the states it did not write is made
in one transaction under the states' locks, taken in pk order (the order every writer of several
states locks them in, so two notes of one Motion never deadlock), its missing states made first.
On PostgreSQL each read and write is one statement (motion_runner/sql/listen_states.py); the ORM
reference paths beside them there run elsewhere and with
MOTION_RUNNER_SQL_FAST_PATHS off. Neither depends on the number of listening agents
(tests/wakes/test_wakes_note_cost.py pins them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from motion_runner.ingest.fit import is_post
from motion_runner.models import Message
from motion_runner.sql.listen_states import NoteRead, read_states, update_bumped, update_fields

from ..models import DialOverride, Dials, ListenState, clock
from ..models.in_force import resolve
from ..models.overrides import overrides_for
from .loop import ensure_states, is_person, schedule

# What the note changes on a state (advance_clocks); `version` is bumped beside them.
NOTED_FIELDS = (
    "last_said_at",
    "last_post_at",
    "considered_through",
    "last_person_at",
    "idle_level",
    "rested",
    "due_at",
)


@dataclass
class PostFacts:
    """What a note needs to know of the post it notes."""

    at: datetime
    agent_id: int | None
    person: bool
    stale: bool  # written long ago (a transcript imported late, a backfill): moves clocks, not news
    consumed_by: set[int]


def post_facts(message: Message, consumed_by: set[int], now: datetime, dials: Dials) -> PostFacts:
    at = message.created_at
    return PostFacts(
        at=at,
        agent_id=message.agent_id,
        person=is_person(message),
        stale=at < now - timedelta(minutes=dials.backfill_horizon_minutes),
        consumed_by=consumed_by,
    )


def advance_clocks(state: ListenState, post: PostFacts, dials: Dials, overrides: list[DialOverride]) -> None:
    """One state's clocks moved by a post, and its due time again (what `version` guards)."""
    at = post.at
    state.last_said_at = max(filter(None, (state.last_said_at, at)))
    if state.agent_id != post.agent_id and not post.stale:
        state.last_post_at = max(filter(None, (state.last_post_at, at)))
    if state.agent_id in post.consumed_by:
        state.considered_through = max(filter(None, (state.considered_through, at)))
    if post.person and not post.stale:
        state.last_person_at = max(filter(None, (state.last_person_at, at)))
        state.idle_level = 0
        state.rested = False
    # On every post's path, for each listening pair: no query for the room's `reads` (unused here).
    resolved = resolve(state.motion_id, state.agent_id, dials, overrides, steered=False)
    state.due_at = schedule(state, resolved)


def note_post(message: Message, *, consumed_by: set[int] = frozenset()) -> None:
    """A post landed: move every listening pair's clocks and its due time.

    `consumed_by`: agents already woken for this very post (a mention): it is theirs, so
    their loop does not consider it a second time.

    First without a transaction: one read, then one write of the states nobody wrote since
    (each state's `version`). A state written in between (the loop's claim, another note), or a
    listening agent still without a state, and the note is made under the states' locks, of the
    states the first write left (all of them, when one was missing)."""
    if not is_post(message):
        return
    now = clock.now()
    motion = message.motion
    connection = connections[router.db_for_write(ListenState)]
    read = read_note(connection, motion.pk, lock=False)
    left = None  # the states still to note: None, all of them
    if not read.missing:
        if not read.states:
            return
        noted = noted_states(read.states, read, message, consumed_by, now)
        left = {state.pk for state in noted} - update_bumped(connection, noted, [*NOTED_FIELDS, "version"])
        if not left:
            return
    with transaction.atomic(using=connection.alias):
        read = read_note(connection, motion.pk, lock=True)
        if missing := read.missing:  # a listening agent without a state yet: made, then all read again
            ensure_states(motion, now)
            read = read_note(connection, motion.pk, lock=True)
        states = [
            state for state in read.states if left is None or state.pk in left or state.agent_id in missing
        ]
        if states:
            noted = noted_states(states, read, message, consumed_by, now)
            update_fields(connection, noted, [*NOTED_FIELDS, "version"])


def noted_states(
    states: list[ListenState], read: NoteRead, message: Message, consumed_by: set[int], now: datetime
) -> list[ListenState]:
    """`states` (of `read`) with their clocks moved by the post and each `version` bumped."""
    dials = read.dials or Dials.load()
    agents = [state.agent_id for state in read.states]
    overrides = overrides_for(states[0].motion_id, agents) if read.overridden else []
    post = post_facts(message, consumed_by, now, dials)
    for state in states:
        advance_clocks(state, post, dials, overrides)
        state.version += 1
    return states


def read_note(connection: BaseDatabaseWrapper, motion_id: str, *, lock: bool) -> NoteRead:
    """The Motion's states in pk order (`lock`: locked), and what their note needs beside them."""
    return read_states(
        connection, motion_id, states=ListenState, dials=Dials, overrides=DialOverride, lock=lock
    )
