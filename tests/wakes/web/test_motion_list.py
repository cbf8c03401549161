"""The Motion list: when each Motion last moved, its agents and whether each rests, today's
spend and what is left of the budget, and a 🔨 where a request waits for a person."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from motion_runner.models import Scram, TurnStatus
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.models import DialOverride, Dials, ListenState, Spend, Steer, WakeRequest

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader() -> Client:
    client = Client()
    client.force_login(UserFactory(username="justin"))
    return client


def card(page: str, slug: str) -> str:
    match = re.search(rf'<li class="motion" data-slug="{slug}">(.*?)</li>', page, re.S)
    assert match, page
    return match.group(1)


def spend(motion, agent, amount: str) -> None:
    now = timezone.now()
    Spend.objects.create(
        kind="consideration",
        motion=motion,
        agent=agent,
        day=timezone.localdate(now),
        at=now,
        amount=Decimal(amount),
    )


def test_the_motion_that_moved_last_comes_first_and_says_when(reader):
    old, new = MotionFactory(slug="old", title="Old"), MotionFactory(slug="new", title="New")
    MessageFactory(motion=old, created_at=timezone.now() - timedelta(hours=3))
    MessageFactory(motion=new, created_at=timezone.now() - timedelta(minutes=5))

    page = reader.get("/").content.decode()

    assert page.index('data-slug="new"') < page.index('data-slug="old"')
    assert "active <time" in card(page, "new") and "5\xa0minutes ago" in card(page, "new")


def test_a_motion_that_moved_within_the_minute_says_just_now_as_the_thread_does(reader):
    MessageFactory(
        motion=MotionFactory(slug="new", title="New"), created_at=timezone.now() - timedelta(seconds=5)
    )

    page = reader.get("/").content.decode()

    assert ">just now</time>" in card(page, "new")
    assert "minutes ago" not in card(page, "new")


def test_each_agent_says_whether_it_rests_listens_or_works(reader):
    harbor = MotionFactory(slug="harbor")
    resting, busy, idle = AgentFactory(name="claude"), AgentFactory(name="codex"), AgentFactory(name="pi")
    harbor.agents.add(resting, busy, idle)
    ListenState.objects.create(motion=harbor, agent=resting, rested=True, created_at=timezone.now())
    TurnFactory(motion=harbor, agent=busy, status=TurnStatus.RUNNING)

    shown = card(reader.get("/").content.decode(), "harbor")

    assert "@claude · resting" in shown
    assert "@codex · working" in shown
    assert "@pi · listening" in shown


def test_an_agent_the_room_hushed_says_so(reader):
    harbor = MotionFactory(slug="harbor")
    hushed, off = AgentFactory(name="claude"), AgentFactory(name="codex")
    harbor.agents.add(hushed, off)
    Steer.objects.create(motion=harbor, agent=hushed, setting="listening", value="mentions", by_name="justin")
    Steer.objects.create(motion=harbor, agent=off, setting="listening", value="off", by_name="justin")

    shown = card(reader.get("/").content.decode(), "harbor")

    assert "@claude · mentions only" in shown
    assert "@codex · not listening here" in shown


def test_a_scram_is_said_above_the_motions(reader):
    Scram.objects.create(reason="runaway spend", raised_by="ops")

    page = reader.get("/").content.decode()

    assert "Scram: every agent is stopped and nothing wakes — runaway spend" in page


def test_todays_spend_and_the_budget_left(reader):
    Dials.objects.update_or_create(pk=1, defaults={"daily_budget_usd": Decimal("10.00")})
    harbor, garden = MotionFactory(slug="harbor"), MotionFactory(slug="garden")
    agent = AgentFactory(name="claude")
    spend(harbor, agent, "1.25")
    spend(garden, agent, "2.00")
    DialOverride.objects.create(motion=garden, daily_budget_usd=Decimal("3.00"))

    page = reader.get("/").content.decode()

    assert "today $1.25 · $6.75 left" in card(page, "harbor")  # the global day: 10 − 3.25
    assert "today $2.00 · $1.00 left" in card(page, "garden")  # its own cap is narrower


def test_a_waiting_request_shows_a_hammer(reader):
    harbor = MotionFactory(slug="harbor")
    MotionFactory(slug="garden")
    agent = AgentFactory(name="claude")
    card_message = MessageFactory(motion=harbor, kind="request", tool_name="tools", text="run tests")
    WakeRequest.objects.create(motion=harbor, agent=agent, message=card_message, kind="tools", to="run tests")

    page = reader.get("/").content.decode()

    assert "🔨" in card(page, "harbor")
    assert "🔨" not in card(page, "garden")


def test_todays_spend_is_the_ledgers_and_says_what_the_caps_count(reader):
    # Issue 25: the list said "today $0.06" where the ledger summed $0.13 for the same day.
    Dials.objects.update_or_create(pk=1, defaults={"daily_budget_usd": Decimal("10.00")})
    harbor = MotionFactory(slug="harbor")
    agent = AgentFactory(name="claude")
    spend(harbor, agent, "0.06")
    Spend.objects.create(
        kind="mention", motion=harbor, agent=agent, day=timezone.localdate(), at=timezone.now(),
        amount=Decimal("0.07"), counted=False,
    )  # fmt: skip
    admin = Client()
    admin.force_login(UserFactory(username="ana", is_staff=True, is_superuser=True))

    shown = card(reader.get("/").content.decode(), "harbor")
    ledger = admin.get("/admin/wakes/spend/").content.decode()

    assert "today $0.13 ($0.06 counted against the caps) · $9.94 left" in shown
    assert '<td class="amount">$0.1300</td><td class="amount">$0.0600</td>' in ledger
