"""The thread as people expect one (issue 34, item 6), in real Chromium: the message box and the
agents' menus stay pinned below the messages, Tab reaches the message box before any message's
time link, "↓ newest" counts what came while Justin was scrolled up, days are divided, a stopped
turn reads as a stop with who, when and its cost, ■ sits inside its turn's group, and the search
box finds what was said in this Motion."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from motion_runner.models import Message, TurnStatus
from tests.browser.conftest import SCREENSHOTS, screenshot_of, sign_in_as
from tests.browser.test_thread import agent_says
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def harbor():
    motion = MotionFactory(slug="harbor", title="Harbor")
    motion.agents.add(AgentFactory(name="claude"))
    return motion


@pytest.fixture
def justin():
    return UserFactory(username="justin")


def many_posts(motion, count: int, *, start=None) -> None:
    start = start or timezone.now() - timedelta(hours=2)
    Message.objects.bulk_create(
        Message(
            motion=motion,
            sender="ada",
            source="web",
            kind="text",
            text=f"post {n}\n\nsecond line",
            created_at=start + timedelta(seconds=10 * n),
        )
        for n in range(count)
    )


def screen(page, name: str) -> None:
    """What the reader sees (not the whole page): a pinned dock only shows as pinned here."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def open_thread(page, live_server, who) -> None:
    sign_in_as(page, live_server, who)
    page.goto(f"{live_server.url}/motions/harbor/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")


def test_the_message_box_and_the_menus_stay_pinned_while_reading_back(
    live_server, page, viewport, harbor, justin
):
    many_posts(harbor, 60)
    open_thread(page, live_server, justin)
    expect(page.get_by_text("post 59", exact=True)).to_be_visible()

    page.evaluate("window.scrollTo(0, 0)")

    expect(page.get_by_text("post 59", exact=True)).not_to_be_in_viewport()
    expect(page.get_by_role("textbox", name="Message")).to_be_in_viewport()
    expect(page.locator("#steer summary")).to_be_in_viewport()
    screen(page, f"thread-pinned-composer-{viewport['width']}")
    assert page.js_errors == []


def test_the_message_box_comes_before_every_messages_time_link_in_the_tab_order(
    live_server, page, harbor, justin
):
    many_posts(harbor, 5)
    open_thread(page, live_server, justin)
    expect(page.locator("a.permalink")).to_have_count(1)  # ada's five posts: one group, one time link
    page.locator("body").focus()

    passed = []
    for _ in range(30):
        page.keyboard.press("Tab")
        passed.append(page.evaluate("document.activeElement.className || document.activeElement.tagName"))
        if page.evaluate("document.activeElement.getAttribute('aria-label')") == "Message":
            break
    else:
        pytest.fail(f"Tab never reached the message box: {passed}")

    assert "permalink" not in passed


def test_newest_counts_the_messages_that_came_while_scrolled_up(live_server, page, harbor, justin):
    many_posts(harbor, 60)
    open_thread(page, live_server, justin)
    newest = page.locator("#newest")
    expect(newest).to_be_hidden()

    page.evaluate("window.scrollTo(0, 0)")
    expect(newest).to_have_text("↓ newest")
    for n in range(3):
        MessageFactory(motion=harbor, sender="ada", text=f"while you were away {n}")

    expect(newest).to_have_text("↓ 3 new messages")
    screen(page, "thread-newest")
    newest.click()

    expect(page.get_by_text("while you were away 2")).to_be_in_viewport()
    expect(newest).to_be_hidden()
    assert page.js_errors == []


def test_days_are_divided(live_server, page, harbor, justin):
    now = timezone.now()
    MessageFactory(motion=harbor, sender="ada", text="from last week", created_at=now - timedelta(days=6))
    MessageFactory(motion=harbor, sender="ada", text="from yesterday", created_at=now - timedelta(days=1))
    MessageFactory(motion=harbor, sender="ada", text="from today", created_at=now)

    open_thread(page, live_server, justin)

    dividers = page.locator("#messages > li.day-divider")
    expect(dividers).to_have_count(3)
    expect(dividers.nth(1)).to_have_text("Yesterday")
    expect(dividers.nth(2)).to_have_text("Today")
    expect(page.get_by_role("heading", name="Today")).to_be_visible()
    assert page.js_errors == []


def test_a_stopped_turn_is_a_stop_with_who_when_and_its_cost(live_server, page, harbor, justin):
    turn = TurnFactory(
        motion=harbor, agent=harbor.agents.get(), status=TurnStatus.KILLED, stopped_by="rosemary"
    )
    agent_says(turn, text="Reading the whole archive now…")
    MessageFactory(
        motion=harbor,
        sender="runner",
        source="system",
        kind="error",
        is_error=True,
        turn=turn,
        text="@claude's turn killed: rosemary stopped it",
        stop_reason="stopped",
        cost_usd=Decimal("0.0231"),
    )

    open_thread(page, live_server, justin)

    group = page.locator(f'.group[data-key="turn:{turn.pk}"]')
    stop = group.locator(".turn-end.stopped")
    expect(stop).to_have_text(re.compile(r"^■stopped: rosemary stopped it · \$0\.02 · just now$"))
    expect(group.locator(".error")).to_have_count(0)  # not a red crash row
    screenshot_of(group, "thread-stopped-turn-cost")
    assert page.js_errors == []


def test_the_stop_button_sits_inside_its_turns_group(live_server, page, harbor, justin):
    turn = TurnFactory(
        motion=harbor, agent=harbor.agents.get(), status=TurnStatus.RUNNING, activity="claude: reading"
    )
    agent_says(turn, text="Looking into it.")

    open_thread(page, live_server, justin)

    stop = page.get_by_role("button", name="Stop @claude")
    expect(stop).to_be_visible()
    expect(
        page.locator(f'.group[data-key="turn:{turn.pk}"] .meta').get_by_role("button", name="Stop @claude")
    ).to_be_visible()
    expect(page.locator("#running")).to_be_empty()
    assert page.js_errors == []


def test_the_search_box_finds_a_message_and_opens_the_thread_at_it(live_server, page, harbor, justin):
    MessageFactory(
        motion=harbor,
        sender="ada",
        text="The banjo goes in the encore",
        created_at=timezone.now() - timedelta(hours=3),
    )
    many_posts(harbor, 80, start=timezone.now() - timedelta(hours=2))
    open_thread(page, live_server, justin)

    search = page.get_by_role("searchbox", name="Search this Motion")
    search.fill("banjo")
    search.press("Enter")

    results = page.get_by_role("region", name="Search results")
    expect(results).to_contain_text("1 found for “banjo”")
    screen(page, "thread-search")
    results.get_by_role("link", name=re.compile("banjo goes in the encore")).click()

    found = page.locator("#messages .linked")
    expect(found).to_contain_text("The banjo goes in the encore")
    expect(found).to_be_in_viewport()
    assert page.js_errors == []


def test_a_search_of_one_letter_asks_for_more(live_server, page, harbor, justin):
    open_thread(page, live_server, justin)

    search = page.get_by_role("searchbox", name="Search this Motion")
    search.fill("b")
    search.press("Enter")

    expect(page.get_by_role("region", name="Search results")).to_be_hidden()
