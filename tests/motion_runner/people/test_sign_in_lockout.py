"""The password lockout holds against parallel guesses (issue 30 item 5; people/signin.py): each
guess is counted before its hash is checked, and a success clears the count."""

from __future__ import annotations

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.core.cache import cache
from django.test import RequestFactory

from motion_runner.people.signin import SignInRefused
from motion_runner.thread import views as sign_in_views
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


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
