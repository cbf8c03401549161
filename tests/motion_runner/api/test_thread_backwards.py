"""Issue 25: a long thread opens at its newest page and is read backwards. The messages API's
`latest` (the newest page), `before` (the page just older than a cursor) and `around` (the page
around one message, for a `#m-<id>` link)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from motion_runner.models import Message
from tests.factories import MessageFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def garden():
    """The garden, whose thread holds m0 … m9, a second apart."""
    motion = MotionFactory(slug="garden", title="The garden")
    start = timezone.now() - timedelta(minutes=5)
    Message.objects.bulk_create(
        Message(
            motion=motion,
            sender="justin",
            source="web",
            kind="text",
            text=f"m{n}",
            created_at=start + timedelta(seconds=n),
        )
        for n in range(10)
    )
    return motion


@pytest.fixture
def justin() -> APIClient:
    client = APIClient()
    client.force_login(UserFactory(username="justin"))
    return client


def page(client, **params) -> dict:
    response = client.get("/api/motions/garden/messages/", params)
    assert response.status_code == 200, response.content
    return response.json()


def texts(body: dict) -> list[str]:
    return [m["text"] for m in body["results"]]


def test_the_latest_page_is_the_newest_messages_in_order(garden, justin):
    body = page(justin, latest="1", limit=3)

    assert texts(body) == ["m7", "m8", "m9"]
    assert body["previous"] == body["results"][0]["cursor"]
    assert body["next"] == body["results"][-1]["cursor"]
    assert body["more"] is False


def test_before_a_cursor_is_the_page_just_older_and_the_start_says_there_is_nothing_older(garden, justin):
    newest = page(justin, latest="1", limit=4)
    older = page(justin, before=newest["previous"], limit=4)
    oldest = page(justin, before=older["previous"], limit=4)

    assert texts(older) == ["m2", "m3", "m4", "m5"]
    assert texts(oldest) == ["m0", "m1"]
    assert oldest["previous"] is None


def test_the_newest_page_then_a_poll_after_it_sees_a_new_message_once(garden, justin):
    newest = page(justin, latest="1", limit=3)
    MessageFactory(motion=garden, text="m10")

    after = page(justin, after=newest["next"])

    assert texts(after) == ["m10"]


def test_around_a_message_is_the_page_centred_on_it_with_both_cursors(garden, justin):
    target = Message.objects.get(text="m4")

    body = page(justin, around=str(target.pk), limit=4)

    assert texts(body) == ["m2", "m3", "m4", "m5"]
    assert body["previous"] == body["results"][0]["cursor"]
    assert body["more"] is True  # newer messages follow: ask after `next` when the reader gets there
    assert texts(page(justin, after=body["next"], limit=10)) == ["m6", "m7", "m8", "m9"]


def test_around_a_message_of_another_motion_or_none_is_a_clear_error(garden, justin):
    stranger = MessageFactory(motion=MotionFactory(slug="elsewhere"), text="not here")

    for value in (str(stranger.pk), "not-an-id"):
        response = justin.get("/api/motions/garden/messages/", {"around": value})
        assert response.status_code == 400, value
        assert "around" in response.json()["error"]["fields"]


def test_before_and_after_together_are_refused(garden, justin):
    newest = page(justin, latest="1", limit=3)

    response = justin.get(
        "/api/motions/garden/messages/", {"before": newest["previous"], "after": newest["next"]}
    )

    assert response.status_code == 400


def test_a_signed_out_reader_of_a_signed_in_motion_gets_no_latest_page(garden):
    assert APIClient().get("/api/motions/garden/messages/", {"latest": "1"}).status_code == 404


def test_the_newest_page_of_a_long_thread_reads_only_its_own_rows(garden, justin):
    start = timezone.now() - timedelta(days=1)
    Message.objects.bulk_create(
        Message(
            motion=garden,
            sender="justin",
            source="web",
            kind="text",
            text=f"old{n}",
            created_at=start + timedelta(milliseconds=n),
        )
        for n in range(3000)
    )

    with CaptureQueriesContext(connection) as queries:
        body = page(justin, latest="1", limit=50)

    assert texts(body)[-1] == "m9" and len(body["results"]) == 50
    reads = [
        q["sql"]
        for q in queries.captured_queries
        if "motion_runner_message" in q["sql"] and "LIMIT" in q["sql"]
    ]
    assert reads and all("LIMIT 50" in sql or "LIMIT 51" in sql for sql in reads), reads


def test_latest_false_is_the_ordinary_page_from_the_start(garden, justin):
    assert texts(page(justin, latest="false", limit=2)) == ["m0", "m1"]


def test_a_before_that_is_no_cursor_is_a_clear_error(garden, justin):
    response = justin.get("/api/motions/garden/messages/", {"before": "not-a-cursor"})

    assert response.status_code == 400
    assert "not a cursor" in response.json()["error"]["fields"]["before"][0]
