"""What ended a turn is a field (`Turn.ended_by`), not a phrase read back out of its error; the
migration that added it fills it for the turns that ended before, from the phrases they carry."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from motion_runner.models import EndedBy, TurnStatus
from tests.factories import TurnFactory

pytestmark = pytest.mark.django_db

fill = importlib.import_module("motion_runner.migrations.0017_turn_ended_by").fill_ended_by


def ended(error: str, status: str = TurnStatus.KILLED):
    return TurnFactory(status=status, error=error)


def test_the_migration_names_what_ended_each_earlier_turn():
    looped = ended("stopped: the tool-loop guard stopped it: the same Read call 3 times in a row")
    capped = ended("stopped: the turn's dollar cap stopped it: $1.0100 spent, the cap is $1.00")
    gone = ended(
        "its session s-1 is gone from claude-code; retired it and woke again in a new session",
        TurnStatus.FAILED,
    )
    elsewhere = ended(
        "its session s-2 is not on this machine (another machine may hold it; it is kept, not "
        "replaced): woke again once in a fresh session here",
        TurnStatus.FAILED,
    )
    plain = ended("stopped: Justin stopped it")

    fill(apps, None)

    for turn, cause in (
        (looped, EndedBy.LOOP_GUARD),
        (capped, EndedBy.SPEND_GUARD),
        (gone, EndedBy.SESSION_GONE),
        (elsewhere, EndedBy.SESSION_ELSEWHERE),
        (plain, EndedBy.HARNESS),
    ):
        turn.refresh_from_db()
        assert turn.ended_by == cause, turn.error


def test_a_finished_turn_whose_text_quotes_a_guard_is_left_alone():
    quoting = ended("the tool-loop guard stopped it", TurnStatus.FINISHED)
    fill(apps, None)
    quoting.refresh_from_db()
    assert quoting.ended_by == EndedBy.HARNESS
