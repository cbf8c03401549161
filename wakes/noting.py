"""A post's note: every listening pair's clocks of its Motion moved, in one path.

A post (the newest of a batch written together, once per Motion after its commit: the
announcer, motion_runner/announcing.py) moves each listening pair's clocks and its due
time. Here, and only here: the Motion's listening agents get their states first (an anti-join,
and an insert only when one is missing), then one locked read of the Motion's states in pk
order (`select_for_update`, the order every writer of several states locks them in, so two
notes of one Motion never deadlock), the overrides that could apply, and one `bulk_update` of
the noted fields with each state's `version` bumped (the claim rule the loop lives by:
wakes/loop.py). The same statements on PostgreSQL and SQLite, whatever the number of listening
agents (tests/test_wakes_note_cost.py pins them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from motion_runner.message_fit import is_post
from motion_runner.models import Message

from . import clock
from .loop import ensure_states, is_person, schedule
from .models import DialOverride, Dials, ListenState, overrides_for, resolve

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
    their loop does not consider it a second time."""
    if not is_post(message):
        return
    now = clock.now()
    motion = message.motion
    ensure_states(motion, now)
    dials = Dials.load()
    post = post_facts(message, consumed_by, now, dials)
    with transaction.atomic():
        states = list(ListenState.objects.select_for_update().filter(motion=motion).order_by("pk"))
        if not states:
            return
        overrides = overrides_for(motion.pk, [state.agent_id for state in states])
        for state in states:
            advance_clocks(state, post, dials, overrides)
            state.version += 1
        ListenState.objects.bulk_update(states, [*NOTED_FIELDS, "version"])
