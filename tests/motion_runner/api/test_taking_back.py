"""Taking back what was said (issue 40 item 1), through the API: `DELETE` and `PATCH
/api/messages/<id>/`. A person, their own post; staff signed in with their SSH key, anyone's delete;
everyone else (another person, staff with a password, an agent's key, nobody signed in, a reader
who may not read the Motion) refused, the post as it was."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from motion_runner.api.auth import create_key
from motion_runner.models import Kind, Message, Source, TakenBack, Visibility
from motion_runner.retract import DELETED, PER_HOUR
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db

DOOR_CODE = "the door code is 4471, come in"


@pytest.fixture
def garden():
    return MotionFactory(slug="garden", title="The garden")


@pytest.fixture
def justin():
    return UserFactory(username="justin")


@pytest.fixture
def post(garden, justin):
    return MessageFactory(motion=garden, sender="justin", author=justin, source=Source.WEB, text=DOOR_CODE)


def as_person(user, sign_in: str = "password") -> APIClient:
    client = APIClient()
    client.force_login(user)
    session = client.session
    session["sign_in"] = sign_in
    session.save()
    return client


def url(message) -> str:
    return f"/api/messages/{message.pk}/"


def text_of(message) -> str:
    return Message.objects.get(pk=message.pk).text


def test_a_person_deletes_their_own_post(post, justin):
    response = as_person(justin).delete(url(post))
    assert response.status_code == 200, response.content
    assert response.json()["kind"] == "deleted" and response.json()["by"] == "justin"
    assert text_of(post) == DELETED
    assert TakenBack.objects.get(message=post).kind == "deleted"


def test_a_person_edits_their_own_post(post, justin):
    response = as_person(justin).patch(url(post), {"text": "come by any time"}, format="json")
    assert response.status_code == 200, response.content
    assert text_of(post) == "come by any time"
    assert TakenBack.objects.get(message=post).kind == "edited"


def test_an_edit_is_redacted_as_any_post(post, justin):
    secret = "sk-ant-api03-" + "A" * 90
    as_person(justin).patch(url(post), {"text": f"my key {secret}"}, format="json")
    assert secret not in text_of(post)


def test_another_person_may_not_delete_it(post):
    response = as_person(UserFactory(username="rosemary")).delete(url(post))
    assert response.status_code == 403
    assert text_of(post) == DOOR_CODE and not TakenBack.objects.exists()


def test_another_person_may_not_edit_it(post):
    response = as_person(UserFactory(username="rosemary")).patch(url(post), {"text": "x"}, format="json")
    assert response.status_code == 403
    assert text_of(post) == DOOR_CODE


def test_staff_signed_in_with_a_password_may_not_delete_anothers_post(post):
    staff = UserFactory(username="ops", is_staff=True)
    assert as_person(staff, "password").delete(url(post)).status_code == 403
    assert text_of(post) == DOOR_CODE


def test_staff_signed_in_with_their_ssh_key_may_delete_anothers_post(post):
    staff = UserFactory(username="ops", is_staff=True)
    response = as_person(staff, "ssh").delete(url(post))
    assert response.status_code == 200, response.content
    assert text_of(post) == DELETED and TakenBack.objects.get(message=post).by == "ops"


def test_staff_may_delete_an_agents_words_too(garden):
    words = MessageFactory(
        motion=garden, sender="magent", agent=AgentFactory(name="magent"), source=Source.RUNNER
    )
    staff = UserFactory(username="ops", is_staff=True)
    assert as_person(staff, "ssh").delete(url(words)).status_code == 200
    assert text_of(words) == DELETED


def test_staff_may_not_edit_anothers_post(post):
    staff = UserFactory(username="ops", is_staff=True)
    assert as_person(staff, "ssh").patch(url(post), {"text": "x"}, format="json").status_code == 403
    assert text_of(post) == DOOR_CODE


def test_nobody_signed_in_is_refused(post):
    assert APIClient().delete(url(post)).status_code in (401, 403)
    assert text_of(post) == DOOR_CODE


def test_an_agents_key_is_refused(post, garden):
    agent = AgentFactory(name="magent")
    garden.agents.add(agent)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {create_key(agent)[1]}")
    assert client.delete(url(post)).status_code in (401, 403)
    assert client.patch(url(post), {"text": "x"}, format="json").status_code in (401, 403)
    assert text_of(post) == DOOR_CODE


def test_a_post_the_reader_may_not_read_is_not_found(justin):
    closed = MotionFactory(slug="closed", visibility=Visibility.MEMBERS)
    closed.people.add(justin)
    theirs = MessageFactory(motion=closed, sender="justin", author=justin, text=DOOR_CODE)
    response = as_person(UserFactory(username="rosemary", is_staff=True), "ssh").delete(url(theirs))
    assert response.status_code == 404
    assert text_of(theirs) == DOOR_CODE


def test_the_runners_own_lines_are_not_anyones_to_take_back(garden):
    line = MessageFactory(
        motion=garden, sender="runner", source=Source.SYSTEM, kind=Kind.WAKE, text="@a woke"
    )
    staff = UserFactory(username="ops", is_staff=True)
    assert as_person(staff, "ssh").delete(url(line)).status_code == 403
    assert text_of(line) == "@a woke"


def test_ones_own_post_older_than_a_week_is_for_staff(garden, justin):
    old = MessageFactory(
        motion=garden, author=justin, text=DOOR_CODE, created_at=timezone.now() - timedelta(days=8)
    )
    assert as_person(justin).delete(url(old)).status_code == 403
    assert text_of(old) == DOOR_CODE


def test_ones_own_post_older_than_a_day_is_not_edited(garden, justin):
    old = MessageFactory(
        motion=garden, author=justin, text=DOOR_CODE, created_at=timezone.now() - timedelta(days=2)
    )
    assert as_person(justin).patch(url(old), {"text": "x"}, format="json").status_code == 403
    assert as_person(justin).delete(url(old)).status_code == 200


def test_an_edit_with_no_words_is_refused(post, justin):
    assert as_person(justin).patch(url(post), {"text": "   "}, format="json").status_code == 400
    assert text_of(post) == DOOR_CODE


def test_more_than_an_hours_worth_is_refused(garden, justin):
    posts = [
        MessageFactory(motion=garden, author=justin, text=f"post number {n}") for n in range(PER_HOUR + 1)
    ]
    client = as_person(justin)
    for post in posts[:PER_HOUR]:
        assert client.delete(url(post)).status_code == 200
    assert client.delete(url(posts[-1])).status_code == 429
    assert text_of(posts[-1]) == f"post number {PER_HOUR}"


def test_the_thread_says_who_took_it_back(post, justin, garden):
    as_person(justin).delete(url(post))
    rows = as_person(UserFactory(username="rosemary")).get(f"/api/motions/{garden.slug}/messages/").json()
    row = next(r for r in rows["results"] if r["id"] == str(post.pk))
    assert row["text"] == DELETED
    assert row["taken_back"]["kind"] == "deleted" and row["taken_back"]["by"] == "justin"
    assert DOOR_CODE not in str(rows)


def test_the_thread_page_gives_its_control_the_apis_address(garden, justin):
    client = APIClient()
    client.force_login(justin)
    page = client.get(f"/motions/{garden.slug}/").content.decode()
    assert 'data-message-url="/api/messages/00000000-0000-0000-0000-000000000000/"' in page
