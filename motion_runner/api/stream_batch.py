"""One stream post, taken whole: the body's contract, who may move a session, and the answer; the
post's lines are written through the one way in (ingest/entry.write_stream).

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

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rest_framework import serializers, status
from rest_framework.exceptions import APIException, PermissionDenied

from ..harnesses import HARNESSES, HarnessError, get_adapter
from ..ingest import sessions
from ..ingest.entry import unreadable_reason, write_stream
from ..ingest.sessions import SessionRaced, SessionRefused
from ..models import Agent, Motion, MotionSession, Source
from ..people.access import access
from ..runner.db_retry import retry_conflicts
from .auth import AgentPrincipal

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


def may_move(agent: Agent, came_from: Motion, to: Motion) -> bool:
    """A session moves only out of a Motion the agent is one of (reading it is not enough: a
    public Motion's session is not any reader's to take), into one it may read (the access seam
    decides). Whose session it is is asked first, by ingest.sessions.claim_for: only the agent's
    own moves (one an admin assigned with no agent, a person's terminal, never does)."""
    principal = AgentPrincipal(agent)
    return access().is_member_agent(principal, came_from) and access().can_read(principal, to)


@contextmanager
def session_answers() -> Iterator[None]:
    """A session this key may not claim is a 403; one that moved again meanwhile a 409."""
    try:
        yield
    except SessionRefused as exc:
        raise PermissionDenied(str(exc)) from exc
    except SessionRaced as exc:
        raise Conflict(str(exc)) from exc


def claim_for(session_id: str, motion: Motion, agent: Agent, harness: str) -> MotionSession:
    """ingest.sessions.claim_for for a key's agent, its refusals answered as the API answers."""
    with session_answers():
        return sessions.claim_for(session_id, motion, agent, harness, may_move=partial(may_move, agent))


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
    harness, events = data["harness"], data["events"]
    try:
        adapter = get_adapter(harness)
    except HarnessError as exc:
        raise serializers.ValidationError({"harness": [str(exc)]}) from exc
    with session_answers():
        written = write_stream(
            adapter,
            motion,
            agent,
            harness=harness,
            source=Source.API,
            session_id=data["session_id"],
            lines=events,
            may_move=partial(may_move, agent),
            # Every write here is idempotent (ids): a writer PostgreSQL chose as a deadlock's
            # victim runs again inside this request instead of answering 500.
            retry=retry_conflicts,
        )
    answer = BatchAnswer(finished=written.turn_end is not None)
    answer.errors = [
        {"index": index, "reason": unreadable_reason(harness, index, events[index], exc)}
        for index, exc in written.errors
    ]
    failed = written.failed
    answer.imported = len(written.wrote - failed)
    answer.skipped = len(events) - answer.imported - len(failed)
    return answer
