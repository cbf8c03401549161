"""What a plain @mention costs the database, pinned: the facts are read once (a handful of
statements, whatever the gates), and the whole path from the post to its queued turn stays where
it was measured (issue 39: the mention decided once). A change that reads a fact twice, or writes
a decision twice, turns this red; raise a pin only with the reason in the commit.
"""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

import pytest
from django.db import connection

from motion_runner.models import Message, Turn
from motion_runner.sql import fast_paths
from tests.factories import MessageFactory
from tests.wakes_support import clock, room, say
from wakes.consider_loop.handlers import handle_message
from wakes.consider_loop.mention_path import mention_facts

pytestmark = pytest.mark.django_db

# The dials, the scram, this post's decision so far, the pair's listening (the host's steering).
GATHER_STATEMENTS = 4
# The agents named (2), the facts (4), the decision's row (3, with its savepoint), the mention turn
# queued (its hourly cap, prompt, session, wake line and ledger row: most of the rest; the dials read
# once for the whole decision, wakes.models.dials_held), and the loop's clocks moved (note_post).
PATH_STATEMENTS = 52
# Without the hand-written SQL (another backend, or the switch off): the note's ORM reads and writes.
ORM_PATH_STATEMENTS = 58


def posted(room, clock, text: str) -> Message:
    """Justin's web post, stored; the mention path not yet run for it."""
    return MessageFactory(
        motion=room.motion,
        text=text,
        kind="text",
        source="web",
        sender="justin",
        author=room.justin,
        sign_in="password",
        created_at=clock.now(),
    )


@pytest.fixture
def warm(room, clock):
    """The room as it stands once anyone spoke: its dials row and the loop's states exist."""
    say(room.motion, room.justin, "morning all", clock)
    return room


def test_a_plain_mentions_facts_are_read_in_four_statements(warm, clock, django_assert_num_queries):
    post = posted(warm, clock, "@magent what did jams settle?")
    with django_assert_num_queries(GATHER_STATEMENTS):
        mention_facts(post, warm.magent)


@pytest.mark.parametrize("fast", [True, False], ids=["sql fast paths", "the ORM"])
def test_a_plain_mention_to_its_queued_turn_costs_a_pinned_number_of_statements(
    warm, clock, django_assert_num_queries, settings, fast
):
    settings.MOTION_RUNNER_SQL_FAST_PATHS = fast
    post = posted(warm, clock, "@magent what did jams settle?")
    with django_assert_num_queries(PATH_STATEMENTS if fast_paths(connection) else ORM_PATH_STATEMENTS):
        woken = handle_message(post, dispatch=False)
    assert woken == [Turn.objects.get(agent=warm.magent)]
