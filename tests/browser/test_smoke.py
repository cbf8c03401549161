"""The thread page opens in real Chromium, at a desk and on a phone, without a script error."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in_as
from tests.factories import MessageFactory, MotionFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_signed_in_person_sees_the_thread_and_its_first_post(live_server, page, viewport):
    motion = MotionFactory(slug="harbor", title="Harbor")
    MessageFactory(motion=motion, sender="justin", text="Morning, all")
    sign_in_as(page, live_server, UserFactory(username="justin"))

    page.goto(f"{live_server.url}/motions/harbor/")

    expect(page.get_by_text("Morning, all")).to_be_visible()
    assert page.js_errors == []
    screenshot(page, f"thread-smoke-{viewport['width']}")
