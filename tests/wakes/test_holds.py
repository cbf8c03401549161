"""A wake's hold (wakes/holds.py) is told through `signals.hold_changed`: whoever shows holds
hears it (memory-lane's `GET …/held/`, and under the memory_lane binding its own page), and a
receiver that fails loses neither the hold nor its caller's work."""

from __future__ import annotations

import pytest

from motion_runner.signals import hold_changed
from tests.factories import AgentFactory, MotionFactory
from wakes.holds import keep_hold, lift_hold

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    told = []

    def listen(sender, motion, agent, hold, lasts, **kwargs):
        told.append((motion.slug, agent.name, hold and hold["reason"], hold and hold["until"], lasts))

    hold_changed.connect(listen)
    yield told
    hold_changed.disconnect(listen)


def test_a_kept_hold_is_told_with_its_motion_agent_reason_and_how_long_it_stands(heard):
    harbor, magent = MotionFactory(slug="harbor"), AgentFactory(name="magent")

    hold = keep_hold(harbor, magent, "at its hourly cap", "2026-12-02T11:00:00+00:00", 300)

    assert hold["agent"] == "magent" and hold["reason"] == "at its hourly cap"
    assert heard == [("harbor", "magent", "at its hourly cap", "2026-12-02T11:00:00+00:00", 300)]


def test_a_lifted_hold_is_told_as_none(heard):
    harbor, magent = MotionFactory(slug="harbor"), AgentFactory(name="magent")

    lift_hold(harbor, magent)

    assert heard == [("harbor", "magent", None, None, 0)]


def test_a_receiver_that_fails_is_logged_and_the_others_still_hear(heard, caplog):
    harbor, magent = MotionFactory(slug="harbor"), AgentFactory(name="magent")

    def broken(sender, **kwargs):
        raise RuntimeError("the host's cache is down")

    hold_changed.connect(broken)
    try:
        keep_hold(harbor, magent, "a turn is under way here; this one is next", None, 60)
    finally:
        hold_changed.disconnect(broken)

    assert heard and heard[-1][2] == "a turn is under way here; this one is next"
    assert "could not be shown" in caplog.text
