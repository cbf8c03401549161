"""Readers woken, not polling: a long poll costs one query, then none until a message is
written in its Motion; when the channel is down, readers poll slowly and still see it.

Every wait here is for an event (the bell listening, a ring heard, a reader waiting) with a
generous bound: a busy machine makes these tests slower, never wrong or vacuous."""

from __future__ import annotations

import threading
import time
from itertools import pairwise

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from motion_runner.models import Message
from motion_runner.thread.bell import MessageBell, bell
from tests.factories import MessageFactory, MotionFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def postgres_only(uses_real_services):
    if not uses_real_services:
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's; on SQLite readers poll (see the fallback test)")


def page(motion, **params):
    response = APIClient().get(f"/api/motions/{motion.slug}/messages/", params)
    assert response.status_code == 200, response.content
    return response.json()


BOUND = 60.0  # seconds: for events that take milliseconds on a quiet machine


def until(condition, bound: float = BOUND) -> bool:
    deadline = time.monotonic() + bound
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(condition())


def write_later(motion, text: str, when=None) -> threading.Thread:
    """An agent's line, written and committed by another connection once `when()` holds (by
    default: once a reader waits on this Motion's bell; another test's reader, still waiting on
    its own Motion, must not set it off early)."""
    when = when or (lambda: bell.waiting(motion.pk) > 0)

    def write() -> None:
        until(when)
        MessageFactory(motion=motion, sender="magent", source="runner", text=text)
        connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    return writer


def listening() -> bool:
    # The listener rings every waiter once as it (re)connects, before it says it listens: once
    # it does, that ring will not disturb a test counting its queries.
    bell.start()
    return until(lambda: bell.listening)


def test_a_reader_waiting_in_a_quiet_motion_costs_no_queries_while_it_waits():
    motion = MotionFactory(slug="quiet-garden", visibility="public")
    MessageFactory(motion=motion, text="before")
    cursor = page(motion)["next"]
    assert listening()

    with CaptureQueriesContext(connection) as at_once:
        page(motion, after=cursor)
    with CaptureQueriesContext(connection) as waited:
        started = time.monotonic()
        body = page(motion, after=cursor, wait=1.5)
        elapsed = time.monotonic() - started

    assert body["results"] == [] and elapsed >= 1.4  # it waited (a busy machine only adds)
    # The only query a 1.5 s wait adds is its first look (the old reader made ~300).
    assert len(waited) - len(at_once) == 1


def test_a_message_written_while_a_reader_waits_wakes_it_with_one_more_query():
    motion = MotionFactory(slug="busy-garden", visibility="public")
    MessageFactory(motion=motion, text="before")
    cursor = page(motion)["next"]
    assert listening()
    writer = write_later(motion, "while you waited")

    with CaptureQueriesContext(connection) as waited:
        body = page(motion, after=cursor, wait=25)
    writer.join()

    assert [m["text"] for m in body["results"]] == ["while you waited"]
    # Woken by the bell: a second look after the ring (the end of the wait looks no more).
    exists = [
        q for q in waited.captured_queries if "LIMIT 1" in q["sql"] and "motion_runner_message" in q["sql"]
    ]
    assert len(exists) == 2  # the first look, and the one after the bell rang


def test_a_message_in_another_motion_does_not_wake_the_reader():
    garden, kitchen = (
        MotionFactory(slug="garden", visibility="public"),
        MotionFactory(slug="kitchen", visibility="public"),
    )
    MessageFactory(motion=garden, text="before")
    cursor = page(garden)["next"]
    assert listening()
    heard = bell.rings

    def kitchen_then_garden() -> None:
        # The kitchen's line while the garden's reader waits; once its ring is heard, the
        # garden's own line (which ends the wait, so nothing depends on how long it was).
        until(lambda: bell.waiting(garden.pk) > 0)
        MessageFactory(motion=kitchen, sender="magent", source="runner", text="elsewhere")
        until(lambda: bell.rings > heard)
        MessageFactory(motion=garden, sender="magent", source="runner", text="here")
        connection.close()

    writer = threading.Thread(target=kitchen_then_garden)
    writer.start()
    with CaptureQueriesContext(connection) as waited:
        body = page(garden, after=cursor, wait=25)
    writer.join()

    assert [m["text"] for m in body["results"]] == ["here"]
    exists = [
        q for q in waited.captured_queries if "LIMIT 1" in q["sql"] and "motion_runner_message" in q["sql"]
    ]
    assert len(exists) == 2  # the first look and the garden's ring: the kitchen's woke nobody


def test_the_trigger_rings_once_per_statement_not_once_per_row():
    motion = MotionFactory(slug="burst", visibility="public")
    assert listening()
    sentinel = MotionFactory(slug="after-the-burst", visibility="public")
    before = bell.rings
    Message.objects.bulk_create(
        [
            Message(motion=motion, sender="magent", source="runner", kind="text", text=str(n))
            for n in range(100)
        ]
    )
    # A later statement's ring comes after every ring of the burst (one channel, commit order).
    MessageFactory(motion=sentinel, text="after")
    assert until(lambda: sentinel.pk in bell._rang)

    assert bell.rings - before == 2  # the burst's one, and the sentinel's


def test_with_the_channel_off_readers_poll_at_the_fallback_pace_and_still_see_the_message(settings):
    settings.MESSAGES_LISTEN = False
    settings.MESSAGES_FALLBACK_POLL_SECONDS = 0.2
    off = MessageBell()
    motion = MotionFactory(slug="no-channel", visibility="public")
    looks = []
    writer = write_later(motion, "polled", when=lambda: len(looks) >= 3)

    def has_news() -> bool:
        looks.append(time.monotonic())
        return Message.objects.filter(motion=motion).exists()

    assert off.wait(motion.pk, has_news, BOUND)
    writer.join()

    assert not off.listening
    # One look per 0.2 s, not one per 5 ms: a busy machine only spaces them further apart.
    gaps = [later - earlier for earlier, later in pairwise(looks)]
    assert gaps and min(gaps) >= 0.15, gaps


def test_when_the_listener_loses_its_connection_readers_poll_and_it_comes_back(settings):
    settings.MESSAGES_FALLBACK_POLL_SECONDS = 0.1
    own = MessageBell()
    try:
        own.start()
        assert until(lambda: own.listening)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'motion-runner message bell' AND datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )
        assert until(lambda: not own.listening)
        motion = MotionFactory(slug="outage", visibility="public")
        seen = threading.Event()

        def reader() -> None:
            if own.wait(motion.pk, Message.objects.filter(motion=motion).exists, BOUND):
                seen.set()
            connection.close()

        thread = threading.Thread(target=reader)
        thread.start()
        MessageFactory(motion=motion, text="during the outage")
        thread.join()

        assert seen.is_set()
        assert until(lambda: own.listening)  # reconnected
    finally:
        own.stop()
