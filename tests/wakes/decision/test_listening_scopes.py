"""Listening by scope, as memory-lane resolves it: (Motion, agent) > (Motion, every agent) >
(every Motion, agent) > all, each with its "until": "hush @magent everywhere until 18:00".
Justin signs in with his SSH key (he may grant full tools); Rosemary with a password."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from motion_runner.models import Turn
from tests.factories import MotionFactory
from tests.wakes_support import clock, room, say
from wakes.consider_loop.handlers import check_mentions
from wakes.decision.steering import steering_for
from wakes.models import MentionWake, Steer

pytestmark = pytest.mark.django_db


def steer(room, who, value: str, *, scope: str, agent: str | None = "magent", until=None, sign_in="ssh"):
    client = APIClient()
    client.force_login(who)
    session = client.session
    session["sign_in"] = sign_in
    session.save()
    body = {"setting": "listening", "value": value, "scope": scope}
    if agent:
        body["agent"] = agent
    if until is not None:
        body["until"] = until.isoformat()
    return client.post(f"/api/motions/{room.motion.slug}/steer/", body, format="json")


@pytest.fixture
def jams(room):
    motion = MotionFactory(slug="jams")
    motion.agents.add(room.magent, room.codey)
    return motion


def test_hush_magent_everywhere_until_six_holds_its_mentions_in_every_motion(room, clock, jams):
    six = clock.now() + timedelta(hours=2)
    response = steer(room, room.justin, "off", scope="agent", until=six)
    assert response.status_code == 201, response.content
    assert "@magent's (everywhere) listening" in response.json()["change"]

    say(jams, room.rosemary, "@magent what key is Salt Creek in?", clock)
    assert not Turn.objects.filter(motion=jams).exists()
    assert MentionWake.objects.get().status == MentionWake.Status.HELD

    clock.advance(hours=2, seconds=1)
    check_mentions()
    assert steering_for(jams.pk, room.magent.pk).listening == "on"
    assert Turn.objects.filter(motion=jams, agent=room.magent, reason="mention").count() == 1


def test_every_agent_here_is_one_row_for_the_motion(room, clock):
    room.motion.agents.add(room.codey)
    assert (
        steer(room, room.rosemary, "mentions", scope="motion", agent=None, sign_in="password").status_code
        == 201
    )
    assert steering_for(room.motion.pk, room.magent.pk).listening == "mentions"
    assert steering_for(room.motion.pk, room.codey.pk).listening == "mentions"


def test_the_pairs_own_setting_beats_a_wider_one(room, clock, jams):
    steer(room, room.justin, "off", scope="all", agent=None)
    steer(room, room.justin, "on", scope="here")
    assert steering_for(room.motion.pk, room.magent.pk).listening == "on"
    assert steering_for(jams.pk, room.magent.pk).listening == "off"


def test_a_wider_scopes_until_lets_the_default_back(room, clock, jams):
    steer(room, room.justin, "off", scope="all", agent=None, until=clock.now() + timedelta(minutes=30))
    clock.advance(minutes=31)
    assert steering_for(jams.pk, room.codey.pk).listening == "on"


def test_a_person_who_may_not_grant_cannot_hush_beyond_the_motion(room, clock):
    response = steer(room, room.rosemary, "off", scope="agent", sign_in="password")
    assert response.status_code == 403
    assert "beyond this Motion" in str(response.json()["error"])
    assert not Steer.objects.exists()


def test_only_listening_has_scopes(room, clock):
    client = APIClient()
    client.force_login(room.justin)
    session = client.session
    session["sign_in"] = "ssh"
    session.save()
    body = {"setting": "verbosity", "value": "terse", "agent": "magent", "scope": "all"}
    response = client.post(f"/api/motions/{room.motion.slug}/steer/", body, format="json")
    assert response.status_code == 400
    assert "only listening" in str(response.json()["error"])


def test_the_motion_list_shows_a_hush_set_everywhere(room, clock, jams):
    steer(room, room.justin, "off", scope="agent")
    client = APIClient()
    client.force_login(room.rosemary)
    shown = client.get("/").content.decode()
    assert "@magent · not listening here" in shown
