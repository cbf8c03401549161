"""After the loop guard stops a turn, its session is compacted once, so the next wake does not
resume straight into the loop it was stopped in.

Bounded (issue 39.3): a compaction never queues another (a compaction the guard stops is said in
the thread and left there), and a session the guard stops twice in a row (with at most the
runner's compaction between) is said in the thread and left for a person: a person's own
`@agent /compact`, or any turn the guard lets finish, starts the count again.
"""

from __future__ import annotations

from motion_runner.harnesses import get_adapter
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import EndedBy, Kind, Turn, TurnStatus
from motion_runner.runner.turns import enqueue_turn

from ..models import clock

COMPACT = "compact"


def guard_stopped(turn: Turn) -> bool:
    return turn.status == TurnStatus.KILLED and turn.ended_by == EndedBy.LOOP_GUARD


def stopped_before(turn: Turn) -> bool:
    """The session's turn before this one (the runner's compactions aside) was stopped by the
    guard too."""
    before = (
        Turn.objects.filter(agent_id=turn.agent_id, session_id=turn.session_id, queued_at__lt=turn.queued_at)
        .exclude(pk=turn.pk)
        .exclude(reason=COMPACT)
        .order_by("-queued_at", "-pk")
        .first()
    )
    return before is not None and guard_stopped(before)


def left_for_a_person(turn: Turn, why: str) -> None:
    post_system_message(
        turn.motion,
        f"@{turn.agent.name}'s session was stopped by the tool-loop guard {why}: it is not compacted "
        f"again, and is left for a person (`@{turn.agent.name} /compact`, or a new session).",
        kind=Kind.TEXT,
        message_id=system_uuid("compaction-left", turn.pk),
        turn=turn,
    )


def compact_after_loop(sender, turn: Turn, **kwargs) -> Turn | None:
    if not guard_stopped(turn) or not turn.session_id:
        return None
    if turn.reason == COMPACT:
        left_for_a_person(turn, "while it was being compacted")
        return None
    if stopped_before(turn):
        left_for_a_person(turn, "twice in a row")
        return None
    prompt = get_adapter(turn.agent.harness).compact_prompt
    if not prompt:
        post_system_message(
            turn.motion,
            f"@{turn.agent.name}'s {turn.agent.harness} session cannot be compacted headless; "
            "the next wake is told why it was stopped.",
            kind=Kind.TEXT,
            message_id=system_uuid("no-compaction", turn.pk),
            turn=turn,
        )
        return None
    return enqueue_turn(
        turn.motion,
        turn.agent,
        prompt,
        reason=COMPACT,
        reason_detail=f"compacting after turn {turn.pk}: {turn.error}",
        mode="look",
        mode_rule="the runner's own compaction",
        effort="low",
        queued_at=clock.now(),
    )
