"""The thread as a person sees it in real Chromium, at a desk (1280 px) and on a phone (390 px).

Turns are streamed in as the runner writes them (Messages and a running Turn in the database,
read by the page's long poll); the harness's own formats are tested against recordings elsewhere.
"""

from __future__ import annotations

import re
import time
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from motion_runner.models import Message, TurnStatus
from tests.browser.conftest import screenshot, screenshot_of, sign_in_as
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.models import WakeRequest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def harbor():
    motion = MotionFactory(slug="harbor", title="Harbor")
    motion.agents.add(AgentFactory(name="claude"))
    return motion


@pytest.fixture
def justin():
    return UserFactory(username="justin")


def agent_says(turn, kind="text", **fields) -> Message:
    return MessageFactory(
        motion=turn.motion,
        agent=turn.agent,
        sender=turn.agent.name,
        source="runner",
        turn=turn,
        kind=kind,
        **fields,
    )


def a_full_turn(motion) -> None:
    """A person asks, the agent wakes, writes Markdown, runs a tool, ends with its cost."""
    MessageFactory(motion=motion, sender="justin", text="@claude can you check the **build**?")
    turn = TurnFactory(
        motion=motion, agent=motion.agents.get(), reason="mention", mode="full", status=TurnStatus.FINISHED
    )
    MessageFactory(
        motion=motion,
        sender="claude",
        source="system",
        kind="wake",
        turn=turn,
        text="@claude woke: mentioned by justin · full tools · high effort · cap $2.00",
    )
    agent_says(turn, text="Looking at the build now. The log is at https://ci.example.org/runs/42.")
    agent_says(turn, kind="tool_call", tool_name="Bash", tool_id="t1", text="Bash: npm test")
    agent_says(turn, kind="tool_result", tool_id="t1", text="42 passing (3s)")
    agent_says(
        turn,
        text="All **42 tests** pass:\n\n```\n42 passing (3s)\n```\n\n- lint clean\n- `npm test` green",
    )
    agent_says(
        turn,
        kind="turn_end",
        text="success",
        cost_usd=Decimal("0.0412"),
        input_tokens=1200,
        output_tokens=310,
    )


def test_a_full_turn_reads_as_one_group_with_rendered_markdown(live_server, page, viewport, harbor, justin):
    a_full_turn(harbor)
    sign_in_as(page, live_server, justin, sign_in="ssh")

    page.goto(f"{live_server.url}/motions/harbor/")

    turn = page.locator(".group.agent")
    expect(turn).to_have_count(1)
    expect(turn.locator(".meta .sender")).to_have_text("@claude")
    expect(turn.locator("strong", has_text="42 tests")).to_be_visible()
    expect(turn.locator("pre code")).to_contain_text("42 passing")
    link = turn.get_by_role("link", name="https://ci.example.org/runs/42")
    expect(link).to_have_attribute("href", "https://ci.example.org/runs/42")
    expect(page.locator("li.wake")).to_contain_text("@claude woke: mentioned by justin")
    expect(turn.locator(".turn-end")).to_contain_text("$0.04")
    tool = turn.locator("details.tool")
    expect(tool.locator("pre")).to_be_hidden()
    screenshot(page, f"thread-full-turn-{viewport['width']}")
    screenshot_of(page.locator("#messages"), f"thread-full-turn-messages-{viewport['width']}")
    tool.locator("summary").click()
    expect(tool.locator("pre")).to_have_text("42 passing (3s)")
    assert page.js_errors == []


def test_the_header_says_who_you_are_and_what_your_posts_wake(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin, sign_in="ssh")

    page.goto(f"{live_server.url}/motions/harbor/")

    header = page.locator("header.top")
    expect(header).to_contain_text("justin")
    expect(header).to_contain_text("signed in with an SSH key")
    expect(header).to_contain_text("your posts wake agents with full tools")
    header.get_by_role("button", name="Sign out").click()
    expect(page.locator("header.top")).to_contain_text("Sign in")


HOSTILE = (
    '<script>window.__ran = "script"</script>'
    "<img src=x onerror=\"window.__ran = 'img'\">"
    "<svg onload=\"window.__ran = 'svg'\"></svg>"
    "<iframe src=\"javascript:window.__ran = 'iframe'\"></iframe>"
    "[click me](javascript:window.__ran='link')"
)
SHORT_HOSTILE = '<img src=x onerror="window.__ran = \'name\'"><script>window.__ran = "name"</script>'


def test_nothing_an_agent_or_a_watched_page_writes_ever_runs(live_server, page, justin):
    motion = MotionFactory(slug="hostile", title=f"Hostile {SHORT_HOSTILE}")
    agent = AgentFactory(name="claude")
    turn = TurnFactory(motion=motion, agent=agent, mode="look", reason="mention", reason_detail=HOSTILE)
    MessageFactory(motion=motion, sender=f"mallory{SHORT_HOSTILE}", text=HOSTILE)
    agent_says(turn, text=f"**hi** {HOSTILE}")
    agent_says(turn, kind="tool_call", tool_name="Bash", tool_id="t9", text=HOSTILE)
    agent_says(turn, kind="tool_result", tool_id="t9", text=HOSTILE)
    card = agent_says(turn, kind="request", tool_name="tools", text=HOSTILE)
    WakeRequest.objects.create(motion=motion, agent=agent, turn=turn, message=card, kind="tools", to=HOSTILE)
    MessageFactory(motion=motion, sender="wiki", source="watch", kind="watch", text=f"page edited: {HOSTILE}")
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/hostile/")

    expect(page.locator("li.watch")).to_contain_text("page edited")
    expect(page.locator(".request-card")).to_be_visible()
    page.locator("details.tool summary").click()
    page.get_by_text("click me").first.click()  # a javascript: link is no link at all
    # The click's tasks have run once the page's event loop has turned twice (no fixed wait).
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))")
    assert page.evaluate("window.__ran") is None
    assert page.locator("#messages script, #messages img, #messages svg, #messages iframe").count() == 0
    assert page.locator('#messages a[href^="javascript"]').count() == 0
    expect(page.locator("h1.motion-title")).to_contain_text("<script>")  # shown, as text
    assert page.js_errors == []


def test_a_post_sends_on_enter_once_however_often_it_is_clicked(live_server, page, viewport, harbor, justin):
    sign_in_as(page, live_server, justin, sign_in="ssh")
    page.goto(f"{live_server.url}/motions/harbor/")
    box = page.locator("#composer textarea")

    box.fill("first line")
    box.press("Shift+Enter")
    box.type("second line")
    expect(box).to_have_value("first line\nsecond line")
    box.press("Enter")

    expect(page.locator(".group.person .body")).to_contain_text("second line")
    expect(box).to_have_value("")
    posts, answered = [], []
    page.on("request", lambda r: posts.append(r) if r.method == "POST" and "/messages/" in r.url else None)
    page.on("requestfinished", lambda r: answered.append(r) if r in posts else None)
    page.on("requestfailed", lambda r: answered.append(r) if r in posts else None)
    box.fill("ship it")
    page.locator("#composer button").dblclick()
    expect(page.locator(".group.person .body", has_text="ship it")).to_have_count(1)
    # Every post the double click sent has been answered (an event, not a fixed wait).
    page.wait_for_function("() => !document.querySelector('#composer button').disabled")
    deadline = time.monotonic() + 60
    while len(answered) < len(posts) and time.monotonic() < deadline:
        page.wait_for_timeout(50)  # lets Playwright deliver the events it holds
    assert posts and len(answered) == len(posts)
    assert Message.objects.filter(motion=harbor, text="ship it").count() == 1
    screenshot(page, f"thread-posted-{viewport['width']}")


def test_a_failed_post_says_why_in_the_page_and_keeps_the_text(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin, sign_in="ssh")
    page.goto(f"{live_server.url}/motions/harbor/")
    page.route(
        re.compile(r".*/api/motions/harbor/messages/$"),
        lambda route: (
            route.fulfill(status=500, body="<html><h1>Server Error</h1></html>")
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    box = page.locator("#composer textarea")

    box.fill("a careful thought")
    box.press("Enter")

    problem = page.locator("#post-error")
    expect(problem).to_contain_text("the server had a problem (500)")
    expect(problem).not_to_contain_text("<html>")
    expect(box).to_have_value("a careful thought")
    page.unroute(re.compile(r".*/api/motions/harbor/messages/$"))
    problem.get_by_role("button", name="Retry").click()
    expect(page.locator(".group.person .body", has_text="a careful thought")).to_be_visible()
    assert Message.objects.filter(motion=harbor, text="a careful thought").count() == 1


def test_a_turn_streams_in_and_its_activity_clears_when_it_ends(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin, sign_in="ssh")
    page.goto(f"{live_server.url}/motions/harbor/")
    expect(page.locator("#messages")).to_be_attached()
    expect(page.locator("body")).to_have_attribute("data-live", "1")  # the page now long-polls

    turn = TurnFactory(
        motion=harbor, agent=harbor.agents.get(), reason="mention", mode="look",
        status=TurnStatus.RUNNING, activity="claude: writing…", started_at=timezone.now(),
    )  # fmt: skip
    agent_says(turn, text="Reading the *issue* first.")
    expect(page.locator(".group.agent em")).to_have_text("issue")
    expect(page.locator("#activity")).to_contain_text("@claude: writing…")
    expect(page.locator("li.wake")).to_contain_text(
        "@claude woke"
    )  # no wake message: the page says why anyway
    agent_says(turn, text="Done reading.")
    expect(page.locator(".group.agent .body")).to_have_count(2)
    expect(page.locator(".group.agent")).to_have_count(1)

    agent_says(
        turn, kind="turn_end", text="success", cost_usd=Decimal("0.0100")
    )  # the Turn row still says running

    expect(page.locator(".group.agent .turn-end")).to_contain_text("✓ done")
    expect(page.locator("#activity")).to_have_text("", timeout=10_000)


def test_a_compaction_and_a_retry_are_shown_as_maintenance(live_server, page, harbor, justin):
    from motion_runner.ingest.writer import EventWriter, IngestContext
    from tests.recorded import parse_recording

    agent = harbor.agents.get()
    compaction = TurnFactory(
        motion=harbor, agent=agent, reason="compact", reason_detail="the session passed 150k tokens"
    )
    agent_says(compaction, kind="compact", text="Summary: we fixed the build.")
    lost = TurnFactory(motion=harbor, agent=agent, reason="mention", status=TurnStatus.FAILED)
    writer = EventWriter(
        IngestContext(motion=harbor, agent=agent, harness="claude-code", source="runner", turn=lost)
    )
    for event in parse_recording("resume_gone"):  # the real CLI asked to resume a session it lost
        writer.write(event)
    retry = TurnFactory(
        motion=harbor,
        agent=agent,
        reason="mention",
        reason_detail="mentioned by justin (again after session s-1 was gone)",
    )
    agent_says(retry, text="Back again.")
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/harbor/")

    wakes = page.locator("li.wake.maintenance")
    expect(wakes.nth(0)).to_contain_text("@claude compacts its session (maintenance")
    expect(page.locator(".turn-end.maintenance-note")).to_contain_text("its session was gone")
    expect(page.locator(".turn-end.error")).to_have_count(0)
    expect(wakes.nth(1)).to_contain_text("wakes again in a new session")


def test_a_dot_opens_to_say_why_the_agent_stayed_silent(live_server, page, harbor, justin):
    MessageFactory(
        motion=harbor, sender="claude", source="runner", kind="dot", text="<silent>nothing for me</silent>"
    )
    MessageFactory(
        motion=harbor,
        sender="claude",
        source="runner",
        kind="dot",
        text='<silent by="screen">thanks only</silent>',
    )
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")

    page.locator(".dot").first.click()
    expect(page.locator(".dot-reason")).to_contain_text("nothing for me")
    page.locator(".dot.screened").click()
    expect(page.locator(".dot-reason")).to_contain_text("screened")


def test_a_watch_line_shows_with_its_link(live_server, page, harbor, justin):
    MessageFactory(
        motion=harbor,
        sender="wiki",
        source="watch",
        kind="watch",
        text="[[Roadmap]] edited by Ana: https://wiki.example.org/Roadmap",
    )
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")

    line = page.locator("li.watch")
    expect(line).to_contain_text("edited by Ana")
    expect(line.get_by_role("link")).to_have_attribute("href", "https://wiki.example.org/Roadmap")


def a_tools_request(motion) -> WakeRequest:
    agent = motion.agents.get()
    turn = TurnFactory(
        motion=motion, agent=agent, mode="look", status=TurnStatus.FINISHED, reason="mention",
        reason_detail="mentioned by maria (signed in with the wiki)",
    )  # fmt: skip
    agent_says(turn, text='I need to run the tests. <tools to="run the test suite"/>')
    card = agent_says(turn, kind="request", tool_name="tools", text="run the test suite")
    return WakeRequest.objects.create(
        motion=motion, agent=agent, turn=turn, message=card, kind="tools", to="run the test suite"
    )


def test_a_trusted_person_grants_in_place_and_the_card_says_who_and_when(
    live_server, page, viewport, harbor, justin, monkeypatch
):
    from motion_runner.runner import tasks

    monkeypatch.setattr(tasks.run_turn, "delay", lambda *args: None)  # no worker here: the grant's turn waits
    request = a_tools_request(harbor)
    sign_in_as(page, live_server, justin, sign_in="ssh")
    page.goto(f"{live_server.url}/motions/harbor/")

    card = page.locator(".request-card")
    expect(card).to_contain_text("@claude asks for full tools")
    expect(page.locator(".group.agent .body").first).not_to_contain_text("<tools")
    expect(page.locator("#requests")).to_have_text("🔨")
    card.get_by_role("button", name="Grant full tools").click()

    expect(card).to_contain_text("granted by justin")
    expect(card.locator("time")).to_have_text("just now")
    expect(page.locator("#requests")).to_have_text("")
    request.refresh_from_db()
    assert request.status == "granted"
    screenshot(page, f"thread-request-answered-{viewport['width']}")
    screenshot_of(page.locator("#messages"), f"thread-request-answered-messages-{viewport['width']}")


def test_a_person_who_cannot_grant_sees_no_grant_button(live_server, page, viewport, harbor):
    a_tools_request(harbor)
    sign_in_as(page, live_server, UserFactory(username="wiki-reader"), sign_in="wiki")
    page.goto(f"{live_server.url}/motions/harbor/")

    card = page.locator(".request-card")
    expect(card).to_contain_text("waiting for someone who can grant")
    expect(card.get_by_role("button")).to_have_count(0)


def test_the_page_says_it_is_offline_and_catches_up_when_the_server_is_back(
    live_server, page, harbor, justin
):
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")  # the long poll is waiting
    page.route(re.compile(r".*/api/.*"), lambda route: route.abort("connectionrefused"))
    page.locator("#composer textarea").fill("draft kept")
    MessageFactory(motion=harbor, sender="maria", text="hello")  # ends the long poll: the next one fails

    expect(page.locator("#connection")).to_contain_text("reconnecting")
    MessageFactory(motion=harbor, sender="maria", text="said while you were away")
    page.unroute(re.compile(r".*/api/.*"))
    page.locator("#connection").get_by_role("button", name="Retry now").click()

    expect(page.locator("#connection")).to_be_hidden()
    expect(page.get_by_text("said while you were away")).to_be_visible()
    expect(page.locator("#composer textarea")).to_have_value("draft kept")


def test_a_new_empty_motion_waits_for_its_first_word_instead_of_asking_each_second(
    live_server, page, harbor, justin
):
    sign_in_as(page, live_server, justin)
    with page.expect_request(lambda request: "/messages/?" in request.url and "wait=" in request.url):
        page.goto(f"{live_server.url}/motions/harbor/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")

    MessageFactory(motion=harbor, sender="maria", text="first!")

    expect(page.get_by_text("first!")).to_be_visible()


def test_everyone_reading_sees_who_is_typing(live_server, chromium, page, harbor, justin):
    MessageFactory(motion=harbor, sender="justin", text="who has the van keys?")  # a long poll needs a cursor
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    maria = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    sign_in_as(maria, live_server, UserFactory(username="maria"))
    maria.goto(f"{live_server.url}/motions/harbor/")
    for reader in (page, maria):  # both pages are long-polling now
        expect(reader.locator("body")).to_have_attribute("data-live", "1")

    # Maria types as a person does, a key at a time, until Justin sees it. A burst of keys all at
    # once is "stopped" a second after its last key, and a loaded machine can answer Justin's
    # poll after that: the indicator is for someone still composing.
    draft = maria.locator("#composer textarea")
    shown = ""
    deadline = time.monotonic() + 20
    while shown != "maria is typing…" and time.monotonic() < deadline:
        draft.press_sequentially("hmm, about the ", delay=120)
        shown = page.locator("#activity").inner_text()

    assert shown == "maria is typing…"
    expect(maria.locator("#activity")).not_to_contain_text("maria")
    # Justin's next poll says whom it shows: it is answered as soon as that changes.
    with page.expect_request(lambda request: "/messages/?" in request.url and "typing=maria" in request.url):
        draft.press_sequentially("tide", delay=120)
    maria.context.close()


# Issue 25: "carol is typing…" stayed 19 s after she stopped (the typing dial says 6).
# The bound is the behaviour's own (a second, with room for a loaded machine), not a sleep.
STOPPED_TYPING_MS = 5000


def test_typing_is_cleared_when_the_post_is_sent(live_server, chromium, page, harbor, justin):
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    carol = chromium.new_context().new_page()
    sign_in_as(carol, live_server, UserFactory(username="carol"))
    carol.goto(f"{live_server.url}/motions/harbor/")
    for reader in (page, carol):
        expect(reader.locator("body")).to_have_attribute("data-live", "1")
    box = carol.locator("#composer textarea")
    box.press_sequentially("the van is packed")
    expect(page.locator("#activity")).to_have_text("carol is typing…")

    box.press("Enter")

    expect(page.get_by_text("the van is packed")).to_be_visible()
    expect(page.locator("#activity")).not_to_contain_text("carol", timeout=STOPPED_TYPING_MS)
    carol.context.close()


def test_typing_is_cleared_a_moment_after_the_person_stops(live_server, chromium, page, harbor, justin):
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    carol = chromium.new_context().new_page()
    sign_in_as(carol, live_server, UserFactory(username="carol"))
    carol.goto(f"{live_server.url}/motions/harbor/")
    for reader in (page, carol):
        expect(reader.locator("body")).to_have_attribute("data-live", "1")

    carol.locator("#composer textarea").press_sequentially("hmm, about the")
    expect(page.locator("#activity")).to_have_text("carol is typing…")

    # Carol stops: her page says so a second later, and Justin's page shows it.
    expect(page.locator("#activity")).not_to_contain_text("carol", timeout=STOPPED_TYPING_MS)
    carol.context.close()


def test_an_agent_with_no_key_says_where_to_give_it_one(live_server, page, harbor):
    from motion_runner.ingest.writer import EventWriter, IngestContext
    from tests.recorded import parse_recording

    agent = harbor.agents.get()
    turn = TurnFactory(motion=harbor, agent=agent, reason="mention", status=TurnStatus.FAILED)
    writer = EventWriter(
        IngestContext(motion=harbor, agent=agent, harness="claude-code", source="runner", turn=turn)
    )
    for event in parse_recording("not_logged_in"):  # the real CLI, run with no key
        writer.write(event)
    admin = UserFactory(username="ana", is_staff=True, is_superuser=True)
    sign_in_as(page, live_server, admin)

    page.goto(f"{live_server.url}/motions/harbor/")

    note = page.locator(".no-key")
    expect(note).to_contain_text("@claude has no API key")
    expect(note.get_by_role("link")).to_have_attribute(
        "href", f"/admin/motion_runner/agent/{agent.pk}/change/"
    )
    expect(page.locator(".turn-end")).to_contain_text("no API key")
    expect(page.get_by_text("Please run /login")).to_have_count(0)


def test_a_write_refused_in_a_look_only_turn_is_not_shown_as_a_failure(live_server, page, harbor, justin):
    from motion_runner.ingest.writer import EventWriter, IngestContext
    from tests.recorded import parse_recording

    agent = harbor.agents.get()
    turn = TurnFactory(motion=harbor, agent=agent, reason="mention", mode="look", status=TurnStatus.FINISHED)
    writer = EventWriter(
        IngestContext(motion=harbor, agent=agent, harness="claude-code", source="runner", turn=turn)
    )
    for event in parse_recording("permission_denied"):  # the real CLI offered Write, then refused it
        writer.write(event)
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/harbor/")

    tool = page.locator("details.tool")
    expect(tool).to_have_class(re.compile(r"\brefused\b"))
    expect(tool).not_to_have_class(re.compile(r"\berror\b"))
    expect(tool.locator("summary")).to_have_css("color", "rgb(110, 110, 115)")  # muted, not red


def test_a_poll_refused_says_you_are_signed_out_not_offline(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin)
    page.route(
        re.compile(r".*/api/motions/harbor/messages/\?.*"),
        lambda route: route.fulfill(
            status=403, content_type="application/json", body='{"error": {"detail": "no"}}'
        ),
    )

    page.goto(f"{live_server.url}/motions/harbor/")

    expect(page.locator("#connection")).to_contain_text("You are signed out")
    expect(page.locator("#connection")).not_to_contain_text("reconnecting")


def test_a_merge_card_says_what_done_means(live_server, page, harbor, justin):
    agent = harbor.agents.get()
    turn = TurnFactory(motion=harbor, agent=agent, reason="manual", mode="look", status=TurnStatus.FINISHED)
    card = agent_says(turn, kind="request", tool_name="merge", text="fix-login into main")
    WakeRequest.objects.create(
        motion=harbor, agent=agent, turn=turn, message=card, kind="merge", to="fix-login"
    )
    sign_in_as(page, live_server, justin)

    page.goto(f"{live_server.url}/motions/harbor/")

    expect(page.locator("li.wake")).to_contain_text("@claude woken by hand (manage.py wake)")
    request_card = page.locator(".request-card")
    expect(request_card).to_contain_text("@claude asks for a merge")
    request_card.get_by_role("button", name="Mark merged").click()
    expect(request_card).to_contain_text("marked done by justin")


def test_a_post_that_cannot_reach_the_server_says_so_and_keeps_the_text(live_server, page, harbor, justin):
    sign_in_as(page, live_server, justin)
    page.goto(f"{live_server.url}/motions/harbor/")
    page.route(
        re.compile(r".*/api/motions/harbor/messages/$"),
        lambda route: (
            route.abort("connectionrefused") if route.request.method == "POST" else route.continue_()
        ),
    )
    box = page.locator("#composer textarea")

    box.fill("still here")
    box.press("Enter")

    expect(page.locator("#post-error")).to_contain_text("could not be reached")
    expect(box).to_have_value("still here")
    expect(page.locator("#composer button")).to_be_enabled()
    assert not Message.objects.filter(motion=harbor, text="still here").exists()
