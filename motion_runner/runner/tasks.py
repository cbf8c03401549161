from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from .reclaim import reap_orphans, reclaim_lapsed_turns, sweep_turns
from .turns import execute_turn

log = logging.getLogger(__name__)


@shared_task(name="motion_runner.run_turn", ignore_result=True, acks_late=False)
def run_turn(turn_id: int) -> None:
    """Run one queued Turn.

    Never retried: a launch spends money, and a turn that reached its harness must not be
    launched twice. Delivering the task twice is harmless (the claim is a conditional
    UPDATE on status='queued'); a turn that could not be claimed because its (Motion,
    agent) pair is busy is started by that turn when it ends, and sweep_turns re-sends any
    that a lost worker left waiting. A worker lost mid-turn is found by its lapsed lease.
    """
    execute_turn(turn_id)


@shared_task(name="motion_runner.sweep_turns", ignore_result=True)
def sweep_turns_task() -> dict[str, int]:
    """Periodic (beat, every 15 s): lapsed leases, orphans, waiting turns. Idempotent (every end
    is a conditional UPDATE), so no retries: the next tick is the retry."""
    return sweep_turns()


@shared_task(name="motion_runner.reclaim_turns", ignore_result=True)
def reclaim_turns_task() -> int:
    """Periodic (beat, every 2 s): end the turns whose lease lapsed, so a lost worker is noticed
    within its lease and this period. Idempotent; no retries: the next beat is the retry."""
    return reclaim_lapsed_turns()


@worker_ready.connect(dispatch_uid="motion_runner.reap_orphans")
def reap_orphans_at_start(**kwargs) -> None:
    """A worker (re)starting on a host kills the harness processes a lost worker left here."""
    try:
        if killed := reap_orphans():
            log.warning("killed %d harness process(es) left by a lost worker: %s", len(killed), killed)
    except Exception:  # the worker must start even if the database is not there yet
        log.exception("could not reap orphaned harness processes")
