"""Failure: back-off, telling the Motion after 3 failures (once) and on recovery, disabling."""

from __future__ import annotations

import pytest

from tests.fakes.http import FakeServer, Reply
from watchlist.checker import run_cycle
from watchlist.models import Watch

from .conftest import lines, recheck

pytestmark = pytest.mark.django_db


class Flaky(FakeServer):
    def __init__(self):
        super().__init__()
        self.failing = True

    def handle(self, request):
        if self.failing:
            return Reply(502, b"bad gateway")
        return Reply(
            200,
            b"<html><body><article><p>The merch table is open.</p></article></body></html>",
            {"Content-Type": "text/html"},
        )


@pytest.fixture
def flaky():
    with Flaky() as fake:
        yield fake


def gap(watch: Watch) -> float:
    watch.refresh_from_db()
    return (watch.next_due_at - watch.last_checked_at).total_seconds()


def test_a_failing_watch_backs_off_doubling_up_to_the_cap(flaky, watch, settings):
    settings.WATCH_BACKOFF_MAX_SECONDS = 700
    page = watch("web_page", flaky.url + "/news", interval=90)

    gaps = []
    for _ in range(5):
        recheck()
        gaps.append(round(gap(page)))

    assert gaps == [180, 360, 700, 700, 700]
    page.refresh_from_db()
    assert page.consecutive_failures == 5 and page.enabled and "502" in page.last_error


def test_the_motion_hears_of_failures_only_after_three_and_only_once(flaky, watch, merch):
    watch("web_page", flaky.url + "/news")

    recheck()
    recheck()
    assert lines(merch) == []
    recheck()
    recheck()
    recheck()

    assert len(lines(merch)) == 1
    assert lines(merch)[0].startswith("⚠ watch Web page:") and "failed 3 checks in a row" in lines(merch)[0]


def test_the_motion_hears_once_when_a_failing_watch_recovers(flaky, watch, merch):
    page = watch("web_page", flaky.url + "/news")
    for _ in range(3):
        recheck()

    flaky.failing = False
    recheck()
    recheck()

    assert len(lines(merch)) == 2 and lines(merch)[1].startswith("✓ watch Web page:")
    page.refresh_from_db()
    assert (
        page.consecutive_failures == 0 and not page.failure_notified and gap(page) == pytest.approx(90, abs=1)
    )


def test_one_or_two_failures_then_recovery_say_nothing(flaky, watch, merch):
    watch("web_page", flaky.url + "/news")
    recheck()
    recheck()

    flaky.failing = False
    recheck()

    assert lines(merch) == []


def test_a_slow_host_times_out_alone_while_the_other_hosts_are_checked(web, watch, settings):
    settings.WATCH_HTTP_TIMEOUT_SECONDS = 0.5
    from tests.fakes.web import FakeWeb

    with FakeWeb() as slow:
        slow.delay = 3
        stuck = watch("web_page", slow.page("/a", "A", "slow"))
        fast = [watch("web_page", web.page(f"/p{n}", "P", f"page {n}")) for n in range(6)]

        report = run_cycle()

    stuck.refresh_from_db()
    assert "timed out" in stuck.last_error and stuck.consecutive_failures == 1
    assert all(Watch.objects.get(pk=w.pk).text_hash for w in fast)
    assert report.checked == 6 and report.errors == 1


def test_a_cycle_out_of_time_leaves_the_rest_due_for_the_next(web, watch, settings):
    web.delay = 0.3
    settings.WATCH_HTTP_PER_HOST_CONCURRENCY = 1
    pages = [watch("web_page", web.page(f"/p{n}", "P", f"page {n}")) for n in range(4)]

    report = run_cycle(budget=0.1)

    assert report.checked == 1 and report.skipped == 3
    unchecked = Watch.objects.filter(pk__in=[p.pk for p in pages], last_checked_at__isnull=True)
    assert unchecked.count() == 3 and not unchecked.exclude(claim="").exists()
