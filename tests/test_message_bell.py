"""Readers woken, not polling: a long poll costs one query, then none until a message is
written in its Motion; when the channel is down, readers poll slowly and still see it."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from motion_runner.message_bell import MessageBell, bell
from motion_runner.models import Message
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


def write_later(motion, text: str, delay: float) -> threading.Thread:
    """An agent's line, written and committed by another connection a moment from now."""

    def write() -> None:
        time.sleep(delay)
        MessageFactory(motion=motion, sender="magent", source="runner", text=text)
        connection.close()

    writer = threading.Thread(target=write)
    writer.start()
    return writer


def listening(timeout: float = 5.0) -> bool:
    bell.start()
    deadline = time.monotonic() + timeout
    while not bell.listening and time.monotonic() < deadline:
        time.sleep(0.01)
    # The listener rings every waiter once just after it (re)connects, so nothing written while
    # it was away waits for a poll: let that ring pass before a test counts its queries.
    time.sleep(0.1)
    return bell.listening


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

    assert body["results"] == [] and elapsed >= 1.4
    # The only query a 1.5 s wait adds is its first look (the old reader made ~300).
    assert len(waited) - len(at_once) == 1


def test_a_message_written_while_a_reader_waits_wakes_it_with_one_more_query():
    motion = MotionFactory(slug="busy-garden", visibility="public")
    MessageFactory(motion=motion, text="before")
    cursor = page(motion)["next"]
    assert listening()
    writer = write_later(motion, "while you waited", delay=0.5)

    with CaptureQueriesContext(connection) as waited:
        started = time.monotonic()
        body = page(motion, after=cursor, wait=20)
        elapsed = time.monotonic() - started
    writer.join()

    assert [m["text"] for m in body["results"]] == ["while you waited"]
    assert elapsed < 10  # woken by the bell, not by the end of the wait
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
    writer = write_later(kitchen, "elsewhere", delay=0.2)

    with CaptureQueriesContext(connection) as waited:
        body = page(garden, after=cursor, wait=1.0)
    writer.join()

    assert body["results"] == []
    exists = [
        q for q in waited.captured_queries if "LIMIT 1" in q["sql"] and "motion_runner_message" in q["sql"]
    ]
    assert len(exists) == 1


def test_the_trigger_rings_once_per_statement_not_once_per_row():
    motion = MotionFactory(slug="burst", visibility="public")
    assert listening()
    before = bell.rings
    Message.objects.bulk_create(
        [
            Message(motion=motion, sender="magent", source="runner", kind="text", text=str(n))
            for n in range(100)
        ]
    )
    deadline = time.monotonic() + 5
    while bell.rings == before and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)

    assert bell.rings - before == 1


def test_with_the_channel_off_readers_poll_at_the_fallback_pace_and_still_see_the_message(settings):
    settings.MESSAGES_LISTEN = False
    settings.MESSAGES_FALLBACK_POLL_SECONDS = 0.2
    off = MessageBell()
    motion = MotionFactory(slug="no-channel", visibility="public")
    writer = write_later(motion, "polled", delay=0.5)
    looks = []

    def has_news() -> bool:
        looks.append(time.monotonic())
        return Message.objects.filter(motion=motion).exists()

    assert off.wait(motion.pk, has_news, 10)
    writer.join()

    assert not off.listening
    assert 3 <= len(looks) <= 6  # about one look per 0.2 s over 0.5 s, not one per 5 ms


def test_when_the_listener_loses_its_connection_readers_poll_and_it_comes_back(settings):
    settings.MESSAGES_FALLBACK_POLL_SECONDS = 0.1
    own = MessageBell()
    try:
        own.start()
        deadline = time.monotonic() + 5
        while not own.listening and time.monotonic() < deadline:
            time.sleep(0.01)
        assert own.listening
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'motion-runner message bell' AND datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )
        deadline = time.monotonic() + 5
        while own.listening and time.monotonic() < deadline:
            time.sleep(0.01)
        motion = MotionFactory(slug="outage", visibility="public")
        seen = threading.Event()

        def reader() -> None:
            if own.wait(motion.pk, Message.objects.filter(motion=motion).exists, 10):
                seen.set()
            connection.close()

        thread = threading.Thread(target=reader)
        thread.start()
        MessageFactory(motion=motion, text="during the outage")
        thread.join()

        assert seen.is_set()
        deadline = time.monotonic() + 10
        while not own.listening and time.monotonic() < deadline:
            time.sleep(0.05)
        assert own.listening  # reconnected
    finally:
        own.stop()
