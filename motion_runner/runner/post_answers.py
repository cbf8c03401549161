"""What wakes decided for one post's mention, written by the core in one call and one transaction.

wakes decides (the verdict, the lines' words, the turn's prompt, mode and why) and writes its own
rows (the mention's decision, a hold); `answer_post` writes the core's share together: the thread's
lines, the turn queued (woken by the post) and the line that says why it woke. A failure writes
none of them, so a retried post is answered whole or not at all (each line is idempotent by its id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from ..ingest.system_lines import post_system_message
from ..models import Agent, Kind, Message, Turn
from .turns import enqueue_turn, wake_line_id


@dataclass(frozen=True)
class Line:
    """One line the thread is told (kind WAKE), said once under `line_id`."""

    text: str
    line_id: str
    agent: Agent | None = None


@dataclass(frozen=True)
class TurnOrder:
    """A turn to queue for the post, and the words of its wake line (`say_woke`)."""

    agent: Agent
    prompt: str
    reason: str
    reason_detail: str
    mode: str
    mode_rule: str
    effort: str
    why: str
    extras: tuple[str, ...] = ()  # said after the effort: what rides with the turn, a cost note


def answer_post(
    post: Message,
    lines: Sequence[Line] = (),
    turn: TurnOrder | None = None,
    *,
    dispatch: bool = True,
    now: datetime | None = None,
) -> Turn | None:
    """Say `lines` in the post's thread and queue `turn` (with its wake line); the turn queued.
    `now`: the deciding app's clock (the turn's `queued_at`), as `enqueue_turn` takes it."""
    if not lines and turn is None:
        return None
    with transaction.atomic():
        for line in lines:
            post_system_message(
                post.motion, line.text, kind=Kind.WAKE, message_id=line.line_id, agent=line.agent
            )
        if turn is None:
            return None
        queued = enqueue_turn(
            post.motion,
            turn.agent,
            turn.prompt,
            reason=turn.reason,
            reason_detail=turn.reason_detail,
            mode=turn.mode,
            mode_rule=turn.mode_rule,
            effort=turn.effort,
            woken_by=post,
            dispatch=dispatch,
            queued_at=now,
        )
        say_woke(queued, turn.why, turn.extras)
    return queued


def say_woke(turn: Turn, why: str, extras: Sequence[str] = ()) -> None:
    """The line that says why the agent woke, with what tools, in which session (when there was a
    choice to make) and what it may spend; once per turn."""
    parts = [f"@{turn.agent.name} woke: {why}", "look-only" if turn.mode == "look" else "full tools"]
    if turn.session_note:
        parts.append(turn.session_note)
    if turn.effort:
        parts.append(f"{turn.effort} effort")
    parts += extras
    cap = turn.max_budget_usd
    parts.append(f"cap ${cap:.2f}" if cap is not None else "no cap")
    post_system_message(
        turn.motion,
        " · ".join(parts),
        kind=Kind.WAKE,
        message_id=wake_line_id(turn.pk),
        turn=turn,
        agent=turn.agent,
    )
