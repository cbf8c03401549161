"""Claiming due watches: whatever runs in parallel, no watch is checked twice at once."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from tests.factories import MotionFactory, WatchFactory
from watchlist.checker import apply_outcome, claim_due, run_cycle
from watchlist.kinds import Change, Outcome
from watchlist.models import Watch

from .conftest import lines


def claim_in_threads(count: int) -> list[list[int]]:
    barrier = threading.Barrier(count)
    results: list[list[int]] = [[] for _ in range(count)]
    errors: list[BaseException] = []

    def claimer(index: int) -> None:
        try:
            barrier.wait()
            _token, watches = claim_due()
            results[index] = [w.pk for w in watches]
        except BaseException as exc:  # a claimer that fails would hide a lost race
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    return results


@pytest.mark.django_db(transaction=True)
def test_two_claimers_at_once_take_each_watch_exactly_once():
    motion = MotionFactory()
    ids = {WatchFactory(motion=motion).pk for _ in range(300)}

    first, second = claim_in_threads(2)

    assert not set(first) & set(second)
    assert set(first) | set(second) == ids


@pytest.mark.django_db(transaction=True)
def test_two_cycles_at_once_check_each_watch_once(web, settings):
    motion = MotionFactory()
    for n in range(40):
        WatchFactory(motion=motion, target=web.page(f"/p{n}", "P", f"page {n}"))

    errors: list[BaseException] = []

    def cycle():
        try:
            run_cycle()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=cycle) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert len(web.requests) == 40
    assert Watch.objects.filter(last_checked_at__isnull=False).count() == 40


@pytest.mark.django_db
def test_a_claimed_watch_is_not_claimed_again_until_its_lease_ends(settings):
    w = WatchFactory()
    _token, first = claim_due()
    _token, second = claim_due()
    _token, later = claim_due(now=timezone.now() + timedelta(seconds=settings.WATCH_CLAIM_LEASE_SECONDS + 1))

    assert [x.pk for x in first] == [w.pk] and second == [] and [x.pk for x in later] == [w.pk]


@pytest.mark.django_db
def test_a_result_whose_claim_was_lost_is_dropped():
    w = WatchFactory()
    token, (claimed,) = claim_due()
    Watch.objects.filter(pk=w.pk).update(claim="someone-else")

    apply_outcome(
        claimed, token, Outcome(w.pk, state={"checked": True}, changes=[Change(key="k", line="hello")])
    )

    assert lines(w.motion) == []


@pytest.mark.django_db
def test_a_result_for_a_watch_edited_while_it_was_checked_is_dropped():
    w = WatchFactory(target="https://example.org/old")
    token, (claimed,) = claim_due()
    edited = Watch.objects.get(pk=w.pk)
    edited.target = "https://example.org/new"
    edited.save()

    apply_outcome(
        claimed,
        token,
        Outcome(w.pk, state={"checked": True, "etag": '"old"'}, changes=[Change(key="k", line="old news")]),
    )

    edited.refresh_from_db()
    assert edited.etag == "" and lines(w.motion) == []


@pytest.mark.django_db
def test_paused_watches_are_not_claimed():
    WatchFactory(enabled=False)
    assert claim_due()[1] == []


@pytest.mark.django_db
def test_a_quiet_result_for_a_watch_edited_while_it_was_checked_is_dropped():
    from watchlist.checker import CycleReport, apply_outcomes

    w = WatchFactory(target="https://example.org/old")
    token, (claimed,) = claim_due()
    edited = Watch.objects.get(pk=w.pk)
    edited.target = "https://example.org/new"
    edited.save()
    report = CycleReport()

    apply_outcomes({w.pk: claimed}, token, [Outcome(w.pk, state=claimed.state_dict())], report)

    edited.refresh_from_db()
    assert report.dropped == 1 and edited.last_checked_at is None
