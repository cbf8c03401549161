"""The screen out of the box: with no WAKES_SCREEN_API_KEY, the real Claude Code CLI screens
(`-p --model haiku`, no tools) against the fake model server, fail-open, priced in the ledger as
usage × price; the digest of older posts the same way; the screen reads the Motion's rules."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from motion_runner.models import Kind, Message
from tests.factories import SteerFactory
from tests.fakes.anthropic_api import ApiError, Reply, Text, Usage
from tests.wakes_support import Driver, clock, room, say
from wakes.models import Consideration, Dials, Spend
from wakes.turn.screen import digest, screen_posts, screen_text

pytestmark = pytest.mark.django_db


def answer(text: str) -> Reply:
    return Reply(Text(text), usage=Usage(input_tokens=3400, output_tokens=12))


@pytest.fixture
def cli_screen(claude_binary, claude_on_fake, settings):
    settings.WAKES_SCREEN_API_KEY = ""
    settings.WAKES_SCREEN_CLI = "auto"
    return claude_on_fake


def test_with_no_key_the_agents_cli_screens_and_a_dismissal_is_a_dot(room, clock, cli_screen):
    cli_screen.route(lambda request: True, answer("DISMISS: small talk between people"))
    say(room.motion, room.justin, "lovely weather for the gig tonight", clock)

    started = time.monotonic()
    [c] = Driver(clock, screen=screen_posts).run(12)
    print(f"CLI screen: {time.monotonic() - started:.2f} s")  # measured, not asserted

    assert (c.status, c.screen_verdict) == (Consideration.Status.SCREENED, "DISMISS")
    assert Message.objects.get(kind=Kind.DOT).text.endswith("small talk between people</silent>")
    [request] = cli_screen.message_requests()
    assert "haiku" in request.model
    assert request.tool_names == []
    assert "PASS" in request.system_text  # the screen's own system prompt, not Claude Code's


def test_the_cli_screen_is_priced_as_usage_times_the_screens_prices(room, clock, cli_screen):
    cli_screen.route(lambda request: True, answer("PASS: asks about the set list"))
    say(room.motion, room.justin, "@everyone what's the set list?", clock)
    [c] = Driver(clock, screen=screen_posts).run(12)
    row = Spend.objects.get(kind="screen")
    # 3,400 tokens in at $1/M + 12 out at $5/M (the screen's price dials, Haiku's)
    assert row.amount == Decimal("0.00346") and (row.input_tokens, row.output_tokens) == (3400, 12)
    print(f"CLI screen cost: ${row.amount}")
    assert c.status == Consideration.Status.WOKEN


def test_a_failing_cli_screen_passes_the_post_on(room, clock, cli_screen):
    cli_screen.route(lambda request: True, ApiError.invalid("model not found"))
    say(room.motion, room.justin, "the van is booked", clock)
    [c] = Driver(clock, screen=screen_posts).run(12)
    assert (c.status, c.screen_verdict) == (Consideration.Status.WOKEN, "FAILED")
    assert not Spend.objects.filter(kind="screen").exists()


def test_the_digest_runs_through_the_cli_and_is_in_the_ledger(room, clock, cli_screen):
    cli_screen.route(lambda request: True, answer("They settled the set list; the van is open."))
    posts = [say(room.motion, room.justin, f"post {n}", clock.advance(1) and clock) for n in range(3)]
    summary = digest(room.motion, room.magent, posts, Dials.load())
    assert summary == "They settled the set list; the van is open."
    assert Spend.objects.get(kind="screen").note == "digest of 3 earlier posts for a wake"


def test_with_the_cli_route_off_every_post_passes_unscreened(room, clock, settings):
    settings.WAKES_SCREEN_API_KEY = ""
    settings.WAKES_SCREEN_CLI = "off"
    result = screen_posts(room.motion, room.magent, [], Dials.load())
    assert result.off and result.verdict == "PASS"


def test_the_screen_reads_the_motions_rules(room, clock):
    SteerFactory(motion=room.motion, agent=None, setting="rules", value="Only answer questions about merch.")
    post = say(room.motion, room.justin, "hello", clock)
    assert "Only answer questions about merch." in screen_text(room.motion, [post], Dials.load())


@pytest.fixture
def standin_only(claude_binary, settings, monkeypatch, tmp_path):
    """bin/serve's first run: no key, no `claude /login`, the stand-in model answering."""
    settings.WAKES_SCREEN_API_KEY = ""
    settings.WAKES_SCREEN_CLI = "auto"
    settings.STANDIN_MODEL_URL = "http://127.0.0.1:9"  # never called: the screen is off
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def test_an_agent_answering_through_the_stand_in_is_not_screened_by_it(room, clock, standin_only):
    """The stand-in answers neither PASS nor DISMISS: every post passes, unsaid, not 'screen FAILED'."""
    post = say(room.motion, room.justin, "just saying hello", clock)

    result = screen_posts(room.motion, room.magent, [post], Dials.load())

    assert result.off and result.verdict == "PASS" and not result.failed
