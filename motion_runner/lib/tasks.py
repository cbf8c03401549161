"""Celery tasks by their registered name, for the modules below the one that declares a task.

A task module imports the code it runs (runner/tasks.py imports runner/turns.py); the code that
queues the next run (turns.py queueing a turn) would have to import the task module back, a
cycle. It asks Celery's own registry instead: the name is the task's public id anyway (it stays
byte for byte), and the object found is the registered task itself, so `.delay`, `.apply_async`
and a test's patch of either behave exactly as on the imported name.
"""

from __future__ import annotations

import logging
import threading
import time

from celery import Task, current_app

log = logging.getLogger(__name__)


def task_named(name: str) -> Task:
    """The registered task (its module was imported by its app's AppConfig.ready)."""
    return current_app.tasks[name]


# A task whose send failed (the broker away) is tried again by one thread of this process, every
# RESEND_EVERY_SECONDS at most, for up to RESEND_FOR_SECONDS: it goes out as soon as the broker
# answers, not after the sweep's minute. Past that (or if this process dies first) the database
# row that owes it is the record, and the sweeps send it.
RESEND_EVERY_SECONDS = 0.5
RESEND_FOR_SECONDS = 120.0

_unsent: list[tuple[str, tuple, float]] = []
_unsent_lock = threading.Lock()
_resender: threading.Thread | None = None


def _send(name: str, args: tuple, options: dict) -> None:
    task = task_named(name)
    if options:
        task.apply_async(args, **options)
    else:
        task.delay(*args)


def send_when_broker_answers(name: str, *args, **options) -> bool:
    """`task_named(name).apply_async(args, **options)` (a queue, a countdown), or, if the broker
    cannot take it now, the same again as soon as it can (a thread of this process). True when
    sent now. Never raises: the caller's post or turn has already happened and must not fail for
    the broker."""
    try:
        _send(name, args, options)
        return True
    except Exception as exc:
        log.warning("could not send %s%r (%s); sending it again once the broker answers", name, args, exc)
    global _resender
    with _unsent_lock:
        _unsent.append((name, args, options, time.monotonic() + RESEND_FOR_SECONDS))
        if _resender is None or not _resender.is_alive():
            _resender = threading.Thread(target=_resend_until_sent, name="task-resender", daemon=True)
            _resender.start()
    return False


def _resend_until_sent() -> None:
    while True:
        with _unsent_lock:
            if not _unsent:
                return
            name, args, options, give_up_at = _unsent[0]
        try:
            _send(name, args, options)
        except Exception:
            if time.monotonic() < give_up_at:
                time.sleep(RESEND_EVERY_SECONDS)
                continue
            log.error("gave up sending %s%r: the sweep sends what is still owed", name, args)
        else:
            log.warning("sent %s%r once the broker answered", name, args)
        with _unsent_lock:
            _unsent.pop(0)
