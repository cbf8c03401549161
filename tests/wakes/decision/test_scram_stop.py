"""The scram as an emergency stop (issue 32): while it holds, every post answers 423 and nothing is
stored; it is raised and lifted by a button (the Motion list, a thread's banner), in the admin, and
with `manage.py scram`.

Personas: Justin (a person who may post), Ops (staff), @magent (the listening agent).
"""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from motion_runner.models import Message, Scram, Turn, TurnStatus
from tests.factories import TurnFactory, UserFactory
from tests.wakes_support import clock, room

pytestmark = pytest.mark.django_db


@pytest.fixture
def ops(db):
    return UserFactory(username="ops", is_staff=True)


def justin_posts(client, room, text="@magent are the shirts in?"):
    client.force_login(room.justin)
    return client.post(
        f"/api/motions/{room.motion.slug}/messages/", {"text": text}, content_type="application/json"
    )


def test_a_persons_post_during_a_scram_answers_423_and_nothing_is_stored(room, clock, client):
    call_command("scram", reason="runaway spend", by="ops", stdout=StringIO())

    response = justin_posts(client, room)

    assert response.status_code == 423
    error = response.json()["error"]
    assert error["code"] == "scram" and "runaway spend" in error["detail"] and "ops" in error["detail"]
    assert not Message.objects.filter(source="web").exists()
    assert not Turn.objects.exists()


def test_manage_py_scram_lift_lets_posts_and_wakes_go_on(room, clock, client):
    call_command("scram", reason="maintenance", stdout=StringIO())
    out = StringIO()

    call_command("scram", lift=True, stdout=out)

    assert "lifted" in out.getvalue()
    assert justin_posts(client, room).status_code == 201
    assert Message.objects.filter(source="web", text="@magent are the shirts in?").exists()


def test_manage_py_scram_ends_running_turns(room, clock):
    running = TurnFactory(motion=room.motion, agent=room.magent, status=TurnStatus.RUNNING)

    call_command("scram", reason="stop everything", by="ops", stdout=StringIO())

    running.refresh_from_db()
    assert running.stop_requested_at is not None
    assert Scram.holding().raised_by == "ops"


def test_manage_py_scram_without_a_reason_raises_nothing(room):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="needs a reason"):
        call_command("scram", reason="  ", stdout=StringIO())
    assert Scram.holding() is None


def test_the_button_raises_and_lifts_the_scram_for_staff(room, ops, client):
    client.force_login(ops)

    raised = client.post("/scram/", {"action": "raise", "reason": "runaway spend", "next": "/"})
    assert raised.status_code == 302 and Scram.holding().reason == "runaway spend"
    lifted = client.post("/scram/", {"action": "lift", "next": f"/motions/{room.motion.slug}/"})

    assert lifted.status_code == 302 and lifted.url == f"/motions/{room.motion.slug}/"
    assert Scram.holding() is None


def test_the_button_refuses_everyone_the_dial_does_not_name(room, client):
    client.force_login(room.justin)

    refused = client.post("/scram/", {"action": "raise", "reason": "why not"})
    signed_out = client.logout() or client.post("/scram/", {"action": "raise", "reason": "why not"})

    assert refused.status_code == 403 and signed_out.status_code == 403
    assert Scram.holding() is None


def test_the_button_shows_on_the_motion_list_and_the_thread_for_those_who_may(room, ops, client):
    client.force_login(ops)
    assert 'action="/scram/"' in client.get("/").content.decode()
    assert 'action="/scram/"' in client.get(f"/motions/{room.motion.slug}/").content.decode()

    client.force_login(room.justin)
    assert 'action="/scram/"' not in client.get("/").content.decode()
    assert 'action="/scram/"' not in client.get(f"/motions/{room.motion.slug}/").content.decode()


def test_the_admin_raises_a_scram_and_its_action_lifts_it(room, ops, client):
    ops.is_superuser = True
    ops.save()
    client.force_login(ops)

    client.post("/admin/motion_runner/scram/add/", {"reason": "from the admin"})
    scram = Scram.holding()
    assert scram is not None and scram.raised_by == "ops"

    client.post("/admin/motion_runner/scram/", {"action": "lift_the_scram", "_selected_action": [scram.pk]})
    assert Scram.holding() is None


def test_an_agents_post_and_its_quiet_dot_during_a_scram_answer_423(scribe, client):
    call_command("scram", reason="runaway spend", by="ops", stdout=StringIO())

    posted = client.post(
        "/api/motions/harbor/messages/",
        {"text": "@rival over to you"},
        content_type="application/json",
        **scribe.headers,
    )
    dot = client.post(
        "/api/motions/harbor/quiet/",
        {"reason": "nothing new"},
        content_type="application/json",
        **scribe.headers,
    )

    assert posted.status_code == 423 and dot.status_code == 423
    assert "runaway spend" in posted.json()["error"]["detail"]
    assert not Message.objects.filter(agent=scribe.agent).exists()


def test_a_stranger_is_refused_before_the_scram_is_said(room, client):
    call_command("scram", reason="runaway spend", by="ops", stdout=StringIO())

    response = client.post(
        f"/api/motions/{room.motion.slug}/messages/", {"text": "hi"}, content_type="application/json"
    )

    assert response.status_code in (401, 403)
