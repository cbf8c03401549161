"""Sessions: which Motion (and agent) a harness session's lines belong to, and who may claim it.

Every question of how a session is claimed is answered here, for every producer: the runner's
init line (`claim_session`), a stream post's claim of its own session with what the post reads of
it next (`claim_and_read`; on PostgreSQL one statement, `sql/motion_sessions.py`), a key's claim
that may move its agent's session between Motions (`claim_for`, `move_session`), the lines a post
may write for sessions other than its own (`SessionGuard`), and the importer's read of a file's
session (`claimed_session`). The record binding is told of every claim (memory-lane's MoodSession).
Which session a turn resumes is another question: `runner/resume.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils import timezone

from ..conf import app_settings
from ..harnesses.base import Event, EventKind
from ..models import Agent, Kind, Message, Motion, MotionSession, Source, Turn, UnclaimedSession
from ..record import binding
from ..sql import motion_sessions
from .fit import BadEvent
from .system_lines import post_system_message

log = logging.getLogger(__name__)

# The sources a session fed by the runner or the stream API has Messages of.
RUNNER_SOURCES = (Source.RUNNER, Source.API)


class SessionConflict(Exception):
    """A session id already claimed by another Motion: events are never re-routed."""


class SessionRefused(Exception):
    """This producer may not claim the session (another agent's, a Motion it may not read, one
    waiting in the admin's inbox): nothing of the post is written (the API answers 403)."""


class SessionRaced(Exception):
    """The session moved again between a move and the claim: the producer sends it again (409)."""


# Whether a session may move from the first Motion to the second (the API asks the access seam).
MayMove = Callable[[Motion, Motion], bool]


def spool_path(session_id: str) -> Path:
    """Where the lines of a session no Motion has claimed yet wait (memory_lane/remote.py)."""
    return Path(app_settings.INGEST_SPOOL_DIR) / f"{session_id}.jsonl"


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
    """The session the pair's next turn resumes: never a retired one, nor one a turn ran in that
    read words taken back while it ran (named by its harness after the take-back: retract.py)."""
    held_taken_back = Turn.objects.filter(session_id=OuterRef("pk"), read_taken_back=True)
    return (
        MotionSession.objects.filter(motion=motion, agent=agent, harness=agent.harness, retired_at=None)
        .exclude(Exists(held_taken_back))
        .order_by("-last_used_at")
        .values_list("session_id", flat=True)
        .first()
    )


def session_moved_text(
    agent: Agent, session_id: str, *, to: Motion | None = None, came_from: Motion | None = None
) -> str:
    if to is not None:
        return f"@{agent.name}'s session {session_id} moved to Motion {to.slug!r}: a turn of it was posted there."
    assert came_from is not None
    return f"@{agent.name}'s session {session_id} moved here from Motion {came_from.slug!r}."


def claim_for(
    session_id: str, motion: Motion, agent: Agent, harness: str, *, may_move: MayMove
) -> MotionSession:
    """Claim a session for (motion, agent): the agent's own session in another Motion moves here
    (said in both threads); another agent's session is refused, and so is a move out of a Motion
    `may_move` refuses (a session an admin assigned to a members-only Motion would otherwise
    carry its transcript, and every later line, wherever the key posts it). A session moves only
    with the consent of whose it is: one of no agent (a person's terminal an admin assigned) is
    claimed where it is, never moved by a key; only an admin moves it. `motion` is one the
    caller checked the agent belongs to."""
    existing = MotionSession.objects.select_related("motion").filter(pk=session_id).first()
    if existing is not None and existing.agent_id not in (None, agent.pk):
        raise SessionRefused(f"Session {session_id} belongs to another agent.")
    if existing is not None and existing.motion_id != motion.pk:
        if not may_move(existing.motion, motion):
            raise SessionRefused(
                f"Session {session_id} belongs to a Motion this key may not read or is not an agent of."
            )
        if existing.agent_id != agent.pk:
            raise SessionRefused(
                f"Session {session_id} is no agent's (an admin assigned it to its Motion); only an admin moves it."
            )
        move_session(existing, motion, agent)
    if existing is None:
        waiting = UnclaimedSession.objects.filter(pk=session_id).values_list("agent_id", "path").first()
        if waiting and (waiting[0] != agent.pk or waiting[1] == str(spool_path(session_id))):
            # Found by the importer, reported by another key, or spooled from memory-lane's
            # watcher (whose `username` is an OS user's, whatever agent shares the name): its
            # transcript is not this key's to take. The admin assigns it from the inbox.
            raise SessionRefused(
                f"Session {session_id} waits in the admin's inbox; only an admin assigns it."
            )
    unmoved = existing if existing is not None and existing.motion_id == motion.pk else None
    try:
        return claim_session(session_id, motion, agent, harness, known=unmoved)
    except SessionConflict as exc:  # moved again between the move and the claim
        raise SessionRaced(f"{exc}; send the batch again.") from exc


def move_session(session: MotionSession, motion: Motion, agent: Agent) -> bool:
    """Re-claim `session` for `motion`; True when this call moved it (a race moves it once)."""
    came_from = session.motion
    with transaction.atomic():
        moved = MotionSession.objects.filter(pk=session.pk, motion_id=came_from.pk, agent=agent).update(
            motion=motion, agent=agent, last_used_at=timezone.now()
        )
        if moved:
            log.info("session %s of @%s moved from %s to %s", session.pk, agent.name, came_from.pk, motion.pk)
            post_system_message(
                came_from, session_moved_text(agent, session.pk, to=motion), kind=Kind.TEXT, agent=None
            )
            post_system_message(
                motion, session_moved_text(agent, session.pk, came_from=came_from), kind=Kind.TEXT, agent=None
            )
    return bool(moved)


def claim_and_read(
    session_id: str, motion: Motion, agent: Agent, harness: str, *, may_move: MayMove
) -> list[Any]:
    """`claim_for`, and what a post reads of the session next: [the raw line of its newest
    recorded turn end] or [] (the adapter's running total). A session already this Motion's, the
    agent's own or no one's, is claimed by a conditional UPDATE as claim_session does with a fresh
    read (a re-post's common case); on PostgreSQL the UPDATE and the read are one statement
    (motion_runner/sql/motion_sessions.py). Anything else (a new session, a move, another
    agent's) goes through claim_for."""
    claimed, newest_end = motion_sessions.claim_and_read(
        connections[router.db_for_write(MotionSession)],
        session_id=session_id,
        motion_id=motion.pk,
        agent_id=agent.pk,
        now=timezone.now(),
        end_kind=Kind.TURN_END,
    )
    if claimed:
        binding().claim(session_id, motion)
    else:
        claim_for(session_id, motion, agent, harness, may_move=may_move)
    return newest_end


@dataclass
class SessionGuard:
    """The sessions a key's post may write lines of: its own, and those of its agent in this
    Motion (a fork's init line claims its new one). A line saying another session's id is not
    trusted: its Messages would land in a session that is not the key's (F15)."""

    session_id: str
    motion: Motion
    agent: Agent
    harness: str
    may_move: MayMove
    held: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.held.add(self.session_id)

    def check(self, events: list[Event]) -> None:
        """Raise BadEvent for a line naming a session this post may not write."""
        for event in events:
            said = event.session_id
            if not said or said in self.held or event.kind == EventKind.INIT:
                continue
            if not MotionSession.objects.filter(pk=said, motion_id=self.motion.pk, agent=self.agent).exists():
                raise BadEvent(
                    f"the line says session {said[:60]!r}, which is neither this post's session nor"
                    f" one of @{self.agent.name}'s in this Motion: post it under its own session_id"
                )
            self.held.add(said)

    def on_init(self, event: Event) -> bool:
        """An init line: a fork's new session is claimed for the key (True: the writer has nothing
        more to do with it, the post's own session being claimed already)."""
        if event.session_id and event.session_id != self.session_id:
            claim_for(event.session_id, self.motion, self.agent, self.harness, may_move=self.may_move)
            self.held.add(event.session_id)
            return False
        return event.session_id == self.session_id


def recorded_turn_ends(
    session_id: str, newest: int = 20, *, newest_read: list[Any] | None = None
) -> Callable[[], Iterator[Any]]:
    """A reader of the raw lines of a session's recorded turn ends, newest first, for an
    adapter's `new_parser` (a resumed session's running total). Read only as the adapter reads:
    the newest line alone first (it usually holds the total, and every stream post asks), the rest up to `newest` only if
    the adapter reads on; each read at most once. `newest_read`: the newest alone ([raw], or []
    for none) as the caller already read it (the stream reads it with the session's claim)."""
    # [the newest alone], then [all up to `newest`]
    read: list[list[Any]] = [] if newest_read is None else [newest_read]

    def lines() -> Iterator[Any]:
        # Made only when a read is needed.
        def ends() -> QuerySet[Message]:
            return Message.objects.filter(session_id=session_id, kind=Kind.TURN_END).order_by("-created_at")

        if not read:
            read.append(list(ends().values_list("raw", flat=True)[:1]))
        yield from read[0]
        if not read[0]:
            return
        if len(read) < 2:
            # One query for the whole window, so its order is the one the first line came from.
            read.append(list(ends().values_list("raw", flat=True)[:newest]))
        yield from read[1][1:]

    return lines


def runner_owned(session_id: str) -> bool:
    """A session the runner or the stream API fed: its prompts came from the thread and its turn
    ends from result lines, so the transcript adds neither."""
    return (
        Turn.objects.filter(session_id=session_id).exists()
        or Message.objects.filter(session_id=session_id, source__in=RUNNER_SOURCES).exists()
    )


@dataclass
class ClaimedSession:
    """What the importer needs of a file's session before reading it, read in one query."""

    session: MotionSession  # with its motion and agent
    fed_by_runner: bool  # runner_owned(session_id)
    newest_end: list[Any] | None  # [the raw line of its newest recorded turn end], [], or None: not read
    # The session's recorded turn ends for its parser, the newest as read here.
    recorded_ends: Callable[[], Iterator[Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.recorded_ends = recorded_turn_ends(self.session.session_id, newest_read=self.newest_end)


def claimed_session(session_id: str) -> ClaimedSession | None:
    """The session's claim (None: unclaimed) with its Motion and agent, `runner_owned` and the
    newest recorded turn end (what `recorded_turn_ends` reads first), in one query."""
    ends = Message.objects.filter(session_id=OuterRef("pk"), kind=Kind.TURN_END).order_by("-created_at")
    session = (
        MotionSession.objects.select_related("motion", "agent")
        .annotate(
            has_turn=Exists(Turn.objects.filter(session_id=OuterRef("pk"))),
            has_runner_message=Exists(
                Message.objects.filter(session_id=OuterRef("pk"), source__in=RUNNER_SOURCES)
            ),
            newest_end_id=Subquery(ends.values("pk")[:1]),
            newest_end=Subquery(ends.values("raw")[:1], output_field=Message._meta.get_field("raw")),
        )
        .filter(pk=session_id)
        .first()
    )
    if session is None:
        return None
    return ClaimedSession(
        session=session,
        fed_by_runner=session.has_turn or session.has_runner_message,
        newest_end=[] if session.newest_end_id is None else [session.newest_end],
    )
