"""A running turn, live, in real Chromium (issue 34): ■ shows as the turn starts, before the
agent has said anything; the words it types grow on the page as the harness prints them; the
final message takes their place, once; ■ goes with the turn's end.

The agent is tests/fakes/fake_harness.py playing back what the real Claude Code CLI printed with
--include-partial-messages (tests/recordings/claude-code/partials.jsonl), one gate at a time:
the test says when each line is printed, and the bounds below are from that moment (3 s, the
issue's; the bell makes each well under a second on a quiet machine)."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from motion_runner.models import Message, Turn, TurnStatus
from motion_runner.runner.stopping import lift_scram, raise_scram
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.browser.conftest import screenshot, sign_in_as
from tests.factories import AgentFactory, MotionFactory, UserFactory
from tests.paths import TESTS
from tests.recorded import recorded_lines, recording_path

pytestmark = pytest.mark.django_db(transaction=True)

FAKE_HARNESS = TESTS / "fakes" / "fake_harness.py"
LIVE_MS = 3_000  # the bound, from a line printed (or a turn started) to the page


def index_of(predicate) -> int:
    return next(i for i, line in enumerate(recorded_lines("partials")) if predicate(line))


def delta_text(line) -> str:
    return ((line.get("event") or {}).get("delta") or {}).get("text") or ""


class GatedTurn:
    """A turn whose harness prints each recorded line only once the test opens its gate."""

    def __init__(self, motion, agent, gate):
        self.gate = gate
        self.opened = 0
        self.turn = enqueue_turn(motion, agent, "What does the README say?", reason="mention", dispatch=False)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            execute_turn(self.turn.pk)
        finally:
            connection.close()

    def print_through(self, index: int) -> None:
        while self.opened <= index:
            (self.gate / str(self.opened)).touch()
            self.opened += 1

    def print_all(self) -> None:
        self.print_through(len(recorded_lines("partials")) - 1)

    def ended(self) -> Turn:
        self.thread.join(60)
        return Turn.objects.get(pk=self.turn.pk)


@pytest.fixture
def harbor(tmp_path):
    return MotionFactory(slug="harbor", title="Harbor", workspace=str(tmp_path))


@pytest.fixture
def gate(tmp_path):
    folder = tmp_path / "gate"
    folder.mkdir()
    return folder


@pytest.fixture
def scribe(harbor, gate):
    agent = AgentFactory(
        name="scribe",
        binary=str(FAKE_HARNESS),
        env={
            "FAKE_HARNESS_LINES": str(recording_path("partials")),
            "FAKE_HARNESS_PLAN": json.dumps({"gate": str(gate)}),
        },
    )
    harbor.agents.add(agent)
    return agent


def test_a_turn_shows_at_once_grows_as_typed_and_goes_with_its_end(live_server, page, harbor, scribe, gate):
    sign_in_as(page, live_server, UserFactory(username="rosemary"))
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")  # long-polling
    stop = page.get_by_role("button", name="Stop @scribe")
    messages = page.locator("#messages")

    running = GatedTurn(harbor, scribe, gate)  # silent: no line printed yet

    expect(stop).to_be_visible(timeout=LIVE_MS)
    expect(messages.locator(".group.agent")).to_have_count(0)  # before it said anything

    running.print_through(index_of(lambda line: delta_text(line) == "Let me read "))
    growing = messages.locator("[data-growing] .caret").locator("..")
    expect(growing).to_contain_text("Let me read", timeout=LIVE_MS)

    running.print_through(index_of(lambda line: delta_text(line) == "the README f"))
    expect(growing).to_contain_text("Let me read the README", timeout=LIVE_MS)  # grown in place
    screenshot(page, "thread-words-as-typed")

    running.print_through(index_of(lambda line: line["type"] == "assistant"))
    final = messages.locator(
        ".group.agent .body:not([data-growing])", has_text="Let me read the README first."
    )
    expect(final).to_have_count(1, timeout=LIVE_MS)
    expect(messages.get_by_text("Let me read the README first.")).to_have_count(1)  # replaced, not doubled

    running.print_all()
    expect(stop).to_have_count(0, timeout=LIVE_MS)
    expect(messages.locator(".turn-end")).to_contain_text("✓ done", timeout=LIVE_MS)
    expect(messages.locator("[data-growing]")).to_have_count(0)

    assert running.ended().status == TurnStatus.FINISHED
    texts = list(Message.objects.filter(turn=running.turn, kind="text").values_list("text", flat=True))
    assert texts == ["Let me read the README first.", "The README says the answer is 42."]  # once each
    assert page.js_errors == []


def test_a_scram_raised_and_lifted_shows_at_once_with_a_line_in_the_thread(live_server, page, harbor):
    sign_in_as(page, live_server, UserFactory(username="rosemary"))
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")
    banner = page.locator("#scram")
    messages = page.locator("#messages")

    raise_scram("ops", "runaway spend")

    expect(banner).to_contain_text("runaway spend", timeout=LIVE_MS)
    expect(messages.get_by_text("Scram raised by ops: runaway spend", exact=False)).to_have_count(1)

    lift_scram("ops")

    expect(banner).to_be_hidden(timeout=LIVE_MS)
    expect(messages.get_by_text("Scram lifted by ops: agents wake again.")).to_have_count(1)
    assert page.js_errors == []


def test_a_stop_mid_reply_keeps_the_words_already_shown(live_server, page, harbor, scribe, gate):
    """Issue 43.4: a ■ mid-reply made the words on the page vanish; only "■ stopped" stayed."""
    sign_in_as(page, live_server, UserFactory(username="rosemary"))
    page.goto(f"{live_server.url}/motions/{harbor.slug}/")
    expect(page.locator("body")).to_have_attribute("data-live", "1")
    messages = page.locator("#messages")
    running = GatedTurn(harbor, scribe, gate)
    running.print_through(index_of(lambda line: delta_text(line) == "the README f"))
    expect(messages.locator("[data-growing]").first).to_contain_text(
        "Let me read the README", timeout=LIVE_MS
    )

    page.get_by_role("button", name="Stop @scribe").click()

    expect(messages.locator(".turn-end.stopped")).to_be_visible(timeout=15_000)
    kept = messages.locator(".group.agent .body:not([data-growing])", has_text="Let me read the README …")
    expect(kept).to_have_count(1)
    expect(messages.locator("[data-growing]")).to_have_count(0)
    assert running.ended().status != TurnStatus.RUNNING
    assert page.js_errors == []
