"""The scram's button in real Chromium (issue 32): staff raise it from a thread's banner, the
composer's post is then refused with why (the text kept), and the button lifts it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from motion_runner.models import Message, Scram
from tests.browser.conftest import screenshot, sign_in_as
from tests.factories import UserFactory
from tests.motion_runner.api.test_stop import harbor as harbor  # noqa: F401  (fixtures by name)

pytestmark = pytest.mark.django_db(transaction=True)


def test_staff_raise_the_scram_in_a_thread_posts_are_refused_and_the_button_lifts_it(
    live_server,
    page,
    harbor,  # noqa: F811
):
    ops = UserFactory(username="ops", is_staff=True)
    sign_in_as(page, live_server, ops)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")

    page.locator("form.scram-button[data-action=raise] input[name=reason]").fill("runaway spend")
    page.get_by_role("button", name="Scram", exact=True).click()

    expect(page.locator("#scram")).to_contain_text("runaway spend", timeout=30_000)
    assert Scram.holding().raised_by == "ops"
    box = page.locator("#composer textarea")
    box.fill("is anyone there?")
    box.press("Enter")
    expect(page.locator("#post-error")).to_contain_text("A scram holds", timeout=30_000)
    refusal = page.locator("#post-error").text_content()
    assert "UTC)." in refusal and ".." not in refusal  # one full stop, not ".." (issue 43)
    expect(box).to_have_value("is anyone there?")  # the text is kept
    assert not Message.objects.filter(text="is anyone there?").exists()
    screenshot(page, "thread-scram-raised")

    page.get_by_role("button", name="Lift the scram").click()

    expect(page.locator("#scram")).to_be_hidden(timeout=30_000)
    assert Scram.holding() is None
    assert page.js_errors == []


def test_the_scram_buttons_template_notes_never_show_on_the_page(live_server, page, harbor):  # noqa: F811
    ops = UserFactory(username="ops", is_staff=True)
    sign_in_as(page, live_server, ops)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")

    expect(page.locator("form.scram-button[data-action=raise]")).to_be_visible()
    assert "{#" not in page.locator("body").inner_text()


def test_the_text_a_scram_refused_is_still_in_the_box_after_the_button_lifts_it(
    live_server,
    page,
    harbor,  # noqa: F811
):
    # The buttons post a form, so the page loads anew: the refused text must survive that load.
    ops = UserFactory(username="ops", is_staff=True)
    sign_in_as(page, live_server, ops)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    page.locator("form.scram-button[data-action=raise] input[name=reason]").fill("runaway spend")
    page.get_by_role("button", name="Scram", exact=True).click()
    expect(page.locator("#scram")).to_contain_text("runaway spend", timeout=30_000)
    box = page.locator("#composer textarea")
    box.fill("@scribe are you there?")
    box.press("Enter")
    expect(page.locator("#post-error")).to_contain_text("A scram holds", timeout=30_000)

    page.get_by_role("button", name="Lift the scram").click()

    expect(page.locator("#scram")).to_be_hidden(timeout=30_000)
    expect(page.locator("#composer textarea")).to_have_value("@scribe are you there?")
    assert page.js_errors == []
