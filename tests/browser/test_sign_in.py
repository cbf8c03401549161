"""Signing in with an SSH key from real headless Chromium, then granting full tools from the
thread: Justin has a key registered; @magent, woken look-only, asked for full tools."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from motion_runner.models import Turn, TurnStatus
from motion_runner.people.signin import add_key
from motion_runner.runner.turns import execute_turn
from tests.browser.conftest import screenshot
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from tests.fakes.anthropic_api import Reply, Text
from tests.ssh_keys import make_key, sign
from wakes.models import WakeRequest
from wakes.turn.requests import record_requests

pytestmark = pytest.mark.django_db(transaction=True)

WRITE_TOOLS = {"Bash", "Edit", "Write"}


@pytest.fixture
def justins_key(tmp_path) -> Path:
    key = make_key(tmp_path, "justin")
    add_key(UserFactory(username="justin"), (tmp_path / "justin.pub").read_text(), name="laptop")
    return key


@pytest.fixture
def tools_request(claude_binary) -> WakeRequest:
    """@magent, woken look-only in Harbor, asked for full tools."""
    motion = MotionFactory(slug="harbor", title="Harbor")
    magent = AgentFactory(name="magent", harness="claude-code")
    motion.agents.add(magent)
    asked = TurnFactory(motion=motion, agent=magent, mode="look", status=TurnStatus.FINISHED)
    MessageFactory(
        motion=motion,
        agent=magent,
        sender="magent",
        source="runner",
        turn=asked,
        text='<tools to="fix the deploy script"/>',
    )
    (request,) = record_requests(sender=Turn, turn=asked)
    return request


def open_sign_in(page, live_server, next_path: str = "/motions/harbor/") -> str:
    """Opens the sign-in page; returns its challenge."""
    page.goto(f"{live_server.url}/sign-in/?next={next_path}")
    return page.locator("#sign-command").get_attribute("data-challenge")


def submit(page, username: str, signature: str) -> None:
    page.get_by_label("Username").fill(username)
    # A textarea's lines are sent with CRLF line ends, as HTML's form encoding says.
    page.get_by_label("Signature").fill(signature)
    page.get_by_role("button", name="Sign in").click()


def test_justin_signs_in_with_his_key_and_his_grant_wakes_magent_with_full_tools(
    live_server, page, viewport, justins_key, tools_request, claude_on_fake, monkeypatch
):
    from motion_runner.runner import tasks

    sent: list[int] = []  # the Celery sends, kept here: the test runs the granted turn itself
    monkeypatch.setattr(tasks.run_turn, "delay", sent.append)

    challenge = open_sign_in(page, live_server)
    submit(page, "justin", sign(justins_key, challenge))

    expect(page).to_have_url(f"{live_server.url}/motions/harbor/")
    grant = page.get_by_role("button", name="Grant full tools")
    expect(grant).to_be_visible()
    screenshot(page, f"grant-card-{viewport['width']}")
    grant.click()
    expect(
        page.get_by_text("@magent woke: full tools granted by justin (signed in with an SSH key)")
    ).to_be_visible()
    assert page.js_errors == []

    tools_request.refresh_from_db()
    woken = tools_request.granted_turn
    assert (tools_request.status, tools_request.decided_by.username) == ("granted", "justin")
    assert (woken.mode, woken.reason) == ("full", "grant")
    assert sent == [woken.pk]
    # The granted wake, run by the real Claude Code CLI: the model is offered the write tools.
    claude_on_fake.script(Reply(Text("Fixing the deploy script.")))
    ran = execute_turn(woken.pk)
    assert ran.status == TurnStatus.FINISHED, ran.error
    (request,) = claude_on_fake.message_requests()
    assert WRITE_TOOLS <= set(request.tool_names)


def test_a_wrong_signature_keeps_the_username_and_the_challenge_in_the_browser(
    live_server, page, justins_key, tmp_path
):
    stranger = make_key(tmp_path, "stranger")
    challenge = open_sign_in(page, live_server)
    submit(page, "justin", sign(stranger, challenge))

    expect(page.get_by_role("alert")).to_contain_text("does not match")
    expect(page.get_by_label("Username")).to_have_value("justin")
    assert page.locator("#sign-command").get_attribute("data-challenge") == challenge
    # Signing the same challenge with the right key then works.
    page.get_by_label("Signature").fill(sign(justins_key, challenge))
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{live_server.url}/motions/harbor/")


def test_the_copy_button_puts_the_sign_command_on_the_clipboard(live_server, page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    challenge = open_sign_in(page, live_server)

    page.get_by_role("button", name="Copy the command").click()

    expect(page.get_by_role("status")).to_have_text("Copied: paste it into a terminal.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"printf '%s' '{challenge}' | ssh-keygen -Y sign -n motion-runner -f ~/.ssh/id_ed25519"
