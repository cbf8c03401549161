"""Run by tests/motion_runner/memory_lane/test_binding_reads.py with pytest inside the host project
(`--ds tests.host.settings`, the README's block: the memory_lane binding) on a database of its own:
the binding's reads once a tick (issue 41, item 3), pinned with django_assert_num_queries.

Not collected by the project's own run (its name is not test_*.py): the test file runs it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.host.reads_data import many_moods
from wakes.consider_loop import loop
from wakes.models import Dials, ListenState, clock
from wakes.models.in_force import reads_once, resolve

pytestmark = pytest.mark.django_db

SNAPSHOT = 4  # agents' names, Moods by slug, every settings row the pairs may read, who may widen


@pytest.fixture
def pairs():
    return many_moods(100)  # 200 due pairs


def test_resolve_for_200_due_pairs_reads_the_binding_once_and_runs_one_statement_a_pair(
    pairs, django_assert_num_queries
):
    dials = Dials.load()
    # Each pair: its dial overrides (resolve's own read, as the apps' own record); nothing of
    # memory-lane's tables but the four reads for all 200.
    with django_assert_num_queries(SNAPSHOT + len(pairs)):
        with reads_once(pairs):
            for motion_id, agent_id in pairs:
                resolve(motion_id, agent_id, dials)
    assert (SNAPSHOT + len(pairs)) / len(pairs) <= 3


def test_read_once_the_dials_are_the_same_as_read_pair_by_pair(pairs):
    dials = Dials.load()
    each = [resolve(m, a, dials) for m, a in pairs]
    with reads_once(pairs):
        once = [resolve(m, a, dials) for m, a in pairs]
    assert once == each
    assert {r.quiet_seconds for r in each} >= {30.0, 10.0} and {r.reads for r in each} >= {2000, 2096}
    assert {r.daily_budget_usd for r in each} == {25}


def test_pair_by_pair_it_is_what_the_issue_measured(pairs, django_assert_max_num_queries):
    dials = Dials.load()
    with CaptureQueriesContext(connection) as queries:
        resolve(*pairs[0], dials)
    assert len(queries) >= 7  # the baseline the bench prints beside the figure


def test_a_tick_over_200_due_pairs_reads_memory_lanes_settings_rows_once(pairs):
    now = timezone.now()
    ListenState.objects.filter(pk__in=[s.pk for s in ListenState.objects.all()]).update(due_at=now)
    for motion_id, agent_id in pairs:
        ListenState.objects.get_or_create(
            motion_id=motion_id,
            agent_id=agent_id,
            defaults={"due_at": now, "created_at": now - timedelta(days=1)},
        )
    assert ListenState.objects.filter(due_at__lte=now).count() == 200
    clock.set_now(now + timedelta(seconds=1))
    try:
        with CaptureQueriesContext(connection) as queries:
            loop.tick(dispatch=False)
    finally:
        clock.set_now(None)
    settings_reads = [q["sql"] for q in queries if 'FROM "settings"' in q["sql"]]
    assert len(settings_reads) == 1
