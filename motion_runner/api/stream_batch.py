"""One stream post, taken whole: the body's contract, the session claim and the batch's accounting.

Both stream routes (`/api/motions/<slug>/stream/` and memory-lane's `/api/moods/<slug>/stream/`)
take a post through here, so the two answer alike:

- `harness` defaults to `claude-code`, and a Claude Code `session_id` must be a UUID (Claude Code
  only ever makes UUIDs; anything else is a client bug, said at once as a 400).
- A session the key's own agent already has in another Motion is re-claimed for the Motion it is
  posted to (memory-lane's rule: a forked wake belongs where it is posted), and the move is said in
  both threads. A 409 here was retried by memory-lane's runner and then dropped, losing the events.
  Another agent's session stays refused (403).
- Every event of the batch is counted in exactly one of `imported` (something new was written from
  it), `skipped` (nothing new: already there, or an event with nothing to show such as `system/init`
  or a hook notice) and `errors` (it could not be read). Counting written Messages instead left the
  events that write none (init, hook notices, a compaction's user lines) in no count at all.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Q
from django.utils import timezone
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied

from ..harnesses import HARNESSES, EventKind, HarnessError, get_adapter
from ..ingest.announcing import Announcer
from ..ingest.fit import BadEvent
from ..ingest.sessions import SessionConflict, claim_session
from ..ingest.system_lines import post_system_message
from ..ingest.writer import EventWriter, IngestContext, WriteOutcome, event_message_id
from ..models import (
    Agent,
    Kind,
    Message,
    Motion,
    MotionSession,
    Source,
    UnclaimedSession,
    recorded_turn_ends,
)
from ..people.access import access
from ..record import binding
from ..runner.db_retry import retry_conflicts
from ..sql import fast_paths, motion_sessions
from ..transcripts.remote import spool_path
from .auth import AgentPrincipal

log = logging.getLogger(__name__)

MAX_EVENTS = 500
CLAUDE_CODE = "claude-code"


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"
    default_detail = "That conflicts with what is already there."


class TooManyEvents(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_many_events"


class JSONItems(serializers.ListField):
    """`ListField(child=JSONField())` for a list straight out of the request's JSON body. A
    JSONField's one check of an item is `json.dumps(item, allow_nan=False)`, a walk of every
    value again, and a parsed body's value fails it only by a non-finite
    number, which the parser looks for (bounds.BoundedJSONParser, `body_is_plain_json`); so with
    the request in the context and no such number, only a null item is refused, as the JSONField
    refuses it. Otherwise, and for any null, each item is validated as before, errors and all."""

    def run_child_validation(self, data: list[Any]) -> list[Any]:
        request = self.context.get("request")
        if getattr(request, "body_is_plain_json", False) and not any(item is None for item in data):
            return list(data)
        return super().run_child_validation(data)


class StreamBody(serializers.Serializer):
    """Pass the request in the context (`context={"request": request}`) for JSONItems' shortcut."""

    harness = serializers.CharField(max_length=20, default=CLAUDE_CODE)
    session_id = serializers.CharField(max_length=200)
    events = JSONItems(child=serializers.JSONField(), allow_empty=True)
    agent = serializers.CharField(max_length=64, required=False, help_text="Must be the key's own agent.")

    def validate_harness(self, value: str) -> str:
        if value not in HARNESSES:
            raise serializers.ValidationError(
                f"unknown harness {value!r}; known: {', '.join(sorted(HARNESSES))}"
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("harness", CLAUDE_CODE) == CLAUDE_CODE:
            try:
                attrs["session_id"] = str(uuid.UUID(attrs["session_id"]))
            except ValueError as exc:
                raise serializers.ValidationError(
                    {"session_id": [f"a Claude Code session id is a UUID, not {attrs['session_id'][:60]!r}"]}
                ) from exc
        return attrs


def check_batch_size(data: Any) -> None:
    """Refuse an oversized batch before reading any of it: nothing of it is written."""
    events = data.get("events") if isinstance(data, dict) else None
    if isinstance(events, list) and len(events) > MAX_EVENTS:
        raise TooManyEvents(f"{len(events)} events in one post; send at most {MAX_EVENTS} at a time.")


def session_moved_text(
    agent: Agent, session_id: str, *, to: Motion | None = None, came_from: Motion | None = None
) -> str:
    if to is not None:
        return f"@{agent.name}'s session {session_id} moved to Motion {to.slug!r}: a turn of it was posted there."
    assert came_from is not None
    return f"@{agent.name}'s session {session_id} moved here from Motion {came_from.slug!r}."


def may_move(agent: Agent, came_from: Motion, to: Motion) -> bool:
    """A session moves only out of a Motion the agent is one of (reading it is not enough: a
    public Motion's session, or one an admin assigned with no agent, is not any reader's to
    take), into one it may read (the access seam decides)."""
    principal = AgentPrincipal(agent)
    return access().is_member_agent(principal, came_from) and access().can_read(principal, to)


def claim_for(session_id: str, motion: Motion, agent: Agent, harness: str) -> MotionSession:
    """Claim a session for (motion, agent): the agent's own session in another Motion moves here
    (said in both threads); another agent's session is a 403, and so is a move out of a Motion
    the agent is not one of (a session an admin assigned to another Motion would otherwise carry
    its transcript, and every later line, wherever the key posts it). `motion` is one the caller
    checked the agent belongs to."""
    existing = MotionSession.objects.select_related("motion").filter(pk=session_id).first()
    if existing is not None and existing.agent_id not in (None, agent.pk):
        raise PermissionDenied(f"Session {session_id} belongs to another agent.")
    if existing is not None and existing.motion_id != motion.pk:
        if not may_move(agent, existing.motion, motion):
            raise PermissionDenied(
                f"Session {session_id} belongs to a Motion this key may not read or is not an agent of."
            )
        move_session(existing, motion, agent)
    if existing is None:
        waiting = UnclaimedSession.objects.filter(pk=session_id).values_list("agent_id", "path").first()
        if waiting and (waiting[0] != agent.pk or waiting[1] == str(spool_path(session_id))):
            # Found by the importer, reported by another key, or spooled from memory-lane's
            # watcher (whose `username` is an OS user's, whatever agent shares the name): its
            # transcript is not this key's to take. The admin assigns it from the inbox.
            raise PermissionDenied(
                f"Session {session_id} waits in the admin's inbox; only an admin assigns it."
            )
    unmoved = existing if existing is not None and existing.motion_id == motion.pk else None
    try:
        return claim_session(session_id, motion, agent, harness, known=unmoved)
    except SessionConflict as exc:  # moved again between the move and the claim
        raise Conflict(f"{exc}; send the batch again.") from exc


@dataclass
class SessionRead:
    """What a post needs of its session before reading its events, read in one round trip."""

    newest_end: list[Any]  # [the raw line of the session's newest recorded turn end], or []


def claim_and_read(session_id: str, motion: Motion, agent: Agent, harness: str) -> SessionRead:
    """`claim_for`, and what the post reads of the session next (the newest turn end, for the
    adapter's running total). A session already this Motion's, the agent's own or no one's, is
    claimed by a conditional UPDATE as claim_session does with a fresh read (a re-post's common
    case); on PostgreSQL the UPDATE and the read are one statement (motion_runner/sql/
    motion_sessions.py). Anything else (a new session, a move, another agent's) goes through
    claim_for."""
    connection = connections[router.db_for_write(MotionSession)]
    asked = {"session_id": session_id, "motion_id": motion.pk, "agent_id": agent.pk, "now": timezone.now()}
    if fast_paths(connection):
        claimed, newest_end = motion_sessions.claim_and_read(connection, end_kind=Kind.TURN_END, **asked)
    else:
        claimed, newest_end = orm_claim_and_read(**asked)
    if claimed:
        binding().claim(session_id, motion)
    else:
        claim_for(session_id, motion, agent, harness)
    return SessionRead(newest_end=newest_end)


def orm_claim_and_read(*, session_id: str, motion_id: str, agent_id: int, now) -> tuple[bool, list[Any]]:
    """The reference path of the claim and the read: the conditional UPDATE, then the read."""
    claimed = (
        MotionSession.objects.filter(pk=session_id, motion_id=motion_id)
        .filter(Q(agent_id=agent_id) | Q(agent__isnull=True))
        .update(last_used_at=now)
    )
    ends = Message.objects.filter(session_id=session_id, kind=Kind.TURN_END).order_by("-created_at")
    return bool(claimed), list(ends.values_list("raw", flat=True)[:1])


def move_session(session: MotionSession, motion: Motion, agent: Agent) -> bool:
    """Re-claim `session` for `motion`; True when this call moved it (a race moves it once)."""
    came_from = session.motion
    with transaction.atomic():
        moved = (
            MotionSession.objects.filter(pk=session.pk, motion_id=came_from.pk)
            .filter(Q(agent=agent) | Q(agent__isnull=True))
            .update(motion=motion, agent=agent, last_used_at=timezone.now())
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


@dataclass
class BatchAnswer:
    imported: int = 0
    skipped: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "skipped": self.skipped,
            "errors": self.errors,
            "finished": self.finished,
        }


def take_stream(agent: Agent, motion: Motion, data: dict[str, Any]) -> BatchAnswer:
    """Write a validated StreamBody's events for `agent` in `motion`, and count each event once."""
    session_id, harness = data["session_id"], data["harness"]
    try:
        adapter = get_adapter(harness)
    except HarnessError as exc:
        raise serializers.ValidationError({"harness": [str(exc)]}) from exc
    events = data["events"]
    read = claim_and_read(session_id, motion, agent, harness)
    # No Turn is ever the writer's: every Turn is a launch of the runner's, which reads, ends and
    # prices it from its own harness's stdout. A client's lines pointed at it (or its result
    # stamped on it) would set its cost, its end or its session from outside (issue 20, item 10).
    writer = EventWriter(
        IngestContext(motion=motion, agent=agent, harness=harness, source=Source.API, session_id=session_id)
    )
    # On commit, through the one announcer (motion_runner/ingest/announcing.py): a post is one batch.
    writer.announce = Announcer(interval=0.0)
    prepare = writer.prepare

    parser = adapter.new_parser(
        session_id, recorded_ends=recorded_turn_ends(session_id, newest_read=read.newest_end)
    )
    answer = BatchAnswer()
    prepared: list[Message] = []
    # The first event of the batch that produced each Message id: a repeat inside one batch is skipped.
    first_event_of: dict[uuid.UUID, int] = {}
    failed: set[int] = set()
    turn_end = None

    def fail(index: int, line: dict[str, Any], exc: Exception) -> None:
        if isinstance(exc, (Conflict, PermissionDenied)):
            raise exc
        if isinstance(exc, (BadEvent, SessionConflict)):
            answer.errors.append({"index": index, "reason": str(exc)})
        else:  # an adapter bug on one line must not lose the rest
            log.error("stream: adapter %s failed on event %s", harness, index, exc_info=exc)
            answer.errors.append(
                {"index": index, "reason": f"could not read a {line.get('type', '?')} event: {exc}"}
            )
        failed.add(index)

    # The whole batch is parsed first (the parser answers a line's events as a list, so a line
    # that fails here yields none), then what the record already holds is asked in one query: a
    # re-post skips building, fitting and redacting its known Messages, and the rest is as before.
    parsed: list[tuple[int, dict[str, Any], list[tuple[Any, uuid.UUID | None]]]] = []
    for index, line in enumerate(events):
        if not isinstance(line, dict):
            answer.errors.append(
                {"index": index, "reason": f"an event is a JSON object, not a {type(line).__name__}"}
            )
            failed.add(index)
            continue
        try:
            line_events = parser.feed(line)
            parsed.append((index, line, [(event, event_message_id(event)) for event in line_events]))
        except Exception as exc:
            fail(index, line, exc)
    # Each event's Message id made once (a UUID each), and what the record holds asked in one query.
    ids = {message_id for _, _, pairs in parsed for _, message_id in pairs if message_id is not None}
    known = binding().known_ids(list(ids)) if ids else set()
    # The sessions this post may write lines of: its own, and those of the agent in this Motion
    # (a fork's init line claims its new one). A line saying another session's id is not trusted:
    # its Messages would land in a session that is not the key's (F15).
    held = {session_id}

    def check_sessions(pairs: list[tuple[Any, uuid.UUID | None]]) -> None:
        for event, _ in pairs:
            said = event.session_id
            if not said or said in held or event.kind == EventKind.INIT:
                continue
            if not MotionSession.objects.filter(pk=said, motion_id=motion.pk, agent=agent).exists():
                raise BadEvent(
                    f"the line says session {said[:60]!r}, which is neither this post's session nor"
                    f" one of @{agent.name}'s in this Motion: post it under its own session_id"
                )
            held.add(said)

    for index, line, pairs in parsed:
        try:
            check_sessions(pairs)
            for event, message_id in pairs:
                if event.kind == EventKind.TURN_END:
                    turn_end = event
                if event.kind == EventKind.INIT and event.session_id and event.session_id != session_id:
                    claim_for(event.session_id, motion, agent, harness)
                    held.add(event.session_id)
                if known and message_id in known:
                    continue  # already in the record: the insert would skip it
                if event.kind == EventKind.INIT and event.session_id == session_id:
                    continue  # the writer would only claim again the session claimed above
                message = prepare(event, message_id)
                if message is not None:
                    prepared.append(message)
                    first_event_of.setdefault(message.id, index)
        except Exception as exc:
            fail(index, line, exc)
    answer.errors.sort(key=lambda error: error["index"])

    def store() -> WriteOutcome:
        return writer.write_many([], prepared=prepared)

    # Every write here is idempotent (ids): a writer PostgreSQL chose as a deadlock's victim runs
    # again inside this request instead of answering 500.
    outcome = retry_conflicts(store)
    wrote = {first_event_of[message.id] for message in outcome.messages}
    answer.imported = len(wrote - failed)
    answer.skipped = len(events) - answer.imported - len(failed)
    answer.finished = turn_end is not None
    return answer
