"""Leases instead of a long sweep: a turn whose runner is gone is ended within a minute.

A running turn's runner renews `Turn.lease_until` every few seconds (RUNNER_LEASE_SECONDS ÷ 3,
even while the harness is silent). A lease that lapsed means nobody is running the turn any more
(the worker was killed, its host lost, the database away longer than the runner waits), so the
sweep (beat, every 15 s) reclaims it: it claims the end with a conditional UPDATE (one sweep wins,
and a runner that was only slow finds its row ended and stops), kills the harness's processes on
this host (found by the turn marker every one of them carries in its environment, so a reused
pid is never touched), recovers from the transcript what the harness printed and nobody stored,
settles its cost, says once in the thread what happened, and hands the pair to its next turn.
"""

from __future__ import annotations

import logging
import socket
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..ingest.system_lines import post_system_message
from ..lib.ids import system_uuid
from ..models import Kind, Turn, TurnStatus
from ..sql import server
from ..sql.locks import is_lock_timeout, waiting_no_longer_than
from ..thread.bell import ring_on_commit
from ..transcripts.importer import recover_turn_lines
from .ending import _announce_end, cost_note, dead_turn_cost
from .process import kill_marked, marked_processes
from .routing import say_unserved_queues, send_turn
from .turns import start_next_queued, turn_marker

log = logging.getLogger(__name__)

LOST = "the worker running it was lost"
# After the database's own restart no lease is judged for this long (at least a lease): a runner
# retries the database every 2 s at most while it is away (runner/turn_run.py), then renews.
RESTART_GRACE_SECONDS = 10.0
# The sweep waits no longer than this for a lock (a frozen runner's open write transaction holds
# the lines and the row it would take): it gives that turn up until its next round, by when
# PostgreSQL has ended the frozen transaction (runner/turn_run.py WRITE_IDLE_SECONDS).
SWEEP_LOCK_SECONDS = 2.0


def lapsed_turns(now: datetime):
    lease = timedelta(seconds=settings.RUNNER_LEASE_SECONDS)
    return Turn.objects.filter(status=TurnStatus.RUNNING).filter(
        Q(lease_until__lt=now)
        # Claimed before leases existed: its heartbeat is the lease.
        | Q(lease_until__isnull=True, heartbeat_at__lt=now - lease)
    )


def database_up_for() -> float | None:
    """Seconds since the database server started, PostgreSQL only (motion_runner/sql/server.py)."""
    return server.up_for(connection)


def reclaim_lapsed_turns(now: datetime | None = None) -> int:
    """End every running turn whose lease lapsed; returns how many this call ended. Not within a
    lease of the database's own restart: every runner lost its lease while it was away, and each
    renews it within seconds of its return (runner/turn_run.py), so a lease that lapsed then says
    nothing of its worker."""
    now = now or timezone.now()
    up_for = database_up_for()
    if up_for is not None and up_for < max(settings.RUNNER_LEASE_SECONDS, RESTART_GRACE_SECONDS):
        return 0
    ended = 0
    for turn in lapsed_turns(now).select_related("motion", "agent"):
        if end_lost_turn(turn, now):
            ended += 1
    return ended


def kill_lost_processes(turn: Turn) -> str:
    """Kill what the lost runner left running, if it ran here; a sentence for the thread."""
    if turn.runner_host and turn.runner_host != socket.gethostname():
        # Its processes are on another host: that host's worker reaps them when it starts
        # (reap_orphans); this one cannot see them.
        return f"its processes on {turn.runner_host} are stopped when a worker starts there"
    killed = kill_marked({turn_marker(turn.pk)}, {turn.pgid} if turn.pgid else set())
    return f"stopped {len(killed)} process(es) it left running" if killed else ""


def settle_lost_turn_cost(turn: Turn) -> None:
    """A lost turn is settled at what its result line shows, if the runner stored that line
    before it died, else at what its transcript (lines recovered first) or streamed usage show
    (ending.dead_turn_cost); the ledger follows through turn_finished, like any ended turn."""
    Turn.objects.filter(pk=turn.pk).update(**dead_turn_cost(turn))


def recover_lines(turn: Turn) -> int:
    """What its harness printed and nobody stored, from its transcript (none if unreadable). A
    lock wait past SWEEP_LOCK_SECONDS is raised: the caller tries again next round."""
    try:
        return recover_turn_lines(turn)
    except DatabaseError as exc:
        if is_lock_timeout(exc):
            raise
        log.exception("turn %s: could not read its transcript", turn.pk)
    except Exception:  # a transcript we cannot read must not keep the turn from ending
        log.exception("turn %s: could not read its transcript", turn.pk)
    return 0


def end_lost_turn(turn: Turn, now: datetime) -> bool:
    """Recover, claim, kill, recover, settle, say, hand on. False if someone else ended it first,
    or if a lock kept the sweep waiting (a runner frozen in its write transaction holds the
    lines it wrote uncommitted): the turn stays running, and the next round tries again."""
    try:
        with waiting_no_longer_than(connection, SWEEP_LOCK_SECONDS):
            # First, while the turn is still running: if this waits on a frozen runner's
            # transaction, nothing is claimed yet and the next round does it all again.
            recovered = recover_lines(turn)
            won = Turn.objects.filter(
                pk=turn.pk, status=TurnStatus.RUNNING, lease_until=turn.lease_until
            ).update(status=TurnStatus.FAILED, ended_at=now, error=LOST, activity="")
            if won != 1:
                return False
            ring_on_commit(turn.motion_id)  # its ■ goes at once
            notes = [kill_lost_processes(turn)]
            try:  # what it printed since, now that its processes are stopped
                recovered += recover_lines(turn)
            except DatabaseError:  # still held: the periodic import stores it, with no turn
                log.warning("turn %s: its last lines waited on a lock; left to the import", turn.pk)
    except DatabaseError as exc:
        if not is_lock_timeout(exc):
            raise
        log.warning("turn %s: the sweep waited on a lock (%s); it tries again next round", turn.pk, exc)
        return False
    if recovered:
        notes.append(f"recovered {recovered} line(s) from its transcript")
    settle_lost_turn_cost(turn)
    turn.refresh_from_db()
    notes.append(cost_note(turn))
    detail = "; ".join(note for note in notes if note)
    error = f"{LOST} (its lease lapsed){'; ' + detail if detail else ''}"
    Turn.objects.filter(pk=turn.pk).update(error=error)
    post_system_message(
        turn.motion,
        f"@{turn.agent.name}'s turn failed: {error}",
        message_id=system_uuid("turn-error", turn.pk),
        turn=turn,
        kind=Kind.ERROR,
    )
    log.warning("turn %s: %s", turn.pk, error)
    turn.refresh_from_db()
    _announce_end(turn)
    start_next_queued(turn.motion_id, turn.agent_id)
    return True


def reap_orphans() -> list[int]:
    """Kill harness processes on this host whose turn is no longer running (its runner was lost
    and the turn ended elsewhere, or the worker restarted). Run when a worker starts and by the
    sweep."""
    ours: dict[str, int] = {}
    for marker in marked_processes().values():
        turn_id = marker.rsplit("/", 1)[-1]
        if turn_id.isdigit() and marker == turn_marker(int(turn_id)):  # this database's turns only
            ours[marker] = int(turn_id)
    if not ours:
        return []
    running = set(
        Turn.objects.filter(pk__in=set(ours.values()), status=TurnStatus.RUNNING).values_list("pk", flat=True)
    )
    orphaned = {marker for marker, turn_id in ours.items() if turn_id not in running}
    return kill_marked(orphaned) if orphaned else []


def resend_waiting_turns(now: datetime) -> int:
    """Queued turns whose pair is free but that no worker started within a minute (the broker
    lost the task; RUNNER_RESEND_AFTER_SECONDS): sent again, at most once a minute each, the re-send claimed by a conditional
    UPDATE on `resent_at` so two sweeps never both send it. A task delivered twice still runs the
    turn once (the claim is a conditional UPDATE on status)."""
    quiet = now - timedelta(seconds=settings.RUNNER_RESEND_AFTER_SECONDS)
    waiting = Turn.objects.filter(status=TurnStatus.QUEUED, queued_at__lt=quiet).filter(
        Q(resent_at__isnull=True) | Q(resent_at__lt=quiet)
    )
    resent = 0
    for pk, motion_id, agent_id, last_sent in waiting.values_list("pk", "motion_id", "agent_id", "resent_at"):
        if Turn.objects.filter(motion_id=motion_id, agent_id=agent_id, status=TurnStatus.RUNNING).exists():
            continue  # it waits for the running one, which starts it when it ends
        if Turn.objects.filter(pk=pk, status=TurnStatus.QUEUED, resent_at=last_sent).update(resent_at=now):
            transaction.on_commit(lambda pk=pk: send_turn(pk), robust=True)
            resent += 1
    return resent


def sweep_turns(now: datetime | None = None) -> dict[str, int]:
    """The runner's safety net (beat, every 15 s): lost turns ended, orphans reaped, waiting
    turns re-sent."""
    now = now or timezone.now()
    lost = reclaim_lapsed_turns(now)
    reaped = len(reap_orphans())
    resent = resend_waiting_turns(now)
    return {"lost": lost, "reaped": reaped, "resent": resent, "unserved": say_unserved_queues(now)}
