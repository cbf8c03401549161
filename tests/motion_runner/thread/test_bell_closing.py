"""A web process that is stopping answers the readers waiting on its bell at once, and lets none
wait again (issue 43.6: bin/serve's Ctrl-C with a thread open waited for its long poll, past the
grace). Each wait is bounded generously: a busy machine makes these slower, never wrong."""

from __future__ import annotations

import threading

import pytest

from motion_runner.thread.bell import MessageBell
from tests.faults.support import wait_for

BOUND = 60.0  # seconds, for what takes milliseconds; the readers' own wait is ten times that


@pytest.fixture
def closing_bell(settings) -> MessageBell:
    settings.MESSAGES_LISTEN = False  # no listener thread: the bell's own waiting is what is pinned
    return MessageBell()


def reader(bell: MessageBell, answers: list[bool]) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(bell.wait("harbor", lambda: False, timeout=600)))
    thread.start()
    return thread


def test_a_reader_waiting_when_the_process_stops_is_answered_at_once(closing_bell):
    answers: list[bool] = []
    waiting = reader(closing_bell, answers)
    wait_for("the reader waiting", lambda: closing_bell.waiting("harbor") == 1, seconds=BOUND)

    closing_bell.close_readers()

    waiting.join(BOUND)
    assert answers == [False]  # nothing new: its client polls again


def test_no_reader_waits_once_the_process_is_stopping(closing_bell):
    closing_bell.close_readers()
    answers: list[bool] = []

    reader(closing_bell, answers).join(BOUND)

    assert answers == [False]
