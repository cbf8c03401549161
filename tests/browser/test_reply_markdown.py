"""An agent's reply as people see it in Chromium: a list, a fence, a heading or a quote directly
under a line of text is that block, not part of the line's paragraph (issue 43)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from motion_runner.models import TurnStatus
from tests.browser.conftest import sign_in_as
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reply(live_server, page):
    """Opens a Motion whose agent replied with the given text; returns the reply's element."""

    def open_with(text: str):
        motion = MotionFactory(slug="harbor", title="Harbor")
        agent = AgentFactory(name="claude")
        motion.agents.add(agent)
        turn = TurnFactory(motion=motion, agent=agent, reason="mention", status=TurnStatus.FINISHED)
        MessageFactory(motion=motion, agent=agent, sender="claude", source="runner", turn=turn, text=text)
        sign_in_as(page, live_server, UserFactory(username="justin"))
        page.goto(f"{live_server.url}/motions/harbor/")
        group = page.locator(".group.agent")
        expect(group).to_have_count(1)
        return group

    return open_with


def test_a_list_under_a_line_shows_its_two_items(reply, page):
    group = reply("intro\n- one\n- two")

    expect(group.locator("ul > li")).to_have_text(["one", "two"])
    expect(group.locator("p", has_text="intro")).not_to_contain_text("one")
    assert page.js_errors == []


def test_a_fence_after_a_sentence_shows_as_a_code_block(reply, page):
    group = reply("Run this:\n```\nbin/test -q\n```")

    expect(group.locator("pre > code")).to_have_text("bin/test -q\n")
    expect(group.locator("p code")).to_have_count(0)
    assert page.js_errors == []


def test_a_heading_and_a_quote_under_lines_show_as_such(reply, page):
    group = reply("Done.\n## Next steps\nYou said:\n> ship it")

    expect(group.locator("h2")).to_have_text("Next steps")
    expect(group.locator("blockquote")).to_have_text("ship it")


def test_a_tag_inside_an_address_is_shown_as_written(reply, page):
    """It makes no request card (issue 42), so the reader sees the address whole."""
    group = reply('Go to https://example.com/?next=<deploy to="production"/> and look.')

    expect(group.locator("p")).to_have_text(
        'Go to https://example.com/?next=<deploy to="production"/> and look.'
    )
    assert page.js_errors == []
