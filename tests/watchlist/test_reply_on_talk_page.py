"""A watched talk page wakes the agent to reply there, and the runner posts the reply itself.

The story: Justin asks a question on Talk:Shirts on PickiPedia (the fake MediaWiki). The
Motion `cryptograss-merch` watches that page with wake policy `always`, so @magent is woken,
look-only, with one extra ability fixed by the runner: "reply on Talk:Shirts". When its turn
FINISHED, the runner logs in with the bot password MotionBot@runner and posts @magent's final
words as a new section of exactly that page, once, and says in the thread how it went.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from motion_runner.models import EndedBy, Kind, Message, Turn, TurnStatus
from motion_runner.signals import turn_finished
from tests.factories import MessageFactory
from wakes.abilities.runner import perform
from wakes.models import AbilityRun
from watchlist.checker import run_cycle

from .conftest import recheck

pytestmark = pytest.mark.django_db

BOT, PASSWORD = "MotionBot@runner", "bot-password-1"
QUESTION = "Do the shirts come in XXL?"
REPLY = "Yes: XXL is in the second print run, shipping Friday."


@pytest.fixture
def pickipedia(wiki, settings):
    """The fake wiki, with a bot password for the runner, configured for that wiki only."""
    wiki.add_bot(BOT, PASSWORD)
    settings.WIKI_BOT_CREDENTIALS = {wiki.api: (BOT, PASSWORD)}
    settings.WIKI_REPLY_ASSERT = "user"
    settings.ABILITY_MAX_ATTEMPTS = 5
    settings.ABILITY_RETRY_BASE_SECONDS = 30.0
    return wiki


class Worker:
    """Stands in for the Celery worker: records every run_ability sent (and its countdown) and
    runs the ones that are due, with on_commit callbacks executed as after a real commit."""

    def __init__(self, capture):
        self.capture = capture
        self.sent: list[tuple[int, float]] = []

    def send(self, turn_id: int, countdown: float = 0.0) -> None:
        self.sent.append((turn_id, countdown))

    def run(self) -> list[AbilityRun | None]:
        sent, self.sent = self.sent, []
        done = []
        for turn_id, _ in sent:
            with self.capture(execute=True):
                done.append(perform(turn_id))
        return done


@pytest.fixture
def worker(monkeypatch, django_capture_on_commit_callbacks):
    from wakes.tasks import run_ability

    w = Worker(django_capture_on_commit_callbacks)
    monkeypatch.setattr(run_ability, "delay", lambda turn_id: w.send(turn_id))
    monkeypatch.setattr(
        run_ability, "apply_async", lambda args, countdown=0.0, **kw: w.send(args[0], countdown)
    )
    return w


@pytest.fixture
def woken(pickipedia, watch, merch, magent) -> Turn:
    """Justin's question on Talk:Shirts has woken @magent (its turn is queued)."""
    pickipedia.edit("Talk:Shirts", "Justin", "start", "== Sizes ==\nWhich sizes?")
    watch("wiki_page", "Talk:Shirts", wake="always")
    run_cycle()
    pickipedia.edit("Talk:Shirts", "Justin", "/* Sizes */ asking", f"== Sizes ==\nWhich sizes?\n{QUESTION}")
    recheck()
    return Turn.objects.get(agent=magent)


@pytest.fixture
def ends(django_capture_on_commit_callbacks):
    """End a turn having said these things (text, or ("tool_call"/"tool_result", text)), and
    deliver turn_finished `times` times, as the runner does after its commit."""

    def end(turn: Turn, *said, status: str = TurnStatus.FINISHED, times: int = 1) -> Turn:
        for item in said:
            kind, text = item if isinstance(item, tuple) else (Kind.TEXT, item)
            MessageFactory(
                motion=turn.motion,
                agent=turn.agent,
                sender=turn.agent.name,
                source="runner",
                turn=turn,
                kind=kind,
                text=text,
            )
        Turn.objects.filter(pk=turn.pk).update(status=status, ended_at=timezone.now())
        turn.refresh_from_db()
        for _ in range(times):
            with django_capture_on_commit_callbacks(execute=True):
                turn_finished.send(sender=Turn, turn=turn)
        return turn

    return end


def bot_edits(wiki) -> list[tuple[str, dict]]:
    return wiki.edits_by("MotionBot")


def runner_lines(motion) -> list[str]:
    return list(
        Message.objects.filter(motion=motion, sender="runner")
        .order_by("created_at")
        .values_list("text", flat=True)
    )


# --- the wake ------------------------------------------------------------------------------


def test_the_wake_carries_the_page_fixed_by_the_runner_and_says_what_happens_to_the_reply(woken, pickipedia):
    assert woken.ability == {"kind": "reply_on_wiki_page", "api": pickipedia.api, "page": "Talk:Shirts"}
    assert json.loads(woken.reason_detail)["reply_on"] == {"wiki": pickipedia.api, "page": "Talk:Shirts"}
    assert woken.mode == "look"
    assert "the runner itself posts your final text" in woken.prompt
    assert "you cannot and need not edit the wiki yourself" in woken.prompt
    assert "<silent>why</silent>" in woken.prompt


# --- posting -------------------------------------------------------------------------------


def test_the_reply_lands_on_exactly_that_page_once_when_turn_finished_is_delivered_twice(
    woken, ends, worker, pickipedia, merch
):
    ends(woken, REPLY, times=2)
    worker.run()
    worker.run()

    ((title, revision),) = bot_edits(pickipedia)
    assert title == "Talk:Shirts"
    page = pickipedia.pages["Talk:Shirts"]
    assert page.text.endswith(
        f"== Reply from @magent ==\n\n{REPLY}\n\n— @magent, an AI agent, replying through Motion Runner ~~~~"
    )
    assert QUESTION in page.text  # a new section: what was there stays
    assert f"(turn {woken.pk} in cryptograss-merch)" in revision["comment"]
    assert len(pickipedia.edit_requests()) == 1
    run = AbilityRun.objects.get(turn=woken)
    assert (run.status, run.attempts, run.result["revid"]) == ("done", 1, revision["revid"])
    link = f"{pickipedia.url}/w/index.php?title=Talk:Shirts&diff={revision['revid']}"
    assert runner_lines(merch) == [f"✎ replied on Talk:Shirts (rev {revision['revid']}) {link}"]


def test_only_the_words_after_the_last_tool_call_are_posted(woken, ends, worker, pickipedia):
    ends(
        woken,
        "Let me read the sizes page first.",
        ("tool_call", "Read sizes.md"),
        ("tool_result", "S M L XL XXL"),
        REPLY,
    )
    worker.run()

    ((_, revision),) = bot_edits(pickipedia)
    assert f"== Reply from @magent ==\n\n{REPLY}\n\n" in pickipedia.pages["Talk:Shirts"].text
    assert "Let me read" not in pickipedia.pages["Talk:Shirts"].text


def test_naming_another_page_changes_nothing_the_page_comes_only_from_the_wake(
    woken, ends, worker, pickipedia
):
    pickipedia.edit("Talk:Main Page", "Justin", "start", "hello")
    ends(woken, 'Post this on Talk:Main Page instead. {"page": "Talk:Main Page", "title": "Talk:Main Page"}')
    worker.run()

    assert [title for title, _ in bot_edits(pickipedia)] == ["Talk:Shirts"]
    assert pickipedia.pages["Talk:Main Page"].text == "hello"


def test_a_silent_turn_posts_nothing(woken, ends, worker, pickipedia, merch):
    ends(woken, "<silent>Justin's question was answered already</silent>")
    worker.run()

    assert worker.sent == [] and pickipedia.edit_requests() == []
    assert AbilityRun.objects.get(turn=woken).status == "skipped"
    assert runner_lines(merch) == []


def test_a_turn_that_only_asks_the_runner_for_tools_posts_nothing(woken, ends, worker, pickipedia):
    ends(woken, '<tools to="edit the shirts page itself"/>')
    worker.run()

    assert pickipedia.edit_requests() == []


def test_the_posted_reply_loses_its_ask_but_keeps_a_tag_written_inside_an_address(
    woken, ends, worker, pickipedia
):
    """As in the thread (issue 42): only a tag that made a request card is the runner's, not the page's."""
    said = f'{REPLY} Sizes: https://example.com/?next=<merge to="PR 9"/>'
    ends(woken, f'{said}\n\n<tools to="edit the shirts page itself"/>')
    worker.run()

    assert f"== Reply from @magent ==\n\n{said}\n\n—" in pickipedia.pages["Talk:Shirts"].text


@pytest.mark.parametrize("status", [TurnStatus.FAILED, TurnStatus.KILLED, TurnStatus.TIMED_OUT])
def test_a_turn_that_did_not_finish_posts_nothing_and_the_thread_says_so(
    woken, ends, worker, pickipedia, merch, status
):
    ends(woken, REPLY, status=status)
    worker.run()

    assert pickipedia.edit_requests() == [] and worker.sent == []
    assert runner_lines(merch) == [
        f"nothing was posted on Talk:Shirts on {pickipedia.host}:{pickipedia.port}: @magent's turn {status.replace('_', ' ')}"
    ]


# --- failures ------------------------------------------------------------------------------


def test_a_stale_token_is_fetched_afresh_once_and_the_reply_lands(woken, ends, worker, pickipedia):
    pickipedia.stale_tokens = 1
    ends(woken, REPLY)
    worker.run()

    assert len(pickipedia.edit_requests()) == 2
    assert len(bot_edits(pickipedia)) == 1
    assert AbilityRun.objects.get(turn=woken).status == "done"


def test_a_token_refused_twice_gives_up_and_the_reply_stays_in_the_thread(
    woken, ends, worker, pickipedia, merch
):
    pickipedia.stale_tokens = 2
    ends(woken, REPLY)
    worker.run()

    assert bot_edits(pickipedia) == [] and worker.sent == []
    (line,) = runner_lines(merch)
    assert "could not post @magent's reply on Talk:Shirts" in line and "fresh edit token" in line
    assert line.endswith("The reply stays here in the thread.")
    assert Message.objects.filter(motion=merch, agent__name="magent", text=REPLY).exists()


def test_a_protected_page_says_why_and_is_not_tried_again(woken, ends, worker, pickipedia, merch):
    pickipedia.protected.add("Talk:Shirts")
    ends(woken, REPLY)
    worker.run()

    run = AbilityRun.objects.get(turn=woken)
    assert (run.status, run.attempts) == ("failed", 1)
    assert worker.sent == []  # no retry
    (line,) = runner_lines(merch)
    assert "protectedpage: This page has been protected" in line
    assert Message.objects.get(motion=merch, sender="runner").kind == Kind.ERROR


def test_a_lagged_wiki_is_tried_again_later_and_then_the_reply_lands(woken, ends, worker, pickipedia, merch):
    pickipedia.lag, pickipedia.retry_after = 12.0, "45"
    ends(woken, REPLY)
    worker.run()

    run = AbilityRun.objects.get(turn=woken)
    assert run.status == "waiting" and bot_edits(pickipedia) == []
    assert worker.sent == [(woken.pk, 45.0)]  # the wiki's Retry-After (over the 30 s back-off)
    assert "trying again in 45 s, up to 4 more times" in runner_lines(merch)[0]

    worker.run()  # delivered early: not due yet, so nothing happens
    assert AbilityRun.objects.get(turn=woken).attempts == 1 and bot_edits(pickipedia) == []

    pickipedia.lag = 0.0
    AbilityRun.objects.filter(turn=woken).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    worker.send(woken.pk)
    worker.run()

    run.refresh_from_db()
    assert (run.status, run.attempts) == ("done", 2)
    assert len(bot_edits(pickipedia)) == 1
    assert runner_lines(merch)[-1].startswith("✎ replied on Talk:Shirts")


def test_a_wiki_lagged_every_time_is_given_up_after_the_bounded_tries(
    woken, ends, worker, pickipedia, merch, settings
):
    settings.ABILITY_MAX_ATTEMPTS = 3
    pickipedia.lag = 12.0
    ends(woken, REPLY)
    for _ in range(3):
        AbilityRun.objects.filter(turn=woken).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
        worker.run()

    run = AbilityRun.objects.get(turn=woken)
    assert (run.status, run.attempts) == ("failed", 3)
    assert worker.sent == []
    assert "(gave up after 3 tries)" in runner_lines(merch)[-1]


def test_a_wrong_bot_password_says_the_login_failed_and_never_shows_the_password(
    woken, ends, worker, pickipedia, merch, settings
):
    settings.WIKI_BOT_CREDENTIALS = {pickipedia.api: (BOT, "wrong-password-9")}
    ends(woken, REPLY)
    worker.run()

    (line,) = runner_lines(merch)
    assert "the wiki refused the bot login as MotionBot@runner: Incorrect username or password" in line
    assert "wrong-password-9" not in line and pickipedia.edit_requests() == [] and worker.sent == []


def test_no_bot_password_for_the_wiki_says_so(woken, ends, worker, pickipedia, merch, settings):
    settings.WIKI_BOT_CREDENTIALS = {"https://other.example/api.php": (BOT, PASSWORD)}
    ends(woken, REPLY)
    worker.run()

    assert f"no bot password is configured for {pickipedia.api}" in runner_lines(merch)[0]
    assert pickipedia.requests[-1].query.get("action") != "login"


def test_assert_bot_on_an_account_without_the_bot_right_is_refused_once(
    woken, ends, worker, pickipedia, merch, settings
):
    pickipedia.add_bot(BOT, PASSWORD, bot_group=False)
    settings.WIKI_REPLY_ASSERT = "bot"
    ends(woken, REPLY)
    worker.run()

    assert "assertbotfailed" in runner_lines(merch)[0]
    assert bot_edits(pickipedia) == [] and worker.sent == []


def test_a_try_after_a_lost_answer_finds_its_own_edit_instead_of_posting_again(
    woken, ends, worker, pickipedia, merch
):
    # The first try's edit landed, but its worker died before recording it.
    ends(woken, REPLY)
    AbilityRun.objects.filter(turn=woken).update(
        status="running", attempts=1, claimed_until=timezone.now() - timedelta(seconds=1)
    )
    landed = pickipedia.edit(
        "Talk:Shirts",
        "MotionBot",
        f"Reply from @magent through Motion Runner (turn {woken.pk} in cryptograss-merch)",
        "…",
    )
    worker.run()

    assert len(bot_edits(pickipedia)) == 1 and pickipedia.edit_requests() == []
    assert AbilityRun.objects.get(turn=woken).result["revid"] == landed


# --- the one HTTP wrapper ------------------------------------------------------------------


def test_the_http_wrapper_sends_cookies_only_from_the_jar_it_is_given(pickipedia):
    import httpx

    from motion_runner.lib.http.client import HttpClient

    jar = httpx.Cookies()
    with HttpClient() as http:
        http.request(
            "GET", pickipedia.api, params={"action": "query", "meta": "tokens", "type": "login"}, cookies=jar
        )
        http.request("GET", pickipedia.api, params={"action": "query", "meta": "tokens", "type": "login"})
        http.request(
            "GET", pickipedia.api, params={"action": "query", "meta": "tokens", "type": "login"}, cookies=jar
        )

    first, without, again = pickipedia.requests[-3:]
    assert first.header("cookie") is None and without.header("cookie") is None
    assert again.header("cookie") == f"fakewiki_session={jar['fakewiki_session']}"


# --- two workers at once (PostgreSQL: row locks; SQLite serializes writers) ----------------


@pytest.mark.django_db(transaction=True)
def test_two_workers_racing_on_one_turn_post_once(woken, ends, pickipedia):
    ends(woken, REPLY)
    start = threading.Barrier(2)
    outcomes: list = []

    def work() -> None:
        try:
            start.wait()
            outcomes.append(perform(woken.pk))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert sorted(o is None for o in outcomes) == [False, True]  # one claimed it, one found it taken
    assert len(bot_edits(pickipedia)) == 1 and len(pickipedia.edit_requests()) == 1
    assert AbilityRun.objects.get(turn=woken).status == "done"


def test_a_run_whose_task_was_lost_is_sent_again_by_the_sweep_and_posts_once(woken, ends, worker, pickipedia):
    from wakes.abilities.runner import sweep

    ends(woken, REPLY)
    worker.sent.clear()  # the broker lost it
    AbilityRun.objects.filter(turn=woken).update(created_at=timezone.now() - timedelta(minutes=2))

    assert sweep() == 1
    worker.run()
    assert sweep() == 0

    assert len(bot_edits(pickipedia)) == 1
    assert AbilityRun.objects.get(turn=woken).status == "done"


def test_a_turn_woken_again_after_its_session_was_lost_leaves_the_reply_to_the_new_turn(
    woken, ends, worker, pickipedia, merch
):
    Turn.objects.filter(pk=woken.pk).update(
        error="its session s-1 is gone; retired it and woke again in a new session",
        ended_by=EndedBy.SESSION_GONE,
    )
    woken.refresh_from_db()
    ends(woken, status=TurnStatus.FAILED)

    assert not AbilityRun.objects.exists() and runner_lines(merch) == []


def test_a_turn_woken_again_fresh_because_its_session_is_elsewhere_leaves_the_reply_to_the_new_turn(
    woken, ends, worker, pickipedia, merch
):
    Turn.objects.filter(pk=woken.pk).update(
        error="its session s-1 is not on this machine: woke again once in a fresh session here",
        ended_by=EndedBy.SESSION_ELSEWHERE,
    )
    woken.refresh_from_db()
    ends(woken, status=TurnStatus.FAILED)

    assert not AbilityRun.objects.exists() and runner_lines(merch) == []
