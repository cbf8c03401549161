"""GitHub issues and PRs: ETags, 304s, comments, reviews, merges, and rate limits."""

from __future__ import annotations

import time

import pytest

from watchlist.checker import run_cycle
from watchlist.models import Watch

from .conftest import lines, recheck

pytestmark = pytest.mark.django_db


def test_an_unchanged_issue_is_a_304_that_costs_no_rate_limit(github, watch, merch):
    github.add("cryptograss/merch", 12, "Shirt sizes")
    watch("github", "cryptograss/merch#12")
    run_cycle()
    counted = github.counted()

    recheck()

    last = github.requests[-1]
    assert (
        last.header(
            "if-none-match",
        )
        and last.path == "/repos/cryptograss/merch/issues/12"
    )
    assert github.counted() == counted
    assert lines(merch) == []


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

    assert max(seen) == 1 and len(seen) == 8


def test_the_last_request_of_the_quota_stops_the_host_before_a_refusal(github, watch):
    for n in range(1, 4):
        github.add("cryptograss/merch", n)
        watch("github", f"cryptograss/merch#{n}")
    github.remaining = 1  # the first answer will say x-ratelimit-remaining: 0

    report = run_cycle()

    assert len(github.requests) == 1
    assert report.checked == 1 and report.deferred == 2 and report.errors == 0
