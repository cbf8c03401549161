"""What a caller may not read is refused as what does not exist (issue 20 item 14; people/access.py):
who is held in a members-only Motion, and which slugs exist, are not told."""

from __future__ import annotations

import pytest

from motion_runner.models import Visibility
from tests.factories import MotionFactory

pytestmark = pytest.mark.django_db


def test_who_is_held_in_a_members_only_motion_is_not_read_anonymously(client, scribe, harbor, justin):
    harbor.visibility = Visibility.MEMBERS
    harbor.save(update_fields=["visibility"])
    harbor.people.add(justin)
    held = client.post(
        "/api/moods/harbor/held/", {"reason": "busy"}, content_type="application/json", **scribe.headers
    )
    assert held.status_code == 200
    anonymous = client.get("/api/moods/harbor/held/")
    missing = client.get("/api/moods/nowhere/held/")
    assert (anonymous.status_code, anonymous.content) == (missing.status_code, missing.content)
    assert anonymous.status_code == 404
    client.force_login(justin)
    assert client.get("/api/moods/harbor/held/").json()["held"]["scribe"]["reason"] == "busy"


def test_a_watch_in_a_motion_the_caller_may_not_read_is_refused_as_one_that_does_not_exist(client, justin):
    from django.contrib.auth.models import Permission

    justin.user_permissions.add(Permission.objects.get(codename="add_watch"))
    MotionFactory(slug="vault", visibility=Visibility.MEMBERS)
    client.force_login(justin)
    answers = [
        client.post(
            "/api/watches/",
            {"motion": slug, "kind": "web_page", "target": "not a url"},
            content_type="application/json",
        )
        for slug in ("vault", "nowhere")
    ]
    assert [a.status_code for a in answers] == [400, 400]
    vault, nowhere = (a.json()["error"]["fields"] for a in answers)
    assert vault == {"motion": ["Object with slug=vault does not exist."]}
    assert nowhere == {"motion": ["Object with slug=nowhere does not exist."]}
