"""Shadow mode (`WAKES_SHADOW`): every wake decided and recorded with its reason, nothing launched."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from motion_runner.models import Kind, Message, Turn
from motion_runner.runner import turns as runner_turns
from tests.factories import MessageFactory
from tests.wakes_support import clock, dials, loop, room, say
from wakes.consider_loop.handlers import handle_message, wake_for_watch
from wakes.consider_loop.shadow_report import build
from wakes.models import Consideration, MentionWake, ShadowDecision, Spend
from wakes.turn.screen import ScreenResult

pytestmark = pytest.mark.django_db


@pytest.fixture
def shadow(settings):
    settings.WAKES_SHADOW = True


@pytest.fixture
def launches(monkeypatch):
    """Turns sent to a worker's queue (which starts the harness), as the commit sends them."""
    sent = []
    monkeypatch.setattr(runner_turns, "send_turn", lambda turn, **kw: sent.append(turn.pk))
    return sent


def test_in_shadow_a_mention_launches_nothing_and_records_one_decision_with_its_reason(
    shadow, launches, room, clock, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        message = say(room.motion, room.justin, "@magent what did the deploy log say?", clock)

    assert launches == [] and not Turn.objects.exists()
    assert not Spend.objects.exists()  # no money reserved
    assert not Message.objects.filter(kind=Kind.WAKE).exists()  # nothing said in the thread
    decision = ShadowDecision.objects.get()
    assert (decision.motion_id, decision.agent_id, decision.post_id) == (
        room.motion.pk,
        room.magent.pk,
        message.pk,
    )
    assert (decision.kind, decision.mode, decision.verdict) == ("mention", "look", "wake")
    assert decision.reason == "mentioned by justin"
    assert MentionWake.objects.get().status == MentionWake.Status.WOKEN  # decided once: not again


def test_without_shadow_the_same_mention_queues_and_sends_its_turn(
    launches, room, clock, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        say(room.motion, room.justin, "@magent what did the deploy log say?", clock)

    assert launches == [Turn.objects.get(agent=room.magent, reason="mention").pk]
    assert not ShadowDecision.objects.exists()


def test_in_shadow_the_consider_loop_records_its_wake_and_reserves_nothing(
    shadow, launches, room, clock, loop
):
    say(room.motion, room.justin, "the deploy finished, logs are in /srv/log", clock)

    considered = loop.run(120)

    assert considered and not Turn.objects.exists() and launches == []
    decision = ShadowDecision.objects.get()
    assert decision.kind == "new_posts"
    assert decision.reason == "1 new post (screen PASS: not screened in this test · $0.0000)"
    assert Consideration.objects.get().detail == f"shadow: {decision.reason}"
    assert all(s.amount == 0 and s.settled for s in Spend.objects.all())  # any envelope given back
    assert loop.run(120) == []  # those posts were considered: not again


def test_standalone_the_report_lists_the_decisions_alone(shadow, room, clock):
    say(room.motion, room.justin, "@magent what did the deploy log say?", clock)
    out = io.StringIO()

    call_command("shadow_report", "--motion", "cryptograss", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Standalone (no memory-lane binding)")
    assert lines[1] == "== cryptograss"
    assert lines[2].endswith("shadow: would wake @magent (mentioned by justin)")
    assert lines[3] == "  1 decision(s)"


def test_in_shadow_a_screen_dismissal_is_recorded_and_leaves_no_dot(shadow, launches, room, clock, loop):
    loop.screen = lambda motion, agent, posts, dials: ScreenResult("DISMISS", "two people saying thanks")
    say(room.motion, room.justin, "thanks rosemary, that was kind", clock)

    loop.run(120)

    decision = ShadowDecision.objects.get()
    assert (decision.verdict, decision.reason) == ("screened", "screened: two people saying thanks")
    assert not Message.objects.filter(kind=Kind.DOT).exists() and not Turn.objects.exists()


def test_in_shadow_a_maintenance_command_is_recorded_and_not_run(shadow, room):
    message = MessageFactory(
        motion=room.motion,
        sender="justin",
        author=room.justin,
        sign_in="ssh",
        source="web",
        text="@magent /context",
    )

    assert handle_message(message, dispatch=False) == []

    assert not Turn.objects.exists()
    decision = ShadowDecision.objects.get()
    assert (decision.kind, decision.post_id, decision.reason) == (
        "command",
        message.pk,
        "/context asked by justin (maintenance)",
    )


def test_in_shadow_a_mention_held_by_the_hourly_cap_is_recorded_as_held_and_not_said(shadow, room, clock):
    dials(mention_wakes_per_hour=0)

    say(room.motion, room.justin, "@magent one", clock)

    decision = ShadowDecision.objects.get()
    assert (decision.verdict, decision.reason) == (
        "held",
        "the hourly cap of mention wakes is 0: none starts until it is raised",
    )
    assert not Message.objects.filter(kind=Kind.WAKE).exists()
    assert MentionWake.objects.get().hold == ""  # nothing shown on the page, nothing renewed
    out = io.StringIO()
    call_command("shadow_report", stdout=out)
    assert (
        out.getvalue()
        .splitlines()[2]
        .endswith(
            "shadow: would not wake @magent (the hourly cap of mention wakes is 0: none starts until it is raised)"
        )
    )


def test_the_standalone_report_reads_its_decisions_in_one_statement(
    shadow, room, clock, django_assert_num_queries
):
    for text in ("@magent one", "@magent two", "@magent three"):
        say(room.motion, room.justin, text, clock)
        clock.advance(3600)  # past the hourly cap's window: each wakes

    with django_assert_num_queries(1):
        reports, with_poller = build()

    assert not with_poller
    assert [w.why for w in reports[0].wakes] == ["mentioned by justin"] * 3


def test_the_admin_lists_the_decisions_read_only(shadow, room, clock, admin_client):
    say(room.motion, room.justin, "@magent one", clock)

    page = admin_client.get("/admin/wakes/shadowdecision/")

    assert page.status_code == 200 and "mentioned by justin" in page.content.decode()
    assert admin_client.get("/admin/wakes/shadowdecision/add/").status_code == 403


def test_in_shadow_a_watch_with_policy_always_is_recorded_and_reserves_nothing(shadow, room, clock):
    line = say(room.motion, room.justin, "✎ Talk:Merch edited by skyler: prices", clock, kind="watch")

    assert wake_for_watch(line, room.magent, dispatch=False) is None

    assert not Turn.objects.exists() and not Spend.objects.filter(kind="watch").exists()
    decision = ShadowDecision.objects.get(kind="watch")
    assert (decision.post_id, decision.reason) == (line.pk, "a watch: ✎ Talk:Merch edited by skyler: prices")


def test_in_shadow_an_arrival_is_recorded_and_reserves_nothing(shadow, room, clock):
    say(room.motion, room.justin, "Good night, all.", clock)
    clock.advance(hours=13)

    say(room.motion, room.justin, "Morning! Did the posters come?", clock)

    assert not Turn.objects.exists() and not Spend.objects.exists()
    decision = ShadowDecision.objects.get(kind="arrival")
    assert (decision.agent_id, decision.mode) == (room.magent.pk, "look")
    assert decision.reason == "an arrival: justin posted after 13 h away"
