"""GitHub issues and PRs: ETags, 304s, comments, reviews, merges, and rate limits."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from watchlist.checker import run_cycle
from watchlist.models import SharedCursor, Watch

from .conftest import lines, recheck

pytestmark = pytest.mark.django_db


def test_an_unchanged_repository_is_one_304_that_costs_no_rate_limit(github, watch, merch):
    for n in (12, 13, 14):
        github.add("cryptograss/merch", n, "Shirt sizes")
        watch("github", f"cryptograss/merch#{n}")
    run_cycle()
    recheck()  # the listing's first answer after the anchor brings the ETag
    counted = github.counted()
    github.reset_log()

    recheck()

    assert len(github.requests) == 1
    listing = github.requests[0]
    assert listing.path == "/repos/cryptograss/merch/issues" and listing.header("if-none-match")
    assert listing.query["state"] == "all" and listing.query["since"]
    assert github.statuses == [304]
    assert github.counted() == counted
    assert lines(merch) == []


def test_watches_on_one_repository_share_one_listing_and_only_the_changed_issue_is_read(github, watch, merch):
    for n in range(1, 21):
        github.add("cryptograss/merch", n, f"Issue {n}", is_pr=n % 2 == 0)
        watch("github", f"cryptograss/merch#{n}")
    github.add("cryptograss/merch", 99, "Nobody watches this")
    run_cycle()
    recheck()
    comment = github.comment("cryptograss/merch", 7, "rosalind", "Can we do XL?")
    github.comment("cryptograss/merch", 99, "mallory", "not watched")
    github.reset_log()

    recheck()

    paths = [r.path for r in github.requests]
    assert paths == [
        "/repos/cryptograss/merch/issues",
        "/repos/cryptograss/merch/issues/7",
        "/repos/cryptograss/merch/issues/7/comments",
    ]
    assert lines(merch) == [f"💬 cryptograss/merch#7 rosalind commented: Can we do XL? {comment['html_url']}"]


def test_a_change_seen_while_its_watch_was_not_due_is_still_posted(github, watch, merch):
    github.add("cryptograss/merch", 1, "Often checked")
    github.add("cryptograss/merch", 2, "Checked hourly")
    often = watch("github", "cryptograss/merch#1")
    hourly = watch("github", "cryptograss/merch#2", interval=3600)
    run_cycle()
    github.close("cryptograss/merch", 2, "justin")
    Watch.objects.filter(pk=often.pk).update(next_due_at=timezone.now() - timedelta(seconds=1))
    run_cycle()  # only #1 is due: the listing shows #2 closed and moves the cursor past it
    assert lines(merch) == []

    Watch.objects.filter(pk=hourly.pk).update(next_due_at=timezone.now() - timedelta(seconds=1))
    run_cycle()

    assert [line.split(" https://")[0] for line in lines(merch)] == [
        "● cryptograss/merch#2 closed by justin: Checked hourly"
    ]


def test_watches_on_two_repositories_send_one_listing_each(github, watch):
    for repo in ("cryptograss/merch", "cryptograss/site"):
        for n in range(1, 6):
            github.add(repo, n)
            watch("github", f"{repo}#{n}")
    run_cycle()
    recheck()
    github.reset_log()

    recheck()

    assert sorted(r.path for r in github.requests) == [
        "/repos/cryptograss/merch/issues",
        "/repos/cryptograss/site/issues",
    ]


def test_a_missing_repository_disables_its_watches_with_the_reason(github, watch):
    w = watch("github", "cryptograss/gone#1")

    run_cycle()

    w.refresh_from_db()
    assert not w.enabled and "cryptograss/gone was not found on GitHub (404)" in w.disabled_reason


def test_a_new_comment_is_one_line_naming_who_wrote_it(github, watch, merch):
    github.add("cryptograss/merch", 12, "Shirt sizes")
    github.comment("cryptograss/merch", 12, "alice", "an old comment")
    watch("github", "cryptograss/merch#12")
    run_cycle()
    comment = github.comment("cryptograss/merch", 12, "rosalind", "Can we do XL?\nthanks")

    recheck()

    assert lines(merch) == [
        f"💬 cryptograss/merch#12 rosalind commented: Can we do XL? {comment['html_url']}"
    ]


def test_a_review_on_a_pr_is_a_line_with_its_verdict(github, watch, merch):
    github.add("cryptograss/merch", 40, "Add hoodies", is_pr=True)
    github.review("cryptograss/merch", 40, "alice", "COMMENTED", "looking")
    watch("github", "cryptograss/merch#40")
    run_cycle()
    github.review("cryptograss/merch", 40, "justin", "APPROVED", "ship it")

    recheck()

    assert [line.split(" https://")[0] for line in lines(merch)] == [
        "🔍 cryptograss/merch#40 justin approved: ship it"
    ]


def test_a_merge_is_a_line(github, watch, merch):
    github.add("cryptograss/merch", 40, "Add hoodies", is_pr=True)
    watch("github", "cryptograss/merch#40")
    run_cycle()
    github.merge("cryptograss/merch", 40, "justin")

    recheck()

    assert lines(merch) == [
        "● cryptograss/merch#40 merged: Add hoodies https://github.com/cryptograss/merch/pull/40"
    ]


def test_closing_and_reopening_are_lines(github, watch, merch):
    github.add("cryptograss/merch", 12, "Shirt sizes")
    watch("github", "cryptograss/merch#12")
    run_cycle()
    github.close("cryptograss/merch", 12, "justin", reason="not_planned")
    recheck()
    github.reopen("cryptograss/merch", 12)
    recheck()

    assert [line.split(" https://")[0] for line in lines(merch)] == [
        "● cryptograss/merch#12 closed as not planned by justin: Shirt sizes",
        "● cryptograss/merch#12 reopened: Shirt sizes",
    ]


def test_an_exhausted_rate_limit_defers_every_github_watch_until_the_reset(github, watch):
    for n in range(1, 6):
        github.add("cryptograss/merch", n)
        watch("github", f"cryptograss/merch#{n}")
    github.throttle(403, reset_in=600)

    report = run_cycle()

    assert len(github.requests) == 1  # the others were not sent just to be refused
    assert report.deferred == 5 and report.errors == 0
    for w in Watch.objects.all():
        assert w.consecutive_failures == 0
        assert 590 <= (w.next_due_at - w.last_checked_at).total_seconds() <= 610


def test_a_secondary_limit_429_is_honoured_through_retry_after(github, watch):
    github.add("cryptograss/merch", 1)
    w = watch("github", "cryptograss/merch#1")
    github.throttle(429, retry_after=120)

    run_cycle()

    w.refresh_from_db()
    assert w.consecutive_failures == 0 and "wait 120 s" in w.last_error
    assert 115 <= (w.next_due_at - w.last_checked_at).total_seconds() <= 125


def test_a_missing_issue_disables_the_watch_with_the_reason(github, watch, merch):
    w = watch("github", "cryptograss/merch#999")

    run_cycle()

    w.refresh_from_db()
    assert not w.enabled and "not found on GitHub (404)" in w.disabled_reason


def test_the_token_is_sent_when_one_is_configured(github, watch, settings):
    settings.WATCH_GITHUB_TOKEN = "ghp_test"
    github.add("cryptograss/merch", 1)
    watch("github", "cryptograss/merch#1")

    run_cycle()

    assert github.requests[0].header("authorization") == "Bearer ghp_test"
    assert github.requests[0].header("x-github-api-version") == "2022-11-28"


def test_github_requests_to_one_host_are_serial(github, watch, settings):
    settings.WATCH_HTTP_PER_HOST_CONCURRENCY = 4
    github.delay = 0.05
    for n in range(1, 9):
        github.add("cryptograss/merch", n)
        watch("github", f"cryptograss/merch#{n}")
    seen, active = [], [0]
    original = github.handle

    def counting(request):
        active[0] += 1
        seen.append(active[0])
        try:
            time.sleep(0.01)
            return original(request)
        finally:
            active[0] -= 1

    github.handle = counting
    run_cycle()

    assert max(seen) == 1 and len(seen) == 9  # the anchor listing, then each issue's first look


def test_the_last_request_of_the_quota_stops_the_host_before_a_refusal(github, watch):
    for n in range(1, 4):
        github.add("cryptograss/merch", n)
        watch("github", f"cryptograss/merch#{n}")
    github.remaining = 2  # the anchor listing, then an issue whose answer says remaining: 0

    report = run_cycle()

    assert len(github.requests) == 2
    assert report.checked == 1 and report.deferred == 2 and report.errors == 0


def test_a_repository_first_look_cut_short_by_the_rate_limit_keeps_no_cursor(github, watch):
    for n in range(1, 4):
        github.add("cryptograss/merch", n)
        watch("github", f"cryptograss/merch#{n}")
    github.remaining = 2  # the anchor, then one issue; the others are deferred

    run_cycle()

    # The deferred watches never looked at their issues: a cursor now would let them miss
    # what changes before their next look.
    assert not SharedCursor.objects.exists()
