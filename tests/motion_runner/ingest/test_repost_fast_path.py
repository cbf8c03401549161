"""A re-post skips what the record already holds before building, fitting and redacting it (one
`SELECT id … = ANY(…)` first), and still does what a re-post did: counts, heartbeat, turn end."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from motion_runner.ingest import writer as ingest
from motion_runner.ingest.sessions import SessionConflict, claim_session
from motion_runner.models import Message, MotionSession, Turn, TurnStatus
from tests import recorded
from tests.factories import MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


def stream(client, persona, events):
    body = {"harness": "claude-code", "session_id": SESSION, "events": events}
    return client.post(
        "/api/motions/harbor/stream/", body, content_type="application/json", **persona.headers
    )


def test_a_repost_beside_a_malformed_uuid_reports_that_line_and_skips_the_known_ones(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    assert stream(client, scribe, events).json()["imported"] == 5
    text_index = next(i for i, line in enumerate(events) if line.get("type") == "assistant")
    bad = copy.deepcopy(events[text_index])
    bad["uuid"] = "not-a-uuid"
    again = events + ["not an event", bad]
    answer = stream(client, scribe, again).json()
    assert answer["imported"] == 0
    assert [error["index"] for error in answer["errors"]] == [len(events), len(events) + 1]
    assert "not a UUID" in answer["errors"][1]["reason"]
    assert answer["skipped"] == len(events)
    assert Message.objects.count() == 5


def test_known_messages_are_not_fitted_again(client, scribe, monkeypatch):
    events = recorded.first_run()
    stream(client, scribe, events)
    fitted = []
    real_fit = ingest.fit_message
    monkeypatch.setattr(ingest, "fit_message", lambda message: fitted.append(message.id) or real_fit(message))
    answer = stream(client, scribe, events).json()
    assert (answer["imported"], answer["skipped"]) == (0, len(events))
    assert fitted == []


def test_a_half_known_batch_writes_only_the_new_half_in_order(client, scribe):
    events = recorded.lines("stream")
    first = stream(client, scribe, events[:4]).json()
    answer = stream(client, scribe, events).json()
    assert answer["skipped"] + answer["imported"] + len(answer["errors"]) == len(events)
    assert answer["imported"] > 0 and first["imported"] > 0
    assert Message.objects.count() == first["imported"] + answer["imported"]
    assert stream(client, scribe, events).json()["imported"] == 0


def test_a_repost_leaves_the_running_turn_to_its_runner(client, scribe, harbor):
    events = recorded.first_run()
    stream(client, scribe, events)
    long_ago = timezone.now() - timedelta(hours=1)
    turn = TurnFactory(
        motion=harbor,
        agent=scribe.agent,
        session_id=SESSION,
        status=TurnStatus.RUNNING,
        heartbeat_at=long_ago,
    )
    answer = stream(client, scribe, events).json()
    assert answer["imported"] == 0 and answer["finished"] is True
    turn = Turn.objects.get(pk=turn.pk)
    assert (turn.heartbeat_at, turn.status, turn.ended_at) == (long_ago, TurnStatus.RUNNING, None)


def test_a_claim_from_a_stale_read_of_a_session_that_moved_is_a_conflict(harbor, scribe):
    other = MotionFactory(slug="other")
    read = claim_session(SESSION, harbor, scribe.agent, "claude-code")
    MotionSession.objects.filter(pk=SESSION).update(motion=other)  # moved by another request since
    with pytest.raises(SessionConflict):
        claim_session(SESSION, harbor, scribe.agent, "claude-code", known=read)
    assert MotionSession.objects.get(pk=SESSION).motion_id == "other"


def test_a_claim_from_a_fresh_read_is_one_update(harbor, scribe):
    read = claim_session(SESSION, harbor, scribe.agent, "claude-code")
    before = MotionSession.objects.get(pk=SESSION).last_used_at
    with CaptureQueriesContext(connection) as queries:
        assert claim_session(SESSION, harbor, scribe.agent, "claude-code", known=read) is read
    assert [query["sql"].split()[0] for query in queries] == ["UPDATE"]
    assert MotionSession.objects.get(pk=SESSION).last_used_at > before
