"""Whose a session is decides where it may go (ingest/sessions.py): a key moves only its agent's
own session between Motions; a session of no agent (a person's terminal an admin assigned) stays
where the admin put it, whatever Motions the key's agent belongs to."""

from __future__ import annotations

import pytest

from motion_runner.harnesses import Event, EventKind
from motion_runner.ingest.sessions import SessionConflict, SessionRefused, claim_for, move_session
from motion_runner.ingest.writer import EventWriter, IngestContext
from motion_runner.models import Message, MotionSession, Turn, TurnStatus, Visibility
from tests import recorded
from tests.factories import MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


@pytest.fixture
def desk(scribe):
    """A members-only Motion the scribe is an agent of, holding a person's terminal session."""
    desk = MotionFactory(slug="desk", visibility=Visibility.MEMBERS)
    desk.agents.add(scribe.agent)
    MotionSession.objects.create(session_id=SESSION, motion=desk, agent=None, harness="claude-code")
    return desk


def anywhere(came_from, to) -> bool:
    return True  # the access seam allows the move: only whose the session is may refuse it


def test_a_session_of_no_agent_is_not_moved_by_an_agents_claim(scribe, harbor, desk):
    with pytest.raises(SessionRefused, match="only an admin moves it"):
        claim_for(SESSION, harbor, scribe.agent, "claude-code", may_move=anywhere)

    assert MotionSession.objects.get(pk=SESSION).motion_id == "desk"
    assert not Message.objects.exists()  # neither thread is told it moved


def test_a_session_of_no_agent_is_not_moved_even_when_asked_directly(scribe, harbor, desk):
    session = MotionSession.objects.select_related("motion").get(pk=SESSION)

    assert move_session(session, harbor, scribe.agent) is False
    assert MotionSession.objects.get(pk=SESSION).motion_id == "desk"


def test_the_agents_own_session_still_moves(scribe, harbor, desk):
    MotionSession.objects.filter(pk=SESSION).update(agent=scribe.agent)

    claim_for(SESSION, harbor, scribe.agent, "claude-code", may_move=anywhere)

    assert MotionSession.objects.get(pk=SESSION).motion_id == "harbor"


def test_a_session_of_no_agent_is_still_claimed_where_it_is(scribe, desk):
    claim_for(SESSION, desk, scribe.agent, "claude-code", may_move=anywhere)

    assert MotionSession.objects.get(pk=SESSION).motion_id == "desk"


def test_a_turns_init_line_naming_another_motions_session_leaves_the_turn_unchanged(scribe, harbor, desk):
    """The runner's writer records the turn's session before claiming it (the order a take-back
    locks them in): a claim refused takes the turn's record back with it."""
    turn = TurnFactory(motion=harbor, agent=scribe.agent, status=TurnStatus.RUNNING)
    context = IngestContext(
        motion=harbor, agent=scribe.agent, harness="claude-code", source="runner", turn=turn
    )

    with pytest.raises(SessionConflict):
        EventWriter(context).write(Event(EventKind.INIT, session_id=SESSION))

    assert Turn.objects.get(pk=turn.pk).session_id == ""
    assert MotionSession.objects.get(pk=SESSION).motion_id == "desk"
