"""Wakes that survive the broker and lost workers: the consider task sent again once, a
consideration that never started given up (its reservation back, its posts owed again), and
reservations whose wake never happened released (the settle sweep's safety net)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q

from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.lib.tasks import send_when_broker_answers
from motion_runner.models import Kind

from ..conf import app_settings as wakes_settings  # the app's settings, with defaults (conf.py)
from ..models import Consideration, Dials, ListenState, Spend, clock
from ..models.listening import WakeKind
from ..money.budget import release

log = logging.getLogger(__name__)


# The task that runs one claimed consideration (wakes/tasks.py), by its name: motion_runner/lib/tasks.py.
# Sent by the loop's tick once a consideration is claimed, and again from here once if lost.
CONSIDER = "wakes.consider"


def recover_considerations(now: datetime, *, dispatch: bool = True) -> dict[str, int]:
    """The database is the record of what is owed: a consideration whose task the broker lost
    is sent again, exactly once (the conditional UPDATE on `resent_at` is the claim of the
    re-send); one that still did not start, or started and never woke (its worker died between
    the reservation and the wake), is given up: its reservation goes back, its posts are owed
    again and the pair is looked at now."""
    bound = timedelta(seconds=wakes_settings.WAKES_CONSIDERATION_START_SECONDS)
    resent = []
    lost = Consideration.objects.filter(
        status=Consideration.Status.CLAIMED, resent_at__isnull=True, created_at__lt=now - bound
    ).values_list("pk", flat=True)
    for pk in lost:
        won = Consideration.objects.filter(
            pk=pk, status=Consideration.Status.CLAIMED, resent_at__isnull=True
        ).update(resent_at=now)
        if won == 1:
            resent.append(pk)
    if dispatch and resent:
        for pk in resent:
            transaction.on_commit(lambda pk=pk: send_when_broker_answers(CONSIDER, pk), robust=True)
    # A run is its screen (bounded by its timeout) and a few queries: one running much longer
    # lost its worker.
    run_bound = timedelta(
        seconds=max(wakes_settings.WAKES_CONSIDERATION_RUN_SECONDS, 2 * Dials.load().screen_timeout_seconds)
    )
    stuck = Consideration.objects.filter(
        Q(status=Consideration.Status.CLAIMED, resent_at__lt=now - bound)
        | Q(status=Consideration.Status.RUNNING, turn__isnull=True, started_at__lt=now - run_bound)
        # Started before started_at was kept.
        | Q(
            status=Consideration.Status.RUNNING,
            turn__isnull=True,
            started_at__isnull=True,
            created_at__lt=now - 10 * bound,
        )
    ).select_related("motion", "agent")
    abandoned = sum(1 for c in stuck if abandon(c, now))
    return {"resent": len(resent), "abandoned": abandoned}


def abandon(c: Consideration, now: datetime) -> bool:
    """A consideration whose wake never started: give its reservation back, owe its posts again."""
    with transaction.atomic():
        won = Consideration.objects.filter(
            pk=c.pk,
            status__in=(Consideration.Status.CLAIMED, Consideration.Status.RUNNING),
            turn__isnull=True,
        ).update(status=Consideration.Status.FAILED, detail="its wake never started (a lost task or worker)")
        if won != 1:
            return False
        for envelope in Spend.objects.filter(consideration=c, turn__isnull=True, settled=False):
            release(envelope, "released: the wake never started")
        state = ListenState.objects.select_for_update().get(pk=c.state_id)
        if c.kind == WakeKind.NEW_POSTS and state.considered_through == c.through:
            state.considered_through = c.previous_through  # those posts are still owed
        state.busy_until = None
        state.due_at = now
        state.version += 1
        state.save()
    log.warning("consideration %s of %s in %s never started; looking again", c.pk, c.agent_id, c.motion_id)
    return True


# A consideration reserves, screens (at most the screen's timeout) and queues its turn within
# seconds: a reservation still without a turn after this long belongs to a wake that never
# happened (its worker died between reserving and waking, the broker lost the task).
ORPHANED_RESERVATION = timedelta(minutes=5)


def release_orphaned_reservations(now: datetime | None = None) -> int:
    """Safety net (wakes.settle): release reservations whose wake never happened, say so in
    the thread once, and give the pair's posts back to the loop. Each release is claimed by a
    conditional UPDATE (still unsettled, still without a turn), so two sweeps release it once."""
    now = now or clock.now()
    released = 0
    stale = Spend.objects.filter(
        kind=Spend.Kind.CONSIDERATION, settled=False, turn__isnull=True, at__lt=now - ORPHANED_RESERVATION
    ).select_related("consideration", "agent", "motion")
    for spend in stale:
        claimed = Spend.objects.filter(pk=spend.pk, settled=False, turn__isnull=True).update(
            amount=0, settled=True, note="released: its wake never happened"
        )
        if not claimed:
            continue
        released += 1
        c = spend.consideration
        if c is not None and c.status in (Consideration.Status.CLAIMED, Consideration.Status.RUNNING):
            Consideration.objects.filter(pk=c.pk).update(
                status=Consideration.Status.FAILED, detail="its wake never happened; reservation released"
            )
            with transaction.atomic():
                state = ListenState.objects.select_for_update().get(pk=c.state_id)
                if c.kind == WakeKind.NEW_POSTS and state.considered_through == c.through:
                    state.considered_through = c.previous_through  # those posts are still owed
                state.busy_until = None
                state.due_at = now
                state.version += 1
                state.save()
        post_system_message(
            spend.motion,
            f"@{spend.agent.name}'s reserved ${spend.reserved:.2f} was released: the wake it was "
            "reserved for never happened (its worker stopped before waking)",
            kind=Kind.WAKE,
            message_id=system_uuid("wakes-orphan", spend.pk),
            agent=spend.agent,
        )
    return released
