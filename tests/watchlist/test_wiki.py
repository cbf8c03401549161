"""Wiki pages: batched latest-revision queries against a MediaWiki API fake."""

from __future__ import annotations

import json

import pytest

from motion_runner.models import Message, Turn
from watchlist.checker import run_cycle
from watchlist.models import Watch

from .conftest import lines, recheck

pytestmark = pytest.mark.django_db


def test_a_first_check_records_the_revision_without_posting(wiki, watch, merch):
    revid = wiki.edit("Talk:Merch", "Justin", "start", "hello")
    page = watch("wiki_page", "Talk:Merch")

    run_cycle()

    page.refresh_from_db()
    assert page.last_revision == str(revid)
    assert lines(merch) == []


def test_an_edit_posts_one_line_with_who_and_the_summary(wiki, watch, merch):
    old = wiki.edit("Talk:Merch", "Justin", "start", "hello")
    watch("wiki_page", "Talk:Merch")
    run_cycle()
    new = wiki.edit("Talk:Merch", "Rosalind", "asked about shirt sizes", "hello\nwhat sizes?")

    recheck()

    assert lines(merch) == [
        f"✎ Talk:Merch edited by Rosalind: asked about shirt sizes {wiki.url}/w/index.php?title=Talk:Merch&diff={new}&oldid={old}"
    ]


def test_checking_again_without_an_edit_posts_nothing_more(wiki, watch, merch):
    wiki.edit("Talk:Merch", "Justin", "start", "hello")
    watch("wiki_page", "Talk:Merch")
    run_cycle()
    wiki.edit("Talk:Merch", "Rosalind", "sizes", "hello\nsizes?")
    recheck()

    recheck()
    recheck()

    assert len(lines(merch)) == 1


def test_pages_on_one_wiki_are_fetched_fifty_titles_a_request(wiki, watch):
    for n in range(120):
        wiki.edit(f"Song {n}", "Justin", "new", "words")
        watch("wiki_page", f"Song {n}")

    run_cycle()

    queries = wiki.query_requests()
    assert len(queries) == 3
    assert sorted(len(q.query["titles"].split("|")) for q in queries) == [20, 50, 50]
    assert all("rvlimit" not in q.query for q in queries)
    assert Watch.objects.exclude(last_revision="").count() == 120


def test_two_motions_watching_one_page_share_one_title_in_the_request(wiki, watch, merch):
    from tests.factories import MotionFactory, WatchFactory

    wiki.edit("Talk:Merch", "Justin", "start", "hello")
    watch("wiki_page", "Talk:Merch")
    WatchFactory(motion=MotionFactory(slug="other"), kind="wiki_page", target="Talk:Merch")

    run_cycle()

    assert wiki.query_requests()[0].query["titles"] == "Talk:Merch"
    assert Watch.objects.filter(last_revision="").count() == 0


def test_a_title_written_loosely_is_followed_through_normalization(wiki, watch, merch):
    wiki.edit("Talk:Shirt sizes", "Justin", "start", "hello")
    loose = watch("wiki_page", "talk:shirt_sizes")
    run_cycle()
    wiki.edit("Talk:Shirt sizes", "Rosalind", "XL please", "hello\nXL")

    recheck()

    loose.refresh_from_db()
    assert loose.extra["title"] == "Talk:Shirt sizes"
    assert lines(merch)[0].startswith("✎ Talk:Shirt sizes edited by Rosalind: XL please")


def test_a_redirected_page_is_watched_at_its_target(wiki, watch, merch):
    wiki.edit("Merch plans", "Justin", "moved here", "plans")
    wiki.redirect("Merch", "Merch plans")
    watch("wiki_page", "Merch")
    run_cycle()
    wiki.edit("Merch plans", "Rosalind", "added hoodies", "plans\nhoodies")

    recheck()

    assert lines(merch)[0].startswith("✎ Merch plans edited by Rosalind: added hoodies")


def test_a_missing_page_keeps_being_watched_and_its_creation_is_news(wiki, watch, merch):
    page = watch("wiki_page", "Talk:New idea")
    run_cycle()
    page.refresh_from_db()
    assert page.enabled and page.extra["missing"] is True and lines(merch) == []

    wiki.edit("Talk:New idea", "Rosalind", "first thoughts", "hi")
    recheck()

    assert lines(merch)[0].startswith("✎ Talk:New idea created by Rosalind: first thoughts")


def test_an_invalid_title_disables_the_watch_with_the_reason(wiki, watch, merch):
    page = watch("wiki_page", "Talk:<bad>")

    run_cycle()

    page.refresh_from_db()
    assert not page.enabled
    assert "invalid characters" in page.disabled_reason
    assert "stopped" in Message.objects.get(motion=merch, source="watch").text


def test_continuation_is_followed_until_the_batch_is_complete(wiki, watch):
    wiki.page_limit = 20
    for n in range(50):
        wiki.edit(f"Song {n}", "Justin", "new", "words")
        watch("wiki_page", f"Song {n}")

    run_cycle()

    assert len(wiki.query_requests()) == 3
    assert [q.query.get("rvcontinue") for q in wiki.query_requests()] == [None, "20", "40"]
    assert Watch.objects.filter(last_revision="").count() == 0


def test_maxlag_defers_the_batch_by_retry_after_without_counting_a_failure(wiki, watch, merch):
    wiki.edit("Talk:Merch", "Justin", "start", "hello")
    page = watch("wiki_page", "Talk:Merch")
    wiki.lag = 12
    wiki.retry_after = "7"

    report = run_cycle()

    page.refresh_from_db()
    assert report.deferred == 1
    assert page.consecutive_failures == 0 and page.last_revision == ""
    assert 5 <= (page.next_due_at - page.last_checked_at).total_seconds() <= 9
    assert wiki.query_requests()[0].query["maxlag"] == "5"

    wiki.lag = 0
    recheck()
    page.refresh_from_db()
    assert page.last_revision != "" and lines(merch) == []


def test_a_talk_page_edit_wakes_the_agent_to_reply_on_that_page(wiki, watch, merch, magent):
    wiki.edit("Talk:Merch", "Justin", "start", "hello")
    watch("wiki_page", "Talk:Merch", wake="always")
    run_cycle()
    wiki.edit("Talk:Merch", "Rosalind", "question", "hello\nCan @magent list the sizes?")

    recheck()

    turn = Turn.objects.get(agent=magent)
    assert (turn.reason, turn.mode, turn.mode_rule) == ("watch", "look", "a watch line")
    assert json.loads(turn.reason_detail)["reply_on"] == {"wiki": wiki.api, "page": "Talk:Merch"}
    assert turn.ability == {"kind": "reply_on_wiki_page", "api": wiki.api, "page": "Talk:Merch"}
    assert "the runner itself posts your final text" in turn.prompt
    assert "+ Can @magent list the sizes?" in turn.prompt
