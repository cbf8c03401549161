"""The page per Motion that shows what each wake kind would tell each agent now, footer included,
without waking anyone (issue 24)."""

# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)
from __future__ import annotations

import re

import pytest

from motion_runner.models import Turn
from tests.wakes_support import clock, room, say
from wakes.models import Consideration, Steer
from wakes.models.dials import LOOK_ONLY_FOOTER

pytestmark = pytest.mark.django_db


def preview(client, room) -> str:
    response = client.get(f"/motions/{room.motion.slug}/wakes/")
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_it_shows_the_mention_prompt_with_the_rules_and_the_footer(client, room, clock):
    Steer.objects.create(
        motion=room.motion, setting="rules", value="No spoilers before Friday.", by_name="rosemary"
    )
    client.force_login(room.justin)

    page = preview(client, room)

    assert "justin mentioned you (@magent)" in page
    assert "No spoilers before Friday." in page
    assert LOOK_ONLY_FOOTER.splitlines()[0].replace("'", "&#x27;") in page
    assert not Turn.objects.exists()


def test_it_quotes_the_posts_a_consideration_would_carry_and_claims_nothing(client, room, clock):
    say(room.motion, room.rosemary, "the shirts are in", clock)
    client.force_login(room.justin)

    page = preview(client, room)

    # quoted as a wake quotes it (wakes/decision/quoting.py): ► new, who, when, its link, the words
    assert re.search(r"► \[rosemary, [0-9: -]+ UTC, #m-[0-9a-f-]{36}\] the shirts are in", page)
    assert not Consideration.objects.exists() and not Turn.objects.exists()


def test_someone_who_may_not_post_does_not_see_it(client, room, clock):
    room.motion.visibility = "members"
    room.motion.save()
    anonymous = client.get(f"/motions/{room.motion.slug}/wakes/")
    client.force_login(room.justin)
    outsider = client.get(f"/motions/{room.motion.slug}/wakes/")

    assert anonymous.status_code == 404
    assert outsider.status_code == 404
