"""The thread as people and pollers read it: in order, after a cursor, nothing twice."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from motion_runner.models import Message
from motion_runner.thread import typed
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def motion():
    return MotionFactory(slug="garden", title="The garden")


def reader() -> APIClient:
    """A person signed in with a password: the Motions here are readable by signed-in people."""
    client = APIClient()
    client.force_login(UserFactory())
    return client


def page(client, motion, **params):
    response = client.get(f"/api/motions/{motion.slug}/messages/", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_messages_come_in_order_and_the_cursor_moves_past_them(motion):
    start = timezone.now()
    for n in range(5):
        MessageFactory(motion=motion, text=f"m{n}", created_at=start + timedelta(seconds=n))
    client = reader()
    first = page(client, motion, limit=3)
    assert [m["text"] for m in first["results"]] == ["m0", "m1", "m2"]
    assert first["more"] is True
    second = page(client, motion, after=first["next"])
    assert [m["text"] for m in second["results"]] == ["m3", "m4"]
    third = page(client, motion, after=second["next"])
    assert third["results"] == [] and third["next"] == second["next"]


def test_messages_written_in_the_same_microsecond_are_neither_lost_nor_repeated(motion):
    moment = timezone.now()
    for n in range(4):
        MessageFactory(motion=motion, text=f"same{n}", created_at=moment)
    client = reader()
    seen = []
    cursor = None
    for _ in range(4):
        params = {"limit": 1} | ({"after": cursor} if cursor else {})
        body = page(client, motion, **params)
        seen += [m["id"] for m in body["results"]]
        cursor = body["next"]
    assert len(seen) == 4 and len(set(seen)) == 4


def test_overlap_looks_back_for_late_commits(motion):
    now = timezone.now()
    early = MessageFactory(motion=motion, text="late commit", created_at=now - timedelta(seconds=1))
    latest = MessageFactory(motion=motion, text="latest", created_at=now)
    cursor = page(reader(), motion)["next"]
    assert page(reader(), motion, after=cursor)["results"] == []
    looked_back = page(reader(), motion, after=cursor, overlap=2)["results"]
    assert {m["id"] for m in looked_back} == {str(early.id), str(latest.id)}


def test_a_bad_cursor_is_a_clear_400(motion):
    response = reader().get(f"/api/motions/{motion.slug}/messages/", {"after": "nonsense!"})
    assert response.status_code == 400
    assert "after" in response.json()["error"]["fields"]


def test_an_unknown_motion_is_404():
    response = reader().get("/api/motions/nowhere/messages/")
    assert response.status_code == 404
    assert response.json()["error"]["status"] == 404


def test_filter_by_kind(motion):
    MessageFactory(motion=motion, kind="text", text="said")
    MessageFactory(motion=motion, kind="tool_call", text="Read x")
    kinds = [m["kind"] for m in page(reader(), motion, kind="tool_call")["results"]]
    assert kinds == ["tool_call"]


def test_the_running_turns_activity_comes_with_the_page(motion):
    agent = AgentFactory(name="magent")
    turn = TurnFactory(motion=motion, agent=agent, status="running", activity="magent: Read README.md")
    TurnFactory(motion=motion, agent=AgentFactory(name="idle"), status="finished", activity="")
    assert page(reader(), motion)["activity"] == [
        {
            "agent": "magent",
            "activity": "magent: Read README.md",
            "turn": turn.pk,
            "mode": "look",
            "stopping": False,
            "typed": "",
            "typed_html": None,
        }
    ]


def test_a_running_turns_typed_words_come_with_their_markdown_rendered(motion):
    """Issue 43.4: the growing text showed raw Markdown until its Message came."""
    turn = TurnFactory(motion=motion, agent=AgentFactory(name="magent"), status="running")
    typed.keep(turn.pk, "Found **two**:\n\n- one\n- two ")

    (shown,) = page(reader(), motion)["activity"]

    assert shown["typed"] == "Found **two**:\n\n- one\n- two "
    assert "<strong>two</strong>" in shown["typed_html"]
    assert "<li>one</li>" in shown["typed_html"]


def test_a_person_signed_in_with_ssh_posts_and_their_sign_in_is_kept(motion, person_signed_in_with_ssh):
    response = person_signed_in_with_ssh.post(
        f"/api/motions/{motion.slug}/messages/", {"text": "hello @magent"}, format="json"
    )
    assert response.status_code == 201, response.content
    message = Message.objects.get(pk=response.json()["id"])
    assert (message.sender, message.source, message.sign_in) == ("justin", "web", "ssh")


def test_an_outsider_cannot_post(motion):
    response = APIClient().post(f"/api/motions/{motion.slug}/messages/", {"text": "hi"}, format="json")
    assert response.status_code in (401, 403)
    assert not Message.objects.exists()


def test_an_empty_post_says_what_is_wrong(motion, person_signed_in_with_ssh):
    response = person_signed_in_with_ssh.post(
        f"/api/motions/{motion.slug}/messages/", {"text": "  "}, format="json"
    )
    assert response.status_code == 400
    assert "text" in response.json()["error"]["fields"]


def test_the_thread_page_renders_with_its_poll_url(client, motion):
    client.force_login(UserFactory())
    response = client.get(f"/motions/{motion.slug}/")
    assert response.status_code == 200
    assert b"/api/motions/garden/messages/" in response.content
    assert b"thread.js" in response.content


def poll_while_written(motion, text: str, **params) -> dict:
    """A long poll of `motion` (`params`), and `text` posted once the poll waits."""
    import threading

    from django.db import connection

    from motion_runner.thread.bell import bell

    def later():
        deadline = time.monotonic() + 60  # once the reader waits (an event, not a fixed time)
        while not bell.waiting(motion.pk) and time.monotonic() < deadline:
            time.sleep(0.01)
        MessageFactory(motion=motion, text=text)
        connection.close()

    writer = threading.Thread(target=later)
    writer.start()
    body = page(reader(), motion, wait=25, overlap=2, **params)
    writer.join()
    return body


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_returns_a_message_written_while_it_waits():
    motion = MotionFactory(slug="long-poll")
    MessageFactory(motion=motion, text="before")
    cursor = page(reader(), motion)["next"]

    body = poll_while_written(motion, "while you waited", after=cursor)

    assert [m["text"] for m in body["results"]] == ["before", "while you waited"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first_page", [{}, {"latest": 1}])
def test_a_new_empty_motion_is_long_polled_from_its_start(first_page):
    motion = MotionFactory(slug="brand-new")
    opened = page(reader(), motion, **first_page)
    assert opened["results"] == [] and opened["next"]  # a cursor at the thread's start

    body = poll_while_written(motion, "the first word", after=opened["next"])

    assert [m["text"] for m in body["results"]] == ["the first word"]


def test_the_start_cursor_of_an_empty_motion_reads_everything_written_since(motion):
    start = page(reader(), motion)["next"]
    MessageFactory(motion=motion, text="one")
    MessageFactory(motion=motion, text="two")
    assert [m["text"] for m in page(reader(), motion, after=start)["results"]] == ["one", "two"]


def test_a_long_poll_with_nothing_new_answers_empty(motion):
    MessageFactory(motion=motion)
    cursor = page(reader(), motion)["next"]
    assert page(reader(), motion, after=cursor, wait=0.05)["results"] == []


def test_wait_must_be_a_number(motion):
    response = reader().get(f"/api/motions/{motion.slug}/messages/", {"wait": "soon"})
    assert response.status_code == 400
    assert "wait" in response.json()["error"]["fields"]


def test_the_fast_rows_render_exactly_as_the_serializer_does(motion):
    import json as _json
    from decimal import Decimal

    from rest_framework.renderers import JSONRenderer

    from motion_runner.api.serializers import MessageSerializer, MessageWithRawSerializer, message_rows
    from motion_runner.models import Message
    from wakes.models import WakeRequest

    agent = AgentFactory(name="magent")
    turn = TurnFactory(motion=motion, agent=agent, mode="full")
    MessageFactory(motion=motion, text="plain")
    MessageFactory(
        motion=motion,
        agent=agent,
        sender="magent",
        source="runner",
        turn=turn,
        kind="turn_end",
        text="done",
        cost_usd=Decimal("0.011040"),
        input_tokens=12,
        raw={"type": "result"},
    )
    card = MessageFactory(
        motion=motion, agent=agent, sender="magent", source="runner", turn=turn, kind="request", text="x"
    )
    WakeRequest.objects.create(motion=motion, agent=agent, turn=turn, message=card, kind="tools", to="x")
    MessageFactory(motion=motion, kind="request", text="a card with no request row")
    queryset = Message.objects.filter(motion=motion).order_by("created_at", "id")

    def rendered(data):
        return _json.loads(JSONRenderer().render(data))

    assert rendered(message_rows(queryset)) == rendered(MessageSerializer(queryset, many=True).data)
    assert rendered(message_rows(queryset, raw=True)) == rendered(
        MessageWithRawSerializer(queryset, many=True).data
    )
