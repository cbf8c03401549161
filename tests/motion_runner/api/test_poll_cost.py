"""What a poll of a thread's messages costs, with the same answers: a busy stream's long poll
answers from its page (no exists() first), one the bell woke reads four queries after the wake,
readers woken together by one ring share one read, and the wake parts (request cards, who is
typing) are one query while no card shows."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from motion_runner.api import views
from motion_runner.api.serializers import message_rows
from motion_runner.models import Scram, Turn, TurnStatus
from motion_runner.thread.bell import MessageBell, SharedAnswers, bell
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.models import Dials, TypingPing, WakeRequest, clock
from wakes.web.api import open_requests, recently_answered, typing_in
from wakes.web.views import thread_poll_fields


def listening() -> bool:
    # The ring everyone gets as the listener connects comes before it says it listens.
    bell.start()
    deadline = time.monotonic() + 60
    while not bell.listening and time.monotonic() < deadline:
        time.sleep(0.01)
    return bell.listening


def until_a_reader_waits(motion) -> None:
    deadline = time.monotonic() + 60  # on this Motion: another test's reader may still wait on its own
    while not bell.waiting(motion.pk) and time.monotonic() < deadline:
        time.sleep(0.01)


def page(motion, client=None, **params) -> dict:
    response = (client or APIClient()).get(f"/api/motions/{motion.slug}/messages/", params)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_a_long_poll_that_finds_news_at_once_costs_four_queries_and_answers_as_a_plain_read():
    motion = MotionFactory(slug="stream", visibility="public")
    MessageFactory(motion=motion, text="seen")
    cursor = page(motion)["next"]
    for n in range(3):
        MessageFactory(motion=motion, text=f"new {n}", sender="magent", source="runner")

    with CaptureQueriesContext(connection) as plain_queries:
        plain = page(motion, after=cursor, kind="text")
    with CaptureQueriesContext(connection) as waited_queries:
        waited = page(motion, after=cursor, kind="text", wait=5)

    assert waited == plain and [m["text"] for m in waited["results"]] == ["new 0", "new 1", "new 2"]
    # The Motion (access), the page, the running turns, the wake parts: the page is the first look.
    assert len(plain_queries) == len(waited_queries) == 4


@pytest.mark.django_db
def test_a_long_poll_with_overlap_still_waits_for_what_is_after_the_cursor():
    motion = MotionFactory(slug="overlapping", visibility="public")
    MessageFactory(motion=motion, text="seen")
    cursor = page(motion)["next"]

    started = time.monotonic()
    body = page(motion, after=cursor, overlap=5, wait=0.3)

    # The overlap's row is in the page, but it is not news: the poll waited its 0.3 s.
    assert time.monotonic() - started >= 0.25
    assert [m["text"] for m in body["results"]] == ["seen"] and body["next"] == body["results"][-1]["cursor"]


@pytest.mark.django_db
def test_a_long_poll_that_says_whom_it_shows_typing_asks_once_more_at_its_first_look():
    motion = MotionFactory(slug="quiet", visibility="public")
    MessageFactory(motion=motion, text="seen")
    cursor = page(motion)["next"]
    TypingPing.objects.create(motion=motion, who="maria", at=clock.now())

    with CaptureQueriesContext(connection) as queries:
        body = page(motion, after=cursor, wait=20, typing="")

    # The Motion (access), the page (empty), the first look: nothing new, but who is typing (the
    # wake parts) is not whom it shows; then the page, the running turns and the wake parts.
    assert len(queries) == 7, [q["sql"][:90] for q in queries.captured_queries]
    assert body["typing"] == ["maria"] and body["results"] == []


def listened_to(slug: str, uses_real_services: bool):
    """A public Motion with one line, its cursor after that line, and the bell listening."""
    if not uses_real_services:
        pytest.skip("the bell rings through PostgreSQL's LISTEN/NOTIFY")
    motion = MotionFactory(slug=slug, visibility="public")
    MessageFactory(motion=motion, text="before")
    cursor = page(motion)["next"]
    assert listening()
    return motion, cursor


@pytest.mark.django_db(transaction=True)
def test_a_woken_long_poll_costs_four_queries_after_the_wake(uses_real_services):
    motion, cursor = listened_to("woken", uses_real_services)

    def write() -> None:
        until_a_reader_waits(motion)
        MessageFactory(motion=motion, sender="magent", source="runner", text="while you waited")
        connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    with CaptureQueriesContext(connection) as queries:
        body = page(motion, after=cursor, wait=20)
    writer.join()

    # Before the wait: the Motion (access), the page (empty), the first look. After the bell:
    # the look, the page, the running turns, the wake parts. (Counted before the next request
    # clears the connection's log.)
    assert len(queries) == 3 + 4, [q["sql"][:80] for q in queries.captured_queries]
    assert [m["text"] for m in body["results"]] == ["while you waited"]
    assert body == page(motion, after=cursor)


@pytest.mark.django_db
def test_a_removed_member_is_refused_on_the_next_long_poll():
    motion = MotionFactory(slug="members-only", visibility="members")
    reader = UserFactory(username="rosa")
    motion.people.add(reader)
    client = APIClient()
    client.force_authenticate(reader)
    MessageFactory(motion=motion, text="one")
    cursor = page(motion, client)["next"]
    MessageFactory(motion=motion, text="two")
    assert [m["text"] for m in page(motion, client, after=cursor, wait=5)["results"]] == ["two"]

    motion.people.remove(reader)

    response = client.get(f"/api/motions/{motion.slug}/messages/", {"after": cursor, "wait": 5})
    assert response.status_code == 404


def wake_state(motion, now):
    """Cards open, answered lately, answered long ago; pings fresh, older, stale, the reader's."""
    agent = AgentFactory(name="claude")

    def card(status: str, decided_ago: timedelta | None, created_ago: timedelta) -> None:
        message = MessageFactory(motion=motion, agent=agent, sender="claude", kind="request", text="x")
        WakeRequest.objects.create(
            motion=motion,
            agent=agent,
            message=message,
            kind="merge",
            to="main",
            status=status,
            decided_by=UserFactory() if decided_ago else None,
            decided_at=now - decided_ago if decided_ago else None,
            created_at=now - created_ago,
        )

    card("open", None, timedelta(minutes=1))
    card("open", None, timedelta(minutes=3))
    card("done", timedelta(minutes=2), timedelta(minutes=30))
    card("declined", timedelta(minutes=9), timedelta(minutes=40))
    card("granted", timedelta(minutes=20), timedelta(minutes=50))
    for who, ago in (("maria", 2), ("ann", 20), ("old", 600), ("justin", 1)):
        TypingPing.objects.create(motion=motion, who=who, at=now - timedelta(seconds=ago))


@pytest.mark.django_db
@pytest.mark.parametrize("ttl", [None, 30.0])  # no Dials row (the field's default, 6 s), or one
@pytest.mark.parametrize("reader", ["justin", None, ""])
def test_the_wake_parts_answer_as_the_three_reads_did(ttl, reader):
    now = timezone.now()
    clock.set_now(now)
    try:
        motion = MotionFactory(slug="cards")
        wake_state(motion, now)
        if ttl is not None:
            Dials.objects.create(pk=1, typing_ttl_seconds=ttl)

        with CaptureQueriesContext(connection) as queries:
            fields = thread_poll_fields(motion, reader)
        # Dials.load() in typing_in saves the default row if there is none: asked after.
        before = {
            "requests": open_requests(motion),
            "answered_requests": recently_answered(motion),
            "typing": typing_in(motion, exclude=reader),
        }
    finally:
        clock.set_now(None)

    assert fields == {**before, "scram": None}
    assert len(fields["requests"]) == 2 and len(fields["answered_requests"]) == 2
    expected = ["maria"] + (["ann"] if ttl else []) + ([] if reader == "justin" else ["justin"])
    assert fields["typing"] == sorted(expected)
    assert len(queries) == 2  # the Motion's row with the dial, the pings and "any card?"; the cards


@pytest.mark.django_db
def test_the_wake_parts_of_a_thread_without_cards_or_pings_are_one_query():
    motion = MotionFactory(slug="quiet")

    with CaptureQueriesContext(connection) as queries:
        fields = thread_poll_fields(motion, "justin")

    assert fields == {"requests": [], "answered_requests": [], "typing": [], "scram": None}
    assert len(queries) == 1


def a_bell_that_listens() -> MessageBell:
    own = MessageBell()
    own._listening.set()  # as if its listener were connected: rings come from the test
    return own


def test_readers_woken_by_one_ring_share_the_answer_read_after_it():
    own = a_bell_that_listens()
    answers = SharedAnswers(own)
    reads = []

    def read() -> dict:
        reads.append(1)
        return {"read": len(reads)}

    own.ring("garden")
    woke = own.rung("garden")
    first = answers.answer("garden", ("garden", None, ()), woke, read)
    second = answers.answer("garden", ("garden", None, ()), woke, read)
    other_question = answers.answer("garden", ("garden", None, (("kind", ("text",)),)), woke, read)

    assert first == second == {"read": 1} and other_question == {"read": 2}
    own.ring("kitchen")  # another Motion's ring: the garden's answer still serves
    assert answers.answer("garden", ("garden", None, ()), own.rung("garden"), read) == {"read": 1}
    own.ring("garden")  # a later ring in this Motion: read again
    assert answers.answer("garden", ("garden", None, ()), own.rung("garden"), read) == {"read": 3}
    own.ring_everyone()  # the channel came back: anything may have been written meanwhile
    assert answers.answer("garden", ("garden", None, ()), own.rung("garden"), read) == {"read": 4}


def test_answers_read_after_an_older_ring_go_and_the_store_stays_small():
    own = a_bell_that_listens()
    answers = SharedAnswers(own)
    for n in range(1000):  # a stream: each ring, a new cursor
        own.ring("garden")
        own.ring("kitchen")
        answers.answer("garden", ("garden", None, n), own.rung("garden"), lambda: "page")
        answers.answer("kitchen", ("kitchen", None, n), own.rung("kitchen"), lambda: "page")

    assert len(answers._answers) == 2  # the newest of each Motion
    assert len(answers._reading) <= SharedAnswers.KEPT


def test_without_the_channel_no_answer_is_kept():
    own = MessageBell()  # not listening: rows may be written without a ring
    answers = SharedAnswers(own)
    reads = []

    def read() -> int:
        reads.append(1)
        return len(reads)

    assert [answers.answer("garden", "q", 0, read) for _ in range(3)] == [1, 2, 3]


@pytest.mark.django_db(transaction=True)
def test_readers_of_one_motion_woken_together_are_answered_from_one_read(uses_real_services, monkeypatch):
    motion, cursor = listened_to("many-readers", uses_real_services)
    pages_read = []

    def counted(queryset, **kwargs):
        rows = message_rows(queryset, **kwargs)
        if rows:  # not the empty page each reads before it waits
            pages_read.append(len(rows))
        return rows

    monkeypatch.setattr(views, "message_rows", counted)
    bodies = []

    def reader() -> None:
        bodies.append(page(motion, after=cursor, wait=20))
        connection.close()

    readers = [threading.Thread(target=reader) for _ in range(5)]
    for thread in readers:
        thread.start()
    deadline = time.monotonic() + 10
    # This Motion's waiters only: the bell is the process's, and another test's reader may still wait.
    while bell.waiting(motion.slug) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bell.waiting(motion.slug) == 5
    MessageFactory(motion=motion, sender="magent", source="runner", text="for everyone")
    for thread in readers:
        thread.join()

    assert len(bodies) == 5 and all(body == bodies[0] for body in bodies)
    assert [m["text"] for m in bodies[0]["results"]] == ["for everyone"]
    assert bodies[0] == page(motion, after=cursor)
    assert pages_read == [1, 1]  # one read for the five, and the plain read just above


@pytest.mark.django_db
def test_the_running_turns_read_as_the_orm_read_them():
    motion = MotionFactory(slug="busy")
    now = timezone.now()
    for n, (status, ago) in enumerate([("running", 5), ("running", 1), ("finished", 0), ("queued", 2)]):
        TurnFactory(
            motion=motion,
            agent=AgentFactory(name=f"agent-{n}"),
            status=status,
            activity=f"doing {n}",
            mode="tools" if n % 2 else "look",
            queued_at=now - timedelta(seconds=ago),
        )
    TurnFactory(status="running")  # another Motion's

    with CaptureQueriesContext(connection) as queries:
        activity = views.running_activity(motion)

    orm = [
        {
            "agent": name,
            "activity": doing,
            "turn": pk,
            "mode": mode,
            "stopping": False,
            "typed": "",
            "typed_html": None,
        }
        for pk, name, doing, mode in Turn.objects.filter(
            motion=motion, status=TurnStatus.RUNNING
        ).values_list("pk", "agent__name", "activity", "mode")
    ]
    assert activity == orm and [a["agent"] for a in activity] == ["agent-1", "agent-0"]
    assert len(queries) == 1


@pytest.mark.django_db
def test_a_scram_is_in_the_same_one_query():
    motion = MotionFactory(slug="held")
    Scram.objects.create(reason="runaway spend", raised_by="ops")

    with CaptureQueriesContext(connection) as queries:
        fields = thread_poll_fields(motion, "justin")

    assert fields["scram"]["reason"] == "runaway spend" and fields["scram"]["raised_by"] == "ops"
    assert len(queries) == 1
