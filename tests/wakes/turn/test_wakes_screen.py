"""The screen against a local fake Messages API: PASS, DISMISS, garbage, HTTP 500, a timeout."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from decimal import Decimal

import pytest

from motion_runner.models import Kind, Message, Turn
from tests.factories import SteerFactory
from tests.fakes.anthropic_api import ApiError, FakeAnthropic, Garbage, Hang, Reply, Text, Usage
from tests.wakes_support import Driver, clock, dials, finish, room, say
from wakes.models import Consideration, DialOverride, Spend
from wakes.money.budget import full_in_last_hour
from wakes.turn.screen import screen_posts

pytestmark = pytest.mark.django_db


def answer(text: str) -> Reply:
    return Reply(Text(text), usage=Usage(input_tokens=3400, output_tokens=12))


@pytest.fixture
def api(settings):
    with FakeAnthropic(default=answer("PASS: default")) as fake:
        settings.WAKES_SCREEN_API_BASE = fake.url
        settings.WAKES_SCREEN_API_KEY = "sk-test-screen"
        yield fake


@pytest.fixture
def loop(clock, api):
    return Driver(clock, screen=screen_posts)


def consider_a_post(room, clock, loop, text="the merch shipment landed, tracking ids to follow"):
    say(room.motion, room.justin, text, clock)
    [consideration] = loop.run(12)
    return consideration


def test_pass_goes_to_the_agent_and_the_screen_is_priced_in_the_ledger(room, clock, loop, api):
    api.script(answer("PASS: asks about tracking ids"))
    c = consider_a_post(room, clock, loop)
    assert c.status == Consideration.Status.WOKEN and c.screen_verdict == "PASS"
    row = Spend.objects.get(kind="screen")
    # 3,400 tokens in at $1/M + 12 out at $5/M
    assert row.amount == Decimal("0.00346") and (row.input_tokens, row.output_tokens) == (3400, 12)
    line = Message.objects.get(kind=Kind.WAKE, turn=c.turn).text
    assert "screen PASS: asks about tracking ids · $0.0035" in line


def test_the_screen_request_is_a_plain_messages_call_without_tools(room, clock, loop, api):
    consider_a_post(room, clock, loop)
    [request] = api.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-test-screen"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.stream is False
    body = request.body
    assert body["model"] == "claude-haiku-4-5" and "tools" not in body
    assert "@magent" in body["system"] and "PASS or DISMISS" in body["system"]
    assert "tracking ids" in body["messages"][0]["content"]


def test_the_screen_model_and_prompt_are_dials(room, clock, loop, api):
    dials(screen_model="claude-haiku-9", screen_system_prompt="Screen for {agent}. PASS or DISMISS.")
    consider_a_post(room, clock, loop)
    body = api.requests[0].body
    assert (body["model"], body["system"]) == ("claude-haiku-9", "Screen for magent. PASS or DISMISS.")


def test_dismiss_is_a_dashed_dot_that_says_screened_and_wakes_nobody(room, clock, loop, api):
    api.script(answer("DISMISS: two people saying thanks"))
    c = consider_a_post(room, clock, loop, "thanks rosemary!")
    assert c.status == Consideration.Status.SCREENED and c.turn is None
    dot = Message.objects.get(kind=Kind.DOT)
    assert dot.text == '<silent by="screen">two people saying thanks</silent>'
    assert dot.sender == "magent"
    assert not Turn.objects.exists()
    assert full_in_last_hour(room.motion.pk, room.magent.pk, clock.now()).count() == 0  # not a full one
    assert Spend.objects.get(kind="consideration").amount == 0


@pytest.mark.parametrize(
    "reply, why",
    [
        (answer("Hmm, hard to say."), "neither PASS nor DISMISS"),
        (Garbage("<html>bad gateway</html>"), "not JSON"),
        (ApiError.server(), "HTTP 500"),
        (ApiError.overloaded(), "HTTP 529"),
    ],
)
def test_an_unclear_or_failed_screen_passes_to_the_agent(room, clock, loop, api, reply, why):
    api.script(reply)
    c = consider_a_post(room, clock, loop)
    assert c.status == Consideration.Status.WOKEN and c.screen_verdict == "FAILED"
    assert why in c.screen_reason


def test_a_screen_that_times_out_passes_to_the_agent(room, clock, loop, api):
    dials(screen_timeout_seconds=0.3)
    api.script(Hang(seconds=1.5))
    c = consider_a_post(room, clock, loop)
    assert c.status == Consideration.Status.WOKEN and "timed out" in c.screen_reason
    assert not Spend.objects.filter(kind="screen").exists()  # no answer: nothing to price


def test_a_long_quiet_skips_the_screen(room, clock, loop, api):
    DialOverride.objects.create(motion=room.motion, screen_enabled=False)
    c = consider_a_post(room, clock, loop)
    finish(c.turn, said="ok")
    DialOverride.objects.all().delete()
    [quiet] = loop.run(55 * 60, step=60)
    assert quiet.kind == "quiet" and quiet.turn is not None
    assert api.requests == []


def test_a_screen_can_be_turned_off_for_one_motion(room, clock, loop, api):
    DialOverride.objects.create(motion=room.motion, screen_enabled=False)
    c = consider_a_post(room, clock, loop)
    assert c.status == Consideration.Status.WOKEN and api.requests == []


def test_an_agent_the_room_made_chatty_is_not_screened(room, clock, loop, api):
    # As memory-lane's poller did: "chatty" means the people welcome its thoughts.
    SteerFactory(motion=room.motion, agent=room.magent, setting="discretion", value="chatty")
    c = consider_a_post(room, clock, loop)
    assert c.status == Consideration.Status.WOKEN and api.requests == []


def test_with_no_screen_key_every_post_passes_and_the_wake_line_raises_no_alarm(room, clock, settings):
    settings.WAKES_SCREEN_API_KEY = ""
    loop = Driver(clock, screen=screen_posts)
    c = consider_a_post(room, clock, loop)
    assert c.status == Consideration.Status.WOKEN and c.screen_verdict == "PASS"
    line = Message.objects.get(kind=Kind.WAKE, turn=c.turn).text
    assert "screen" not in line and "FAILED" not in line
