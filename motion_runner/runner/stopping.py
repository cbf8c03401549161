"""A person stops an agent's turns in a Motion; a scram stops every agent everywhere.

Running turns get the flag and a ring (runner/stop_bell.py): their runner kills the process
group, settles the cost and says who stopped it. Queued turns never start: they end here, with
the same line. `turns_stopped` tells wakes/ to let go of what was owed before the stop (its
mentions, the posts the loop had not considered yet).
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..ingest.system_lines import post_system_message
from ..lib.ids import system_uuid
from ..models import Agent, Kind, Motion, Scram, Turn, TurnStatus
from ..signals import scram_changed, turns_stopped
from ..thread.bell import ring_on_commit
from .ending import end_queued
from .process import marked_processes
from .stop_bell import ring_stop
from .turns import turn_marker

log = logging.getLogger(__name__)


class ScramHeld(Exception):
    """Raised by `raise_scram` when one already holds."""


def stop_turns(motion: Motion, by: str, *, agents: list[Agent] | None = None, why: str = "") -> list[Turn]:
    """Stop the Motion's running and queued turns (of `agents`, else of all): returns them."""
    at = timezone.now()
    stopped_by = f"{by} ({why})" if why else by
    live = Turn.objects.filter(motion=motion, status__in=(TurnStatus.RUNNING, TurnStatus.QUEUED))
    if agents is not None:
        live = live.filter(agent__in=agents)
    with transaction.atomic():
        turns = list(live.select_related("agent", "motion").select_for_update(of=("self",)))
        running = [turn.pk for turn in turns if turn.status == TurnStatus.RUNNING]
        Turn.objects.filter(pk__in=running, stop_requested_at__isnull=True).update(
            stop_requested_at=at, stopped_by=stopped_by[:200]
        )
        ring_stop(running)
        ring_on_commit(motion.pk)  # the page shows the turns stopping
    for turn in turns:
        if turn.status == TurnStatus.QUEUED:
            end_queued(turn, stopped_by)
    names = sorted({turn.agent.name for turn in turns} | {agent.name for agent in agents or []})
    for _receiver, error in turns_stopped.send_robust(
        sender=Turn, motion=motion, agent_names=names if agents is not None else None, by=by, at=at
    ):
        if isinstance(error, Exception):
            log.error("a turns_stopped receiver failed in %s: %r", motion.pk, error)
    return turns


def stop_turns_running_here(by: str) -> list[int]:
    """The running turns whose harness runs on this host (its marked processes): asked to stop as
    ■ asks (the flag and the ring), so each runner ends its turn with what was drained kept and
    priced, within seconds, and its harness, in a process group of its own, is not left behind
    when the worker goes. Nothing is let go (no `turns_stopped`): the mentions they answer were
    answered, and queued turns wait for the next worker."""
    markers = set(marked_processes().values())
    ours = [int(m.rsplit("/", 1)[-1]) for m in markers if m.rsplit("/", 1)[-1].isdigit()]
    ours = [turn_id for turn_id in ours if turn_marker(turn_id) in markers]  # this database's only
    if not ours:
        return []
    with transaction.atomic():
        running = list(
            Turn.objects.filter(pk__in=ours, status=TurnStatus.RUNNING, stop_requested_at__isnull=True)
            .select_for_update()
            .values_list("pk", "motion_id")
        )
        Turn.objects.filter(pk__in=[pk for pk, _ in running]).update(
            stop_requested_at=timezone.now(), stopped_by=by[:200]
        )
        ring_stop([pk for pk, _ in running])
        for motion_id in {motion_id for _, motion_id in running}:
            ring_on_commit(motion_id)
    return [pk for pk, _ in running]


def stop_for_host(motion: Motion, agent_name: str, by: str) -> list[Turn]:
    """`signals.host_stop_pressed` (heard in apps.py): the host's page stopped this agent (its own
    check of who may stop is done: memory-lane writes the row only for an SSH-key device)."""
    agent = Agent.objects.filter(name__iexact=agent_name).first()
    if agent is None:
        return []
    return stop_turns(motion, by or "someone", agents=[agent], why="■ on memory-lane's page")


def raise_scram(by: str, reason: str) -> Scram:
    """Hold everything: no wake, no queued turn starts, every running turn is stopped."""
    try:
        with transaction.atomic():
            scram = Scram.objects.create(reason=reason, raised_by=by)
    except IntegrityError as exc:
        raise ScramHeld("a scram already holds") from exc
    tell_scram(scram, holds=True, by=by)
    say_in_every_thread(
        f"⛔ Scram raised by {by}: {reason} — every agent is stopped and nothing wakes until it is lifted.",
        "scram-raised",
        scram,
    )
    for motion in Motion.objects.filter(turns__status__in=(TurnStatus.RUNNING, TurnStatus.QUEUED)).distinct():
        stop_turns(motion, by, why=f"scram: {reason}"[:150])
    return scram


def lift_scram(by: str) -> Scram | None:
    scram = Scram.holding()
    if scram is None:
        return None
    lifted = Scram.objects.filter(pk=scram.pk, holds=True).update(
        holds=False, lifted_by=by, lifted_at=timezone.now()
    )
    scram.refresh_from_db()
    tell_scram(scram, holds=False, by=by)
    if lifted:
        say_in_every_thread(f"Scram lifted by {by}: agents wake again.", "scram-lifted", scram)
    return scram


def say_in_every_thread(text: str, what: str, scram: Scram) -> None:
    """One line in every Motion (each thread's readers hear it at once, its banner with it),
    under an id of its own per Motion: said once however often it is retried."""
    for motion in Motion.objects.all().only("pk"):
        post_system_message(motion, text, kind=Kind.TEXT, message_id=system_uuid(what, scram.pk, motion.pk))


def tell_scram(scram: Scram, *, holds: bool, by: str) -> None:
    """`signals.scram_changed`: a receiver that fails (the host's record) is logged, never raised:
    the scram here holds or is lifted whatever another page shows."""
    for _receiver, error in scram_changed.send_robust(sender=Scram, scram=scram, holds=holds, by=by):
        if isinstance(error, Exception):
            log.error("the scram could not be shown elsewhere: %r", error)


def scram_from_host(holds: bool, by: str, reason: str, refused: str = "", ref: str = "") -> Scram | None:
    """`signals.host_scram_pressed`: the host's own page raised or lifted its scram (memory-lane's
    AZ5: its admin's signed request is its own check of who may). Raising while one holds, or
    lifting none, changes nothing. A row the binding found not written by one who may
    (`refused`) changes nothing either, and every thread says so, with who wrote it and why."""
    if refused:
        what = "AZ5 (scram)" if holds else "lift of the scram"
        state = "holds" if Scram.holding() else "is not raised"
        text = f"Not obeyed: a {what} written on memory-lane's page by {by or 'nobody named'} — {refused}. The scram here {state}, as before."
        for motion in Motion.objects.all().only("pk"):
            post_system_message(
                motion, text, kind=Kind.TEXT, message_id=system_uuid("host-scram-refused", ref, motion.pk)
            )
        return None
    if not holds:
        return lift_scram(by or "memory-lane")
    try:
        return raise_scram(by or "memory-lane", reason or "AZ5 on memory-lane's page")
    except ScramHeld:
        return None
