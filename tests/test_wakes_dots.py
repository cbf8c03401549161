"""Dots: a silent consideration is a dot with its reason; the screen's dots say so."""
# ruff: noqa: F401, F811  (pytest fixtures are imported from tests.wakes_support by name)

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command

from motion_runner.models import Kind, Message, TurnStatus
from tests.wakes_support import clock, finish, loop, room, say
from wakes.models import Consideration, TypingPing

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
    script = Path(__file__).resolve().parent.parent / "static" / "motion_runner" / "thread.js"
    subprocess.run([node, "--check", str(script)], check=True)


def test_dots_in_a_row_line_up_hover_says_when_and_click_says_why(room, clock, tmp_path):
    """thread.js against a stand-in DOM: three silences in a row are one row of dots."""
    import json
    import shutil
    import subprocess
    from pathlib import Path

    from motion_runner.api.serializers import MessageSerializer
    from tests.factories import MessageFactory, TurnFactory

    turn = TurnFactory(motion=room.motion, agent=room.magent)
    make = [
        {"kind": "text", "text": "anyone up?", "sender": "justin"},
        {"kind": "dot", "text": "<silent>nothing for me</silent>", "sender": "magent", "turn": turn},
        {"kind": "dot", "text": '<silent by="screen">people chatting</silent>', "sender": "magent"},
        {"kind": "text", "text": "<silent>not converted yet</silent>", "sender": "magent", "turn": turn},
        {"kind": "wake", "text": "@magent woke: 2 new posts", "sender": "magent", "source": "system"},
    ]
    messages = [
        MessageFactory(motion=room.motion, created_at=clock.advance(1), **{"source": "web", **m})
        for m in make
    ]
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"results": MessageSerializer(messages, many=True).data, "next": None}))
    script = Path(__file__).resolve().parent / "js" / "thread_dots.js"
    out = subprocess.run(
        [shutil.which("node"), str(script), str(page)], check=True, capture_output=True, text=True
    )
    shown = json.loads(out.stdout)
    rows = shown["rows"]
    assert [r["cls"] for r in rows] == ["msg text", "dots", "msg wake"]
    dots = rows[1]["dots"]
    assert [d["cls"] for d in dots] == ["dot", "dot screened", "dot"]
    assert dots[0]["title"].startswith("magent stayed silent · ")
    assert dots[1]["title"].startswith("screened for magent · ")
    assert shown["reason"]["cls"] == "dot-reason" and not shown["reason"]["hidden"]
    assert shown["reason"]["text"].startswith("screened · ") and shown["reason"]["text"].endswith(
        "people chatting"
    )


@pytest.mark.parametrize(
    "model", ["dials", "dialoverride", "listenstate", "consideration", "mentionwake", "spend"]
)
def test_every_dial_and_the_ledger_are_in_the_admin(room, client, model):
    from django.contrib.auth import get_user_model

    from wakes.models import Dials

    Dials.load()
    admin = get_user_model().objects.create_superuser("skyler", "skyler@example.org", "pw")
    client.force_login(admin)
    assert client.get(f"/admin/wakes/{model}/").status_code == 200
    if model == "dials":
        page = client.get("/admin/wakes/dials/1/change/").content.decode()
        for dial in ("considerations_per_hour", "daily_budget_usd", "consideration_cap_usd", "screen_model"):
            assert f'name="{dial}"' in page
