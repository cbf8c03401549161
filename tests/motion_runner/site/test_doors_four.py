"""Issue 30's doors (round four): each finding as the attacker met it, kept as a regression test.

Items 3 (a session moves only out of a Motion its mover belongs to) and 5 (the password lockout
holds against parallel guesses); the memory-lane composer's vouching (item 2) is pinned by
tests/motion_runner/record/test_memory_lane_record.py, the wake's doors (items 1, 4, 7, 8) by
tests/wakes/."""

from __future__ import annotations

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.core.cache import cache
from django.test import RequestFactory

from motion_runner.models import Message, MotionSession, Visibility
from motion_runner.people.signin import SignInRefused
from motion_runner.thread import views as sign_in_views
from tests import recorded
from tests.factories import MotionFactory, UserFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


# --- 5: parallel guesses cannot outrun the lockout ----------------------------------------------


def test_guesses_in_flight_together_are_counted_before_any_hash_is_checked(monkeypatch):
    # Twenty guesses arrive while the first one's slow hash is still being checked: each must be
    # counted before its own hash, so at most PASSWORD_TRIES hashes are ever checked.
    key = "motion-runner-sign-in-failures:pete"
    cache.delete(key)
    UserFactory(username="pete")
    request = RequestFactory().post("/sign-in/")
    checked: list[str] = []

    def slow_authenticate(request, username, password):
        checked.append(password)
        if len(checked) == 1:  # the others come in while this one hashes
            for n in range(20):
                try:
                    sign_in_views.sign_in_with_password(request, "pete", f"guess {n}")
                except SignInRefused:
                    pass
        return None

    monkeypatch.setattr(sign_in_views, "authenticate", slow_authenticate)
    with pytest.raises(SignInRefused):
        sign_in_views.sign_in_with_password(request, "pete", "guess")

    assert 0 < len(checked) <= sign_in_views.PASSWORD_TRIES
    cache.delete(key)


def test_a_success_clears_the_count(monkeypatch):
    key = "motion-runner-sign-in-failures:pete"
    cache.delete(key)
    pete = UserFactory(username="pete")
    pete.set_password("a long password")
    pete.save()
    factory = RequestFactory()
    for _ in range(sign_in_views.PASSWORD_TRIES - 1):
        with pytest.raises(SignInRefused):
            sign_in_views.sign_in_with_password(factory.post("/sign-in/"), "pete", "guess")
    request = factory.post("/sign-in/")
    request.session = SessionStore()

    sign_in_views.sign_in_with_password(request, "pete", "a long password")

    assert cache.get(key) is None


# --- 3: a session moves only out of a Motion its mover is one of ---------------------------------


def stream(client, persona, slug="harbor"):
    body = {"harness": "claude-code", "session_id": SESSION, "events": recorded.first_run()}
    return client.post(
        f"/api/motions/{slug}/stream/", body, content_type="application/json", **persona.headers
    )


def test_an_admin_assigned_session_with_no_agent_is_not_taken_from_a_motion_the_agent_only_reads(
    client, scribe, harbor
):
    # The lobby is public (the scribe may read it) but the scribe is none of its agents.
    lobby = MotionFactory(slug="lobby", visibility=Visibility.PUBLIC)
    MotionSession.objects.create(session_id=SESSION, motion=lobby, agent=None, harness="claude-code")

    response = stream(client, scribe)

    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "lobby"
    assert not Message.objects.filter(motion=harbor).exists()


def test_a_public_motions_session_is_not_pulled_into_a_members_only_one(client, scribe, harbor):
    # The scribe's own session, in a public Motion it is no longer an agent of.
    harbor.visibility = Visibility.MEMBERS
    harbor.save(update_fields=["visibility"])
    square = MotionFactory(slug="square", visibility=Visibility.PUBLIC)
    MotionSession.objects.create(session_id=SESSION, motion=square, agent=scribe.agent, harness="claude-code")

    response = stream(client, scribe)

    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "square"
    assert not Message.objects.filter(motion=harbor).exists()
