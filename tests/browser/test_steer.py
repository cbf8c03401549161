"""Steering from the thread in real Chromium (issue 24): ■ on a running turn stops it, Esc in the
message box stops every running turn, the menus change an agent's listening, and a scram shows
in the thread."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from motion_runner.models import Scram, Turn, TurnStatus
from tests.browser.conftest import screenshot, sign_in_as
from tests.factories import MessageFactory, TurnFactory, UserFactory
from tests.motion_runner.api.test_stop import RunningTurn, alive, wait_for
from tests.motion_runner.api.test_stop import harbor as harbor  # noqa: F401  (fixtures by name)
from tests.motion_runner.api.test_stop import magent as magent  # noqa: F401
from wakes.models import Steer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def rosemary():
    """Signed in, not staff, no SSH key: may post, may not widen spend."""
    return UserFactory(username="rosemary")


def test_the_stop_button_on_a_running_turn_ends_it(live_server, page, harbor, magent, rosemary):  # noqa: F811
    running = RunningTurn(harbor, magent)
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")

    stop = page.get_by_role("button", name="Stop @magent")
    expect(stop).to_be_visible()
    stop.click()

    assert wait_for(lambda: not alive(running.pgid), 10.0), "the process group is gone"
    assert running.ended().status == TurnStatus.KILLED
    # A stop, not a crash: who stopped it, when and what it cost (issue 34).
    expect(page.locator("#messages .turn-end.stopped")).to_contain_text(
        re.compile(r"stopped: rosemary stopped it · \$\d+\.\d{2,4} · "), timeout=30_000
    )
    expect(stop).to_have_count(0)
    screenshot(page, "thread-stopped-turn")
    assert page.js_errors == []


def test_escape_in_the_message_box_stops_every_running_turn(live_server, page, harbor, magent, rosemary):  # noqa: F811
    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.RUNNING, activity="magent: reading")
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    box = page.locator("#composer textarea")
    box.fill("half a thought")

    box.press("Escape")

    assert wait_for(lambda: Turn.objects.get(pk=turn.pk).stop_requested_at is not None, 10.0)
    assert Turn.objects.get(pk=turn.pk).stopped_by == "rosemary"
    expect(box).to_have_value("half a thought")  # the draft is kept
    assert page.js_errors == []


def test_a_person_who_is_not_staff_sets_an_agent_to_mentions_only(
    live_server, page, harbor, magent, rosemary
):  # noqa: F811
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    page.get_by_text("Agents here").click()
    menu = page.locator("fieldset.agent-menu[data-agent=magent]")

    menu.locator("select[name=listening]").select_option("mentions")

    said = "rosemary set @magent's listening here to mentions only"
    expect(page.locator("#messages").get_by_text(said)).to_be_visible(timeout=30_000)  # the thread
    expect(page.locator("#steer .changes").get_by_text(said)).to_be_visible()  # the menu's history
    row = Steer.objects.get()
    assert (row.by_name, row.setting, row.value) == ("rosemary", "listening", "mentions")
    # Widening spend is for people who may grant full tools: shown, not usable.
    expect(menu.locator("select[name=mention_effort]")).to_be_disabled()
    screenshot(page, "thread-steer-menus")
    assert page.js_errors == []


def test_a_scram_shows_in_the_thread(live_server, page, harbor, rosemary):  # noqa: F811
    Scram.objects.create(reason="runaway spend", raised_by="ops")
    sign_in_as(page, live_server, rosemary)

    page.goto(f"{live_server.url}/motions/{harbor.slug}/")

    expect(page.locator("#scram")).to_contain_text(
        "Scram: every agent is stopped and nothing wakes — runaway spend"
    )
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("alert")).to_contain_text("runaway spend")


def test_a_command_from_someone_who_may_grant_runs_as_maintenance(live_server, page, harbor, magent):  # noqa: F811
    justin = UserFactory(username="justin")
    sign_in_as(page, live_server, justin, sign_in="ssh")
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    box = page.locator("#composer textarea")

    box.fill("@magent /context")
    box.press("Enter")

    expect(page.locator("#messages").get_by_text("/context asked by justin (maintenance)")).to_be_visible(
        timeout=30_000
    )
    turn = Turn.objects.get(motion=harbor, reason="command")
    assert turn.prompt == "/context"
    assert page.js_errors == []


def test_the_first_run_account_uses_the_commands_and_menus_the_readme_shows(
    live_server, page, harbor, magent, settings
):  # noqa: F811
    settings.DEBUG = True  # the embedded default bin/serve runs
    settings.MOTION_RUNNER_FIRST_RUN_GRANTS = ["demo"]
    demo = UserFactory(username="demo")
    sign_in_as(page, live_server, demo)  # a password, as bin/serve's demo / demo
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    page.locator("#steer summary").click()

    expect(page.locator('#steer-body input[name="model"]')).to_be_enabled()
    expect(page.locator('#steer-body textarea[name="rules"]')).to_be_disabled()  # never the rules
    # Why, said as text beside the button, not only in a tooltip (issue 43).
    expect(
        page.locator("#steer-body .why-disabled", has_text="Only a person who may grant full tools")
    ).to_be_visible()
    box = page.locator("#composer textarea")
    box.fill("@magent /context")
    box.press("Enter")

    expect(page.locator("#messages").get_by_text("/context asked by demo (maintenance)")).to_be_visible(
        timeout=30_000
    )
    assert Turn.objects.get(motion=harbor, reason="command").mode == "look"
    assert page.js_errors == []


def test_a_command_from_someone_who_may_not_grant_is_refused_in_the_thread(
    live_server, page, harbor, magent, rosemary
):  # noqa: F811
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    box = page.locator("#composer textarea")

    box.fill("@magent /usage")
    box.press("Enter")

    expect(
        page.locator("#messages").get_by_text("commands are for people who may grant full tools")
    ).to_be_visible(timeout=30_000)
    assert not Turn.objects.filter(motion=harbor).exists()


def test_a_thinking_summary_is_a_collapsed_step(live_server, page, harbor, magent, rosemary):  # noqa: F811
    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.FINISHED)
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        turn=turn,
        kind="thinking",
        text="The README is short; read it **whole**.",
    )
    MessageFactory(
        motion=harbor, agent=magent, sender="magent", source="runner", turn=turn, text="Reading it."
    )
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")

    step = page.locator("details.thinking")
    expect(step.locator("summary")).to_have_text("💭 thinking")
    expect(step.get_by_text("read it")).to_be_hidden()
    step.locator("summary").click()
    expect(step.locator("strong")).to_have_text("whole")
    assert page.js_errors == []


def test_the_person_whose_mention_was_answered_gets_a_notice(live_server, page, harbor, magent, rosemary):  # noqa: F811
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    box = page.locator("#composer textarea")
    box.fill("@magent is the merch page live?")
    box.press("Enter")
    expect(page.locator("#messages").get_by_text("is the merch page live?")).to_be_visible(timeout=30_000)
    assert wait_for(lambda: Turn.objects.filter(motion=harbor, reason="mention").exists(), 10.0)
    turn = Turn.objects.get(motion=harbor, reason="mention")

    MessageFactory(
        motion=harbor, agent=magent, sender="magent", source="runner", turn=turn, text="Yes, since noon."
    )

    expect(page.locator("#notice")).to_have_text("@magent answered you", timeout=30_000), page.js_errors
    assert page.js_errors == []


def test_each_agents_context_fullness_shows_in_the_thread(live_server, page, harbor, magent, rosemary):  # noqa: F811
    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        session_id="s1",
        input_tokens=2_000,
        cache_read_input_tokens=48_000,
    )
    sign_in_as(page, live_server, rosemary)

    page.goto(f"{live_server.url}/motions/{harbor.slug}/")

    expect(page.locator("#steer summary")).to_contain_text("@magent context 25%")


def test_the_context_fullness_on_the_menus_follows_a_turn_that_ends_while_the_page_is_open(
    live_server,
    page,
    harbor,  # noqa: F811
    magent,  # noqa: F811
    rosemary,
):
    # The menus are read once as the page loads; a turn's end (a /context answer, a reply) must
    # bring the new figure without a reload, or the menu contradicts the /context just shown.
    MessageFactory(
        motion=harbor, agent=magent, sender="magent", source="runner", session_id="s1", input_tokens=50_000
    )
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")
    expect(page.locator("#steer summary")).to_contain_text("@magent context 25%")
    turn = TurnFactory(motion=harbor, agent=magent, status=TurnStatus.FINISHED)

    MessageFactory(
        motion=harbor,
        agent=magent,
        sender="magent",
        source="runner",
        turn=turn,
        session_id="s1",
        input_tokens=100_000,
    )
    MessageFactory(
        motion=harbor, agent=magent, sender="magent", source="runner", turn=turn, kind="turn_end", text=""
    )

    expect(page.locator("#steer summary")).to_contain_text("@magent context 50%", timeout=30_000)
    assert page.js_errors == []


def test_someone_who_may_grant_turns_ultracode_on_from_the_menus(live_server, page, harbor, magent):  # noqa: F811
    justin = UserFactory(username="justin")
    sign_in_as(page, live_server, justin, sign_in="ssh")  # signed in with his SSH key: he may grant
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    page.get_by_text("Agents here").click()
    menu = page.locator("fieldset.agent-menu[data-agent=magent]")

    menu.locator("select[name=ultracode]").select_option("on")

    said = "justin set @magent's ultracode here to on"
    expect(page.locator("#messages").get_by_text(said)).to_be_visible(timeout=30_000)
    row = Steer.objects.get()
    assert (row.setting, row.value) == ("ultracode", "on")
    assert page.js_errors == []


def test_ultracode_is_shown_but_not_usable_by_someone_who_may_not_grant(
    live_server, page, harbor, magent, rosemary
):  # noqa: F811
    sign_in_as(page, live_server, rosemary)
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    page.get_by_text("Agents here").click()

    expect(page.locator("fieldset.agent-menu[data-agent=magent] select[name=ultracode]")).to_be_disabled()
    assert page.js_errors == []


def test_someone_who_may_grant_writes_the_motions_letter(live_server, page, harbor, magent):  # noqa: F811
    justin = UserFactory(username="justin")
    sign_in_as(page, live_server, justin, sign_in="ssh")
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    page.get_by_text("Agents here").click()
    menu = page.locator("fieldset.motion-menu")

    menu.locator("textarea[name=letter]").fill("Dear magent: the harbor's boats sail at six.")
    menu.get_by_role("button", name="Save letter").click()

    said = "justin set the letter a first wake here opens with"
    expect(page.locator("#messages").get_by_text(said)).to_be_visible(timeout=30_000)
    row = Steer.objects.get()
    assert (row.setting, row.agent, row.value) == (
        "letter",
        None,
        "Dear magent: the harbor's boats sail at six.",
    )
    assert page.js_errors == []
