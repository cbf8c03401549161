"""Turns run where their sessions live.

An agent (or a Motion) may name the Celery queue its turns go to (`turn_queue`), so only the
worker on the machine that holds its sessions and workspace runs them: memory-lane runs a
container per agent, and per Motion for some, each with a worker consuming its own queue
(README, "Adding it to memory-lane"). A Motion's queue wins over its agent's; with neither, the
task's route (CELERY_TASK_ROUTES: the `turns` queue) decides.

A turn sent to a queue no worker consumes would wait silently: the sweep asks the workers which
queues they consume and says so in the thread, once per turn, within a minute.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from ..ingest.system_lines import post_system_message
from ..lib.ids import system_uuid
from ..lib.tasks import send_when_broker_answers, task_named
from ..models import Kind, Turn, TurnStatus

log = logging.getLogger(__name__)

RUN_TURN = "motion_runner.run_turn"
# A queued turn on a named queue that has not started within this long is looked into.
UNSERVED_AFTER = timedelta(seconds=30)


def queue_of(turn: Turn) -> str:
    """The queue this turn's task goes to; "" for the task's own route."""
    return (turn.motion.turn_queue or turn.agent.turn_queue or "").strip()


def send_turn(turn: Turn | int, *, countdown: float = 0) -> None:
    """Send a turn's task to its queue (call it on commit); if the broker cannot take it now, it
    is sent again as soon as the broker answers (lib/tasks.send_when_broker_answers)."""
    if not isinstance(turn, Turn):
        turn = Turn.objects.select_related("motion", "agent").get(pk=turn)
    options: dict = {"countdown": countdown} if countdown > 0 else {}
    if queue := queue_of(turn):
        options["queue"] = queue
    send_when_broker_answers(RUN_TURN, turn.pk, **options)


def consumed_queues(timeout: float = 1.0) -> set[str] | None:
    """The queues the live workers consume; None when none answered in time (no worker, or the
    broker is away: nothing can be said for sure)."""
    try:
        answers = task_named(RUN_TURN).app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception:  # the broker is away: the resend and the lease say what matters then
        log.warning("could not ask the workers which queues they consume", exc_info=True)
        return None
    return {q["name"] for queues in answers.values() for q in queues or [] if isinstance(q, dict)}


def say_unserved_queues(now: datetime, consumed: set[str] | None = None) -> int:
    """Queued turns on a named queue, waiting past UNSERVED_AFTER, whose queue no worker consumes:
    said in the thread, once per turn. Returns how many were said."""
    waiting = list(
        Turn.objects.filter(status=TurnStatus.QUEUED, queued_at__lt=now - UNSERVED_AFTER)
        .select_related("motion", "agent")
        .order_by("pk")[:200]
    )
    waiting = [turn for turn in waiting if queue_of(turn)]
    if not waiting:
        return 0
    if consumed is None:
        consumed = consumed_queues()
        if consumed is None:
            return 0
    said = 0
    for turn in waiting:
        queue = queue_of(turn)
        if queue in consumed:
            continue
        if post_system_message(
            turn.motion,
            f"@{turn.agent.name}'s turn is waiting on the queue “{queue}”, which no worker consumes: "
            f"start one on the machine that holds its sessions (celery -A motion_runner worker -Q {queue}).",
            kind=Kind.WAKE,
            message_id=system_uuid("unserved-queue", turn.pk),
            turn=turn,
            agent=turn.agent,
        ):
            said += 1
    return said
