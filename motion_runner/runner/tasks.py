from __future__ import annotations

import logging
import os
import sys
import threading

from billiard.process import active_children
from celery import shared_task
from celery.signals import worker_ready, worker_shutting_down
from celery.worker import state as worker_state
from django.db import connection

from .reclaim import reap_orphans, reclaim_lapsed_turns, sweep_turns
from .stopping import stop_turns_running_here
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


@worker_shutting_down.connect(dispatch_uid="motion_runner.stop_turns_at_shutdown")
def stop_turns_at_shutdown(**kwargs) -> None:
    """A worker asked to stop (bin/serve's Ctrl-C, a deploy's SIGTERM) stops the turns it runs, as
    ■ does, while its pool still runs them: each ends within seconds with its lines kept and
    priced, instead of its harness (in a process group of its own) outliving a killed worker and
    spending on until the next worker's start reaps it. Asked from a thread of its own, with its own
    database connection: a solo pool runs the turn in the thread this signal interrupts."""
    asking = threading.Thread(target=ask_running_turns_to_stop, name="stop-at-shutdown", daemon=True)
    asking.start()
    asking.join(STOP_ASK_SECONDS)


STOP_ASK_SECONDS = 10.0


def ask_running_turns_to_stop() -> None:
    try:
        if stopped := stop_turns_running_here("the worker stopping"):
            log.warning("the worker is stopping: asked %d running turn(s) to stop: %s", len(stopped), stopped)
    except Exception:  # the worker must still stop: the next worker's start reaps what is left
        log.exception("could not stop the running turns as the worker stops")
    finally:
        connection.close()


# The worker this process runs, once it is ready (worker_ready's sender, its consumer): a process
# that never ran one (a test, a shell sending the signal) never leaves through the hatch below.
_worker: dict[str, object] = {}


@worker_ready.connect(dispatch_uid="motion_runner.remember_the_worker")
def remember_the_worker(sender=None, **kwargs) -> None:
    _worker["consumer"] = sender


@worker_shutting_down.connect(dispatch_uid="motion_runner.leave_at_once_when_idle")
def leave_at_once_when_idle(exitcode: int | None = 0, **kwargs) -> None:
    """A worker asked to stop with no task running or waiting in it leaves at once, its pool's
    children with it. Celery's own shutdown of an idle prefork worker on the filesystem broker took
    ~7 s (the blocking loop's 2 s drain, then billiard's pool handlers each finishing a 1 s sleep,
    joined twice), so bin/serve's Ctrl-C waited the grace out and killed (issue 43.6). Nothing is
    lost by leaving: no request is active or reserved, and a worker busy with a turn (stopped just
    above) shuts down Celery's way. Runs in the signal handler, on the thread that takes messages,
    so none arrives between the look and the exit."""
    if "consumer" not in _worker or worker_state.active_requests or worker_state.reserved_requests:
        return
    log.info("nothing running or waiting here: leaving at once")
    children = active_children()
    for child in children:
        child.terminate()  # a pool child's SIGTERM is the default again (celery's process_initializer)
    for child in children:
        child.join(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exitcode or 0)
