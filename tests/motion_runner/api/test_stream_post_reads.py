"""A stream post's reads (issue 21): a re-post of known events is three statements on PostgreSQL
(the key with its agent, the URL's Motion and the membership, motion_runner/sql/agent_keys.py;
the session's claim with its newest turn end, sql/motion_sessions.py; the known ids), five in the
ORM (the Motion and the newest turn end apart), and everything those reads decide still answers as the
separate reads did: revocation and membership at once, 404/403 bodies, claims, turns."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.api.agent_views import StreamView
from motion_runner.api.auth import revoke_key
from motion_runner.ingest.sessions import recorded_turn_ends
from motion_runner.memory_lane.routes import MoodStreamView
from motion_runner.models import (
    Agent,
    AgentKey,
    Kind,
    Message,
    MotionSession,
    TurnStatus,
)
from motion_runner.people.access import MotionAccess
from motion_runner.sql import fast_paths
from tests import recorded
from tests.factories import MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
RUNNER_KEY = "runner-key-of-scribe"
# The key (or the runner key's agent) with the URL's Motion and the membership: one statement on
# PostgreSQL, the Motion apart in the ORM.
KEY_STATEMENTS = 1 if fast_paths(connection) else 2
# The session's claim (a conditional UPDATE) with its newest turn end: one statement on PostgreSQL
# (a data-modifying CTE, motion_runner/sql/motion_sessions.py), two in the ORM.
CLAIM_STATEMENTS = 1 if fast_paths(connection) else 2


def body(events=None, session_id=SESSION) -> dict:
    return {"harness": "claude-code", "session_id": session_id, "events": events or recorded.first_run()}


def stream(client, persona, data, slug="harbor"):
    return client.post(
        f"/api/motions/{slug}/stream/", data, content_type="application/json", **persona.headers
    )


def statements(queries) -> list[str]:
    return [query["sql"] for query in queries]


@pytest.fixture
def unfolded(monkeypatch):
    """The reads as they were before: the Motion and membership after the key, the claim alone."""

    def unfold() -> None:
        monkeypatch.setattr(StreamView, "motion_url_kwarg", None)
        monkeypatch.setattr(MoodStreamView, "motion_url_kwarg", None)

    return unfold


# --- how many statements ------------------------------------------------------------------------


def test_a_repost_of_known_events_costs_the_key_the_claim_and_the_known_ids(client, scribe):
    events = recorded.lines("stream")
    first = stream(client, scribe, body(events)).json()
    assert first["imported"] > 0
    with CaptureQueriesContext(connection) as queries:
        answer = stream(client, scribe, body(events)).json()
    assert answer["imported"] == 0 and answer["skipped"] + len(answer["errors"]) == len(events)
    sql = statements(queries)
    key, claim, known = sql[:KEY_STATEMENTS], sql[KEY_STATEMENTS:-1], sql[-1]
    assert key[0].startswith("SELECT") and "motion_runner_agentkey" in key[0]
    assert "motion_runner_motion_agents" in key[0]  # the membership, read with the key
    assert len(claim) == CLAIM_STATEMENTS and claim[0].startswith(("WITH claimed AS (UPDATE", "UPDATE"))
    assert not any("motion_runner_turn" in sql for sql in claim)
    assert known.startswith("SELECT") and "motion_runner_message" in known


def test_a_repost_costs_the_key_the_claim_and_the_known_ids(client, scribe, django_assert_num_queries):
    events = recorded.lines("stream")
    stream(client, scribe, body(events))
    with django_assert_num_queries(KEY_STATEMENTS + CLAIM_STATEMENTS + 1):
        stream(client, scribe, body(events))


def test_a_repost_through_memory_lanes_runner_key_costs_as_much(client, scribe, settings):
    settings.MOOD_RUNNER_KEYS = {"scribe": RUNNER_KEY}
    headers = {"HTTP_AUTHORIZATION": f"Bearer {RUNNER_KEY}"}

    def post():
        return client.post("/api/moods/harbor/stream/", body(), content_type="application/json", **headers)

    assert post().json()["imported"] == 5
    with CaptureQueriesContext(connection) as queries:
        answer = post().json()
    assert (answer["imported"], answer["skipped"]) == (0, len(recorded.first_run()))
    assert len(queries) == KEY_STATEMENTS + CLAIM_STATEMENTS + 1
    assert "motion_runner_agent" in queries[0]["sql"] and "motion_runner_agentkey" not in queries[0]["sql"]


def running_turn(motion, scribe, *, heartbeat_at):
    """The scribe's turn in this Motion, running on the recorded session."""
    return TurnFactory(
        motion=motion,
        agent=scribe.agent,
        session_id=SESSION,
        status=TurnStatus.RUNNING,
        heartbeat_at=heartbeat_at,
    )


def test_a_repost_with_a_running_turn_leaves_the_turn_to_its_runner(client, scribe, harbor):
    events = [line for line in recorded.first_run() if line.get("subtype") != "init"]
    stream(client, scribe, body(events))
    long_ago = timezone.now() - timedelta(hours=1)
    turn = running_turn(harbor, scribe, heartbeat_at=long_ago)
    with CaptureQueriesContext(connection) as queries:
        answer = stream(client, scribe, body(events)).json()
    assert answer["finished"] is True and answer["imported"] == 0
    # key, claim, the known ids: the runner's turn is neither read nor written (issue 20, item 10).
    assert len(queries) == KEY_STATEMENTS + CLAIM_STATEMENTS + 1
    assert not any("motion_runner_turn" in sql for sql in statements(queries))
    turn.refresh_from_db()
    assert turn.heartbeat_at == long_ago and turn.status == TurnStatus.RUNNING


# --- the key, the Motion and the membership, read together ---------------------------------------


def test_a_revoked_key_is_refused_on_its_very_next_request(client, scribe):
    assert stream(client, scribe, body()).status_code == 200
    revoke_key(AgentKey.objects.get(agent=scribe.agent).prefix)
    response = stream(client, scribe, body())
    assert response.status_code == 401
    assert response.json()["error"]["detail"] == "That agent key was revoked."


def test_a_removed_member_is_refused_on_its_very_next_request(client, scribe, harbor):
    assert stream(client, scribe, body()).status_code == 200
    harbor.agents.remove(scribe.agent)
    response = stream(client, scribe, body())
    assert response.status_code == 403
    assert response.json()["error"]["detail"] == "@scribe is not an agent of Motion 'harbor'."


def test_a_runner_keys_agent_removed_from_the_motion_is_refused_at_once(client, scribe, harbor, settings):
    settings.MOOD_RUNNER_KEYS = {"scribe": RUNNER_KEY}
    headers = {"HTTP_AUTHORIZATION": f"Bearer {RUNNER_KEY}"}

    def post():
        return client.post("/api/moods/harbor/stream/", body(), content_type="application/json", **headers)

    assert post().status_code == 200
    harbor.agents.remove(scribe.agent)
    assert post().status_code == 403


@pytest.mark.parametrize("route", ["motions", "moods"])
@pytest.mark.parametrize("case", ["no such motion", "not a member", "member"])
def test_the_answers_are_byte_for_byte_those_of_the_separate_reads(
    client, scribe, settings, unfolded, route, case
):
    settings.MOOD_RUNNER_KEYS = {"scribe": RUNNER_KEY}
    MotionFactory(slug="elsewhere")
    slug = {"no such motion": "nowhere", "not a member": "elsewhere", "member": "harbor"}[case]

    def answer(key: str) -> tuple[int, bytes]:
        response = client.post(
            f"/api/{route}/{slug}/stream/",
            body(),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {key}",
        )
        return response.status_code, response.content

    folded = [answer(scribe.key), answer(RUNNER_KEY)]
    unfolded()
    separate = [answer(scribe.key), answer(RUNNER_KEY)]
    status = {"no such motion": 404, "not a member": 403, "member": 200}[case]
    assert {code for code, _ in folded + separate} == {status}
    if status != 200:  # a 200's counts differ: the first post wrote what the others skip
        assert separate == folded


class OnlyListeningAgents(MotionAccess):
    """A host's own rule: only a listening agent counts as one of a Motion's agents."""

    def is_member_agent(self, actor, motion) -> bool:
        return super().is_member_agent(actor, motion) and actor.agent.listening


def test_a_hosts_own_membership_rule_is_still_asked(client, scribe, settings):
    settings.MOTION_RUNNER_ACCESS = f"{__name__}.OnlyListeningAgents"
    assert stream(client, scribe, body()).status_code == 200
    Agent.objects.filter(pk=scribe.agent.pk).update(listening=False)
    assert stream(client, scribe, body()).status_code == 403


# --- the claim, in one statement or not ---------------------------------------------------------


@pytest.mark.parametrize("fold", [True, False])
def test_a_session_of_no_agent_yet_is_claimed_as_before(client, scribe, harbor, unfolded, fold):
    if not fold:
        unfolded()
    MotionSession.objects.create(session_id=SESSION, motion=harbor, agent=None)
    MotionSession.objects.filter(pk=SESSION).update(last_used_at=timezone.now() - timedelta(hours=1))
    assert stream(client, scribe, body()).json()["imported"] == 5
    session = MotionSession.objects.get(pk=SESSION)
    assert session.agent_id is None  # a claim from a read of its own Motion never sets the agent
    assert session.last_used_at > timezone.now() - timedelta(minutes=1)


@pytest.mark.parametrize("fold", [True, False])
def test_every_claim_answers_alike_folded_or_not(client, scribe, rival, harbor, unfolded, fold):
    if not fold:
        unfolded()
    other = MotionFactory(slug="other")
    other.agents.add(scribe.agent)
    answers = []
    answers.append(stream(client, scribe, body()).status_code)  # a new session
    answers.append(stream(client, scribe, body()).status_code)  # a re-post
    answers.append(stream(client, rival, body()).status_code)  # another agent's session
    answers.append(stream(client, scribe, body(), slug="other").status_code)  # moved to another Motion
    assert answers == [200, 200, 403, 200]
    assert MotionSession.objects.get(pk=SESSION).motion_id == "other"


@pytest.mark.parametrize("fold", [True, False])
def test_a_repost_leaves_the_running_turn_alone_folded_or_not(client, scribe, harbor, unfolded, fold):
    if not fold:
        unfolded()
    events = recorded.first_run()
    stream(client, scribe, body(events))
    turn = TurnFactory(motion=harbor, agent=scribe.agent, session_id=SESSION, status=TurnStatus.RUNNING)
    assert stream(client, scribe, body(copy.deepcopy(events))).json()["finished"] is True
    turn.refresh_from_db()
    assert (turn.status, turn.cost_usd) == (TurnStatus.RUNNING, 0)


# --- the helpers ---------------------------------------------------------------------------------


def test_an_init_line_with_a_running_turn_leaves_the_turn_alone(client, scribe, harbor):
    init = [line for line in recorded.first_run() if line.get("subtype") == "init"]
    assert init and init[0]["session_id"] == SESSION
    stream(client, scribe, body(init))
    long_ago = timezone.now() - timedelta(hours=1)
    turn = running_turn(harbor, scribe, heartbeat_at=long_ago)
    assert stream(client, scribe, body(init)).json() == {
        "imported": 0,
        "skipped": 1,
        "errors": [],
        "finished": False,
    }
    turn.refresh_from_db()
    assert turn.heartbeat_at == long_ago


def test_the_turn_ends_reader_starts_from_the_newest_already_read(harbor):
    older = {"type": "result", "total_cost_usd": 0.5}
    for age, raw in ((60, older), (1, {"type": "result"})):
        Message.objects.create(
            motion=harbor,
            sender="x",
            kind=Kind.TURN_END,
            session_id=SESSION,
            raw=raw,
            created_at=timezone.now() - timedelta(seconds=age),
        )
    reader = recorded_turn_ends(SESSION, newest_read=[{"type": "result", "read": "with the claim"}])
    with CaptureQueriesContext(connection) as queries:
        assert next(reader()) == {"type": "result", "read": "with the claim"}
    assert len(queries) == 0
    with CaptureQueriesContext(connection) as queries:
        assert list(reader())[1:] == [older]  # reading on asks the window once
    assert len(queries) == 1
    with CaptureQueriesContext(connection) as queries:
        assert list(recorded_turn_ends(SESSION, newest_read=[])()) == []
    assert len(queries) == 0


# --- every commit waits for the disk: no statement of a post turns synchronous_commit off ---


@pytest.mark.django_db(transaction=True)
def test_no_statement_of_a_post_changes_how_its_commit_is_made(client, scribe):
    with CaptureQueriesContext(connection) as queries:
        assert stream(client, scribe, body()).json()["imported"] == 5
        assert stream(client, scribe, body()).json()["imported"] == 0
    assert len(queries) > 0
    assert not any("synchronous_commit" in sql for sql in statements(queries))
    assert Message.objects.count() == 5
