"""Issue 25's small things on the thread page, in real Chromium: a silence is a dot alone, an
error is said once, a wake line is one short line with the rest on hover or a click, Shift+Enter's
line breaks are kept, the "full tools" badge is readable (WCAG AA), and a mention of nobody here
is pointed out before posting."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from motion_runner.models import TurnStatus
from tests.browser.conftest import screenshot, sign_in_as
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


def wake_line(turn, text: str):
    return MessageFactory(
        motion=turn.motion, sender=turn.agent.name, source="system", kind="wake", turn=turn, text=text
    )


@pytest.mark.parametrize("silence", ["<silent>", "<silent/>", "<silent>nothing for me</silent>"])
def test_a_silence_is_a_dot_alone(live_server, page, harbor, justin, silence):
    turn = TurnFactory(
        motion=harbor, agent=harbor.agents.get(), reason="consider", status=TurnStatus.FINISHED
    )
    agent_says(turn, text=silence)
    agent_says(turn, kind="dot", text=silence)
    agent_says(turn, kind="turn_end", text="success", cost_usd=Decimal("0.0100"))
    MessageFactory(motion=harbor, sender="justin", text="and then?")
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/harbor/")

    expect(page.get_by_text("and then?")).to_be_visible()
    expect(page.locator(".dot")).to_have_count(1)
    expect(page.locator(".group.agent")).to_have_count(0)
    expect(page.locator("#messages")).not_to_contain_text("<silent")
    expect(page.locator(".dot")).to_have_attribute(
        "title", re.compile(r"^claude stayed silent · .+ · \$0\.01$")
    )


def test_an_error_is_said_once_in_a_turn(live_server, page, harbor, justin):
    turn = TurnFactory(motion=harbor, agent=harbor.agents.get(), reason="mention", status=TurnStatus.FAILED)
    agent_says(turn, text="Let me look.")
    agent_says(turn, kind="error", text="the harness exited with status 3")
    agent_says(turn, kind="turn_end", is_error=True, text="the harness exited with status 3")
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/harbor/")

    expect(page.locator(".turn-end.error")).to_have_text("✕ ended: see above")
    expect(page.get_by_text("the harness exited with status 3")).to_have_count(1)


def test_a_wake_line_is_one_short_line_with_the_rest_on_hover_or_a_click(live_server, page, harbor, justin):
    page.set_viewport_size({"width": 390, "height": 844})
    turn = TurnFactory(motion=harbor, agent=harbor.agents.get(), reason="mention", status=TurnStatus.FINISHED)
    full = (
        "@claude woke: mentioned by justin · look-only · resumes its session of 2 hours ago"
        " · high effort · about $0.40 a turn lately · cap $2.00"
    )
    wake_line(turn, full)
    agent_says(turn, text="On it.")
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/harbor/")

    line = page.locator("li.wake")
    expect(line.locator(".what")).to_have_text("@claude woke: mentioned by justin · look-only")
    expect(line.locator(".detail")).to_be_hidden()
    expect(line).to_have_attribute("title", full)
    height = line.bounding_box()["height"]
    line_height = float(line.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
    assert height < 2 * line_height + 12, (height, line_height)  # one line at 390 px
    line.click()
    expect(line.locator(".detail")).to_be_visible()
    expect(line).to_have_attribute("aria-expanded", "true")
    screenshot(page, "wake-line-open-390")


def test_shift_enter_line_breaks_are_kept_when_the_post_is_shown(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    box = page.locator("#composer textarea")
    box.press_sequentially("the van is packed")
    box.press("Shift+Enter")
    box.press_sequentially("the merch too")

    box.press("Enter")

    body = page.locator(".group.person .body").last
    expect(body).to_contain_text("the merch too")
    assert body.locator("br").count() == 1


CONTRAST = """e => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  let node = e, bg = "rgba(0, 0, 0, 0)";
  while (node && (bg === "rgba(0, 0, 0, 0)" || bg === "transparent")) { bg = getComputedStyle(node).backgroundColor; node = node.parentElement; }
  const [a, b] = [lum(getComputedStyle(e).color), lum(bg)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


def test_the_full_tools_badge_reads_at_wcag_aa_contrast(live_server, page, harbor, justin):
    turn = TurnFactory(motion=harbor, agent=harbor.agents.get(), reason="mention", mode="full")
    agent_says(turn, text="Deploying.")
    sign_in_as(page, live_server, justin, sign_in="ssh")

    page.goto(f"{live_server.url}/motions/harbor/")

    for badge in (page.locator(".group .mode.full"), page.locator("header .mode.full")):
        expect(badge).to_be_visible()
        assert badge.evaluate(CONTRAST) >= 4.5


def test_a_mention_of_no_agent_here_is_pointed_out_before_posting(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    box = page.locator("#composer textarea")

    box.press_sequentially("@magnet can you look?")

    hint = page.locator("#mention-hint")
    expect(hint).to_contain_text("@magnet is not an agent here")
    expect(hint).to_contain_text("@claude")
    box.fill("@claude can you look?")
    expect(hint).to_be_hidden()
