"""A session moves, and a line is written under a session, only as the poster may (issue 20 items 9
and 14, issue 30 item 3): never out of, or into, a Motion its poster may not read, never under
another agent's session, never by the watcher's username (ingest/sessions.py, through the stream,
the hooks and /api/ingest/)."""

from __future__ import annotations

import copy
import uuid

import pytest

from motion_runner.models import Message, MotionSession, Visibility
from tests import recorded
from tests.factories import MotionFactory
from tests.stream_support import HOOKS, SESSION, body, stream

pytestmark = pytest.mark.django_db


@pytest.fixture
def vault(db):
    """A members-only Motion the scribe is no agent of, with a session an admin assigned to it
    (no agent: a person's terminal)."""
    vault = MotionFactory(slug="vault", visibility=Visibility.MEMBERS)
    MotionSession.objects.create(session_id=SESSION, motion=vault, agent=None, harness="claude-code")
    return vault


@pytest.fixture
def public_harbor(harbor):
    harbor.visibility = Visibility.PUBLIC
    harbor.save(update_fields=["visibility"])
    return harbor


def test_a_session_in_a_motion_the_agent_cannot_read_is_not_moved_by_the_stream(
    client, scribe, vault, public_harbor
):
    response = stream(client, scribe, body())
    assert response.status_code == 403
    assert "may not read" in response.json()["error"]["detail"]
    assert MotionSession.objects.get(pk=SESSION).motion_id == "vault"
    assert not Message.objects.filter(motion=public_harbor).exists()


def test_a_session_in_a_motion_the_agent_cannot_read_is_not_moved_by_a_hook(
    client, scribe, vault, public_harbor
):
    stop = recorded.hooks("Stop")[0]
    response = client.post(f"{HOOKS}?motion=harbor", stop, content_type="application/json", **scribe.headers)
    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "vault"
    assert not Message.objects.filter(motion=public_harbor).exists()


def test_a_line_cannot_move_a_session_out_of_a_motion_the_agent_cannot_read(client, scribe, vault):
    other = str(uuid.uuid4())
    init = {"type": "system", "subtype": "init", "session_id": SESSION, "tools": [], "model": "claude"}
    response = stream(client, scribe, body([init], session_id=other))
    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "vault"


def test_the_agents_own_session_in_a_motion_it_is_one_of_still_moves_to_its_own_motion(
    client, scribe, harbor
):
    open_house = MotionFactory(slug="open-house", visibility=Visibility.PUBLIC)
    open_house.agents.add(scribe.agent)
    MotionSession.objects.create(
        session_id=SESSION, motion=open_house, agent=scribe.agent, harness="claude-code"
    )
    assert stream(client, scribe, body()).status_code == 200
    assert MotionSession.objects.get(pk=SESSION).motion_id == "harbor"


def test_an_admin_assigned_session_with_no_agent_is_not_taken_from_a_motion_the_agent_only_reads(
    client, scribe, harbor
):
    # The lobby is public (the scribe may read it) but the scribe is none of its agents.
    lobby = MotionFactory(slug="lobby", visibility=Visibility.PUBLIC)
    MotionSession.objects.create(session_id=SESSION, motion=lobby, agent=None, harness="claude-code")

    response = stream(client, scribe, body())

    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "lobby"
    assert not Message.objects.filter(motion=harbor).exists()


def test_a_public_motions_session_is_not_pulled_into_a_members_only_one(client, scribe, harbor):
    # The scribe's own session, in a public Motion it is no longer an agent of.
    harbor.visibility = Visibility.MEMBERS
    harbor.save(update_fields=["visibility"])
    square = MotionFactory(slug="square", visibility=Visibility.PUBLIC)
    MotionSession.objects.create(session_id=SESSION, motion=square, agent=scribe.agent, harness="claude-code")

    response = stream(client, scribe, body())

    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "square"
    assert not Message.objects.filter(motion=harbor).exists()


def test_a_line_tagged_with_another_agents_session_is_refused_not_written_there(client, scribe, rival):
    theirs = str(uuid.uuid4())
    MotionSession.objects.create(
        session_id=theirs, motion_id="harbor", agent=rival.agent, harness="claude-code"
    )
    events = copy.deepcopy(recorded.first_run())
    events[3]["session_id"] = theirs
    answer = stream(client, scribe, body(events)).json()
    assert [error["index"] for error in answer["errors"]] == [3]
    assert "neither this post's session" in answer["errors"][0]["reason"]
    assert not Message.objects.filter(session_id=theirs).exists()


def test_a_forks_lines_after_its_own_init_are_written_under_the_fork(client, scribe):
    fork = str(uuid.uuid4())
    events = copy.deepcopy(recorded.first_run())
    for line in events:
        line["session_id"] = fork
    answer = stream(client, scribe, body(events)).json()
    assert answer["errors"] == []
    assert MotionSession.objects.get(pk=fork).agent == scribe.agent
    assert set(Message.objects.values_list("session_id", flat=True)) == {fork}


INGEST_KEY = "ingest-key-for-the-doors-tests"


def ingest(client, lines: list[str], username: str = "justin"):
    return client.post(
        "/api/ingest/",
        {"lines": lines, "username": username, "source": "doors"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {INGEST_KEY}",
    )


def test_the_watchers_username_does_not_let_an_agent_of_that_name_claim_the_session(client, settings, scribe):
    settings.INGEST_API_KEY = INGEST_KEY
    lines = [json_line for json_line in recorded.raw_lines("transcript")]
    assert ingest(client, [line.decode() for line in lines[:5]], username="scribe").status_code == 200
    assert stream(client, scribe, body()).status_code == 403
    assert not MotionSession.objects.filter(pk=SESSION).exists()
