"""End to end: Justin edits a watched talk page on the (fake) wiki → the `always` wake queues
@magent's look-only turn with the ability fixed by the runner → the turn runs → the runner posts
@magent's reply on that talk page, and the thread says so with a link.

Once with the fake harness playing a reply recorded from the real Claude Code CLI, once with
the real Claude Code CLI against the fake model server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from motion_runner.models import Kind, Message, Turn, TurnStatus
from motion_runner.runner.turns import execute_turn
from tests.recorded import recording_path
from wakes.models import AbilityRun
from watchlist.checker import run_cycle

from .conftest import recheck
from .test_reply_on_talk_page import BOT, PASSWORD, Worker

pytestmark = pytest.mark.django_db

FAKE_HARNESS = Path(__file__).resolve().parents[1] / "fakes" / "fake_harness.py"
REPLY = "Yes: XXL is in the second print run, shipping Friday. (Not Talk:Main Page.)"


@pytest.fixture
def pickipedia(wiki, settings, merch, tmp_path):
    wiki.add_bot(BOT, PASSWORD)
    settings.WIKI_BOT_CREDENTIALS = {wiki.api: (BOT, PASSWORD)}
    merch.workspace = str(tmp_path)
    merch.save()
    return wiki


@pytest.fixture
def worker(monkeypatch, django_capture_on_commit_callbacks):
    from wakes.tasks import run_ability

    w = Worker(django_capture_on_commit_callbacks)
    monkeypatch.setattr(run_ability, "delay", lambda turn_id: w.send(turn_id))
    monkeypatch.setattr(
        run_ability, "apply_async", lambda args, countdown=0.0, **kw: w.send(args[0], countdown)
    )
    return w


def justin_asks(wiki, watch) -> Turn:
    wiki.edit("Talk:Shirts", "Justin", "start", "== Sizes ==\nWhich sizes?")
    watch("wiki_page", "Talk:Shirts", wake="always")
    run_cycle()
    wiki.edit(
        "Talk:Shirts", "Justin", "/* Sizes */ asking", "== Sizes ==\nWhich sizes?\nDo the shirts come in XXL?"
    )
    recheck()
    return Turn.objects.get()


def run_woken_turn(turn: Turn, capture) -> Turn:
    """What the run_turn task does; turn_finished goes out on commit, as after a real one."""
    with capture(execute=True):
        ended = execute_turn(turn.pk)
    assert ended is not None and ended.status == TurnStatus.FINISHED, ended and ended.error
    return ended


def test_a_recorded_claude_code_reply_lands_on_the_watched_talk_page(
    pickipedia, watch, merch, magent, worker, django_capture_on_commit_callbacks
):
    # The recording: "Let me read the README first." → Read → "The README says the answer is 42."
    magent.binary = str(FAKE_HARNESS)
    magent.env = {"FAKE_HARNESS_LINES": str(recording_path("tool_call")), "FAKE_HARNESS_PLAN": "{}"}
    magent.save()
    turn = justin_asks(pickipedia, watch)
    assert turn.ability["page"] == "Talk:Shirts"

    run_woken_turn(turn, django_capture_on_commit_callbacks)
    worker.run()

    ((title, revision),) = pickipedia.edits_by("MotionBot")
    assert title == "Talk:Shirts"
    text = pickipedia.pages["Talk:Shirts"].text
    assert "== Reply from @magent ==\n\nThe README says the answer is 42.\n\n" in text
    assert "Let me read the README first." not in text
    line = Message.objects.get(motion=merch, sender="runner", kind=Kind.TEXT)
    assert line.text.startswith(f"✎ replied on Talk:Shirts (rev {revision['revid']}) ")
    assert AbilityRun.objects.get(turn=turn).status == "done"


@pytest.mark.e2e
def test_the_real_claude_code_cli_replies_and_the_runner_posts_it_on_the_talk_page(
    claude_binary,
    claude_on_fake,
    pickipedia,
    watch,
    merch,
    magent,
    worker,
    django_capture_on_commit_callbacks,
):
    from tests.fakes.anthropic_api import Reply, Text, Usage

    claude_on_fake.script(Reply(Text(REPLY), usage=Usage(input_tokens=900, output_tokens=20)))
    claude_on_fake.default = None  # a second model call would be a bug
    turn = justin_asks(pickipedia, watch)

    run_woken_turn(turn, django_capture_on_commit_callbacks)
    worker.run()

    (request,) = claude_on_fake.message_requests()
    assert "the runner itself posts your final text" in request.last_user_text()
    assert not [name for name in request.tool_names if "edit" in name.lower() or "page" in name.lower()]
    ((title, _),) = pickipedia.edits_by("MotionBot")
    assert title == "Talk:Shirts" and "Talk:Main Page" not in pickipedia.pages
    assert f"== Reply from @magent ==\n\n{REPLY}\n\n" in pickipedia.pages["Talk:Shirts"].text
    assert (
        Message.objects.filter(
            motion=merch, sender="runner", text__startswith="✎ replied on Talk:Shirts"
        ).count()
        == 1
    )
