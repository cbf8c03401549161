"""Personas, a controllable clock and a loop driver for the wakes tests.

Personas: Justin and Rosemary are people posting from the web; @magent is the agent that
listens in the Motion; @codey is a second agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from motion_runner.models import Message, Turn, TurnStatus
from motion_runner.signals import message_created, turn_finished
from tests.factories import AgentFactory, MessageFactory, MotionFactory, UserFactory
from wakes.consider_loop.considering import run_consideration
from wakes.consider_loop.loop import tick
from wakes.models import Consideration, Dials
from wakes.models import clock as wake_clock
from wakes.turn.screen import ScreenResult


class Clock:
    def __init__(self, start: datetime):
        self.moment = start
        wake_clock.set_now(start)

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float = 0, **kwargs) -> datetime:
        self.moment += timedelta(seconds=seconds, **kwargs)
        wake_clock.set_now(self.moment)
        return self.moment

    def set(self, moment: datetime) -> None:
        self.moment = moment
        wake_clock.set_now(moment)


@pytest.fixture
def clock():
    # Nine in the morning, local: a test's simulated hours never cross the budget day's midnight,
    # whatever the hour the suite runs (CI once ran one at 23:30 and the day's cap reset mid-test).
    start = timezone.localtime().replace(hour=9, minute=0, second=0, microsecond=0)
    yield Clock(start)
    wake_clock.set_now(None)


@dataclass
class Room:
    """A Motion with @magent listening, and its people."""

    motion: object
    magent: object
    codey: object
    justin: object
    rosemary: object


@pytest.fixture
def room(db):
    magent = AgentFactory(name="magent")
    codey = AgentFactory(name="codey", listening=False)
    motion = MotionFactory(slug="cryptograss")
    motion.agents.add(magent)
    return Room(motion, magent, codey, UserFactory(username="justin"), UserFactory(username="rosemary"))


def say(motion, who, text: str, clock: Clock, *, source: str = "web", kind: str = "text") -> Message:
    """A post written now (by the clock), announced the way the write path announces it."""
    fields = {"motion": motion, "text": text, "source": source, "kind": kind, "created_at": clock.now()}
    if hasattr(who, "harness"):  # an agent
        fields.update(sender=who.name, agent=who, source="runner" if source == "web" else source)
    else:
        fields.update(sender=who.get_username(), author=who, sign_in="password")
    message = MessageFactory(**fields)
    message_created.send(sender=Message, message=message)
    return message


def no_screen(motion, agent, posts, dials) -> ScreenResult:
    return ScreenResult("PASS", "not screened in this test")


@dataclass
class Driver:
    """Runs the loop as beat and a worker would, on the test's clock."""

    clock: Clock
    screen: object = no_screen
    considerations: list[Consideration] = field(default_factory=list)

    def run(self, seconds: float, step: float = 3.0) -> list[Consideration]:
        """Tick every `step` seconds for `seconds`; run each claimed consideration at once."""
        claimed = []
        end = self.clock.now() + timedelta(seconds=seconds)
        while self.clock.now() < end:
            self.clock.advance(step)
            for consideration in tick(dispatch=False):
                run_consideration(consideration.pk, dispatch=False, screen=self.screen)
                consideration.refresh_from_db()
                claimed.append(consideration)
        self.considerations += claimed
        return claimed


@pytest.fixture
def loop(clock):
    return Driver(clock)


def finish(
    turn: Turn, *, said: str | None = None, cost: str = "0.20", status: str = TurnStatus.FINISHED
) -> Turn:
    """End a queued turn as the runner would: its words (if any), its cost, the finish hook."""
    if said is not None:
        MessageFactory(
            motion=turn.motion,
            sender=turn.agent.name,
            agent=turn.agent,
            source="runner",
            turn=turn,
            text=said,
            created_at=wake_clock.now(),  # written now, by the wakes' clock, as the posts around it
        )
    Turn.objects.filter(pk=turn.pk).update(status=status, cost_usd=Decimal(cost), ended_at=timezone.now())
    turn.refresh_from_db()
    turn_finished.send_robust(sender=Turn, turn=turn)
    return turn


def dials(**changes) -> Dials:
    row = Dials.load()
    for name, value in changes.items():
        setattr(row, name, value)
    row.save()
    return row
