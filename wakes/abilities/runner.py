"""Acting on a finished turn's ability: at most once, with bounded retries, always said in the thread.

1. `on_turn_finished` (turn_finished receiver): a turn that carries an ability gets one
   AbilityRun row (the OneToOne makes a second delivery a no-op). A turn that did not FINISH,
   or whose agent stayed silent, is recorded as skipped and nothing is done.
2. `perform` (the `wakes.run_ability` task): claims the row with a conditional UPDATE (two
   workers racing: one wins), acts, and records the outcome; the thread gets one final line
   either way — what was done, with a link, or why not (the reply itself stays in the thread).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.lib.tasks import task_named
from motion_runner.models import EndedBy, Kind, Turn, TurnStatus

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..models import AbilityRun
from . import get_ability
from .base import AbilityError

log = logging.getLogger(__name__)

# The task that acts on a finished turn's ability (wakes/tasks.py), by its name: motion_runner/lib/tasks.py.
RUN_ABILITY = "wakes.run_ability"
Status = AbilityRun.Status


def on_turn_finished(sender, turn: Turn, **kwargs) -> AbilityRun | None:
    spec = turn.ability or {}
    if not spec:
        return None
    ability = get_ability(spec.get("kind"))
    if ability is None:
        say(
            turn,
            f"the runner does not know the ability {spec.get('kind')!r}; nothing was done",
            "final",
            Kind.ERROR,
        )
        return None
    if turn.status != TurnStatus.FINISHED and turn.ended_by in (
        EndedBy.SESSION_GONE,
        EndedBy.SESSION_ELSEWHERE,
    ):
        # Its session was gone (or is on another machine) and the runner woke it again: the new
        # turn carries the ability.
        return None
    if turn.status != TurnStatus.FINISHED:
        run, _ = AbilityRun.objects.get_or_create(
            turn=turn,
            defaults={"kind": ability.kind, "status": Status.SKIPPED, "error": f"the turn {turn.status}"},
        )
        say(
            turn,
            f"nothing was posted on {ability.target(spec)}: @{turn.agent.name}'s turn {turn.status.replace('_', ' ')}",
            "final",
            Kind.ERROR,
        )
        return run
    payload = ability.payload(turn)
    run, created = AbilityRun.objects.get_or_create(
        turn=turn,
        defaults={
            "kind": ability.kind,
            "payload": payload or "",
            "status": Status.PENDING if payload else Status.SKIPPED,
            "error": "" if payload else "the agent stayed silent",
        },
    )
    if created and payload:
        transaction.on_commit(lambda: task_named(RUN_ABILITY).delay(turn.pk))
    return run


def claimable(now) -> Q:
    # A RUNNING row whose lease ran out belongs to a lost worker: its next try checks the wiki
    # for its own edit first (attempt > 1), so taking it over cannot post twice.
    return (
        Q(status=Status.PENDING)
        | Q(status=Status.WAITING, next_attempt_at__lte=now)
        | Q(status=Status.RUNNING, claimed_until__lt=now)
    )


def claim(turn_id: int) -> AbilityRun | None:
    now = timezone.now()
    lease = now + timedelta(seconds=settings.ABILITY_CLAIM_LEASE_SECONDS)
    claimed = AbilityRun.objects.filter(claimable(now), turn_id=turn_id).update(
        status=Status.RUNNING, attempts=F("attempts") + 1, claimed_until=lease, updated_at=now
    )
    if claimed != 1:
        return None
    return AbilityRun.objects.select_related("turn__agent", "turn__motion").get(turn_id=turn_id)


def finish(run: AbilityRun, **fields) -> bool:
    """Record the outcome, only while the claim is still ours."""
    fields.setdefault("claimed_until", None)
    return bool(
        AbilityRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempts=run.attempts).update(
            updated_at=timezone.now(), **fields
        )
    )


def sweep(now=None) -> int:
    """Re-send the runs a lost task or worker left behind (a broker restart, a dead worker):
    pending for over a minute, waiting and due, or running past their lease. Sending one
    twice is harmless (the claim), so this may be generous."""
    run_ability = task_named(RUN_ABILITY)
    now = now or timezone.now()
    stale = Q(status=Status.PENDING, created_at__lt=now - timedelta(seconds=60)) | claimable(now) & ~Q(
        status=Status.PENDING
    )
    turn_ids = list(AbilityRun.objects.filter(stale).order_by("pk").values_list("turn_id", flat=True)[:500])
    for turn_id in turn_ids:
        run_ability.delay(turn_id)
    return len(turn_ids)


def backoff(attempt: int) -> float:
    return min(settings.ABILITY_RETRY_BASE_SECONDS * 2 ** (attempt - 1), settings.ABILITY_RETRY_MAX_SECONDS)


def perform(turn_id: int) -> AbilityRun | None:
    run = claim(turn_id)
    if run is None:
        return None  # done, failed, not due yet, or another worker has it
    turn, ability = run.turn, get_ability(run.kind)
    spec = turn.ability or {}
    target = ability.target(spec) if ability else spec.get("kind")
    try:
        if ability is None:
            raise AbilityError(f"unknown ability {run.kind!r}", permanent=True)
        done = ability.perform(turn, spec, run.payload, attempt=run.attempts)
    except AbilityError as exc:
        left = settings.ABILITY_MAX_ATTEMPTS - run.attempts
        if not exc.permanent and left > 0:
            wait = max(exc.retry_after or 0.0, backoff(run.attempts))
            if finish(
                run,
                status=Status.WAITING,
                error=str(exc)[:2000],
                next_attempt_at=timezone.now() + timedelta(seconds=wait),
            ):
                if run.attempts == 1:
                    say(
                        turn,
                        f"could not post @{turn.agent.name}'s reply on {target} yet ({exc}); trying again in {wait:.0f} s, up to {left} more times",
                        "waiting",
                        Kind.TEXT,
                    )
                transaction.on_commit(lambda: task_named(RUN_ABILITY).apply_async((turn_id,), countdown=wait))
            return refreshed(run)
        give_up(
            run, turn, target, str(exc) if exc.permanent else f"{exc} (gave up after {run.attempts} tries)"
        )
        return refreshed(run)
    except Exception as exc:  # a bug must still end in a clear line, not a run stuck "running"
        log.exception("ability %s of turn %s failed", run.kind, turn_id)
        give_up(run, turn, target, f"the runner failed ({type(exc).__name__}: {exc})")
        return refreshed(run)
    if finish(run, status=Status.DONE, result=done.result, error=""):
        say(turn, done.line, "final", Kind.TEXT)
    return refreshed(run)


def give_up(run: AbilityRun, turn: Turn, target: str, why: str) -> None:
    if finish(run, status=Status.FAILED, error=why[:2000]):
        say(
            turn,
            f"could not post @{turn.agent.name}'s reply on {target}: {why}. The reply stays here in the thread.",
            "final",
            Kind.ERROR,
        )


def say(turn: Turn, text: str, key: str, kind: str) -> None:
    """One line per turn and key (stable id): the final outcome is said once, whoever says it."""
    post_system_message(
        turn.motion, text, kind=kind, message_id=system_uuid("ability", turn.pk, key), turn=turn
    )


def refreshed(run: AbilityRun) -> AbilityRun:
    run.refresh_from_db()
    return run
