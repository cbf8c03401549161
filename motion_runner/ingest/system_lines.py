"""Lines the runner itself says in a thread (wake lines, errors, notices), under stable ids."""

from __future__ import annotations

import logging
import uuid
from decimal import Decimal

from ..models import Agent, Kind, Message, Motion, Turn
from .fit import insert_one

log = logging.getLogger(__name__)


# A turn's end line for a turn a person (or a scram) stopped: the thread shows it as a stop.
STOPPED = "stopped"


def post_system_message(
    motion: Motion,
    text: str,
    *,
    kind: str = Kind.ERROR,
    message_id: str | None = None,
    turn: Turn | None = None,
    agent: Agent | None = None,
    stop_reason: str = "",
    cost_usd: Decimal | None = None,
) -> Message | None:
    """A message the runner itself says in the thread; idempotent when given an id. A turn's
    end line may carry why it ended (`stop_reason`, e.g. STOPPED) and what it cost."""
    message = Message(
        motion=motion,
        sender=agent.name if agent else "runner",
        agent=agent,
        source="system",
        kind=kind,
        text=text,
        turn=turn,
        is_error=kind == Kind.ERROR,
        stop_reason=stop_reason,
        cost_usd=cost_usd,
    )
    if message_id:
        message.id = message_id
    return message if insert_system_line(message) else None


def insert_system_line(message: Message) -> bool:
    """`insert_one` for a line the runner says under a stable id. Finding the same line there
    means it was said already (False); finding anything else under its id is a collision, which
    is logged as an error and the line is said under a fresh id: never silently dropped."""
    if insert_one(message):
        return True
    found = Message.objects.filter(pk=message.id).values_list("motion_id", "source", "kind").first()
    if found == (message.motion_id, message.source, message.kind):
        return False
    log.error(
        "the id %s of a %s line in %s is taken by another message: said under a new id",
        message.id,
        message.kind,
        message.motion_id,
    )
    message.id = uuid.uuid4()
    return insert_one(message)
