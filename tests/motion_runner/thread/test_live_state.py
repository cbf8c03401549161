"""Live state through the bell: a reader long-polling with the `live` token of its last answer
is answered as soon as a turn starts (before it says anything), types, is stopped or ends, and
a scram says one line in every thread. Every wait is for an event, with a generous bound; that
the reader was woken (not answered at the end of its wait) shows in the looks it took."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection
from rest_framework.test import APIClient

from motion_runner.models import Message, TurnStatus
from motion_runner.runner.live_text import LiveText
from motion_runner.runner.stopping import lift_scram, raise_scram, stop_turns
from motion_runner.runner.turns import claim_turn
from motion_runner.thread.bell import bell
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db(transaction=True)
BOUND = 60.0


@pytest.fixture(autouse=True)
def postgres_only(uses_real_services):
    if not uses_real_services:
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's; the SQLite socket bell has its own tests")


def page(motion, **params):
    response = APIClient().get(f"/api/motions/{motion.slug}/messages/", params)
    assert response.status_code == 200, response.content
    return response.json()


def until(condition, bound: float = BOUND) -> bool:
    deadline = time.monotonic() + bound
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(condition())


LOOKED = threading.Event()
LOOKS: list[str] = []


@pytest.fixture(autouse=True)
def first_looks(monkeypatch):
    """Says when a waiting reader has taken its first look at the live state: what a test does
    after it can only reach the reader through the bell."""
    from motion_runner.api import views

    looked = views.live_token_now

    def look(motion, reader):
        token = looked(motion, reader)
        LOOKS.append(token)
        LOOKED.set()
        return token

    LOOKED.clear()
    LOOKS.clear()
    monkeypatch.setattr(views, "live_token_now", look)


def once_waiting(motion, act) -> threading.Thread:
    """`act()` on another connection, once a reader waits on this Motion's bell, its first look
    taken."""
    LOOKED.clear()

    def run() -> None:
        until(lambda: bell.waiting(motion.pk) > 0 and LOOKED.is_set())
        act()
        connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def waited_poll(motion, first: dict) -> tuple[dict, int]:
    """A long poll with the first answer's cursor and live token: its answer, and how many looks
    it took at the live state (the first, then one after each ring: 2 when a ring woke it, 1
    when its wait ran out)."""
    LOOKS.clear()
    body = page(motion, after=first["next"], live=first["live"], wait=25)
    return body, len(LOOKS)


@pytest.fixture
def harbor():
    motion = MotionFactory(slug="harbor", visibility="public")
    MessageFactory(motion=motion, text="before")
    bell.start()
    assert until(lambda: bell.listening)
    return motion


@pytest.fixture
def magent():
    return AgentFactory(name="magent")


def test_a_turn_starting_answers_the_waiting_reader_before_it_says_anything(harbor, magent):
    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.QUEUED)
    first = page(harbor)
    starter = once_waiting(harbor, lambda: claim_turn(turn.pk))

    body, looks = waited_poll(harbor, first)
    starter.join()

    assert [a["turn"] for a in body["activity"]] == [turn.pk]
    assert body["results"] == [] and body["live"] != first["live"]
    assert looks == 2  # the first look, and the one after the ring: woken, not timed out


def test_a_stop_answers_the_waiting_reader_with_the_turn_stopping(harbor, magent):
    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.RUNNING)
    first = page(harbor)
    assert first["activity"][0]["stopping"] is False
    stopper = once_waiting(harbor, lambda: stop_turns(harbor, "rosemary"))

    body, looks = waited_poll(harbor, first)
    stopper.join()

    assert body["activity"] == [{**first["activity"][0], "stopping": True}]
    assert looks == 2
    assert turn.pk == body["activity"][0]["turn"]


def test_a_turn_ending_answers_the_waiting_reader_and_is_no_longer_listed(harbor, magent):
    from motion_runner.runner.ending import fail_before_launch

    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.RUNNING)
    first = page(harbor)
    ender = once_waiting(harbor, lambda: fail_before_launch(turn, "no such binary"))

    body, _ = waited_poll(harbor, first)
    ender.join()

    assert body["activity"] == []


def test_words_typed_answer_the_waiting_reader_with_the_text_so_far(harbor, magent):
    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.RUNNING)
    first = page(harbor)
    live = LiveText(turn.pk, harbor.pk)
    live.text = "The README says the answ"
    typer = once_waiting(harbor, lambda: live.show(force=True))

    body, looks = waited_poll(harbor, first)
    typer.join()

    assert body["activity"][0]["typed"] == "The README says the "
    assert body["results"] == []  # never a Message
    assert not Message.objects.filter(text__contains="README").exists()
    assert looks == 2
    live.clear()


def test_a_scram_says_one_line_in_every_thread_raised_and_lifted(harbor):
    kitchen = MotionFactory(slug="kitchen")

    raise_scram("ops", "runaway spend")
    lift_scram("ops")
    lift_scram("ops")  # nothing holds: nothing said

    for motion in (harbor, kitchen):
        said = list(Message.objects.filter(motion=motion, source="system").values_list("text", flat=True))
        assert said == [
            "⛔ Scram raised by ops: runaway spend — every agent is stopped and nothing wakes until it is lifted.",
            "Scram lifted by ops: agents wake again.",
        ]


def test_a_scram_raised_answers_a_waiting_reader_with_its_line_and_banner(harbor):
    first = page(harbor)
    raiser = once_waiting(harbor, lambda: raise_scram("ops", "runaway spend"))

    body, _ = waited_poll(harbor, first)
    raiser.join()

    assert body["scram"]["reason"] == "runaway spend"
    assert [m["text"] for m in body["results"]][0].startswith("⛔ Scram raised by ops")


def test_a_hold_answers_the_waiting_reader_and_its_lift_too(harbor, magent):

    from wakes.holds import keep_hold, lift_hold

    first = page(harbor)
    holder = once_waiting(harbor, lambda: keep_hold(harbor, magent, "a turn is under way", None, 600))

    held, looks = waited_poll(harbor, first)
    holder.join()

    assert held["holds"] == [{"agent": "magent", "reason": "a turn is under way", "until": None}]
    assert looks == 2
    lifter = once_waiting(harbor, lambda: lift_hold(harbor, magent))

    lifted, looks = waited_poll(harbor, held)
    lifter.join()

    assert lifted["holds"] == [] and looks == 2


def test_a_hold_said_again_unchanged_rings_no_one(harbor, magent, monkeypatch):

    from wakes.holds import keep_hold

    keep_hold(harbor, magent, "a turn is under way", None, 600)
    MessageFactory(motion=MotionFactory(slug="garden"), text="first")  # rings garden after it
    assert until(lambda: bell.rung("garden") > bell.rung("nowhere"))
    # Only this test's own Motion's rings are counted: the bell is the process's, and a ring for
    # any other Motion (a thread another test left running) must not count here.
    harbor_rings: list[str] = []
    heard = bell.ring
    monkeypatch.setattr(
        bell,
        "ring",
        lambda payload: (harbor_rings.append(payload) if payload == harbor.slug else None, heard(payload)),
    )

    keep_hold(harbor, magent, "a turn is under way", None, 600)  # renewed: no news
    keep_hold(harbor, magent, "the hourly cap", None, 600)  # news

    MessageFactory(motion=MotionFactory(slug="kitchen"), text="last")  # rings kitchen after both
    # Rings are heard in the order they were committed: once kitchen's is, so is any before it.
    assert until(lambda: bell.rung("kitchen") > bell.rung("nowhere"))
    assert harbor_rings == [harbor.slug]  # the news alone: the renewal rang no one
    assert page(harbor)["holds"] == [{"agent": "magent", "reason": "the hourly cap", "until": None}]
