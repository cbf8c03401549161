"""A person with a password and no staff rights (Pete, issue 25) signs in on the people's page
(people/signin.py) and posts: look-only wakes, a wrong password refused with the username kept,
no redirect to another host, guessing paused after ten failures."""

from __future__ import annotations

import pytest
from django.test import Client

from motion_runner.models import Message
from tests.factories import MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_person_who_is_not_staff_signs_in_with_a_password_and_posts():
    motion = MotionFactory(slug="harbor")
    pete = UserFactory(username="pete")
    pete.set_password("a long password")
    pete.save()
    client = Client()

    response = client.post(
        "/sign-in/?next=/motions/harbor/", {"username": "pete", "password": "a long password"}
    )

    assert response.status_code == 302 and response["Location"] == "/motions/harbor/"
    assert client.session["sign_in"] == "password"
    posted = client.post("/api/motions/harbor/messages/", {"text": "hello"}, content_type="application/json")
    assert posted.status_code == 201
    assert Message.objects.get(motion=motion).sender == "pete"


def test_a_password_sign_in_wakes_agents_look_only():
    from wakes.decision.trust import decide

    MotionFactory(slug="harbor")
    pete = UserFactory(username="pete")
    pete.set_password("a long password")
    pete.save()
    client = Client()
    client.post("/sign-in/", {"username": "pete", "password": "a long password"})
    client.post("/api/motions/harbor/messages/", {"text": "@scribe look"}, content_type="application/json")

    assert decide(Message.objects.get()).mode == "look"


def test_a_wrong_password_is_refused_and_keeps_the_username():
    pete = UserFactory(username="pete")
    pete.set_password("a long password")
    pete.save()
    client = Client()

    response = client.post("/sign-in/", {"username": "pete", "password": "wrong"})

    assert response.status_code == 403
    page = response.content.decode()
    assert "That username and password do not match" in page
    assert 'value="pete"' in page
    assert "_auth_user_id" not in client.session


def test_the_sign_in_page_never_sends_people_to_another_host():
    pete = UserFactory(username="pete")
    pete.set_password("a long password")
    pete.save()

    response = Client().post(
        "/sign-in/?next=https://evil.example/", {"username": "pete", "password": "a long password"}
    )

    assert response.status_code == 302 and response["Location"] == "/"


def test_guessing_a_password_is_paused_after_ten_failures():
    from django.core.cache import cache

    cache.delete("motion-runner-sign-in-failures:pete")
    pete = UserFactory(username="pete")
    pete.set_password("a long password")
    pete.save()
    client = Client()
    for _ in range(10):
        assert client.post("/sign-in/", {"username": "pete", "password": "guess"}).status_code == 403

    response = client.post("/sign-in/", {"username": "pete", "password": "a long password"})

    assert response.status_code == 403
    assert "Too many failed tries" in response.content.decode()
    assert "_auth_user_id" not in client.session
    cache.delete("motion-runner-sign-in-failures:pete")
