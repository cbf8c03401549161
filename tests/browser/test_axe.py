"""axe-core finds no accessibility violation on the project's pages, in real Chromium at 1280
and 390 px: the Motion list, the sign-in page, and a thread with everything on it (a full turn, a
stopped turn, a running turn's ■, day dividers, search results, the agents' menus open).

axe-core is pinned in package.json (`npm ci` puts it in node_modules/); AXE_CORE_JS names another
copy. Without it the test is skipped here and fails in CI, as the browser is."""

from __future__ import annotations

import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone
from playwright.sync_api import expect

from motion_runner.models import TurnStatus
from tests.browser.conftest import sign_in_as
from tests.browser.test_thread import a_full_turn, agent_says
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def axe_source() -> str:
    found = Path(
        os.environ.get("AXE_CORE_JS") or Path(settings.BASE_DIR) / "node_modules" / "axe-core" / "axe.min.js"
    )
    if not found.is_file():
        reason = f"axe-core is not installed ({found}); `npm ci` installs it"
        if settings.REQUIRE_REAL_SERVICES or os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found.read_text()


def violations(page) -> list[str]:
    page.add_script_tag(content=axe_source())
    found = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — " + "; ".join(n["target"][0] for n in v["nodes"][:5])
        for v in found
    ]


@pytest.fixture
def harbor():
    motion = MotionFactory(slug="harbor", title="Harbor")
    motion.agents.add(AgentFactory(name="claude"))
    return motion


def everything_on_it(motion) -> None:
    MessageFactory(
        motion=motion, sender="ada", text="from yesterday", created_at=timezone.now() - timedelta(days=1)
    )
    a_full_turn(motion)
    stopped = TurnFactory(
        motion=motion, agent=motion.agents.get(), status=TurnStatus.KILLED, stopped_by="ada"
    )
    agent_says(stopped, text="Reading the archive…")
    MessageFactory(
        motion=motion,
        sender="runner",
        source="system",
        kind="error",
        is_error=True,
        turn=stopped,
        text="@claude's turn killed: ada stopped it",
        stop_reason="stopped",
        cost_usd=Decimal("0.0231"),
    )
    running = TurnFactory(
        motion=motion, agent=motion.agents.get(), status=TurnStatus.RUNNING, activity="claude: reading"
    )
    agent_says(running, text="On it.")


def test_the_thread_with_everything_on_it_has_no_violation(live_server, page, viewport, harbor):
    everything_on_it(harbor)
    sign_in_as(page, live_server, UserFactory(username="justin"))
    page.goto(f"{live_server.url}/motions/harbor/")
    expect(page.get_by_role("button", name="Stop @claude")).to_be_visible()
    search = page.get_by_role("searchbox", name="Search this Motion")
    search.fill("archive")
    search.press("Enter")
    expect(page.get_by_role("region", name="Search results")).to_contain_text("found")
    page.locator("#steer summary").click()
    expect(page.locator("#steer-body fieldset").first).to_be_visible()

    assert violations(page) == []


@pytest.mark.parametrize("path", ["/", "/sign-in/"])
def test_the_list_and_the_sign_in_page_have_no_violation(live_server, page, viewport, harbor, path):
    if path == "/":
        everything_on_it(harbor)  # a running turn: the list's orange "working" chip (issue 43)
        sign_in_as(page, live_server, UserFactory(username="justin"))
    page.goto(f"{live_server.url}{path}")
    if path == "/":
        expect(page.locator(".agent-chip.working")).to_be_visible()

    assert violations(page) == []


def test_a_signed_out_reader_of_a_public_thread_sees_no_violation(live_server, page, harbor):
    harbor.visibility = "public"
    harbor.save()
    a_full_turn(harbor)
    page.goto(f"{live_server.url}/motions/harbor/")
    expect(page.locator("#messages .group").first).to_be_visible()

    assert violations(page) == []
