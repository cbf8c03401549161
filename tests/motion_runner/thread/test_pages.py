"""Small things every page needs: a favicon (no 404 on every page), the sign-out form."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_the_favicon_is_served_not_a_404():
    response = Client().get("/favicon.ico")

    assert response.status_code == 301
    assert response["Location"].endswith("motion_runner/favicon.svg")


def test_every_page_links_its_icon(client):
    MotionFactory(slug="harbor")
    client.force_login(UserFactory(username="justin"))

    for url in ("/", "/motions/harbor/", "/admin/"):
        page = client.get(url, follow=True).content.decode()
        assert "motion_runner/favicon.svg" in page, url


def test_signing_out_takes_a_post_and_ends_the_session(client):
    client.force_login(UserFactory(username="justin"))

    response = client.post("/sign-out/")

    assert response.status_code == 302
    assert "_auth_user_id" not in client.session
