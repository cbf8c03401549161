"""The thread's search box (issue 34, item 6): `GET /api/motions/<slug>/search/?q=…` finds what
was said in one Motion, for whoever may read it, and for nobody else.

Personas: Rosemary reads the members-only Motion "harbor"; Dale is signed in but not one of its
people; @magent answers there."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def harbor():
    motion = MotionFactory(slug="harbor", visibility="members")
    motion.agents.add(AgentFactory(name="magent"))
    return motion


@pytest.fixture
def rosemary(harbor):
    person = UserFactory(username="rosemary")
    harbor.people.add(person)
    return person


def search(user, slug: str, q: str, **params):
    client = APIClient()
    if user is not None:
        client.force_login(user)
    return client.get(f"/api/motions/{slug}/search/", {"q": q, **params})


def test_a_reader_finds_what_was_said_newest_first(harbor, rosemary):
    now = timezone.now()
    older = MessageFactory(
        motion=harbor,
        sender="rosemary",
        text="The setlist opens with Banjo Song",
        created_at=now - timedelta(days=2),
    )
    newer = MessageFactory(
        motion=harbor, sender="magent", text="I moved banjo song to the encore", created_at=now
    )
    MessageFactory(motion=harbor, sender="rosemary", text="tour dates are set")

    found = search(rosemary, "harbor", "banjo song").json()

    assert [r["id"] for r in found["results"]] == [str(newer.pk), str(older.pk)]
    assert found["results"][0]["snippet"] == "I moved banjo song to the encore"
    assert found["more"] is False


def test_another_motions_words_are_never_found(harbor, rosemary):
    MessageFactory(motion=MotionFactory(slug="elsewhere"), sender="dale", text="banjo in the other room")

    assert search(rosemary, "harbor", "banjo").json()["results"] == []


def test_a_long_message_is_shown_around_its_match(harbor, rosemary):
    MessageFactory(motion=harbor, sender="rosemary", text="word " * 200 + "needle " + "word " * 200)

    [found] = search(rosemary, "harbor", "needle").json()["results"]

    assert (
        "needle" in found["snippet"] and found["snippet"].startswith("…") and found["snippet"].endswith("…")
    )


def test_more_says_when_the_page_is_not_all(harbor, rosemary):
    for n in range(3):
        MessageFactory(motion=harbor, sender="rosemary", text=f"merch idea {n}")

    found = search(rosemary, "harbor", "merch", limit=2).json()

    assert len(found["results"]) == 2 and found["more"] is True


@pytest.mark.parametrize("q", ["", "a", "x" * 201])
def test_a_query_too_short_or_too_long_is_a_clear_error(harbor, rosemary, q):
    answer = search(rosemary, "harbor", q)

    assert answer.status_code == 400
    assert "2 to 200 characters" in str(answer.json())


def test_someone_who_may_not_read_the_motion_gets_the_404_of_no_motion(harbor):
    MessageFactory(motion=harbor, sender="rosemary", text="the secret chord")
    dale = UserFactory(username="dale")

    assert search(dale, "harbor", "secret").status_code == 404
    assert search(dale, "no-such-motion", "secret").status_code == 404


def test_nobody_signed_in_is_refused_a_motion_that_is_not_public(harbor):
    assert search(None, "harbor", "secret").status_code == 404  # as for a Motion that does not exist


def test_a_snippet_shows_the_words_without_their_markdown(harbor, rosemary):
    """Issue 43.4: snippets showed "**banjo** `song`" as typed."""
    MessageFactory(
        motion=harbor, sender="magent", text="I moved **banjo** song to the [encore](https://x.org) & more"
    )

    (found,) = search(rosemary, "harbor", "banjo").json()["results"]

    assert found["snippet"] == "I moved banjo song to the encore & more"
