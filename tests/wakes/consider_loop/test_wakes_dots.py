"""Dots: a silent consideration is a dot with its reason; the screen's dots say so."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command

from motion_runner.models import Kind, Message, TurnStatus
from tests.paths import ROOT
from tests.wakes_support import clock, finish, loop, room, say
from wakes.models import Consideration, TypingPing
from wakes.web.views import someone_else_typed, thread_poll_fields

pytestmark = pytest.mark.django_db


def considered(room, clock, loop):
    say(room.motion, room.justin, "the van is packed", clock)
    [c] = loop.run(12)
    return c


def test_silent_with_a_reason_turns_the_agents_message_into_a_dot(room, clock, loop):
    c = considered(room, clock, loop)
    finish(c.turn, said="<silent>nothing for me here</silent>")
    [dot] = Message.objects.filter(turn=c.turn, kind=Kind.DOT)
    assert dot.text == "<silent>nothing for me here</silent>" and dot.source == "runner"
    assert Consideration.objects.get(pk=c.pk).status == Consideration.Status.SILENT


def test_a_turn_that_says_nothing_is_a_dot_that_says_so(room, clock, loop):
    c = considered(room, clock, loop)
    finish(c.turn)
    dot = Message.objects.get(turn=c.turn, kind=Kind.DOT)
    assert dot.text == "<silent>nothing said</silent>" and dot.sender == "magent"


def test_a_turn_that_speaks_leaves_no_dot(room, clock, loop):
    c = considered(room, clock, loop)
    finish(c.turn, said="Safe travels! Remember the merch table.")
    assert not Message.objects.filter(kind=Kind.DOT).exists()
    assert Consideration.objects.get(pk=c.pk).status == Consideration.Status.SPOKE


def test_a_failed_turn_is_not_passed_off_as_silence(room, clock, loop):
    c = considered(room, clock, loop)
    finish(c.turn, status=TurnStatus.FAILED)
    assert not Message.objects.filter(kind=Kind.DOT).exists()
    assert Consideration.objects.get(pk=c.pk).status == Consideration.Status.FAILED


def test_the_finish_hook_is_idempotent(room, clock, loop):
    c = considered(room, clock, loop)
    finish(c.turn)
    finish(c.turn)
    assert Message.objects.filter(kind=Kind.DOT).count() == 1


def test_a_person_typing_pings_and_sees_who_else_is_typing(room, client, clock):
    TypingPing.objects.create(motion=room.motion, who="rosemary", at=clock.now() - timedelta(seconds=2))
    TypingPing.objects.create(motion=room.motion, who="old", at=clock.now() - timedelta(seconds=60))
    client.force_login(room.justin)
    response = client.post(f"/api/motions/{room.motion.slug}/typing/")
    assert response.status_code == 200 and response.json() == {"typing": ["rosemary"]}
    assert TypingPing.objects.get(who="justin").at == clock.now()


def test_a_person_who_stops_typing_says_so_and_readers_are_rung(room, client, clock, monkeypatch):
    rung = []
    monkeypatch.setattr("wakes.web.api.ring_for", rung.append)
    TypingPing.objects.create(motion=room.motion, who="rosemary", at=clock.now())
    client.force_login(room.justin)
    client.post(f"/api/motions/{room.motion.slug}/typing/")

    response = client.delete(f"/api/motions/{room.motion.slug}/typing/")

    assert response.status_code == 200 and response.json() == {"typing": ["rosemary"]}
    assert list(TypingPing.objects.values_list("who", flat=True)) == ["rosemary"]
    assert rung == [room.motion.pk, room.motion.pk]  # the start and the stop


def test_a_poll_showing_nobody_typing_has_news_when_someone_typed_before_it_began(room, clock):
    TypingPing.objects.create(motion=room.motion, who="rosemary", at=clock.now() - timedelta(seconds=1))
    assert someone_else_typed(room.motion, clock.now(), "justin", shown=[])


def test_a_poll_showing_who_is_typing_has_no_news_when_they_ping_again(room, clock):
    TypingPing.objects.create(motion=room.motion, who="rosemary", at=clock.now())
    assert not someone_else_typed(
        room.motion, clock.now() - timedelta(seconds=1), "justin", shown=["rosemary"]
    )


def test_a_poll_showing_someone_typing_has_news_when_they_stopped(room, clock):
    assert someone_else_typed(room.motion, clock.now(), "justin", shown=["rosemary"])


def test_the_reader_typing_is_no_news_to_them(room, clock):
    TypingPing.objects.create(motion=room.motion, who="justin", at=clock.now())
    assert not someone_else_typed(room.motion, clock.now() - timedelta(seconds=1), "justin", shown=[])


def test_a_poll_that_shows_nothing_has_news_only_of_a_ping_after_it_began(room, clock):
    TypingPing.objects.create(motion=room.motion, who="rosemary", at=clock.now() - timedelta(seconds=1))
    assert not someone_else_typed(room.motion, clock.now(), "justin", shown=None)
    assert someone_else_typed(room.motion, clock.now() - timedelta(seconds=2), "justin", shown=None)


def test_a_crowd_typing_is_shown_as_many_as_a_poll_may_name_back(room, clock):
    for n in range(60):
        TypingPing.objects.create(motion=room.motion, who=f"p{n:02d}", at=clock.now())
    shown = thread_poll_fields(room.motion, "justin")["typing"]
    assert len(shown) == 50
    assert not someone_else_typed(room.motion, clock.now(), "justin", shown=shown)  # no answer at once


def test_saying_you_stopped_typing_needs_a_signed_in_person(room, client, clock):
    TypingPing.objects.create(motion=room.motion, who="rosemary", at=clock.now())

    response = client.delete(f"/api/motions/{room.motion.slug}/typing/")

    assert response.status_code in (401, 403)
    assert TypingPing.objects.count() == 1


def test_typing_needs_a_signed_in_person(room, client):
    response = client.post(f"/api/motions/{room.motion.slug}/typing/")
    assert response.status_code in (401, 403)
    assert not TypingPing.objects.exists()


def test_no_migration_is_missing():
    call_command("makemigrations", "wakes", "motion_runner", "--check", "--dry-run", verbosity=0)


def test_the_thread_page_tells_its_script_where_to_send_typing_pings(room, client):
    client.force_login(room.justin)
    response = client.get(f"/motions/{room.motion.slug}/")
    assert f'data-typing-url="/api/motions/{room.motion.slug}/typing/"' in response.content.decode()


def test_the_thread_script_parses():
    import shutil
    import subprocess
    from pathlib import Path

    node = shutil.which("node")
    assert node, "node is needed to run the harness CLIs, so it is installed wherever the suite runs"
    script = ROOT / "static" / "motion_runner" / "thread.js"
    subprocess.run([node, "--check", str(script)], check=True)


@pytest.mark.parametrize(
    "model", ["dials", "dialoverride", "listenstate", "consideration", "mentionwake", "spend"]
)
def test_every_dial_and_the_ledger_are_in_the_admin(room, client, model):
    from django.contrib.auth import get_user_model

    from wakes.models import Dials

    Dials.load()
    admin = get_user_model().objects.create_superuser("skyler", "skyler@example.org", "pw")
    client.force_login(admin)
    assert client.get(f"/admin/wakes/{model}/", follow=True).status_code == 200  # Dials: its one page
    if model == "dials":
        page = client.get("/admin/wakes/dials/1/change/").content.decode()
        for dial in ("considerations_per_hour", "daily_budget_usd", "consideration_cap_usd", "screen_model"):
            assert f'name="{dial}"' in page
