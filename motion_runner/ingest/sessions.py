"""Session routing: which Motion (and agent) a harness session's lines belong to.

Split out of ingest.py (issue 12, "What to build" 5): the writer, the stream and the runner claim
sessions here; the record binding is told of every claim (memory-lane's MoodSession).
"""

from __future__ import annotations

from django.utils import timezone

from ..models import Agent, Motion, MotionSession, UnclaimedSession
from ..record import binding


class SessionConflict(Exception):
    """A session id already claimed by another Motion: events are never re-routed."""


def claim_session(
    session_id: str,
    motion: Motion,
    agent: Agent | None,
    harness: str,
    *,
    known: MotionSession | None = None,
) -> MotionSession:
    """`known`: the session as the caller just read it (the stream API reads it to check its
    owner), which spares a second read; its claim is then conditional on still being `motion`'s."""
    if known is not None and known.session_id == session_id and known.motion_id == motion.pk:
        if not MotionSession.objects.filter(pk=session_id, motion_id=motion.pk).update(
            last_used_at=timezone.now()
        ):
            raise SessionConflict(f"session {session_id} moved away from Motion {motion.pk!r}")
        binding().claim(session_id, motion)
        return known
    session, created = MotionSession.objects.get_or_create(
        session_id=session_id,
        defaults={"motion": motion, "agent": agent, "harness": harness},
    )
    if session.motion_id != motion.pk:
        raise SessionConflict(
            f"session {session_id} belongs to Motion {session.motion_id!r}, not {motion.pk!r}"
        )
    if created:
        # It no longer waits in the admin's inbox of unclaimed sessions.
        UnclaimedSession.objects.filter(pk=session_id).delete()
    else:
        MotionSession.objects.filter(pk=session_id).update(last_used_at=timezone.now())
    binding().claim(session_id, motion)
    return session


def latest_session(motion: Motion, agent: Agent) -> str | None:
    return (
        MotionSession.objects.filter(motion=motion, agent=agent, harness=agent.harness, retired_at=None)
        .order_by("-last_used_at")
        .values_list("session_id", flat=True)
        .first()
    )
